"""Benchmark of the main command's scaling with xdist workers, and the CPU it uses.

Runs the README's main command (``pytest --agent=replay``: the own tasks and the OmniACT
samples) once per worker count, each into a fresh results folder, and prints its wall
clock, the machine's busy CPU-seconds over the run (all cores, from ``/proc/stat``:
everything that ran, the desktops' applications included), the cores busy on average,
and the speed-up over the first count. When one worker already keeps about one core
busy, two workers on two cores cannot be twice as fast: the speed-up is bounded by the
machine, not by the harness.

    .venv/bin/python bench/bench_scaling.py                  # -n 1, 2, 3
    .venv/bin/python bench/bench_scaling.py --workers 2 3 -- tasks/gimp
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Run:
    """One run of the command: its worker count, wall clock and busy CPU time."""

    workers: int
    wall_s: float
    busy_cpu_s: float
    summary: str

    @property
    def cores(self) -> float:
        """Cores busy on average over the run."""
        return self.busy_cpu_s / self.wall_s if self.wall_s else 0.0


def busy_cpu_seconds() -> float:
    """CPU-seconds spent busy on all cores since boot (user, nice, system, irq, softirq)."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def run_once(workers: int, pytest_args: list[str]) -> Run:
    """Run the main command with ``workers`` xdist workers; measure wall clock and CPU."""
    results = Path(tempfile.mkdtemp(prefix=f"bench-scaling-n{workers}-"))
    command = [
        sys.executable,
        "-m",
        "pytest",
        *pytest_args,
        "--agent=replay",
        f"-n{workers}",
        f"--results-dir={results}",
        "-p",
        "no:cacheprovider",
        "-q",
    ]
    print("$", " ".join(command), flush=True)
    cpu_before = busy_cpu_seconds()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, check=False, capture_output=True, text=True)
    wall = time.perf_counter() - started
    busy = busy_cpu_seconds() - cpu_before
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1] if lines else f"(no output; exit {done.returncode})"
    if done.returncode not in (0, 1):
        print(done.stderr[-2000:], file=sys.stderr)
    return Run(workers, wall, busy, summary)


def main() -> None:
    """Run each worker count and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3], help="xdist worker counts")
    parser.add_argument("pytest_args", nargs="*", help="task paths or more pytest arguments (after --)")
    args = parser.parse_args()
    runs = [run_once(n, args.pytest_args) for n in args.workers]
    first = runs[0]
    print(f"machine: {os.cpu_count()} cores")
    print("workers   wall      busy CPU     cores busy   speed-up   pytest")
    for run in runs:
        print(
            f"-n {run.workers:<5} {run.wall_s:7.1f} s  {run.busy_cpu_s:8.1f} cpu-s  {run.cores:6.2f}"
            f"       {first.wall_s / run.wall_s:5.2f}x     {run.summary}"
        )


if __name__ == "__main__":
    main()
