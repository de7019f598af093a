"""Fuzzing the task loader: any JSON is either a Task or a clean TaskFileError, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_osworld.errors import TaskFileError
from pytest_osworld.task.model import Task, load_task

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
KEYS = ["id", "instruction", "config", "evaluator", "proxy", "related_apps", "snapshot", "solution"]
EVALUATOR_KEYS = ["func", "result", "expected", "options", "conj", "postconfig"]


def _outcome(path: Path) -> str:
    """``task: <id>`` or ``error: <message>``; any other exception propagates (a bug)."""
    try:
        task = load_task(path)
    except TaskFileError as exc:
        return f"error: {exc}"
    return f"task: {task.id}" if isinstance(task, Task) else "not a task"


@st.composite
def task_like(draw: st.DrawFn) -> object:
    """Objects shaped like tasks, with wrong types anywhere."""
    task = {key: draw(JSON) for key in draw(st.lists(st.sampled_from(KEYS), unique=True))}
    if draw(st.booleans()):
        task["evaluator"] = {
            key: draw(JSON) for key in draw(st.lists(st.sampled_from(EVALUATOR_KEYS), unique=True))
        }
    return task


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(JSON, task_like()))
def test_any_json_loads_or_fails_cleanly(tmp_path: Path, data: object) -> None:
    path = tmp_path / "os" / "t.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    assert _outcome(path).startswith(("task:", f"error: {path}: at $"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(max_size=64))
def test_any_bytes_load_or_fail_cleanly(tmp_path: Path, blob: bytes) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(blob)
    assert _outcome(path).startswith(("task:", f"error: {path}: at $"))
