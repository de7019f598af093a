"""Task files with a wrong type in every field: each rejection names the JSON path and what was wrong.

``test_task_fuzz.py`` proves that no JSON crashes the loader; it rarely reaches the inner
fields (a random ``config`` is seldom a list of step objects). This file starts from
valid tasks and breaks one field at a time, at every depth, and checks the message. What
the loader leaves free-form (a step's parameter values, a getter's options) is checked
where it is used: a wrong type there is a ``SetupStepError`` or a ``GetterError`` naming
the JSON path, never a bare traceback.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_osworld.errors import SetupStepError, TaskFileError
from pytest_osworld.evaluators.evaluate import evaluate
from pytest_osworld.providers.fake import FakeGuest
from pytest_osworld.setup_steps import run_steps
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import load_task, parse_task

MULTI: dict[str, Any] = {
    "id": "0a1b2c3d-hostile",
    "instruction": "Do the thing.",
    "config": [{"type": "execute", "parameters": {"command": ["true"]}}],
    "evaluator": {
        "func": ["exact_match", "exact_match"],
        "conj": "or",
        "result": [{"type": "vm_file", "path": "/a", "dest": "a"}, {"type": "rule", "rules": {}}],
        "expected": [{"type": "rule", "rules": {"expected": "x"}}, None],
        "options": [{}, {}],
        "postconfig": [{"type": "sleep", "parameters": {"seconds": 0}}],
    },
    "proxy": False,
    "related_apps": ["os"],
    "snapshot": "os",
    "solution": ["DONE"],
}
SINGLE: dict[str, Any] = {
    "id": "single",
    "instruction": "Do it.",
    "evaluator": {
        "func": "exact_match",
        "result": {"type": "rule"},
        "expected": {"type": "rule"},
        "options": {},
    },
}

#: Wrong values of each JSON type, and how the messages describe them.
WRONG = {
    "number": (5, "a number 5"),
    "string": ("text", 'a string "text"'),
    "bool": (True, "true or false true"),
    "list": ([1], "a list [1]"),
    "object": ({"k": 1}, 'an object {"k": 1}'),
    "null": (None, "null"),
}


def _set(data: dict[str, Any], path: list[str | int], value: object) -> dict[str, Any]:
    broken = copy.deepcopy(data)
    node: Any = broken
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return broken


def _json_path(path: list[str | int]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


# (base, path, the kinds that are wrong there, the expected type's name in the message)
FIELDS: list[tuple[dict[str, Any], list[str | int], list[str], str]] = [
    (MULTI, ["id"], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["instruction"], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["config"], ["number", "string", "bool", "object", "null"], "a list"),
    (MULTI, ["config", 0], ["number", "string", "bool", "list", "null"], "an object"),
    (MULTI, ["config", 0, "type"], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["config", 0, "parameters"], ["number", "string", "bool", "list", "null"], "an object"),
    (MULTI, ["evaluator"], ["number", "string", "bool", "list", "null"], "an object"),
    (MULTI, ["evaluator", "func", 1], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["evaluator", "result"], ["number", "string", "bool", "object"], "a list"),
    (MULTI, ["evaluator", "result", 0], ["number", "string", "bool", "list"], "an object"),
    (MULTI, ["evaluator", "result", 0, "type"], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["evaluator", "expected"], ["number", "string", "bool", "object"], "a list"),
    (MULTI, ["evaluator", "expected", 0], ["number", "string", "bool", "list"], "an object"),
    (MULTI, ["evaluator", "expected", 0, "type"], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["evaluator", "options"], ["number", "string", "bool", "object"], "a list"),
    (MULTI, ["evaluator", "options", 1], ["number", "string", "bool", "list"], "an object"),
    (MULTI, ["evaluator", "postconfig"], ["number", "string", "bool", "object", "null"], "a list"),
    (MULTI, ["evaluator", "postconfig", 0], ["number", "string", "bool", "list", "null"], "an object"),
    (MULTI, ["evaluator", "postconfig", 0, "type"], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["evaluator", "postconfig", 0, "parameters"], ["number", "string", "bool", "list"], "an object"),
    (MULTI, ["proxy"], ["number", "string", "list", "object", "null"], "true or false"),
    (MULTI, ["related_apps"], ["number", "string", "bool", "object", "null"], "a list"),
    (MULTI, ["related_apps", 0], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["snapshot"], ["number", "bool", "list", "object", "null"], "a string"),
    (MULTI, ["solution"], ["number", "string", "bool", "object", "null"], "a list"),
    (SINGLE, ["evaluator", "func"], ["number", "bool", "object", "null"], "a string"),
    (SINGLE, ["evaluator", "result"], ["number", "string", "bool"], "an object"),
    (SINGLE, ["evaluator", "expected"], ["number", "string", "bool"], "an object"),
    (SINGLE, ["evaluator", "options"], ["number", "string", "bool"], "an object"),
]
CASES = [
    pytest.param(base, path, kind, expected, id=f"{_json_path(path)}={kind}")
    for base, path, kinds, expected in FIELDS
    for kind in kinds
]


def _load(tmp_path: Path, data: object) -> TaskFileError:
    path = tmp_path / "os" / "task.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    with pytest.raises(TaskFileError) as info:
        load_task(path)
    assert str(info.value).startswith(f"{path}: at $")
    return info.value


@pytest.mark.parametrize(("base", "path", "kind", "expected"), CASES)
def test_a_wrong_type_in_any_field_is_named_with_its_path(
    tmp_path: Path, base: dict[str, Any], path: list[str | int], kind: str, expected: str
) -> None:
    value, described = WRONG[kind]
    error = _load(tmp_path, _set(base, path, value))
    assert error.json_path == _json_path(path)
    assert error.problem == f"expected {expected}, got {described}"


def test_the_valid_bases_load(tmp_path: Path) -> None:
    for base in (MULTI, SINGLE):
        parse_task(copy.deepcopy(base), tmp_path / "t.json", "0", "os")


@pytest.mark.parametrize(
    ("path", "value", "json_path", "problem"),
    [
        (["evaluator", "conj"], 1, "$.evaluator.conj", "expected 'and' or 'or', got a number 1"),
        (["evaluator", "conj"], "AND", "$.evaluator.conj", "expected 'and' or 'or', got a string \"AND\""),
        (["evaluator", "conj"], None, "$.evaluator.conj", "expected 'and' or 'or', got null"),
        (["evaluator", "conj"], ["and"], "$.evaluator.conj", "expected 'and' or 'or', got a list [\"and\"]"),
        (["evaluator", "func"], [], "$.evaluator.func", "the list of metrics is empty"),
        (["evaluator", "options"], [{}], "$.evaluator.options", "has 1 entries but func lists 2 metrics"),
        (["evaluator", "func", 0], "   ", "$.evaluator.func[0]", "must not be empty"),
        (["solution"], [], "$.solution", "the reference solution is empty"),
        (["solution", 0], 5, "$.solution[0]", "expected pyautogui code or an action, got a number 5"),
        (["solution", 0], {"x": 1}, "$.solution[0]", "a computer_13 action needs a string 'action_type'"),
        (["solution", 0], "click()", "$.solution[0]", "the solution must end with DONE or FAIL"),
        (["id"], "", "$.id", "must not be empty"),
    ],
)
def test_wrong_values_that_are_not_type_errors_say_what_is_expected(
    tmp_path: Path, path: list[str | int], value: object, json_path: str, problem: str
) -> None:
    error = _load(tmp_path, _set(MULTI, path, value))
    assert error.json_path == json_path
    assert error.problem.startswith(problem)


def test_a_list_where_a_single_metric_takes_an_object_is_explained(tmp_path: Path) -> None:
    error = _load(tmp_path, _set(SINGLE, ["evaluator", "result"], [{"type": "rule"}]))
    assert (error.json_path, error.problem) == (
        "$.evaluator.result",
        "is a list but func is a single metric name",
    )


def _paths(data: Any, prefix: list[str | int]) -> list[list[str | int]]:
    """Every path into ``data`` (objects and lists), the root excluded."""
    found: list[list[str | int]] = []
    items: list[tuple[str | int, Any]] = []
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        items = list(enumerate(data))
    for key, value in items:
        found.append([*prefix, key])
        found.extend(_paths(value, [*prefix, key]))
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base=st.sampled_from([MULTI, SINGLE]),
    index=st.integers(min_value=0),
    value=st.sampled_from([v for v, _ in WRONG.values()] + [[], {}, "", 0, 1.5, [None], [[]], [{}]]),
)
def test_breaking_any_field_gives_a_task_or_an_error_at_or_above_it(
    tmp_path: Path, base: dict[str, Any], index: int, value: object
) -> None:
    """Free-form values (a getter's options, a step's parameters) may load; anything else is
    refused with a path that leads to the broken field (or to its parent that it invalidates)."""
    paths = _paths(base, [])
    path = paths[index % len(paths)]
    data = _set(base, path, value)
    file = tmp_path / "os" / "t.json"
    file.parent.mkdir(exist_ok=True)
    file.write_text(json.dumps(data))
    error: TaskFileError | None = None
    try:
        load_task(file)
    except TaskFileError as exc:
        error = exc
    if error is not None:
        target, parent = _json_path(path), _json_path(path[:-1])
        assert target.startswith(error.json_path) or error.json_path.startswith(parent), (
            target,
            error.json_path,
        )
        assert error.problem and len(error.problem) < 300


# -- free-form values: checked where they are used -------------------------------------------------


def _context(tmp_path: Path, data: dict[str, Any]) -> TaskContext:
    task = parse_task(data, tmp_path / "t.json", "0", "os")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    guest = FakeGuest({"/a": b"x"})
    return TaskContext(task, guest, AssetCache(tmp_path / "cache", offline=True), work)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("step", "problem"),
    [
        ({"type": "sleep", "parameters": {"seconds": "soon"}}, "could not convert string to float: 'soon'"),
        ({"type": "sleep", "parameters": {"seconds": [1]}}, "float() argument must be"),
        ({"type": "sleep", "parameters": {}}, "missing 1 required positional argument: 'seconds'"),
        ({"type": "sleep", "parameters": {"seconds": 0, "extra": 1}}, "unexpected keyword argument 'extra'"),
        ({"type": "download", "parameters": {"files": [{}]}}, "missing key 'url'"),
        ({"type": "download", "parameters": {"files": [5]}}, "not subscriptable"),
        ({"type": "execute", "parameters": {"command": 5}}, "not iterable"),
        ({"type": "execute", "parameters": {"command": "echo 'unclosed"}}, "No closing quotation"),
    ],
)
def test_wrong_step_parameters_are_a_setup_error_naming_the_step(
    tmp_path: Path, step: dict[str, Any], problem: str
) -> None:
    """Before the fix a ValueError or KeyError escaped as a bare traceback."""
    ctx = _context(tmp_path, {**SINGLE, "config": [step]})
    with pytest.raises(SetupStepError) as info:
        run_steps(ctx, ctx.task.config)
    message = str(info.value)
    assert message.startswith(f"setup step 1/1 {step['type']!r} failed: bad parameters at $.config[0]: ")
    assert problem in message


@pytest.mark.parametrize(
    ("getter", "problem"),
    [
        ({"type": "vm_file", "path": "/a", "dest": 5}, "vm_file dest 'int' is not a string"),
        (
            {"type": "vm_file", "path": "/a", "dest": "a", "multi": True, "gives": "x"},
            "bad value at $.evaluator.result",
        ),
        ({"type": "vm_file", "path": "/a"}, "missing key 'dest' at $.evaluator.result"),
        ({"type": "vm_file", "path": "/a", "dest": "../../x"}, "escapes the folder"),
    ],
)
def test_wrong_getter_values_are_an_evaluation_error_with_the_reason(
    tmp_path: Path, getter: dict[str, Any], problem: str
) -> None:
    """Before the fix a TypeError from a getter crashed the evaluation instead of scoring it."""
    ctx = _context(tmp_path, _set(SINGLE, ["evaluator", "result"], getter))
    evaluation = evaluate(ctx, None)
    assert evaluation.score == 0.0
    assert evaluation.error is not None and problem in evaluation.error
    assert not (tmp_path / "x").exists()
