"""A split of OmniACT's release under pytest: collection, bad input, both scorings, predictions."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from release_cases import Case, Screen, paths, write_release

from pytest_osworld.omniact.collect import BAD_SAMPLE, BAD_SPLIT
from pytest_osworld.report.omniact_predictions import FIGURES_NAME, PREDICTIONS_NAME

pytestmark = pytest.mark.usefixtures("omniact_project")


@pytest.fixture(autouse=True)
def _untrimmed_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """On CI pytest does not cut the short summary's lines to the terminal's width."""
    monkeypatch.setenv("CI", "true")


# seven: 20x30, centre (110, 65); plus: 20x20, centre (20, 20)
CALC = Screen("desktop", "calculator", 1, {"seven": ((100, 50), (120, 80)), "plus": ((10, 10), (30, 30))})
# search: 20x20, centre (50, 30)
BOOKING = Screen("web", "booking", 3, {"search": ((40, 20), (60, 40))})


def cases() -> list[Case]:
    """Three samples, desktop and web; their predictions are set by each test."""
    return [
        Case(
            "0",
            CALC,
            1,
            "Type Dune after seven",
            ["pyautogui.click(110.0,65.0)", 'pyautogui.write("Dune")', 'pyautogui.press("enter")'],
            "",
        ),
        Case(
            "1", BOOKING, 1, "Search for it", ["pyautogui.click(50.0,30.0)", 'pyautogui.press("enter")'], ""
        ),
        Case("2", CALC, 2, "Open the menu of plus", ["pyautogui.rightClick(20.0,20.0)"], ""),
    ]


def properties(junit: Path) -> dict[str, dict[str, str]]:
    """Each test case's properties, by test name."""
    root = ET.parse(junit).getroot()
    return {
        str(case.get("name")): {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        for case in root.iter("testcase")
    }


def escaped(text: str) -> str:
    """``text`` as an fnmatch pattern that matches it literally."""
    return "".join(f"[{c}]" if c in "[]*?" else c for c in text)


def results(pytester: pytest.Pytester) -> Path:
    return pytester.path / "results" / "run"


@pytest.fixture
def split(pytester: pytest.Pytester) -> Path:
    """The three samples in the release layout under ``omniact/``."""
    return write_release(pytester.path / "omniact", cases())


def test_a_split_file_collects_one_item_per_sample(pytester: pytest.Pytester, split: Path) -> None:
    result = pytester.runpytest(str(split), "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "omniact/test.json::omniact/test/0",
            "omniact/test.json::omniact/test/1",
            "omniact/test.json::omniact/test/2",
            "3 tests collected*",
        ]
    )
    # A folder holding it collects the same, and nothing of its data tree (box files are JSON).
    result = pytester.runpytest("omniact", "--collect-only", "-q")
    assert [line for line in result.stdout.lines if "::" in line] == [
        f"omniact/test.json::omniact/test/{key}" for key in "012"
    ]
    assert result.ret == 0


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (["-m", "omniact"], ["0", "1", "2"]),
        (["-k", "web"], ["1"]),
        (["-k", "desktop"], ["0", "2"]),
        (["-k", "booking"], ["1"]),
        (["-m", "app(name='calculator')"], ["0", "2"]),
        (["-k", "test and not web"], ["0", "2"]),
    ],
)
def test_markers_and_keywords(
    pytester: pytest.Pytester, split: Path, selection: list[str], expected: list[str]
) -> None:
    result = pytester.runpytest(str(split), "--collect-only", "-q", *selection)
    collected = [line.rsplit("/", 1)[1] for line in result.stdout.lines if "::" in line]
    assert collected == expected


def test_replay_scores_one_and_noop_zero(pytester: pytest.Pytester, split: Path) -> None:
    result = pytester.runpytest(str(split), "--agent=replay", "--junitxml=replay.xml")
    result.assert_outcomes(passed=3)
    props = properties(pytester.path / "replay.xml")
    assert sorted(props) == ["omniact/test/0", "omniact/test/1", "omniact/test/2"]
    for key, case in zip("012", cases(), strict=True):
        found = props[f"omniact/test/{key}"]
        assert (found["sequence_score"], found["action_score"]) == ("1.0000", "1.0000")
        assert (found["official_action_score"], found["paper_action_score"]) == ("1.0", "1.0")
        assert found["scoring"] == "official"
        assert (found["split"], found["sample_key"]) == ("test", key)
        assert found["domain"] == case.screen.domain
        assert float(found["weight"]) == pytest.approx(len(case.gold) - 0.9)
    # replay answers with the gold lines of the task file, which the predictions file keeps
    predictions = json.loads((results(pytester) / PREDICTIONS_NAME).read_text())
    assert predictions == {c.key: "\n".join(c.gold) for c in cases()}
    result = pytester.runpytest(str(split), "--agent=noop", "--junitxml=noop.xml")
    result.assert_outcomes(failed=3)
    for found in properties(pytester.path / "noop.xml").values():
        assert (found["official_action_score"], found["paper_action_score"]) == ("0.0", "0.0")
        assert found["outcome"] == "failed"


