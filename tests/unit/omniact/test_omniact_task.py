"""The OmniACT task file: loading, the agent's view of it, and errors naming file and JSON path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.agent.actions import action_from_json
from pytest_osworld.errors import TaskFileError
from pytest_osworld.omniact.score import Box
from pytest_osworld.omniact.task import load_omniact_task, looks_like_omniact, png_size


def valid_task(**changes: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "id": "calc-bold",
        "instruction": "Make the title bold",
        "image": "shot.png",
        "script": "pyautogui.click(30, 20)  # box: bold\npyautogui.hotkey('ctrl', 's')",
        "boxes": {"bold": [20, 10, 20, 20]},
        "domain": "desktop",
        "app": "LibreOffice Calc",
    }
    task.update(changes)
    return {k: v for k, v in task.items() if v is not None}


@pytest.fixture
def write(tmp_path: Path, make_png: Callable[..., bytes]):  # type: ignore[no-untyped-def]
    (tmp_path / "shot.png").write_bytes(make_png())

    def write_task(data: object) -> Path:
        path = tmp_path / "task.json"
        path.write_text(json.dumps(data) if not isinstance(data, str) else data)
        return path

    return write_task


def test_a_valid_task_loads(write) -> None:  # type: ignore[no-untyped-def]
    task = load_omniact_task(write(valid_task()))
    assert task.id == "calc-bold"
    assert task.nodename == "omniact/calc-bold"
    assert task.boxes == {"bold": Box(20, 10, 20, 20)}
    assert task.image_size == (200, 100)
    assert [a.kind for a in task.actions] == ["click", "hotkey"]
    assert task.screenshot().startswith(b"\x89PNG")
    assert len(task.sha256) == 64


def test_the_agent_task_replays_the_gold_script(write) -> None:  # type: ignore[no-untyped-def]
    task = load_omniact_task(write(valid_task()))
    agent_task = task.agent_task()
    assert agent_task.domain == "omniact"
    assert agent_task.solution is not None
    actions = [action_from_json(a) for a in agent_task.solution]
    assert [a.kind for a in actions] == ["code", "DONE"]
    assert actions[0].code == task.script
    assert not agent_task.infeasible
    assert agent_task.related_apps == ("LibreOffice Calc",)


def test_a_box_may_be_keyed_by_line_number(write) -> None:  # type: ignore[no-untyped-def]
    data = valid_task(script="import pyautogui\npyautogui.click(30, 20)", boxes={"2": [20, 10, 20, 20]})
    assert load_omniact_task(write(data)).boxes["2"] == Box(20, 10, 20, 20)


def test_domain_defaults_to_desktop(write) -> None:  # type: ignore[no-untyped-def]
    assert load_omniact_task(write(valid_task(domain=None, app=None))).domain == "desktop"


@pytest.mark.parametrize(
    ("data", "json_path", "problem"),
    [
        ([1, 2], "$", "expected an object, got list"),
        (valid_task(id=None), "$", "missing required key 'id'"),
        (valid_task(instruction="  "), "$.instruction", "must not be empty"),
        (valid_task(instruction=3), "$.instruction", "expected a string, got a number 3"),
        (valid_task(id="a b"), "$.id", "use letters, digits"),
        (valid_task(domain="mobile"), "$.domain", "expected one of desktop, web, got 'mobile'"),
        (valid_task(evaluator={}), "$.evaluator", "unknown key"),
        (valid_task(image="missing.png"), "$.image", "cannot read"),
        (valid_task(image="../shot.png"), "$.image", "must name a file in the task's own folder"),
        (valid_task(image="task.json"), "$.image", "is not a PNG file"),
        (valid_task(script="pyautogui.click(1,"), "$.script", "the script is not valid Python: line 1"),
        (
            valid_task(script="import time\ntime.sleep(1)"),
            "$.script",
            "the gold script has no pyautogui actions",
        ),
        (valid_task(boxes=None), "$", "missing required key 'boxes'"),
        (valid_task(boxes=[]), "$.boxes", "expected an object, got a list []"),
        (valid_task(boxes={"bold": [20, 10, 20]}), "$.boxes.bold", "expected [x, y, width, height] numbers"),
        (valid_task(boxes={"bold": [20, 10, 0, 20]}), "$.boxes.bold", "width and height must be positive"),
        (valid_task(boxes={"bold": [190, 10, 20, 20]}), "$.boxes.bold", "the box leaves the 200x100 image"),
        (
            valid_task(boxes={"bold": [0, 0, 10, 10]}),
            "$.script (line 1, action 1 click)",
            "the gold point (30, 20) is outside its box 'bold'",
        ),
        (
            valid_task(boxes={"italic": [20, 10, 20, 20]}),
            "$.script (line 1, action 1 click)",
            "no box for this action",
        ),
        (
            valid_task(boxes={"bold": [20, 10, 20, 20], "extra": [0, 0, 5, 5]}),
            "$.boxes.extra",
            "no pointer action of the script uses this box",
        ),
        (
            valid_task(script="pyautogui.click(30, 20)  # box: bold\npyautogui.write(text)"),
            "$.script (line 2, action 2)",
            "write needs a literal string",
        ),
    ],
)
def test_errors_name_the_file_and_json_path(write, data: object, json_path: str, problem: str) -> None:  # type: ignore[no-untyped-def]
    path = write(data)
    with pytest.raises(TaskFileError) as info:
        load_omniact_task(path)
    assert info.value.path == str(path)
    assert info.value.json_path == json_path
    assert problem in info.value.problem
    assert str(info.value).startswith(f"{path}: at {json_path}: ")


def test_invalid_json_is_reported_with_its_position(write) -> None:  # type: ignore[no-untyped-def]
    path = write('{"id": "x",\n "script": }')
    with pytest.raises(TaskFileError, match=r"at \$: not valid JSON \(line 2 column 12\)"):
        load_omniact_task(path)


def test_a_missing_file() -> None:
    with pytest.raises(TaskFileError, match="cannot read the file"):
        load_omniact_task(Path("/nonexistent/task.json"))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (valid_task(), True),
        ({"script": "pyautogui.click(1, 1)", "boxes": {}}, True),
        ({"instruction": "x", "script": "...", "image": "a.png", "evaluator": {"func": "x"}}, False),
        ({"instruction": "x", "evaluator": {"func": "x"}}, False),  # an OSWorld task
        ({"script": "..."}, False),
        (["script", "image"], False),
    ],
)
def test_looks_like_omniact(data: object, expected: bool) -> None:
    assert looks_like_omniact(data) is expected


def test_png_size(make_png: Callable[..., bytes]) -> None:
    assert png_size(make_png(7, 3)) == (7, 3)
    with pytest.raises(ValueError):
        png_size(b"GIF89a")
