"""Benchmark of the interactive env: resets per hour and steps per second.

Through ``DesktopEnv`` on one local desktop, and through the Gymnasium env's
``AsyncVectorEnv`` on two, next to OSWorld's figures on this kind of machine
(OSWORLD-CONTRACT.md 6.1-6.2, ENVIRONMENT.md Parts B and C):

- OSWorld's reset is a snapshot revert (5.3 s measured here for a Vagrant/libvirt
  snapshot restore; VMware's revert adds a fixed 3 s sleep and a VM restart), and its
  default runner then sleeps a fixed 60 s before the first observation.
- OSWorld's step runs each action in a new ``python3 -c`` (255 ms measured) and then
  takes the observation: a screenshot (91 ms) and, by default, the accessibility tree.

The task reset here is a small task with one ``execute`` setup step (a folder made);
a step is one pyautogui ``moveTo`` plus a screenshot observation (no a11y tree, no pause).

    .venv/bin/python bench/bench_env.py [--resets N] [--steps N] [--one-core] [--no-vector]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TASK = {
    "id": "bench-env",
    "snapshot": "os",
    "instruction": "Benchmark task: nothing to do.",
    "config": [{"type": "execute", "parameters": {"command": ["mkdir", "-p", "/home/user/bench"]}}],
    "evaluator": {"func": "infeasible"},
}
MOVE = "pyautogui.moveTo({x}, 200)"

#: OSWorld's seconds per reset and per step, and where each figure comes from.
OSWORLD_RESET = {
    "revert only (env.reset)": (5.3, "vagrant snapshot restore, ENVIRONMENT.md B.2"),
    "revert + runner's 60 s sleep": (65.3, "lib_run_single sleeps 60 s after reset, CONTRACT 6.2"),
}
OSWORLD_STEP = (0.255 + 0.091, "python -c action 255 ms + screenshot 91 ms, ENVIRONMENT.md C")


def timed(func: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return times


def bench_desktop_env(resets: int, steps: int) -> dict[str, float]:
    from pytest_osworld.env import DesktopEnv

    env = DesktopEnv(action_space="pyautogui", require_a11y_tree=False)
    try:
        env.reset(task_config=TASK)  # warm-up (template, first sandbox)
        reset_task = statistics.median(timed(lambda: env.reset(task_config=TASK), resets))
        reset_bare = statistics.median(timed(lambda: env.reset(), resets))
        env.reset(task_config=TASK)
        counter = iter(range(10**9))
        step = statistics.median(
            timed(lambda: env.step(MOVE.format(x=100 + next(counter) % 500), pause=0), steps)
        )
    finally:
        env.close()
    return {"reset_task": reset_task, "reset_bare": reset_bare, "step": step}


def bench_vector(resets: int, steps: int, task_file: Path) -> dict[str, float]:
    import gymnasium

    import pytest_osworld.env  # noqa: F401  (registers the env)

    def make() -> Any:
        return gymnasium.make(
            "pytest_osworld/Desktop-v0", tasks=str(task_file), observation_type="screenshot", max_steps=10**6
        )

    envs = gymnasium.vector.AsyncVectorEnv([make, make], shared_memory=False)
    try:
        envs.reset(seed=0)
        reset = statistics.median(timed(lambda: envs.reset(), resets))
        counter = iter(range(10**9))

        def both() -> None:
            x = 100 + next(counter) % 500
            envs.step((MOVE.format(x=x), MOVE.format(x=x)))

        step = statistics.median(timed(both, steps))
    finally:
        envs.close()
    return {"reset": reset, "step": step}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--one-core", action="store_true", help="pin this process and its desktops to CPU 0")
    parser.add_argument("--no-vector", action="store_true", help="skip the two-desktop vector env")
    args = parser.parse_args()
    if args.one_core:
        os.sched_setaffinity(0, {0})
    one = bench_desktop_env(args.resets, args.steps)
    rows = [
        ("DesktopEnv reset, task (1 desktop)", 3600 / one["reset_task"], one["reset_task"]),
        ("DesktopEnv reset, bare (1 desktop)", 3600 / one["reset_bare"], one["reset_bare"]),
    ]
    step_rows = [("DesktopEnv step (1 desktop)", 1 / one["step"], one["step"])]
    if not args.no_vector:
        folder = Path(tempfile.mkdtemp(prefix="bench-env-"))
        task_file = folder / "bench-env.json"
        task_file.write_text(json.dumps(TASK))
        two = bench_vector(args.resets, args.steps, task_file)
        rows.append(("AsyncVectorEnv reset (2 desktops)", 2 * 3600 / two["reset"], two["reset"]))
        step_rows.append(("AsyncVectorEnv step (2 desktops)", 2 / two["step"], two["step"]))
    cores = "1 core (pinned)" if args.one_core else f"{len(os.sched_getaffinity(0))} cores"
    print(f"pytest-osworld env benchmark, {cores}, medians of {args.resets} resets / {args.steps} steps")
    print(f"{'':<38} {'resets/hour':>12} {'s/reset':>9}")
    for name, rate, seconds in rows:
        print(f"{name:<38} {rate:>12,.0f} {seconds:>9.3f}")
    for name, (seconds, source) in OSWORLD_RESET.items():
        print(f"{'OSWorld ' + name:<38} {3600 / seconds:>12,.0f} {seconds:>9.3f}  {source}")
    print(f"{'':<38} {'steps/s':>12} {'s/step':>9}")
    for name, rate, seconds in step_rows:
        print(f"{name:<38} {rate:>12.2f} {seconds:>9.3f}")
    seconds, source = OSWORLD_STEP
    print(f"{'OSWorld step (screenshot obs)':<38} {1 / seconds:>12.2f} {seconds:>9.3f}  {source}")


if __name__ == "__main__":
    main()
