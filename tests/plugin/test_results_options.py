"""Results options end to end: the HTML report, --repeat, --skip-done, --rescore, error results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")

RESULTS = Path("results/run/pyautogui/screenshot")


def _result(
    pytester: pytest.Pytester, agent: str, folder: str = "11111111-0000-0000-0000-000000000001"
) -> dict:
    return json.loads((pytester.path / RESULTS / agent / "os" / folder / "result.json").read_text())


def test_html_report_is_written(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "--agent=replay")
    result.stdout.fnmatch_lines(["report:  *results/run/index.html"])
    index = (pytester.path / "results" / "run" / "index.html").read_text()
    assert "11111111-0000-0000-0000-000000000001" in index
    assert "passed" in index


def test_result_json_has_instruction_and_conj(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    pytester.runpytest("tasks", "--agent=replay")
    data = _result(pytester, "replay")
    assert data["instruction"] == "Please write hello into ~/out.txt for me."
    assert data["conj"] == "and"
    assert data["provenance"]["agent"] == "replay"


def test_errors_and_skips_leave_a_result(pytester: pytest.Pytester, write_task) -> None:
    write_task(config=[{"type": "open", "parameters": {"path": "/home/user/missing.docx"}}])
    pytester.runpytest("tasks", "--agent=replay")
    data = _result(pytester, "replay")
    assert data["outcome"] == "error"
    assert data["score"] is None
    assert "setup step 1/1 'open' failed" in data["reason"]


def test_repeat_runs_each_task_n_times(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "--agent=replay", "--repeat=3")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["repeats (3 runs of each task):", "*pass@1 100.0% (3/3)*"])
    root = pytester.path / RESULTS / "replay" / "os"
    assert sorted(p.name for p in root.iterdir()) == [
        "11111111-0000-0000-0000-000000000001",
        "11111111-0000-0000-0000-000000000001.repeat-2",
        "11111111-0000-0000-0000-000000000001.repeat-3",
    ]


def test_skip_done_resumes(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="11111111-0000-0000-0000-000000000001")
    pytester.runpytest("tasks/os/11111111-0000-0000-0000-000000000001.json", "--agent=replay")
    write_task(task_id="11111111-0000-0000-0000-000000000002")
    result = pytester.runpytest("tasks", "--agent=replay", "--skip-done")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 deselected*"])


def test_rescore_uses_saved_inputs(pytester: pytest.Pytester, write_task) -> None:
    write_task(
        evaluator={
            "func": "file_contains",
            "result": {"type": "vm_file", "path": "/home/user/out.txt", "dest": "out.txt"},
            "expected": {"type": "rule", "rules": {"expected": ["hello"]}},
        }
    )
    pytester.runpytest("tasks", "--agent=replay")
    folder = pytester.path / RESULTS / "replay" / "os" / "11111111-0000-0000-0000-000000000001"
    (folder / "eval_inputs" / "out.txt").write_text("goodbye")
    result = pytester.runpytest("--rescore", str(pytester.path / "results" / "run"))
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "re-scored 1 task(s)*",
            "*os/11111111-0000-0000-0000-000000000001: rescored 1.00 -> 0.00*",
            "1 score(s) changed",
        ]
    )
    assert json.loads((folder / "result.json").read_text())["score"] == 1.0
    assert json.loads((folder / "result.rescored.json").read_text())["score"] == 0.0


def test_rescore_of_a_missing_folder_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--rescore", "nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rescore='nowhere': no such results folder*"])
