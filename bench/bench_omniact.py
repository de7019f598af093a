"""Time reading and collecting a 2,020-sample OmniACT split in the release layout, and rescoring
predictions for it.

Run: ``python bench/bench_omniact.py [--runs 5] [--samples 2020]``. Generates a split the size
of OmniACT's test split in the release layout (``tests/unit/omniact/release_cases.py``: task
files, box files, small PNGs, the web path quirk) with predictions exercising every rule, then
prints the median wall and CPU time of:

* (a) reading the split with ``release.read_split`` (budget: the split's collection, 5 s);
* (b) scoring the predictions file (``read_predictions`` + ``rescore``), official and paper
  (budget: 10 s);
* (c) the whole ``omniact-score --json`` command in a fresh Python process (imports, NLTK
  included), official scoring;
* (d) the split's collection by pytest, ``pytest --collect-only -q SPLIT`` in a fresh
  process (one item per sample; budget 5 s for the whole command), with the collection time
  pytest itself reports.

On a machine shared with other work the wall time includes waiting for a core; the CPU time
does not.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "omniact"))

from release_cases import generated_cases, write_predictions, write_release  # noqa: E402

from pytest_osworld.omniact.predictions import read_predictions  # noqa: E402
from pytest_osworld.omniact.release import read_split  # noqa: E402
from pytest_osworld.omniact.rescore import rescore  # noqa: E402

COLLECT_BUDGET, SCORE_BUDGET = 5.0, 10.0
COMMAND = (
    "import argparse, sys\n"
    "from pytest_osworld.omniact.rescore import add_arguments, run\n"
    "parser = argparse.ArgumentParser(); add_arguments(parser)\n"
    "sys.exit(run(parser.parse_args(sys.argv[1:])))\n"
)


def median_seconds(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``runs`` calls."""
    walls, cpus = [], []
    for _ in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def fresh_process(split: Path, predictions: Path, runs: int) -> float:
    """Median wall seconds of ``omniact-score --json`` in a new interpreter."""
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", COMMAND, str(split), str(predictions), "--json"],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=ROOT,
        )
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


def collect_only(split: Path, runs: int) -> tuple[float, float, int]:
    """Median wall seconds of ``pytest --collect-only -q SPLIT`` in a new process, the median of
    the collection time pytest reports, and the number of items it collected."""
    walls, reported, count = [], [], 0
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(split)],
            check=False,
            capture_output=True,
            text=True,
            cwd=split.parent,
        )
        walls.append(time.perf_counter() - start)
        found = re.search(r"(\d+) tests? collected in ([0-9.]+)s", done.stdout)
        if found is None:
            raise SystemExit(f"pytest --collect-only failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        count, seconds = int(found.group(1)), float(found.group(2))
        reported.append(seconds)
    return statistics.median(walls), statistics.median(reported), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--samples", type=int, default=2020)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        cases = generated_cases(args.samples, seed=2020, screens_per_app=50)
        split_path = write_release(folder, cases)
        predictions = write_predictions(folder / "omniact_predictions.json", cases)
        print(
            f"generated {args.samples} samples in the release layout in {time.perf_counter() - start:.2f} s"
        )

        split = read_split(split_path)
        assert not split.errors, split.errors[:3]
        wall, cpu = median_seconds(lambda: read_split(split_path), args.runs)
        print(f"(a) read the split: {wall:6.3f} s wall, {cpu:6.3f} s CPU  (budget {COLLECT_BUDGET:.0f} s)")
        for scoring in ("official", "paper"):

            def score(scoring: str = scoring) -> object:
                return rescore(split, read_predictions(predictions, split.keys), scoring)

            wall, cpu = median_seconds(score, args.runs)
            print(
                f"(b) score the predictions, {scoring:<8}: {wall:6.3f} s wall, {cpu:6.3f} s CPU  "
                f"(budget {SCORE_BUDGET:.0f} s)"
            )
        wall = fresh_process(split_path, predictions, args.runs)
        print(f"(c) omniact-score --json, new process: {wall:6.3f} s wall  (budget {SCORE_BUDGET:.0f} s)")
        wall, reported, count = collect_only(split_path, args.runs)
        print(
            f"(d) pytest --collect-only -q SPLIT, new process: {wall:6.3f} s wall, {count} items, "
            f"pytest's own collection time {reported:.2f} s  (budget {COLLECT_BUDGET:.0f} s)"
        )


if __name__ == "__main__":
    main()
