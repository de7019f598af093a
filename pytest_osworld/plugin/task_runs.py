"""The task run of a pytest item: the :class:`~pytest_osworld.episode.task_run.TaskRun` each task
item keeps in its stash, from the start of its restore (``osworld_env``) to its result
(``run_task``), and with it the task's clock."""

from __future__ import annotations

import pytest

from pytest_osworld.episode.task_run import TaskRun
from pytest_osworld.providers.base import Provider
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.model import Task
from pytest_osworld.task.timings import TaskTimings

#: Where a task item keeps its :class:`TaskRun` (``item.stash[RUN_KEY]``).
RUN_KEY = pytest.StashKey[TaskRun]()


def start_run(node: pytest.Item, task: Task, provider: Provider, assets: AssetCache) -> TaskRun:
    """A fresh run of ``task`` for ``node``, its clock started now (at the start of its restore)."""
    run = node.stash[RUN_KEY] = TaskRun(task, provider, assets)
    return run


def task_run(node: pytest.Item, task: Task, provider: Provider, assets: AssetCache) -> TaskRun:
    """The run of ``node``; one started now if none was (a conftest that overrides
    ``osworld_env`` still gets a run, and timings from the moment it is first asked for)."""
    run = node.stash.get(RUN_KEY, None)
    return run if run is not None else start_run(node, task, provider, assets)


def started_timings(node: pytest.Item) -> TaskTimings | None:
    """The clock of ``node``'s task, or None when its restore never began."""
    run = node.stash.get(RUN_KEY, None)
    return run.timings if run is not None else None
