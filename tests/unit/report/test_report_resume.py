"""Which tasks are already done: verdicts count, errors, crashes and junk do not."""

from __future__ import annotations

import json
from pathlib import Path

from report_tree import record_task

from pytest_osworld.report.resume import completed_tasks, task_folders


def test_completed_tasks(tmp_path: Path) -> None:
    root = tmp_path / "results"
    record_task(root, "os", "passed")
    record_task(root, "os", "failed", outcome="failed", score=0.0)
    record_task(root, "gimp", "eval-error", outcome="eval_error", score=0.0)
    record_task(root, "gimp", "error", outcome="error", score=None)
    record_task(root, "chrome", "skipped", outcome="skipped", score=None)
    record_task(root, "chrome", "crashed", outcome=None)
    broken = record_task(root, "vlc", "broken")
    (broken / "result.json").write_text("{cut sho")
    record_task(root, "os", "a/../b")  # the folder name is sanitised; the id in result.json is not
    record_task(root, "os", "other-model", model="gpt-x")
    assert completed_tasks(root) == {
        ("os", "passed"),
        ("os", "failed"),
        ("gimp", "eval-error"),
        ("os", "a/../b"),
        ("os", "other-model"),
    }
    assert completed_tasks(root, model="gpt-x") == {("os", "other-model")}
    assert ("os", "passed") in completed_tasks(root, action_space="pyautogui", observation_type="screenshot")
    assert completed_tasks(root, action_space="computer_13") == set()


def test_missing_dir_and_provider_folders(tmp_path: Path) -> None:
    assert completed_tasks(tmp_path / "absent") == set()
    junk = tmp_path / ".providers" / "a" / "b" / "c" / "d"
    junk.mkdir(parents=True)
    (junk / "result.json").write_text(json.dumps({"outcome": "passed", "domain": "os", "task_id": "x"}))
    assert completed_tasks(tmp_path) == set() and task_folders(tmp_path) == []
