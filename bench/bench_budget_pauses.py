"""How a ``--budgets`` replay's timing compares with its run's, step by step.

A pytest plugin and its report. Loaded into a run with ``--budgets``, it writes one JSON line
per replay to the file named by ``BUDGET_PAUSES_LOG``. Each line holds the task, the budget,
how the replay ended, and for every replayed step the gap before its actions and how long they
ran, for the run and for the replay. The gap is the time from the end of one step's actions to
the start of the next step's, leaving out the agent's own time. Run as a script, it prints the
medians and how often the replay's gap was the longer one:

    BUDGET_PAUSES_LOG=/tmp/pauses.jsonl PYTHONPATH=bench:tests .venv/bin/python -m pytest \\
        -p bench_budget_pauses tasks/vs_code --agent=budget_agent:BudgetAgent --max-steps=30 \\
        --budgets=5,10 -n 2
    .venv/bin/python bench/bench_budget_pauses.py /tmp/pauses.jsonl

It measures; it changes nothing the replay does. It only wraps two functions: the replay's
``TaskRun.act``, to clock each action, and ``replay_budget``, to write the line.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pytest_osworld.agent.actions import Action
from pytest_osworld.episode import budgets
from pytest_osworld.episode.task_run import TaskRun

#: The replay's actions so far: (start on the monotonic clock, seconds), one per action.
_ACTS: list[tuple[float, float]] = []


class ClockedTaskRun(TaskRun):
    """A task's run whose actions are clocked into :data:`_ACTS`."""

    def act(self, action: Action, *args: Any, **kwargs: Any) -> str | None:
        """Run the action as the replay would, noting when it began and how long it took."""
        began = time.monotonic()
        error = super().act(action, *args, **kwargs)
        _ACTS.append((began, time.monotonic() - began))
        return error


_replay = budgets.replay_budget


def clocked_replay(plan: budgets.BudgetPlan, budget: int, more_restores: bool = True) -> budgets.BudgetScore:
    """Replay as ``replay_budget`` does, then write the replay's timing beside the run's."""
    _ACTS.clear()
    score = _replay(plan, budget, more_restores=more_restores)
    log = os.environ.get("BUDGET_PAUSES_LOG")
    if log and _ACTS:
        with Path(log).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(_line(plan, budget, score)) + "\n")
    return score


def _line(plan: budgets.BudgetPlan, budget: int, score: budgets.BudgetScore) -> dict[str, Any]:
    """One replay's line: the run's and the replay's gaps and action times, step by step
    (a step's first action stands for the step: the budget agent takes one per step)."""
    agent = {entry.get("index"): float(entry.get("agent") or 0.0) for entry in plan.step_times}
    steps = plan.episode.steps[:budget]
    run_starts = [step.started + agent.get(step.index, 0.0) for step in steps]
    run_times = [step.started + step.duration - start for step, start in zip(steps, run_starts, strict=True)]
    replay = _ACTS[: len(steps)]
    return {
        "task": plan.task.id,
        "budget": budget,
        "end": score.end.value,
        "diverged_at": score.diverged_at,
        "run_gaps": _gaps(run_starts, run_times),
        "replay_gaps": _gaps([began for began, _ in replay], [took for _, took in replay]),
        "run_actions": [round(t, 3) for t in run_times],
        "replay_actions": [round(took, 3) for _, took in replay],
    }


def _gaps(starts: list[float], times: list[float]) -> list[float]:
    """From the end of each step's actions to the start of the next step's, in seconds."""
    return [round(starts[i + 1] - (starts[i] + times[i]), 3) for i in range(len(starts) - 1)]


budgets.TaskRun = ClockedTaskRun  # type: ignore[attr-defined]
budgets.replay_budget = clocked_replay


def report(path: Path) -> str:
    """The figures of a log: replays, diverged ones, and the gaps' medians and maxima."""
    lines = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text]
    pairs = [pair for line in lines for pair in zip(line["run_gaps"], line["replay_gaps"], strict=False)]
    if not pairs:
        return f"{path}: no replayed steps"
    run, replay = [r for r, _ in pairs], [p for _, p in pairs]
    diverged = sum(1 for line in lines if line["end"] == "diverged")
    longer = sum(1 for r, p in pairs if p > r)
    return "\n".join(
        [
            f"replays: {len(lines)} ({diverged} diverged); gaps between replayed steps: {len(pairs)}",
            f"run's gap:    median {statistics.median(run):.3f} s, max {max(run):.3f} s",
            f"replay's gap: median {statistics.median(replay):.3f} s, max {max(replay):.3f} s",
            f"the replay's gap was the longer in {longer} of {len(pairs)}",
        ]
    )


if __name__ == "__main__":
    print(report(Path(sys.argv[1])))
