"""Time ``compare_table`` on a 100,000-cell workbook and ``compare_pptx_files`` on a large deck.

Run: ``python bench/bench_metrics.py [--runs 5] [--reader auto|openpyxl]``. Prints the
median wall time of each, and the median CPU time of this process (on a machine shared with
other work the wall time includes waiting for a core; the CPU time does not).
``--reader openpyxl`` times compare_table with the openpyxl reader of cell values only.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_osworld.evaluators.metrics import METRICS
from pytest_osworld.evaluators.metrics._table_books import VALUE_READERS, value_reader

ROWS, COLUMNS = 10_000, 10  # 100,000 cells
SLIDES, BOXES = 200, 10


def build_workbook(path: Path) -> None:
    import openpyxl

    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Sheet1")
    sheet.append([f"col{c}" for c in range(COLUMNS)])
    for r in range(1, ROWS):
        sheet.append([r * c + 0.5 if c % 2 else f"text {r}-{c}" for c in range(COLUMNS)])
    workbook.save(path)


def build_deck(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches, Pt

    deck = Presentation()
    for number in range(SLIDES):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = f"Slide {number}"
        for box in range(BOXES):
            shape = slide.shapes.add_textbox(Inches(0.5 + box * 0.8), Inches(2), Inches(0.7), Inches(1))
            paragraph = shape.text_frame.paragraphs[0]
            for word in range(3):
                run = paragraph.add_run()
                run.text = f"w{word} "
                run.font.size = Pt(12 + word)
    deck.save(path)


def median_seconds(call: Callable[[], object], runs: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``runs`` calls, and the last call's result."""
    walls, cpus, last = [], [], None
    for _ in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        last = call()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reader", choices=VALUE_READERS, default="auto")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_workbook(folder / "result.xlsx")
        shutil.copy(folder / "result.xlsx", folder / "expected.xlsx")
        build_deck(folder / "result.pptx")
        shutil.copy(folder / "result.pptx", folder / "expected.pptx")

        compare_table = METRICS.get("compare_table")
        rules = [
            {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"},
            {
                "type": "check_cell",
                "sheet_idx": 0,
                "coordinate": "B2",
                "props": {"value": {"method": "eq", "ref": 1.5}},
            },
        ]
        with value_reader(args.reader):
            seconds, cpu, score = median_seconds(
                lambda: compare_table(
                    str(folder / "result.xlsx"), str(folder / "expected.xlsx"), rules=rules
                ),
                args.runs,
            )
        print(
            f"compare_table      {ROWS * COLUMNS:,} cells ({args.reader} reader): "
            f"median {seconds:.3f} s (cpu {cpu:.3f} s) over {args.runs} runs ({score})"
        )

        compare_pptx = METRICS.get("compare_pptx_files")
        seconds, cpu, score = median_seconds(
            lambda: compare_pptx(str(folder / "result.pptx"), str(folder / "expected.pptx")),
            args.runs,
        )
        shapes = SLIDES * (BOXES + 1)
        print(
            f"compare_pptx_files {SLIDES} slides, {shapes} shapes: "
            f"median {seconds:.3f} s (cpu {cpu:.3f} s) over {args.runs} runs ({score})"
        )


if __name__ == "__main__":
    main()
