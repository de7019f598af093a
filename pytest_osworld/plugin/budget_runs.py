"""``--budgets``: a task item's scores at smaller step budgets, after its own evaluation.

``run_task`` calls :func:`score_item_budgets` once the episode is evaluated: on the same
worker's provider, the replays of :mod:`pytest_osworld.episode.budgets` run one after another,
timed as the task's ``budgets`` phase. What this adds to them is the results folder's part: the
screen where a replay parted from the run is kept beside the run's screenshots as
``budget_<k>_step_<j>.png``, and the scores become ``result.json``'s ``scores_at`` and one JUnit
property per budget (:func:`~pytest_osworld.report.junit.budget_properties`).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_osworld.episode.budgets import BudgetPlan, score_budgets
from pytest_osworld.episode.loop import Episode
from pytest_osworld.episode.task_run import TaskRun
from pytest_osworld.evaluators.evaluate import Evaluation
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.task.settings import Settings

#: The file a replay's parted screen is kept in, in the task's results folder.
PARTED_SCREEN = "budget_{budget}_step_{step}.png"


def score_item_budgets(
    item: pytest.Item,
    run: TaskRun,
    episode: Episode,
    evaluation: Evaluation,
    settings: Settings,
    recorder: TaskRecorder,
) -> dict[str, dict[str, Any]] | None:
    """The task's ``scores_at`` (None without ``--budgets``): its score at each budget of the
    run and at ``--max-steps``, by budget as a string, ascending."""
    if not settings.budgets or run.task is None:
        return None
    initial = recorder.dir / "step_0.png"
    plan = BudgetPlan(
        task=run.task,
        provider=run.provider,
        assets=run.assets,
        episode=episode,
        threshold=settings.pass_threshold,
        inputs_root=recorder.work_dir(),
        initial_screen=initial.read_bytes() if initial.is_file() else None,
        step_times=list(run.timings.step_times),
    )
    follows = bool(getattr(item, "osworld_task_follows", True))
    with run.timings.phase("budgets"):
        scores = score_budgets(plan, settings.budgets, settings.max_steps, evaluation, more_restores=follows)
    for score in scores:
        if score.parted_screen is not None and score.diverged_at is not None:
            name = PARTED_SCREEN.format(budget=score.budget, step=score.diverged_at)
            (recorder.dir / name).write_bytes(score.parted_screen)
            score.screen_file = name
    return {str(score.budget): score.to_json() for score in scores}
