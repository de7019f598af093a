"""scripts/selfcheck.py: a solution step that raised is reported even when its task passed."""

from __future__ import annotations

import importlib.util
import json
import shutil
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
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "selfcheck: --osworld: OSWorld's examples are not here (set OSWORLD_EXAMPLES)"
    assert lines[1].startswith("selfcheck: results kept in ") and len(lines) == 2
    shutil.rmtree(lines[1].removeprefix("selfcheck: results kept in "))


def test_a_failed_check_keeps_its_results_and_a_green_one_deletes_them(monkeypatch, capsys) -> None:
    """The screenshots of a failed replay are what explains it: they outlive the check."""
    folders: list[Path] = []

    def run(problems: list[str]):
        def own_tasks(argv: list[str], work: Path) -> list[str]:
            (work / "tasks" / "step_1.png").parent.mkdir(parents=True)
            (work / "tasks" / "step_1.png").write_bytes(b"png")
            folders.append(work)
            return problems

        return own_tasks

    monkeypatch.setattr(selfcheck, "own_tasks", run(["tasks: os/x replay scored 0"]))
    assert selfcheck.main(["-n", "2"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == f"selfcheck: results kept in {folders[0]}"
    assert (folders[0] / "tasks" / "step_1.png").is_file()

    monkeypatch.setattr(selfcheck, "own_tasks", run([]))
    assert selfcheck.main(["-n", "2"]) == 0
    assert capsys.readouterr().out == ""
    assert not folders[1].exists()
    shutil.rmtree(folders[0])