def test_result_json_keeps_both_scorings(pytester: pytest.Pytester, split: Path) -> None:
    pytester.runpytest(str(split), "--agent=replay").assert_outcomes(passed=3)
    found = json.loads(next(results(pytester).rglob("omniact/test_1/result.json")).read_text())
    assert (found["task_id"], found["domain"], found["score"]) == ("test/1", "omniact", 1.0)
    assert found["instruction"] == "Search for it"
    block = found["omniact"]
    assert (block["layout"], block["split"], block["key"], block["index"]) == ("release", "test", "1", 1)
    assert (block["domain"], block["app"]) == ("web", "booking")
    assert block["split_file"] == str(split)
    assert (block["scoring"], block["decided_by"]) == ("official", "official")
    assert block["prediction"] == 'pyautogui.click(50.0,30.0)\npyautogui.press("enter")'
    for name in ("official", "paper"):
        assert block[name]["weight"] == pytest.approx(1.1)
        assert (block[name]["sequence_score"], block[name]["action_score"]) == (1.0, 1.0)
        assert (
            block[name]["click_penalty"] == block[name]["press_penalty"] == block[name]["write_penalty"] == 0
        )


def fixed_agent(pytester: pytest.Pytester, answers: dict[str, str]) -> None:
    """An agent module ``answers.py``: answers each instruction with its script."""
    pytester.makepyfile(
        answers=f"""
        from pytest_osworld.agent.actions import Action
        from pytest_osworld.agent.contract import AgentStep

        ANSWERS = {answers!r}

        class Fixed:
            def __init__(self, config):
                pass

            def reset(self, task):
                pass

            def act(self, instruction, observation):
                text = ANSWERS[observation.extra["instruction"]]
                return AgentStep(actions=[Action(kind="code", code=text)], response="```python\\n" + text + "\\n```")
        """
    )
    pytester.syspathinsert()


# Sample 0: "return" for the gold "enter": the official scoring compares key texts (a third of
# the sample lost), the paper scoring merges the two names. Sample 2: a right-click far from
# plus: the official scoring gives right-clicks no position penalty, the paper scoring its box's.
ANSWERS = {
    "Type Dune after seven": "pyautogui.click(110, 65)\npyautogui.write('Dune')\npyautogui.press('return')",
    "Search for it": "pyautogui.click(50, 30)\npyautogui.press('enter')",
    "Open the menu of plus": "pyautogui.rightClick(300, 190)",
}
#: The paper's click penalty of (300, 190) against plus (20x20 at (10, 10)): 1 - mu / (mu + d).
PLUS_DISTANCE = math.hypot(300 - 30, 190 - 30)
PLUS_PENALTY = 1 - (1 / math.sqrt(800)) / (1 / math.sqrt(800) + PLUS_DISTANCE)


@pytest.mark.parametrize("how", ["option", "ini"])
def test_omniact_scoring_paper_flips_which_scoring_decides(
    pytester: pytest.Pytester, split: Path, how: str
) -> None:
    fixed_agent(pytester, ANSWERS)
    result = pytester.runpytest(str(split), "--agent=answers:Fixed", "--junitxml=official.xml", "-rf")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["FAILED *::omniact/test/0 - OmniACT action score 0.67 < 1.00 (official scoring)*"]
    )
    official = properties(pytester.path / "official.xml")
    assert official["omniact/test/0"]["action_score"] == f"{1 - 1 / 3:.4f}"
    assert official["omniact/test/2"]["action_score"] == "1.0000"
    if how == "ini":
        pytester.makeini(
            "[pytest]\nosworld_provider = fake\nosworld_results_dir = results/run\nosworld_omniact_scoring = paper\n"
        )
        flag = []
    else:
        flag = ["--omniact-scoring=paper"]
    result = pytester.runpytest(str(split), "--agent=answers:Fixed", "--junitxml=paper.xml", "-rf", *flag)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["FAILED *::omniact/test/2 - OmniACT action score 0.00 < 1.00 (paper scoring)*"]
    )
    paper = properties(pytester.path / "paper.xml")
    assert paper["omniact/test/0"]["action_score"] == "1.0000"
    assert paper["omniact/test/0"]["scoring"] == "paper"
    assert float(paper["omniact/test/2"]["paper_action_score"]) == pytest.approx(
        max(0.1 - PLUS_PENALTY, 0) / 0.1
    )
    # both scorings are computed either way: the other one's figures are the same in both runs
    for key in ("0", "1", "2"):
        for name in ("official_action_score", "paper_action_score"):
            assert official[f"omniact/test/{key}"][name] == paper[f"omniact/test/{key}"][name]


