"""Hooks that pytest-osworld calls, for plugins and conftest files to implement."""

from __future__ import annotations

from typing import Any

import pytest


def pytest_osworld_step(item: pytest.Item, step: dict[str, Any]) -> None:
    """Called after each step of an episode with the step as plain data.

    ``step`` is the ``traj.jsonl`` line of the step (number, actions, response, errors).
    Use it for live progress displays; it runs on the xdist worker that runs the task.
    """


def pytest_osworld_task_result(item: pytest.Item, result: dict[str, Any]) -> None:
    """Called once a task has a result (score, outcome, metrics, provenance) as plain data."""
