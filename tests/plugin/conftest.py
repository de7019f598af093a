"""Helpers for pytester-based tests of the plugin: task files for the fake provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

WRITE_HELLO = "# fake: write /home/user/out.txt hello"


def make_task(
    task_id: str = "11111111-0000-0000-0000-000000000001",
    *,
    config: list[dict[str, Any]] | None = None,
    evaluator: dict[str, Any] | None = None,
    solution: list[Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A small valid task for the fake provider: write 'hello' to out.txt."""
    task: dict[str, Any] = {
        "id": task_id,
        "snapshot": "os",
        "instruction": "Please write hello into ~/out.txt for me.",
        "source": "test",
        "config": config if config is not None else [],
        "related_apps": ["os"],
        "evaluator": evaluator
        or {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
        "proxy": False,
        "solution": solution if solution is not None else [WRITE_HELLO, "DONE"],
    }
    task.update(extra)
    return task


@pytest.fixture
def write_task(pytester: pytest.Pytester) -> Callable[..., Any]:
    """Write a task JSON under ``tasks/<domain>/<id>.json`` in the pytester dir."""

    def write(domain: str = "os", **kwargs: Any) -> Any:
        task = make_task(**kwargs)
        path = pytester.path / "tasks" / domain / f"{task['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(task, indent=2))
        return path

    return write


@pytest.fixture
def fake_ini(pytester: pytest.Pytester) -> None:
    """Use the fake provider and a private asset cache in the pytester project."""
    pytester.makeini(
        """
        [pytest]
        osworld_provider = fake
        osworld_asset_cache = .assets
        osworld_results_dir = results/run
        filterwarnings = ignore::pytest.PytestAssertRewriteWarning
        """
    )
