"""scripts/selfcheck.py is a caller of prove: its verdicts and the shard check over prove's runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.commands.prove import COUNT, REPLAY_LOW

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "selfcheck.py"
spec = importlib.util.spec_from_file_location("selfcheck", SCRIPT)
assert spec is not None and spec.loader is not None
selfcheck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(selfcheck)

pytestmark = pytest.mark.usefixtures("fake_ini")

GOOD = "os/11111111-0000-0000-0000-000000000001"
BAD = "os/22222222-0000-0000-0000-000000000002"


def test_check_lists_the_tasks_prove_did_not_prove(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    write_task()
    write_task(task_id=BAD.split("/")[1], solution=["DONE"])
    problems = selfcheck.check("tasks", ["tasks"], [], pytester.path / "work")
    low = REPLAY_LOW.format(score=0.0, message="")
    assert len(problems) == 1 and problems[0].startswith(f"tasks FAILED {BAD}: replay {low}"), problems
    out = capsys.readouterr().out
    assert f"selfcheck: tasks: {COUNT.format(proven=1, total=2, failed=1)}" in out
    assert (pytester.path / "work" / "replay.xml").is_file()  # kept for the shard check


def test_a_missing_path_is_a_problem_not_a_crash(pytester: pytest.Pytester) -> None:
    problems = selfcheck.check("osworld", ["nowhere"], [], pytester.path / "work")
    assert problems == ["osworld: nowhere: no such file or folder"]


def test_shards_merged_match_the_one_run(pytester: pytest.Pytester, write_task: Any, capsys: Any) -> None:
    for k in range(1, 4):
        write_task(task_id=f"{k}{k}{k}{k}{k}{k}{k}{k}-0000-0000-0000-00000000000{k}")
    work = pytester.path / "work"
    assert selfcheck.check("tasks", ["tasks"], [], work) == []
    files = selfcheck.find_task_files(["tasks"])
    assert selfcheck.check_shards("replay", files, [], work) == []
    assert "3 shards merged: 3 tasks, as in one run" in capsys.readouterr().out
