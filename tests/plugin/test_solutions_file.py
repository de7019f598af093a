"""``--solutions FILE``: reference solutions for task files that must stay unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")

TASK_ID = "11111111-0000-0000-0000-000000000001"
HELLO = ["# fake: write /home/user/out.txt hello", "DONE"]


def write_solutions(pytester: pytest.Pytester, data: Any) -> Path:
    path = pytester.path / "solutions.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def result_of(pytester: pytest.Pytester) -> dict[str, Any]:
    (path,) = Path(pytester.path).rglob(f"{TASK_ID}/result.json")
    return json.loads(path.read_text())


def osworld_task(write_task: Any) -> Path:
    """A task file as OSWorld ships them: no solution inside."""
    path: Path = write_task()
    data = json.loads(path.read_text())
    del data["solution"]
    path.write_text(json.dumps(data))
    return path


def test_replay_plays_the_solution_from_the_file(pytester: pytest.Pytester, write_task) -> None:
    task_file = osworld_task(write_task)
    before = task_file.read_bytes()
    write_solutions(pytester, {f"os/{TASK_ID}.json": HELLO, "chrome/other.json": ["DONE"]})
    result = pytester.runpytest("tasks", "--agent=replay", "--solutions=solutions.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["osworld: results=* solutions=solutions.json"])
    assert result_of(pytester)["provenance"]["solutions"] == "solutions.json"
    assert task_file.read_bytes() == before


def test_without_the_file_the_task_has_nothing_to_replay(pytester: pytest.Pytester, write_task) -> None:
    osworld_task(write_task)
    result = pytester.runpytest("tasks", "--agent=replay", "-rE")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*has no 'solution' to replay*--solutions*"])


def test_the_file_replaces_a_solution_in_the_task(pytester: pytest.Pytester, write_task) -> None:
    write_task()  # its own solution writes hello and passes
    write_solutions(pytester, {f"os/{TASK_ID}.json": ["DONE"]})
    result = pytester.runpytest("tasks", "--agent=replay", "--solutions=solutions.json")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*rerun       : pytest *.json --agent=replay --provider=fake --solutions=solutions.json"]
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "--solutions solutions.json: cannot read it as JSON"),
        (
            "[1, 2]",
            '--solutions solutions.json: expected a JSON object {"<domain>/<task file>.json": [actions...]}, got list',
        ),
        (json.dumps({"os-task.json": ["DONE"]}), "key 'os-task.json' is not '<domain>/<task file>.json'"),
        (
            json.dumps({"os/a.json": []}),
            '--solutions solutions.json: at $["os/a.json"]: the reference solution is empty',
        ),
        (
            json.dumps({"os/a.json": ["pyautogui.click(1, 2)"]}),
            'at $["os/a.json"][0]: the solution must end with DONE or FAIL',
        ),
        (
            json.dumps({"os/a.json": [3, "DONE"]}),
            'at $["os/a.json"][0]: expected pyautogui code or an action, got a number 3',
        ),
    ],
    ids=["not-json", "not-object", "bad-key", "empty", "no-end", "bad-action"],
)
def test_a_bad_solutions_file_is_a_usage_error_naming_where(
    pytester: pytest.Pytester, write_task, content: str, message: str
) -> None:
    write_task()
    write_solutions(pytester, content)
    result = pytester.runpytest("tasks", "--agent=replay", "--solutions=solutions.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_missing_solutions_file_is_a_usage_error(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "--agent=replay", "--solutions=nope.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--solutions*nope.json*no such file*"])
