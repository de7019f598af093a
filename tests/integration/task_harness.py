"""Run a task file end to end on a real desktop, with its solution or a variant of it.

Used by the task-suite tests to prove every evaluator both ways: the reference solution
scores 1, and a deliberately wrong end state (a one-line change of the solution) scores
below 1.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pytest_osworld.agent.contract import Agent, AgentConfig
from pytest_osworld.agents.basic import ReplayAgent
from pytest_osworld.episode.loop import Budget, Episode, run_episode
from pytest_osworld.episode.settle import run_and_settle
from pytest_osworld.evaluators.evaluate import Evaluation, evaluate
from pytest_osworld.providers.base import Provider
from pytest_osworld.setup_steps import run_steps
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Task, load_task


def with_solution_line(task: Task, index: int, replacement: str | dict[str, Any]) -> Task:
    """``task`` with line ``index`` of its solution replaced (a one-line change)."""
    if task.solution is None:
        raise ValueError(f"{task.nodename} has no solution")
    solution = list(task.solution)
    solution[index] = replacement
    return dataclasses.replace(task, solution=tuple(solution))


def run_task(
    provider: Provider, task: Task | Path, work_dir: Path, max_steps: int = 50, agent: Agent | None = None
) -> tuple[Episode, Evaluation]:
    """Restore, set up, run ``agent`` and evaluate; return both results.

    The default agent replays the task's solution, which waits for what it needs; any
    other agent gets the desktop settled after setup, as the plugin gives it."""
    if isinstance(task, Path):
        task = load_task(task)
    env = provider.restore(task.snapshot or "init_state")
    ctx = TaskContext(
        task=task,
        guest=env.guest,
        assets=AssetCache(work_dir / "cache", offline=True),
        work_dir=work_dir,
        client_password=env.client_password,
        screen_size=env.screen_size,
        cdp_url=env.extra.get("chromium_cdp_url"),
    )
    if agent is None:
        run_steps(ctx, task.config)
        agent = ReplayAgent(AgentConfig(name="replay"))
    else:
        run_and_settle(
            env.guest,
            [step.type for step in task.config],
            lambda sleep: run_steps(ctx, task.config, sleep_until_settled=sleep),
        )
    episode = run_episode(task, env.guest, agent, Budget(max_steps=max_steps))
    return episode, evaluate(ctx, episode.last_action)
