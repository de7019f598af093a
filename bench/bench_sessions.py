"""Benchmark of the README's main job on both desktop sessions, back to back, and of its fixed cost.

Runs ``pytest --agent=replay -n WORKERS`` (the main job: the own tasks and the OmniACT samples)
on the gnome session, then on openbox, ``--rounds`` times alternating, each into a fresh results
folder, and prints per run its wall clock and, from the tasks' ``result.json``:

- the settle phase's share of the tasks' summed time, and the settle wait's median and maximum
  per task (over the tasks whose setup started something, the ones that wait) with how many
  timed out;
- the tasks' own ``sleep`` steps' share (``setup_sleep``) and the median restore.

Then GNOME's wall time over openbox's (the median of the rounds when there are several). On
a 2-core machine both cores are busy throughout at ``-n 2``: run it on a quiet machine.

    .venv/bin/python bench/bench_sessions.py [--workers 2] [--rounds 1] [-- PYTEST ARGS]
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

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ("gnome", "openbox")


@dataclass(frozen=True)
class Run:
    """One run of the main job: its session, wall clock, exit code and the tasks' timings."""

    session: str
    wall_s: float
    returncode: int
    tasks: list[dict]

    def phase_sum(self, phase: str) -> float:
        """Seconds of ``phase`` summed over the tasks."""
        return sum(task["timings"]["phases"].get(phase, 0.0) for task in self.tasks)

    @property
    def total_s(self) -> float:
        """The tasks' summed time."""
        return sum(task["timings"]["total"] for task in self.tasks)

    @property
    def settles(self) -> list[dict]:
        """``timings.settle`` of each task that waited."""
        return [task["timings"]["settle"] for task in self.tasks if task["timings"].get("settle")]


def results(folder: Path) -> list[dict]:
    """Every ``result.json`` under ``folder`` that has timings (the OSWorld tasks)."""
    found = []
    for path in sorted(folder.rglob("result.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("timings") and data["timings"].get("total", 0) > 0:
            found.append(data)
    return found


def run_once(session: str, workers: int, pytest_args: list[str]) -> Run:
    """The main job on ``session``: its wall clock and its tasks' results."""
    folder = Path(tempfile.mkdtemp(prefix=f"bench-sessions-{session}-"))
    command = [
        sys.executable,
        "-m",
        "pytest",
        "--agent=replay",
        f"-n{workers}",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--provider-arg=session={session}",
        f"--results-dir={folder}",
        *pytest_args,
    ]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        print(done.stdout[-3000:], file=sys.stderr)
    return Run(session, wall, done.returncode, results(folder))


def describe(run: Run) -> str:
    """One line of figures for a run."""
    seconds = [settled["seconds"] for settled in run.settles]
    timed_out = sum(1 for settled in run.settles if settled.get("timed_out"))
    restores = [task["timings"]["phases"]["restore"] for task in run.tasks]
    total = run.total_s or 1.0
    return (
        f"{run.session:<8} wall {run.wall_s:6.1f} s  tasks {len(run.tasks):3d}  "
        f"settle {100 * run.phase_sum('settle') / total:4.1f}% "
        f"(median {statistics.median(seconds) if seconds else 0:.2f} s, max {max(seconds, default=0):.2f} s, "
        f"{timed_out} timed out)  sleeps {100 * run.phase_sum('setup_sleep') / total:4.1f}%  "
        f"restore median {statistics.median(restores) if restores else 0:.2f} s"
        + ("" if run.returncode == 0 else f"  EXIT {run.returncode}")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="gnome then openbox, this many times")
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = parser.parse_args()
    runs: list[Run] = []
    for _ in range(args.rounds):
        for session in SESSIONS:
            run = run_once(session, args.workers, args.pytest_args)
            print(describe(run), flush=True)
            runs.append(run)
    ratios = [
        gnome.wall_s / openbox.wall_s
        for gnome, openbox in zip(runs[::2], runs[1::2], strict=True)
        if openbox.wall_s
    ]
    print(f"gnome / openbox wall time: {statistics.median(ratios):.2f}x over {len(ratios)} round(s)")


if __name__ == "__main__":
    main()
