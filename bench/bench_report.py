"""Benchmark of the HTML report on a run the size of OSWorld's (369 tasks, up to 15 steps each).

Builds a results folder once, with timings in every result.json, using TaskRecorder. Then
it times :func:`write_report` three ways: the first write in a fresh process (every page
rendered), a refresh with nothing changed (only the index rendered), and a refresh after one
task's result changed. It prints the medians and the sizes of the index and of the largest
task page.

    .venv/bin/python bench/bench_report.py [--runs N] [--tasks N]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import Usage
from pytest_osworld.episode.loop import StepRecord
from pytest_osworld.episode.result import TaskResult
from pytest_osworld.report import html
from pytest_osworld.report.model import PHASES
from pytest_osworld.report.results import TaskRecorder

DOMAINS = ["os", "chrome", "libreoffice_calc", "libreoffice_writer", "libreoffice_impress"]
DOMAINS += ["gimp", "vs_code", "vlc", "thunderbird", "multi_apps"]
#: A tiny stand-in screenshot: the report links screenshots, it never reads them.
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def build(root: Path, tasks: int, seed: int = 0) -> None:
    """A results folder of ``tasks`` finished tasks with steps, screenshots and timings."""
    rng = random.Random(seed)
    for index in range(tasks):
        domain = DOMAINS[index % len(DOMAINS)]
        recorder = TaskRecorder(root, "pyautogui", "screenshot", "bench", domain, f"task-{index:04d}")
        recorder.initial_screenshot(PNG)
        steps = rng.randint(1, 15)
        for step in range(1, steps + 1):
            action = (
                Action(kind="DONE") if step == steps else Action(kind="code", code="pyautogui.click(1, 1)")
            )
            recorder.step(
                StepRecord(
                    step,
                    1.7e9 + step,
                    2.0,
                    "response " * 40,
                    "thought " * 20,
                    [action],
                    [],
                    None,
                    Usage(1000, 50, 0.01),
                    PNG,
                )
            )
        passed = rng.random() < 0.4
        recorder.finish(
            TaskResult(
                domain=domain,
                task_id=f"task-{index:04d}",
                nodeid=f"n{index}",
                outcome="passed" if passed else "failed",
                score=1.0 if passed else 0.0,
                threshold=1.0,
                end_reason="done",
                steps=steps,
                max_steps=15,
                duration_s=30.0,
                infeasible=False,
            )
        )
        result = recorder.dir / "result.json"
        data = json.loads(result.read_text())
        phases = {name: round(rng.uniform(0.0, 3.0), 3) for name in PHASES}
        step_times = [
            {"index": i, "observe": 0.05, "agent": 1.5, "actions": 0.3} for i in range(1, steps + 1)
        ]
        data["timings"] = {"phases": phases, "total": sum(phases.values()), "step_times": step_times}
        result.write_text(json.dumps(data))


def timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    """Build, time, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=369)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-report-")) / "results"
    try:
        build(root, args.tasks)
        first, unchanged, one_changed = [], [], []
        some = next(root.rglob("result.json"))
        for _ in range(args.runs):
            html._rendered.clear()  # as a fresh process
            first.append(timed(lambda: html.write_report(root)))
            unchanged.append(timed(lambda: html.write_report(root)))
            some.write_text(some.read_text() + " ")
            one_changed.append(timed(lambda: html.write_report(root)))
        pages = [p.stat().st_size for p in root.rglob(html.TASK_PAGE_NAME)]
        print(f"{args.tasks} tasks, median of {args.runs} runs")
        print(f"  first write (every page)     {statistics.median(first):6.2f} s")
        print(f"  refresh, nothing changed     {statistics.median(unchanged):6.2f} s")
        print(f"  refresh, one task changed    {statistics.median(one_changed):6.2f} s")
        print(
            f"  index.html {(root / html.INDEX_NAME).stat().st_size / 1024:.0f} KiB, "
            f"largest task page {max(pages) / 1024:.0f} KiB"
        )
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
