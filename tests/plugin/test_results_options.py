"""Results options end to end: the HTML report, --repeat, --skip-done, --rescore, error results."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import pytest_osworld

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


FLAKY_AGENT = '''
from pathlib import Path
from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep


class Flaky:
    """Solves 'always' tasks every time, 'flaky' ones on odd trials, 'never' ones never."""

    def __init__(self, config):
        self.steps = []

    def reset(self, task):
        counter = Path("trials") / task.id
        counter.parent.mkdir(exist_ok=True)
        trial = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(trial))
        solve = "always" in task.instruction or ("flaky" in task.instruction and trial % 2 == 1)
        self.steps = list(task.solution) if solve else ["DONE"]

    def act(self, instruction, observation):
        step = self.steps.pop(0)
        return AgentStep([Action("DONE") if step == "DONE" else Action("code", code=step)])
'''


def test_repeat_reports_pass1_with_its_interval_and_pass_at_n(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="11111111-0000-0000-0000-00000000000a", instruction="always: write hello.")
    write_task(task_id="11111111-0000-0000-0000-00000000000b", instruction="flaky: write hello.")
    write_task(task_id="11111111-0000-0000-0000-00000000000c", instruction="never: write hello.")
    pytester.makepyfile(flaky_agent=FLAKY_AGENT)
    pytester.syspathinsert()
    result = pytester.runpytest("tasks", "--agent=flaky_agent:Flaky", "--repeat=3", "-p", "no:cacheprovider")
    # a: 3/3, b: 2/3 (trials 1 and 3), c: 0/3 -> 5 of 9 trials passed
    result.assert_outcomes(passed=5, failed=4)
    # Wilson 95% for 5/9, by hand: centre (5/9 + z^2/18) / (1 + z^2/9) = 0.5389,
    # half-width 0.2723 -> [26.7%, 81.1%]. pass@k per task (Chen et al.): a 1, 1, 1;
    # b (n=3, c=2) 2/3, 1, 1; c 0, 0, 0 -> pass@1 55.6%, pass@2 66.7%, pass@3 66.7%.
    result.stdout.fnmatch_lines(
        [
            "repeats (3 runs of each task):",
            "  3 tasks, 9 trials (3-3 per task)",
            "  pass@1 55.6% (5/9), 95% CI [26.7%, 81.1%]",
            "  pass@1 55.6%  pass@2 66.7%  pass@3 66.7%",
            "  passed at least once 66.7%, every time 33.3%",
        ]
    )
    root = pytester.path / RESULTS / "flaky_agent_Flaky" / "os"
    outcomes = {
        folder.name: json.loads((folder / "result.json").read_text())["outcome"] for folder in root.iterdir()
    }
    assert sorted(outcomes.values()).count("passed") == 5
    assert [
        outcomes[f"11111111-0000-0000-0000-00000000000b{suffix}"] for suffix in ("", ".repeat-2", ".repeat-3")
    ] == [
        "passed",
        "failed",
        "passed",
    ]


def test_result_folder_layout_and_result_json_fields(pytester: pytest.Pytester, write_task) -> None:
    task_file = write_task(task_id="11111111-0000-0000-0000-000000000002", solution=["DONE"])
    result = pytester.runpytest("tasks", "--agent=replay", "--max-steps=7", "--observation-type=screenshot")
    result.assert_outcomes(failed=1)
    # OSWorld's layout: <action_space>/<observation_type>/<model>/<domain>/<task_id>/
    folder = pytester.path / "results/run/pyautogui/screenshot/replay/os/11111111-0000-0000-0000-000000000002"
    assert (folder / "result.txt").read_text().strip() == "0.0"
    assert {"traj.jsonl", "result.json", "result.txt", "step_0.png", "step_1.png"} <= {
        p.name for p in folder.iterdir()
    }
    data = json.loads((folder / "result.json").read_text())
    assert (data["outcome"], data["score"], data["end_reason"], data["steps"]) == ("failed", 0.0, "done", 1)
    (metric,) = data["metrics"]
    assert metric["func"] == "exact_match" and metric["value"] == 0.0
    assert metric["reason"] == "got '', expected 'hello'"
    assert data["reason"] == "exact_match: got '', expected 'hello'"
    assert isinstance(data["duration_s"], float) and data["duration_s"] >= 0.0
    assert set(data["usage"]) >= {"input_tokens", "output_tokens"}
    provenance = data["provenance"]
    assert provenance["task_file"] == str(task_file)
    assert provenance["task_sha256"] == hashlib.sha256(task_file.read_bytes()).hexdigest()
    assert provenance["plugin_version"] == pytest_osworld.__version__
    assert provenance["provider"].startswith("fake")
    assert provenance["image"] == "fake"
    assert (provenance["agent"], provenance["model"]) == ("replay", None)
    assert (provenance["max_steps"], data["max_steps"]) == (7, 7)
    assert (provenance["observation_type"], provenance["action_space"]) == ("screenshot", "pyautogui")
