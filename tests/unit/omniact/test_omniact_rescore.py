"""``omniact-score``: a split of the release and a predictions file, scored; figures by hand."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest
from release_cases import Case, Screen, generated_cases, write_predictions, write_release

from pytest_osworld.omniact.figures import SampleFigures, by_domain
from pytest_osworld.omniact.predictions import read_predictions
from pytest_osworld.omniact.release import read_split
from pytest_osworld.omniact.rescore import (
    DESCRIPTION,
    HEADLINE,
    LEGEND,
    add_arguments,
    format_text,
    rescore,
    run,
)

# seven: 20x30, centre (110, 65), diagonal sqrt(1300); plus: 20x20, centre (20, 20)
CALC = Screen("desktop", "calculator", 1, {"seven": ((100, 50), (120, 80)), "plus": ((10, 10), (30, 30))})
# search: 20x20, centre (50, 30)
BOOKING = Screen("web", "booking", 3, {"search": ((40, 20), (60, 40))})


def hand_cases() -> list[Case]:
    """Five samples whose official scores are worked out below."""
    return [
        Case(
            "0",
            CALC,
            1,
            "Type Dune after seven",
            ["pyautogui.click(110.0,65.0)", 'pyautogui.write("Dune")', 'pyautogui.press("enter")'],
            "pyautogui.click(150,65)\npyautogui.write('dune')\npyautogui.press('return')",
        ),
        Case(
            "1",
            BOOKING,
            1,
            "Paste into search",
            ["pyautogui.click(50.0,30.0)", 'pyautogui.hotkey("ctrl","v")'],
            'pyautogui.click(50, 30)\npyautogui.hotkey("ctrl", "v")',
        ),
        Case(
            "2", CALC, 2, "Say it's done", ['pyautogui.write("it\'s done")'], 'pyautogui.write("it\'s done")'
        ),
        Case(
            "3",
            BOOKING,
            2,
            "Search",
            ["pyautogui.click(50.0,30.0)", 'pyautogui.press("enter")'],
            "pyautogui.click(50,30)\n  pyautogui.press('enter')",
        ),
        Case(
            "4",
            CALC,
            3,
            "Open the menu of plus and scroll",
            ["pyautogui.rightClick(20.0,20.0)", "  pyautogui.scroll(-3)"],  # a gold line is stripped
            "import pyautogui\npyautogui.rightClick(300,190)\npyautogui.scroll(10)",
            preamble=["", "# right-click plus, then scroll"],  # not pyautogui lines: left out
        ),
    ]


# Sample 0 (weight 3 - 0.9 = 2.1): the click is 30 px right of "seven" (|110 - 150| - 10), its
# penalty 1 - sqrt(1300) / (sqrt(1300) + 30) = 0.4542, over 3 lines; "dune" is "Dune"
# lowercased: 0; "return" is not "enter": 1/3. Action 1 - 0.1514 - 0.3333 = 0.5153.
CLICK_0 = (1 - math.sqrt(1300) / (math.sqrt(1300) + 30)) / 3
ACTION_0 = 1 - CLICK_0 - 1 / 3
# Sample 1 (1.1): the click is inside; '"ctrl", "v"' gives {ctrl, "v}: 1/2. Action 0.5.
ACTION_1 = 0.5
# Sample 2 (0.1): the candidate ends at the apostrophe: "it" against "it's done" (9 characters):
# p1 = p2 = 1, brevity exp(1 - 9/2). Action exp(-3.5) = 0.0302, write penalty 1 - that.
ACTION_2 = math.exp(1 - 9 / 2)
# Sample 3 (1.1): its second line is indented: no sequence, nothing.
# Sample 4 (1.1): a rightclick anywhere and any scroll amount cost nothing: 1; "import" is left out.
WEIGHTS = (2.1, 1.1, 0.1, 1.1, 1.1)
IDEAL = sum(WEIGHTS)  # 5.5
SEQUENCE = (2.1 + 1.1 + 0.1 + 0 + 1.1) / IDEAL  # 0.8
ACTION = (2.1 * ACTION_0 + 1.1 * ACTION_1 + 0.1 * ACTION_2 + 0 + 1.1 * 1) / IDEAL  # 0.4973
CLICK = 2.1 * CLICK_0 / IDEAL  # only matched sequences count: 0.0578
PRESS = (2.1 * (1 / 3) + 1.1 * 0.5) / IDEAL  # 0.2273 (sample 3's full penalty does not count)
WRITE = 0.1 * (1 - ACTION_2) / IDEAL  # 0.0176
DESKTOP = {"sequence_score": 1.0, "action_score": (2.1 * ACTION_0 + 0.1 * ACTION_2 + 1.1) / 3.3}
WEB = {"sequence_score": 1.1 / 2.2, "action_score": 1.1 * ACTION_1 / 2.2}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """The hand cases' split and predictions."""
    cases = hand_cases()
    return write_release(tmp_path, cases), write_predictions(tmp_path / "predictions.json", cases)