@pytest.mark.parametrize(
    ("args", "source"),
    [(["--omniact-scoring=offical"], "command line --omniact-scoring"), ([], "ini osworld_omniact_scoring")],
)
def test_a_bad_scoring_is_a_usage_error(
    pytester: pytest.Pytester, split: Path, args: list[str], source: str
) -> None:
    if not args:
        pytester.makeini("[pytest]\nosworld_provider = fake\nosworld_omniact_scoring = offical\n")
    result = pytester.runpytest(str(split), "--agent=replay", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--omniact-scoring='offical' ({source}): expected one of official, paper*"]
    )


# -- bad input -------------------------------------------------------------------------------------


def break_split(split: Path) -> dict[str, str]:
    """Add bad samples to the split; key -> a part of its collection error."""
    root = split.parent
    data = json.loads(split.read_text())
    entry = paths(cases()[0])
    data["missing_task"] = {**entry, "task": "data/tasks/desktop/calculator/task_9.9.txt"}
    data["no_script"] = {**entry, "task": "data/tasks/desktop/calculator/task_1.8.txt"}
    (root / data["no_script"]["task"]).write_text("Task: nothing\nOutput Script:\n\n")
    data["boxes_not_json"] = {**entry, "box": "data/metadata/desktop/boxes/calculator/screen_7.json"}
    (root / data["boxes_not_json"]["box"]).write_text("{not json")
    data["off_centre"] = {**entry, "task": "data/tasks/desktop/calculator/task_1.7.txt"}
    (root / data["off_centre"]["task"]).write_text(
        "Task: miss\nOutput Script:\npyautogui.click(111.0,65.0)\n"
    )
    split.write_text(json.dumps(data))
    return {
        "missing_task": "the task file * does not exist; download the release again or fix the path",
        "no_script": "the task file * has no gold script; it needs a 'Task: ...' line*",
        "boxes_not_json": "the box file * is not JSON (*); download it again",
        "off_centre": "gold line 1 (click) at (111, 65) is at no box's centre*fix the box file or the task file",
    }


def test_one_collection_error_per_bad_sample_and_the_rest_run(pytester: pytest.Pytester, split: Path) -> None:
    expected = break_split(split)
    result = pytester.runpytest(str(split), "--agent=replay", "--junitxml=junit.xml")
    result.assert_outcomes(passed=3, errors=4)
    for key, text in expected.items():
        result.stdout.fnmatch_lines(
            [escaped(BAD_SAMPLE.format(error=f"{split}: at $[{json.dumps(key)}]")) + f".*: {text}"]
        )
    # each is its own error, named like the item the sample would have been
    result.stdout.fnmatch_lines([f"ERROR omniact/test.json::omniact/test/{key}" for key in expected])
    # nothing else lost: the good samples ran, were scored, and are in the predictions
    root = ET.parse(pytester.path / "junit.xml").getroot()
    cases_by_name = {case.get("name"): case for case in root.iter("testcase")}
    assert sorted(cases_by_name) == sorted(f"omniact/test/{k}" for k in ["0", "1", "2", *expected])
    for key in expected:
        assert cases_by_name[f"omniact/test/{key}"].find("error") is not None
    props = properties(pytester.path / "junit.xml")
    assert all(props[f"omniact/test/{k}"]["official_action_score"] == "1.0" for k in "012")
    assert sorted(json.loads((results(pytester) / PREDICTIONS_NAME).read_text())) == ["0", "1", "2"]
    result.stdout.fnmatch_lines(["  OmniACT (action score) 100.0%*(3/3 passed*"])


def test_a_split_file_that_is_not_json_is_one_collection_error(
    pytester: pytest.Pytester, split: Path
) -> None:
    other = write_release(pytester.path / "omniact", cases()[:1], split="val")
    text = split.read_text()
    split.write_text(text[: len(text) // 2])  # cut short: no longer JSON
    result = pytester.runpytest("omniact", "--agent=replay")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting omniact/test.json*",
            BAD_SPLIT.format(error=f"{split}: at $: the split file is not JSON (*); download it again"),
        ]
    )
    assert "omniact/val/0 PASSED" in pytester.runpytest(str(other), "--agent=replay", "-v").stdout.str()


