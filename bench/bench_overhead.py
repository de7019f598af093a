"""Benchmark of the harness's fixed overhead per task, from the per-phase timings.

Runs tasks with the ``replay`` agent through pytest (a subprocess, a fresh results
folder), reads every ``result.json`` and prints the distribution of the fixed overhead
(the task's time minus the agent's own time and OSWorld's ``sleep`` steps; target
<= 5 s per task), the sleep steps apart, each phase's share, and the slowest
task/phase pairs and setup steps, getters and metrics.

    .venv/bin/python bench/bench_overhead.py                       # the own suite
    .venv/bin/python bench/bench_overhead.py --tasks tasks/os tasks/libreoffice_calc -n 1
    .venv/bin/python bench/bench_overhead.py --from-results results/20260101T000000Z
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_osworld.task.timings import PHASES

ROOT = Path(__file__).resolve().parent.parent
#: The issue's target for the fixed overhead of one task, in seconds.
TARGET_S = 5.0


@dataclass(frozen=True)
class Timed:
    """One task's result.json, as far as timings go."""

    name: str  # domain/task id
    outcome: str
    timings: dict[str, Any]

    @property
    def phases(self) -> dict[str, float]:
        """Seconds per phase."""
        return {k: float(v) for k, v in self.timings.get("phases", {}).items()}


def run_suite(tasks: list[str], workers: int, results: Path, extra: list[str]) -> float:
    """Run ``tasks`` with the replay agent into ``results``; the wall clock in seconds."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        *tasks,
        "--agent=replay",
        f"--results-dir={results}",
        "-p",
        "no:cacheprovider",
        "-q",
        "-m",
        "not omniact",
        *(["-n", str(workers)] if workers > 0 else []),
        *extra,
    ]
    print("$", " ".join(command), flush=True)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, check=False, capture_output=True, text=True)
    wall = time.perf_counter() - started
    tail = [line for line in done.stdout.splitlines() if line.strip()][-3:]
    print("\n".join(f"  {line}" for line in tail))
    if done.returncode not in (0, 1):  # 1: some tasks failed, still measured
        print(done.stderr[-2000:], file=sys.stderr)
    return wall


def read_results(results: Path) -> tuple[list[Timed], int]:
    """Every result.json with timings under ``results``, and how many had none."""
    timed: list[Timed] = []
    without = 0
    for path in sorted(results.rglob("result.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or "task_id" not in data:
            continue
        timings = data.get("timings")
        if not isinstance(timings, dict):
            without += 1
            continue
        name = f"{data.get('domain', '?')}/{str(data['task_id'])[:8]}"
        timed.append(Timed(name, str(data.get("outcome")), timings))
    return timed, without


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[index]


def spread(values: list[float]) -> str:
    """``median / p90 / max`` of ``values``."""
    if not values:
        return "-"
    return (
        f"median {statistics.median(values):6.2f} s  p90 {percentile(values, 0.9):6.2f} s  "
        f"max {max(values):6.2f} s"
    )


def report(timed: list[Timed], without: int, top: int, wall: float | None) -> list[str]:
    """The printed figures."""
    outcomes: dict[str, int] = {}
    for task in timed:
        outcomes[task.outcome] = outcomes.get(task.outcome, 0) + 1
    lines = [
        f"tasks with timings: {len(timed)} ("
        + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
        + (f"; {without} result(s) without timings" if without else "")
        + ")"
    ]
    if wall is not None:
        lines.append(f"suite wall clock: {wall:.1f} s")
    if not timed:
        return lines
    overhead = [float(t.timings.get("fixed_overhead", 0.0)) for t in timed]
    over = [t for t, o in zip(timed, overhead, strict=True) if o > TARGET_S]
    lines.append(
        f"fixed overhead:        {spread(overhead)}   ({len(over)} over the {TARGET_S:.0f} s target)"
    )
    # The replay agent's actions are the solution's own code, waits included (time.sleep in
    # it, typing intervals): what is left without them is the harness's own cost.
    harness = [o - t.phases.get("actions", 0.0) for t, o in zip(timed, overhead, strict=True)]
    over_h = sum(1 for h in harness if h > TARGET_S)
    lines.append(
        f"  less the actions:    {spread(harness)}   ({over_h} over; the solutions' own actions aside)"
    )
    lines.append(f"setup sleeps:          {spread([t.phases.get('setup_sleep', 0.0) for t in timed])}")
    lines.append(f"task total:            {spread([float(t.timings.get('total', 0.0)) for t in timed])}")
    lines.append("per phase (median / p90 / max over tasks; share of all tasks' time):")
    grand = sum(float(t.timings.get("total", 0.0)) for t in timed) or 1.0
    for phase in PHASES:
        values = [t.phases.get(phase, 0.0) for t in timed]
        lines.append(f"  {phase:<21} {spread(values)}   {100 * sum(values) / grand:5.1f}%")
    pairs = sorted(
        ((seconds, t.name, phase) for t in timed for phase, seconds in t.phases.items()),
        reverse=True,
    )[:top]
    lines.append(f"slowest task/phase pairs (top {top}):")
    lines += [f"  {seconds:7.2f} s  {phase:<12} {name}" for seconds, name, phase in pairs]
    details: list[tuple[float, str, str]] = []
    for t in timed:
        for step in t.timings.get("setup_steps", []):
            what = f"{step.get('phase', 'setup')} step {step.get('index')} {step.get('type')}"
            details.append((float(step.get("seconds", 0.0)), t.name, what))
        for kind in ("getters", "metrics"):
            for call in t.timings.get(kind, []):
                details.append((float(call.get("seconds", 0.0)), t.name, f"{kind[:-1]} {call.get('name')}"))
    lines.append(f"slowest setup steps, getters and metrics (top {top}):")
    lines += [f"  {seconds:7.2f} s  {what:<32} {name}" for seconds, name, what in sorted(details)[::-1][:top]]
    return lines


def main() -> None:
    """Run (or read) and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["tasks"], metavar="PATH", help="task files or folders")
    parser.add_argument("-n", "--workers", type=int, default=1, help="xdist workers (0: no xdist)")
    parser.add_argument(
        "--results-dir", type=Path, help="where the run writes (default: a fresh temp folder)"
    )
    parser.add_argument("--from-results", type=Path, help="only read an existing results folder")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    wall: float | None = None
    if args.from_results is not None:
        results = args.from_results
    else:
        results = args.results_dir or Path(tempfile.mkdtemp(prefix="bench-overhead-")) / "run"
        wall = run_suite(args.tasks, args.workers, results, args.pytest_args)
    print(f"results: {results}")
    timed, without = read_results(results)
    for line in report(timed, without, args.top, wall):
        print(line)


if __name__ == "__main__":
    main()