def namespace(split: Path, predictions: Path, *options: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([str(split), str(predictions), *options])


def test_the_hand_cases_official_scores(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(namespace(*files, "--json")) == 0
    output = json.loads(capsys.readouterr().out)
    samples = output["samples"]
    expected = {"0": (1, ACTION_0), "1": (1, ACTION_1), "2": (1, ACTION_2), "3": (0, 0), "4": (1, 1)}
    assert list(samples) == list(expected)
    for key, (sequence, action) in expected.items():
        assert samples[key]["sequence_score"] == sequence, key
        assert samples[key]["action_score"] == pytest.approx(action, abs=1e-12), key
    dataset = output["dataset"]
    assert dataset["samples"] == 5
    assert dataset["ideal_score"] == pytest.approx(IDEAL, abs=1e-12)
    assert dataset["sequence_score"] == pytest.approx(SEQUENCE, abs=1e-12)
    assert dataset["action_score"] == pytest.approx(ACTION, abs=1e-12)
    assert dataset["click_penalty"] == pytest.approx(CLICK, abs=1e-12)
    assert dataset["press_penalty"] == pytest.approx(PRESS, abs=1e-12)
    assert dataset["write_penalty"] == pytest.approx(WRITE, abs=1e-12)
    assert dataset["press_penalty_total"] == pytest.approx(2.1 / 3 + 0.55, abs=1e-12)
    for name, figures in (("desktop", DESKTOP), ("web", WEB)):
        for field, value in figures.items():
            assert dataset[name][field] == pytest.approx(value, abs=1e-12), (name, field)
    assert (dataset["desktop"]["samples"], dataset["web"]["samples"]) == (3, 2)
    assert output["scoring"] == "official"
    assert output["unpredicted"] == [] and output["errors"] == []


def test_the_text_output(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(namespace(*files)) == 0
    lines = capsys.readouterr().out.splitlines()
    split, predictions = files
    assert lines[0] == HEADLINE.format(scoring="official", predictions=predictions, split=split, count=5)
    assert lines[1].split() == ["samples", "sequence", "action", "click", "press", "write", "ideal"]
    row = f"{SEQUENCE:.4f} {ACTION:.4f} {CLICK:.4f} {PRESS:.4f} {WRITE:.4f} {IDEAL:.2f}"
    assert lines[2].split() == ["all", "5", *row.split()]
    assert lines[3].split()[:4] == ["desktop", "3", "1.0000", f"{DESKTOP['action_score']:.4f}"]
    assert lines[4].split()[:4] == ["web", "2", "0.5000", f"{WEB['action_score']:.4f}"]
    assert "\n".join(lines[5:7]) == LEGEND


def test_the_paper_scoring_differs(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(namespace(*files, "--scoring", "paper", "--json")) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["scoring"] == "paper"
    samples = output["samples"]
    # sample 2: the paper reads the whole text, identical: 1; sample 3: the indented line is
    # not valid Python: 0; sample 1: the hotkey's keys are the same: 1
    assert samples["2"] == {"sequence_score": 1.0, "action_score": 1.0}
    assert samples["3"] == {"sequence_score": 0.0, "action_score": 0.0}
    assert samples["1"] == {"sequence_score": 1.0, "action_score": 1.0}
    assert output["dataset"]["action_score"] != pytest.approx(ACTION)


def test_predictions_as_a_list(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = write_predictions(tmp_path / "listed.json", hand_cases(), as_list=True)
    assert run(namespace(files[0], listed, "--json")) == 0
    assert json.loads(capsys.readouterr().out)["dataset"]["action_score"] == pytest.approx(ACTION, abs=1e-12)


def test_samples_without_a_prediction_are_left_out(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({c.key: c.prediction for c in hand_cases() if c.key in ("0", "1")}))
    assert run(namespace(files[0], partial)) == 0
    out = capsys.readouterr().out
    assert "3 sample(s) of the split have no prediction and are not scored: 2, 3, 4" in out
    assert run(namespace(files[0], partial, "--json")) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["unpredicted"] == ["2", "3", "4"]
    # (2.1 * action 0 + 1.1 * 0.5) / (2.1 + 1.1)
    assert output["dataset"]["action_score"] == pytest.approx((2.1 * ACTION_0 + 0.55) / 3.2, abs=1e-12)


def test_a_bad_sample_is_reported_and_left_out(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    split, predictions = files
    box_file = split.parent / "data/metadata/web/boxes/booking/screen3_boxes.json"
    box_file.write_text("{oops")
    assert run(namespace(split, predictions, "--json")) == 1
    captured = capsys.readouterr()
    assert captured.err.count("error: ") == 2  # samples 1 and 3 share the box file
    assert 'at $["1"].box: the box file' in captured.err
    output = json.loads(captured.out)
    assert list(output["samples"]) == ["0", "2", "4"]
    assert len(output["errors"]) == 2
    assert output["dataset"]["web"]["samples"] == 0


@pytest.mark.parametrize("which", ["split", "predictions"])
def test_unreadable_inputs_exit_2(
    files: tuple[Path, Path], which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    split, predictions = files
    (split if which == "split" else predictions).write_text("[1, 2")
    assert run(namespace(split, predictions)) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_the_description_names_the_exit_statuses() -> None:
    assert "Exit status 1" in DESCRIPTION and "2 when" in DESCRIPTION


# -- generated cases: every rule, scores known by construction -------------------------------------------


def test_generated_cases_score_as_constructed(tmp_path: Path) -> None:
    cases = generated_cases(400, seed=7)
    split = read_split(write_release(tmp_path, cases))
    assert split.errors == ()
    predictions = read_predictions(write_predictions(tmp_path / "p.json", cases), split.keys)
    result = rescore(split, predictions, "official")
    rules = set()
    for case in cases:
        got = result.samples[case.key]
        assert got.sequence_score == case.expected_sequence, (case.rule, case.gold, case.prediction)
        assert got.action_score == pytest.approx(case.expected_action, abs=1e-9), (case.rule, case.prediction)
        rules.update(case.rule.split("+"))
    assert len(rules) >= 20  # every rule of the generator was drawn
    # the dataset figures are the weighted sums of the expected per-sample scores
    ideal = sum(c.weight for c in cases)
    expected = sum(c.expected_action * c.weight for c in cases) / ideal
    assert result.dataset["all"].action_score == pytest.approx(expected, abs=1e-9)
    assert result.dataset["all"].ideal_score == pytest.approx(ideal, abs=1e-9)
    paper = rescore(split, predictions, "paper")
    differ = sum(
        1
        for key in result.samples
        if paper.samples[key].action_score != pytest.approx(result.samples[key].action_score)
    )
    assert differ > len(cases) // 4  # the two scorings are different metrics


def test_the_generator_is_deterministic() -> None:
    first, second = generated_cases(50, seed=3), generated_cases(50, seed=3)
    assert [(c.gold, c.prediction) for c in first] == [(c.gold, c.prediction) for c in second]
    assert [c.prediction for c in generated_cases(50, seed=4)] != [c.prediction for c in first]


def test_figures_by_domain() -> None:
    samples = [
        SampleFigures("a", "desktop", 2.1, 1.0, 0.5, click_penalty=0.5),
        SampleFigures("b", "web", 0.1, 0.0, 0.0, click_penalty=1.0),
    ]
    figures = by_domain(samples)
    assert figures["all"].ideal_score == pytest.approx(2.2)
    assert figures["all"].action_score == pytest.approx(2.1 * 0.5 / 2.2)
    assert figures["all"].click_total == pytest.approx(2.1 * 0.5)  # b's sequence differs: not counted
    assert figures["web"].sequence_score == 0.0
    assert by_domain([])["all"].action_score == 0.0


def test_format_text_of_nothing(tmp_path: Path) -> None:
    split = read_split(write_release(tmp_path, hand_cases()))
    text = format_text(rescore(split, {}, "official"))
    assert "5 sample(s) of the split have no prediction" in text
    assert text.splitlines()[2].split()[:3] == ["all", "0", "0.0000"]
