"""OmniACT items under pytest: collection, replay and noop, selection, failure text, JUnit."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("omniact_project")

RELEASE_SUITE = Path(__file__).resolve().parents[3] / "tasks" / "omniact_release"


def properties(junit: Path) -> list[dict[str, str]]:
    """The ``<properties>`` of every test case of a JUnit file."""
    root = ET.parse(junit).getroot()
    return [
        {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        for case in root.iter("testcase")
    ]


def test_replay_passes_with_properties(pytester: pytest.Pytester, write_omniact: Callable[..., Path]) -> None:
    write_omniact()
    result = pytester.runpytest("tasks", "--agent=replay", "--junitxml=junit.xml", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*tasks/omniact/save-file.json::omniact/save-file PASSED*"])
    (props,) = properties(pytester.path / "junit.xml")
    assert props["sequence_score"] == "1.0000"
    assert props["action_score"] == "1.0000"
    assert props["benchmark"] == "omniact"
    assert props["task_id"] == "save-file"
    result_json = next((pytester.path / "results" / "run").rglob("omniact/save-file/result.json"))
    assert json.loads(result_json.read_text())["score"] == 1.0


def test_noop_fails_with_score_zero(
    pytester: pytest.Pytester, write_omniact: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")  # the short summary line is not trimmed on CI
    write_omniact()
    result = pytester.runpytest("tasks", "--agent=noop", "-rf", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    # The official scoring decides (the default): noop's answer has no pyautogui line.
    result.stdout.fnmatch_lines(
        [
            "OmniACT action score 0.00 < 1.00 (official scoring): the prediction has 0 pyautogui "
            "line(s), the gold 3",
            "  instruction : Name the report and save it",
            "  official    : sequence 0.00, action 0.00 (weight 2.10)",
            "  paper       : sequence 0.00, action 0.00 (0.00 of 2.10 after penalties)",
            "  expected    : click, write, hotkey",
            "  predicted   : (no actions)",
            "  script      : DONE",
            "  image       : *tasks/omniact/shot.png",
            "  rerun       : pytest *save-file.json --agent=noop",
            "FAILED tasks/omniact/save-file.json::omniact/save-file - OmniACT action score 0.00 < 1.00*",
        ]
    )
    (props,) = properties(pytester.path / "junit.xml")
    assert (props["sequence_score"], props["action_score"]) == ("0.0000", "0.0000")
    assert (props["official_action_score"], props["paper_action_score"]) == ("0.0", "0.0")
    assert props["scoring"] == "official"
    assert props["outcome"] == "failed"


def test_a_click_outside_its_box_fails_with_the_distance(
    pytester: pytest.Pytester, write_omniact: Callable[..., Path]
) -> None:
    write_omniact()
    pytester.makepyfile(
        answer="""
        from pytest_osworld.agent.actions import Action
        from pytest_osworld.agent.contract import AgentStep

        SCRIPT = "pyautogui.click(75, 20)\\npyautogui.write('Quarterly report')\\npyautogui.hotkey('s', 'ctrl')"

        class Fixed:
            def __init__(self, config):
                self.seen = None

            def reset(self, task):
                pass

            def act(self, instruction, observation):
                assert observation.screenshot.startswith(b"\\x89PNG")
                assert observation.extra["instruction"] == "Name the report and save it"
                assert "200x100 screenshot" in instruction
                return AgentStep(actions=[Action(kind="code", code=SCRIPT), Action(kind="DONE")], response=SCRIPT)
        """
    )
    pytester.syspathinsert()
    result = pytester.runpytest(
        "tasks",
        "--agent=answer:Fixed",
        "--omniact-scoring=paper",
        "--junitxml=junit.xml",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=1)
    # 35 px right of a box of diagonal 28.28: (2.1 - 35 / (35 + 1/28.28)) / 2.1 = 0.524
    result.stdout.fnmatch_lines(
        [
            "OmniACT action score 0.52 < 1.00 (paper scoring): action 1 (click) is 35 px outside its box 'name'",
            "  paper       : sequence 1.00, action 0.52 (1.10 of 2.10 after penalties)",
            "  penalties   : click 1.00  action 1 (click) is 35 px outside its box 'name'",
        ]
    )
    (props,) = properties(pytester.path / "junit.xml")
    assert props["scoring"] == "paper"
    diagonal = 800**0.5
    mu = 1 / diagonal
    assert props["action_score"] == f"{(2.1 - (1 - mu / (mu + 35))) / 2.1:.4f}"
    # The official scoring is computed too: the click costs (1 - d / (d + 35)) / 3 with the
    # diagonal d = sqrt(800), and "'s', 'ctrl'" with its space reads as the keys s and 'ctrl.
    official = 1 - (1 - diagonal / (diagonal + 35)) / 3 - 1 / 3
    assert float(props["official_action_score"]) == pytest.approx(official, abs=1e-12)
    assert float(props["official_sequence_score"]) == 1.0


def test_pass_threshold_applies(pytester: pytest.Pytester, write_omniact: Callable[..., Path]) -> None:
    write_omniact(script="pyautogui.click(30, 20)  # box: name\npyautogui.write('Quarterly report')")
    result = pytester.runpytest("tasks", "--agent=noop", "--pass-threshold=0")
    result.assert_outcomes(passed=1)


def test_select_with_k_and_m(pytester: pytest.Pytester, write_omniact: Callable[..., Path]) -> None:
    write_omniact("save-file")
    write_omniact("print-file", app="LibreOffice Calc")
    result = pytester.runpytest("tasks", "--agent=replay", "-k", "print", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*omniact/print-file PASSED*"])
    result = pytester.runpytest("tasks", "--agent=replay", "-m", "omniact")
    result.assert_outcomes(passed=2)
    result = pytester.runpytest("tasks", "--agent=replay", "-m", "not omniact")
    result.assert_outcomes()
    result = pytester.runpytest("tasks", "--agent=replay", "-k", "libreoffice_calc", "-v")
    result.assert_outcomes(passed=1)


def test_a_broken_task_file_is_a_collection_error(
    pytester: pytest.Pytester, write_omniact: Callable[..., Path]
) -> None:
    write_omniact()
    write_omniact("broken", boxes={"name": [0, 0, 5, 5]})
    result = pytester.runpytest("tasks", "--agent=replay")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*invalid OmniACT task file *broken.json: at $.script (line 1, action 1 click): "
            "the gold point (30, 20) is outside its box 'name'*"
        ]
    )


def test_invalid_json_with_omniact_keys_is_reported(pytester: pytest.Pytester) -> None:
    folder = pytester.path / "tasks" / "omniact"
    folder.mkdir(parents=True)
    (folder / "bad.json").write_text('{"id": "bad", "script": "x", "image": "a.png",')
    result = pytester.runpytest("tasks", "--agent=replay")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*invalid OmniACT task file *bad.json: at $: not valid JSON*"])


def test_sample_suite_replay_passes_and_noop_fails(
    pytester: pytest.Pytester, copy_suite: Callable[[], Path]
) -> None:
    folder = copy_suite()
    count = len(list(folder.glob("*.json")))
    assert count >= 20
    result = pytester.runpytest("tasks/omniact", "--agent=replay", "--junitxml=replay.xml")
    result.assert_outcomes(passed=count)
    replayed = properties(pytester.path / "replay.xml")
    assert all(p["action_score"] == "1.0000" for p in replayed)
    # every sample of ours is scored by both scorings, and replay scores 1 by each
    assert all((p["official_action_score"], p["paper_action_score"]) == ("1.0", "1.0") for p in replayed)
    assert {p["scoring"] for p in replayed} == {"official"}
    result = pytester.runpytest("tasks/omniact", "--agent=noop", "--junitxml=noop.xml")
    result.assert_outcomes(failed=count)
    props = properties(pytester.path / "noop.xml")
    assert {(p["sequence_score"], p["action_score"]) for p in props} == {("0.0000", "0.0000")}


def _osworld_task(pytester: pytest.Pytester, task_id: str, solution: list[str]) -> None:
    """An OSWorld task for the fake provider: write 'hello' to ~/out.txt."""
    task = {
        "id": task_id,
        "snapshot": "os",
        "instruction": "Please write hello into ~/out.txt for me.",
        "config": [],
        "related_apps": ["os"],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
        "solution": solution,
    }
    path = pytester.path / "tasks" / "os" / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(task))


def test_one_run_of_both_benchmarks_reports_them_apart(
    pytester: pytest.Pytester, write_omniact: Callable[..., Path]
) -> None:
    # OSWorld: one passes, one fails (1/2, mean 0.5). OmniACT: two pass with replay (2/2).
    # Mixed together they would read 3/4 (75.0%): neither figure may show that.
    _osworld_task(
        pytester, "11111111-0000-0000-0000-000000000001", ["# fake: write /home/user/out.txt hello", "DONE"]
    )
    _osworld_task(pytester, "11111111-0000-0000-0000-000000000002", ["DONE"])
    write_omniact("save-file")
    write_omniact("print-file")
    result = pytester.runpytest("tasks", "--agent=replay", "--junitxml=junit.xml")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "success rate (passed / ran; errors count as failures) and mean score:",
            "  overall  *50.0%  mean 0.500  (1/2 passed, 1 failed, 0 errors, 0 skipped)",
            "by domain:",
            "  os  *50.0%  mean 0.500  (1/2 passed, 1 failed, 0 errors, 0 skipped)",
            "OmniACT, separately:",
            "  OmniACT (action score) 100.0%  mean 1.000  (2/2 passed, 0 failed, 0 errors, 0 skipped)",
        ]
    )
    assert "75.0%" not in result.stdout.str()
    assert (
        "omniact"
        not in "\n".join(
            line for line in result.stdout.lines if line.startswith("  ") and "OmniACT" not in line
        ).lower()
    )
    cases = properties(pytester.path / "junit.xml")
    by_benchmark: dict[str, list[dict[str, str]]] = {}
    for case in cases:
        by_benchmark.setdefault(case["benchmark"], []).append(case)
    assert sorted((k, len(v)) for k, v in by_benchmark.items()) == [("omniact", 2), ("osworld", 2)]
    for case in by_benchmark["omniact"]:
        assert (case["sequence_score"], case["action_score"]) == ("1.0000", "1.0000")
        assert case["domain"] == "desktop"
    for case in by_benchmark["osworld"]:
        assert "sequence_score" not in case and "action_score" not in case
        assert case["domain"] == "os"


def test_release_suite_replay_passes_and_noop_fails(pytester: pytest.Pytester) -> None:
    """Our samples in the release layout (tasks/omniact_release): replay 1 and noop 0 under both."""
    target = pytester.path / "tasks" / "omniact_release"
    shutil.copytree(RELEASE_SUITE, target)
    count = len(json.loads((target / "test.json").read_text()))
    assert count >= 20
    result = pytester.runpytest(str(target), "--agent=replay", "--junitxml=replay.xml")
    result.assert_outcomes(passed=count)
    replayed = properties(pytester.path / "replay.xml")
    assert {(p["official_action_score"], p["paper_action_score"]) for p in replayed} == {("1.0", "1.0")}
    assert {p["domain"] for p in replayed} == {"desktop", "web"}
    result = pytester.runpytest(str(target), "--agent=noop", "--junitxml=noop.xml")
    result.assert_outcomes(failed=count)
    props = properties(pytester.path / "noop.xml")
    assert {(p["official_action_score"], p["paper_action_score"]) for p in props} == {("0.0", "0.0")}


def test_a_sample_the_official_scoring_cannot_read_is_decided_by_the_paper_scoring(
    pytester: pytest.Pytester, write_omniact: Callable[..., Path]
) -> None:
    write_omniact(script="pyautogui.click(30, 20)  # box: name\npyautogui.write('say \"hi\"')")
    result = pytester.runpytest("tasks", "--agent=replay", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    (props,) = properties(pytester.path / "junit.xml")
    assert props["scoring"] == "paper"
    assert "official_action_score" not in props and props["paper_action_score"] == "1.0"
    result.stdout.fnmatch_lines(
        ["*official (paper for 1 sample(s) whose gold the official scoring cannot read) decides pass/fail:"]
    )
    block = json.loads(next((pytester.path / "results").rglob("result.json")).read_text())["omniact"]
    assert block["official"] is None and "holds a double quote" in block["official_problem"]
    result = pytester.runpytest("tasks", "--agent=noop")
    result.stdout.fnmatch_lines(
        [
            "OmniACT action score 0.00 < 1.00 (paper scoring): *",
            "  official    : not scored: the official scoring*",
        ]
    )
