"""scripts/selfcheck.py: a solution step that raised is reported even when its task passed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "selfcheck.py"
spec = importlib.util.spec_from_file_location("selfcheck", SCRIPT)
assert spec is not None and spec.loader is not None
selfcheck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(selfcheck)


def _task(root: Path, name: str, outcome: str, errors: list[list[str]]) -> None:
    folder = root / "pyautogui" / "screenshot" / "replay" / name
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps({"outcome": outcome}))
    lines = [json.dumps({"step_num": n, "action_errors": e}) for n, e in enumerate(errors, 1)]
    (folder / "traj.jsonl").write_text("\n".join(lines) + "\n")


def test_raised_steps_of_passing_tasks_are_listed(tmp_path: Path) -> None:
    timeout = "Traceback (most recent call last):\n  ...\nWaitTimeout: timed out after 20 s waiting for x"
    _task(tmp_path, "vs_code/aaa", "passed", [[], [timeout], []])
    _task(tmp_path, "vs_code/bbb", "passed", [[], []])
    _task(tmp_path, "vs_code/ccc", "failed", [[timeout]])  # a failure is reported as one already
    assert selfcheck.raised_steps(tmp_path) == [
        "pyautogui/screenshot/replay/vs_code/aaa step 2: WaitTimeout: timed out after 20 s waiting for x"
    ]


def test_clean_runs_list_nothing(tmp_path: Path) -> None:
    _task(tmp_path, "os/ddd", "passed", [[], [], []])
    assert selfcheck.raised_steps(tmp_path) == []


def test_osworld_without_its_examples_is_a_problem_not_a_silent_pass(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """``--osworld`` checks OSWorld's tasks only (never our own); their folder missing fails it."""
    monkeypatch.setenv("OSWORLD_EXAMPLES", str(tmp_path / "absent"))
    monkeypatch.setattr(selfcheck, "own_tasks", lambda argv, work: ["own tasks were checked"])
    assert selfcheck.main(["--osworld", "-n", "2"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "selfcheck: --osworld: OSWorld's examples are not here (set OSWORLD_EXAMPLES)"
    ]
