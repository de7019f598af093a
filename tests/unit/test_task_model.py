from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_osworld.errors import TaskFileError
from pytest_osworld.task.model import load_task, looks_like_task

OSWORLD = Path(__file__).resolve().parents[3] / "shared" / "osworld" / "examples"


def _write(tmp_path: Path, data: object, name: str = "t.json") -> Path:
    path = tmp_path / "os" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_list_evaluator_is_parsed_column_wise(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "id": "x",
            "instruction": "do it",
            "evaluator": {
                "func": ["exact_match", "check_include_exclude"],
                "conj": "or",
                "result": [{"type": "vm_command_line", "command": "ls"}, None],
                "expected": [{"type": "rule", "rules": {"expected": "a"}}, {}],
                "options": [{}, {"x": 1}],
                "postconfig": [{"type": "sleep", "parameters": {"seconds": 1}}],
            },
            "solution": ["pyautogui.press('a')", {"action_type": "DONE"}],
        },
    )
    task = load_task(path)
    assert task.domain == "os" and task.nodename == "os/x"
    assert [m.func for m in task.evaluator.metrics] == ["exact_match", "check_include_exclude"]
    assert task.evaluator.conj == "or"
    assert task.evaluator.metrics[1].result is None and task.evaluator.metrics[1].expected is None
    assert task.evaluator.metrics[1].options == {"x": 1}
    assert task.evaluator.postconfig[0].type == "sleep"
    assert len(task.sha256) == 64 and not task.infeasible


def test_infeasible(tmp_path: Path) -> None:
    task = load_task(_write(tmp_path, {"id": "x", "instruction": "i", "evaluator": {"func": "infeasible"}}))
    assert task.infeasible and task.evaluator.getters() == []


@pytest.mark.parametrize(
    ("data", "where", "problem"),
    [
        ([], "$", "expected an object, got a list []"),
        ({"id": "", "instruction": "i", "evaluator": {"func": "f"}}, "$.id", "must not be empty"),
        ({"id": "x", "instruction": "i"}, "$", "missing required key 'evaluator'"),
        (
            {"id": "x", "instruction": "i", "evaluator": {"func": []}},
            "$.evaluator.func",
            "the list of metrics is empty",
        ),
        (
            {"id": "x", "instruction": "i", "evaluator": {"func": "f", "options": 3}},
            "$.evaluator.options",
            "expected an object, got a number 3",
        ),
        (
            {"id": "x", "instruction": "i", "evaluator": {"func": "f", "result": {"path": "a"}}},
            "$.evaluator.result",
            "missing required key 'type'",
        ),
        (
            {"id": "x", "instruction": "i", "evaluator": {"func": "f"}, "related_apps": ["a", 1]},
            "$.related_apps[1]",
            "expected a string, got a number 1",
        ),
        (
            {"id": "x", "instruction": "i", "evaluator": {"func": "f"}, "solution": []},
            "$.solution",
            "the reference solution is empty; end it with DONE or FAIL",
        ),
        (
            {"id": "x", "instruction": "i", "evaluator": {"func": "f"}, "solution": [{"x": 1}]},
            "$.solution[0]",
            "a computer_13 action needs a string 'action_type'",
        ),
    ],
)
def test_errors_name_file_path_and_problem(tmp_path: Path, data, where, problem) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(TaskFileError) as info:
        load_task(path)
    assert str(info.value) == f"{path}: at {where}: {problem}"


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"id": "x",\n "instruction": }')
    with pytest.raises(TaskFileError, match=r"not valid JSON \(line 2 column 17\)"):
        load_task(path)


def test_looks_like_task() -> None:
    assert looks_like_task({"instruction": "x"})
    assert not looks_like_task({"chrome": ["id"]})
    assert not looks_like_task([1])


@pytest.mark.skipif(not OSWORLD.is_dir(), reason="OSWorld tasks not present")
def test_every_osworld_task_parses() -> None:
    tasks = [load_task(p) for p in sorted(OSWORLD.glob("*/*.json"))]
    assert len(tasks) == 369
    assert sum(t.infeasible for t in tasks) == 29
    assert sum(len(t.evaluator.metrics) > 1 for t in tasks) == 51
    assert sum(t.evaluator.conj == "or" for t in tasks) == 25
    assert all(t.id == t.path.stem for t in tasks)