def test_an_osworld_task_a_json_sample_and_a_split_side_by_side(
    pytester: pytest.Pytester, split: Path, write_omniact: object
) -> None:
    write_omniact()  # type: ignore[operator]
    task = {
        "id": "33333333-0000-0000-0000-000000000001",
        "instruction": "Do nothing.",
        "config": [],
        "evaluator": {"func": "infeasible"},
        "solution": ["FAIL"],
    }
    (pytester.path / "tasks" / "os").mkdir(parents=True)
    (pytester.path / "tasks" / "os" / "t.json").write_text(json.dumps(task))
    (pytester.path / "tasks" / "test_all.json").write_text(json.dumps({"os": [task["id"]]}))  # a manifest
    result = pytester.runpytest("tasks", "omniact", "--collect-only", "-q")
    assert sorted(line for line in result.stdout.lines if "::" in line) == sorted(
        [f"omniact/test.json::omniact/test/{k}" for k in "012"]
        + ["tasks/omniact/save-file.json::omniact/save-file", f"tasks/os/t.json::os/{task['id']}"]
    )
    assert result.ret == 0


def test_collection_imports_no_nltk(pytester: pytest.Pytester, split: Path) -> None:
    pytester.makeconftest(
        """
        import sys

        def pytest_collection_finish(session):
            print("nltk imported:", "nltk" in sys.modules)
        """
    )
    result = pytester.runpytest_subprocess(str(split), "--collect-only", "-q", "-s")
    result.stdout.fnmatch_lines(["nltk imported: False"])


# -- predictions and figures files ---------------------------------------------------------------


def test_under_xdist_the_controller_writes_the_predictions(pytester: pytest.Pytester, split: Path) -> None:
    fixed_agent(pytester, ANSWERS)
    pytester.makeini("[pytest]\nosworld_provider = fake\nosworld_results_dir = results/run\npythonpath = .\n")
    result = pytester.runpytest(str(split), "--agent=answers:Fixed", "-n", "2")
    result.assert_outcomes(passed=2, failed=1)
    folder = results(pytester)
    assert json.loads((folder / PREDICTIONS_NAME).read_text()) == {
        "0": ANSWERS["Type Dune after seven"],
        "1": ANSWERS["Search for it"],
        "2": ANSWERS["Open the menu of plus"],
    }
    figures = json.loads((folder / FIGURES_NAME).read_text())
    weights = (2.1, 1.1, 0.1)
    official = (2.1 * (2 / 3) + 1.1 + 0.1) / sum(weights)
    assert figures["figures"]["official"]["all"]["action_score"] == pytest.approx(official, abs=1e-12)
    assert figures["figures"]["official"]["web"]["samples"] == 1
    assert figures["sets"]["test"]["predictions"] == PREDICTIONS_NAME
    assert figures["sets"]["test"]["split_file"] == str(split)
    result.stdout.fnmatch_lines(
        [
            "  dataset figures (*official decides pass/fail:",
            f"    all * 3 samples  official sequence 1.000 action {official:.3f}  |  paper sequence 1.000 *",
            "    desktop * 2 samples  official *",
            "    web * 1 samples  official sequence 1.000 action 1.000  |  paper sequence 1.000 action 1.000",
            f"OmniACT predictions: {folder / PREDICTIONS_NAME}",
        ]
    )
    assert "OmniACT" in (folder / "index.html").read_text()


def test_several_prediction_sets_get_a_file_each(
    pytester: pytest.Pytester, split: Path, write_omniact: object
) -> None:
    write_omniact()  # type: ignore[operator]
    write_release(pytester.path / "other", cases()[:2])  # a second split named test
    write_release(pytester.path / "omniact", cases()[2:], split="val")
    result = pytester.runpytest("omniact", "other", "tasks", "--agent=replay")
    result.assert_outcomes(passed=7)
    folder = results(pytester)
    assert not (folder / PREDICTIONS_NAME).exists()
    found = {p.name: json.loads(p.read_text()) for p in folder.glob("omniact_predictions.*.json")}
    assert sorted(found) == [
        "omniact_predictions.samples.json",
        "omniact_predictions.test-2.json",
        "omniact_predictions.test.json",
        "omniact_predictions.val.json",
    ]
    assert sorted(found["omniact_predictions.test.json"]) == ["0", "1", "2"]
    assert sorted(found["omniact_predictions.test-2.json"]) == ["0", "1"]
    assert list(found["omniact_predictions.val.json"]) == ["2"]
    assert list(found["omniact_predictions.samples.json"]) == ["save-file"]
    sets = json.loads((folder / FIGURES_NAME).read_text())["sets"]
    assert sets["test-2"]["split_file"] == str(pytester.path / "other" / "test.json")
    assert sets["samples"]["split_file"] is None
