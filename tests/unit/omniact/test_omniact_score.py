"""OmniACT's penalties, sequence score, action score and aggregation, against hand-computed values."""

from __future__ import annotations

import math

import pytest

from pytest_osworld.omniact.score import (
    Box,
    ScriptError,
    aggregate,
    bleu,
    click_penalty,
    key_penalty,
    normalise_key,
    parse_script,
    score_script,
    sequence_weight,
    tokenize,
    write_penalty,
)

#: A box of diagonal 50 (a 3-4-5 triangle, times 10): mu = 1/50 = 0.02.
BOX = Box(100, 50, 40, 30)
GOLD_SCRIPT = "\n".join(
    [
        "import pyautogui",
        "pyautogui.click(120, 65)  # box: title",
        "pyautogui.write('Quarterly report')",
        "pyautogui.press('enter')",
    ]
)
GOLD = parse_script(GOLD_SCRIPT)
BOXES = {"title": BOX}


# -- the click penalty ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ((120, 65), 0.0),  # inside
        ((140, 80), 0.0),  # on the corner: the edges belong to the box
        ((145, 65), 5 / 5.02),  # 5 px right of it: 1 - 0.02 / (0.02 + 5)
        ((143, 84), 5 / 5.02),  # 3 px right, 4 px below: L2 = 5
        ((120, 180), 100 / 100.02),  # 100 px below
        (None, 1.0),  # no coordinates at all
    ],
)
def test_click_penalty(point: tuple[float, float] | None, expected: float) -> None:
    assert click_penalty(point, BOX) == pytest.approx(expected)


def test_the_same_miss_costs_more_on_a_larger_box() -> None:
    small, large = Box(0, 0, 3, 4), Box(0, 0, 30, 40)  # diagonals 5 and 50
    # 1 px right: 1 - (1/5) / (1/5 + 1) = 0.8333; 1 - (1/50) / (1/50 + 1) = 0.9804
    assert click_penalty((4, 2), small) == pytest.approx(1 / 1.2)
    assert click_penalty((31, 2), large) == pytest.approx(1 / 1.02)


def test_box_geometry() -> None:
    assert BOX.diagonal == 50
    assert BOX.distance(90, 40) == pytest.approx(math.hypot(10, 10))
    assert BOX.contains(100, 50) and not BOX.contains(99.5, 50)


# -- the key penalty ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "predicted", "expected"),
    [
        ("pyautogui.hotkey('ctrl', 's')", "pyautogui.hotkey('s', 'ctrl')", 0.0),  # keys as a set
        ("pyautogui.hotkey('ctrl', 's')", "pyautogui.hotkey('ctrl', 'shift', 's')", 1.0),
        ("pyautogui.hotkey('ctrl', 'c')", "pyautogui.hotkey('ctrl', 'v')", 1.0),
        ("pyautogui.press('enter')", "pyautogui.press('return')", 0.0),  # alias
        ("pyautogui.press('esc')", "pyautogui.press(['escape'])", 0.0),
        ("pyautogui.hotkey('ctrlleft', 'a')", "pyautogui.hotkey('control', 'A'.lower())", 1.0),  # not literal
    ],
)
def test_key_penalty(gold: str, predicted: str, expected: float) -> None:
    (want,) = parse_script(gold)
    (got,) = parse_script(predicted)
    assert key_penalty(want.keys, got.keys) == expected


def test_key_names_are_normalised() -> None:
    assert normalise_key("Return") == "enter"
    assert normalise_key("CtrlLeft") == "ctrl"
    assert normalise_key("A") == "A"  # a single character keeps its case: 'A' is shift+a
    assert normalise_key(" ") == "space"


# -- BLEU and the write penalty ------------------------------------------------------------


def test_tokenize_splits_words_and_punctuation() -> None:
    assert tokenize("=SUM(A1:A3)") == ["=", "SUM", "(", "A1", ":", "A3", ")"]
    assert tokenize("Seattle, WA") == ["Seattle", ",", "WA"]


@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [
        ("the cat sat on the mat", "the cat sat on the mat", 1.0),
        # p1 = 4/5, p2 = 3/4, p3 = 2/3, p4 = 1/2, no brevity penalty: (0.2) ** (1/4)
        ("a b c d e", "a b c d f", 0.2**0.25),
        # a typo in a two-word text: N = 2, p1 = 1/2, p2 = 0.1/1 (smoothed): sqrt(0.05)
        ("Quarterly report", "Quartely report", math.sqrt(0.05)),
        # too short: p1 = 1, p2 = 0.1/1, brevity exp(1 - 2/1)
        ("hello world", "hello", math.exp(-1) * math.sqrt(0.1)),
        ("hello", "goodbye", 0.1),  # N = 1: p1 = 0.1/1
        ("", "", 1.0),
        ("hello", "", 0.0),
        ("", "hello", 0.0),
        ("Hello", "hello", 0.1),  # case matters: it is what gets typed
    ],
)
def test_bleu(reference: str, hypothesis: str, expected: float) -> None:
    assert bleu(reference, hypothesis) == pytest.approx(expected)


def test_bleu_clips_repeated_words() -> None:
    # "the the the" against "the cat": p1 = 1/3 (clipped), p2 = 0.1/2, BP = 1
    assert bleu("the cat", "the the the") == pytest.approx(math.sqrt(1 / 3 * 0.05))


def test_write_penalty() -> None:
    assert write_penalty("Quarterly report", "Quarterly report") == 0.0
    assert write_penalty("Quarterly report", "Quartely report") == pytest.approx(1 - math.sqrt(0.05))
    assert write_penalty("Quarterly report", None) == 1.0


# -- sequence score and action score ---------------------------------------------------------


def test_sequence_weight() -> None:
    assert sequence_weight(1) == pytest.approx(0.1)
    assert sequence_weight(3) == pytest.approx(2.1)
    assert sequence_weight(0) == 0.0


def test_the_gold_script_scores_one() -> None:
    score = score_script(GOLD_SCRIPT, GOLD, BOXES)
    assert (score.sequence_score, score.action_score) == (1.0, 1.0)
    assert score.penalties == ()
    assert score.first_reason() == "every action matches"


def test_a_click_just_outside_its_box() -> None:
    script = GOLD_SCRIPT.replace("click(120, 65)", "click(145, 65)")
    score = score_script(script, GOLD, BOXES)
    assert score.sequence_score == 1.0
    # (2.1 - 5/5.02) / 2.1
    assert score.action_raw == pytest.approx(2.1 - 5 / 5.02)
    assert score.action_score == pytest.approx((2.1 - 5 / 5.02) / 2.1)
    assert score.action_score == pytest.approx(0.525707, abs=1e-6)
    assert score.first_reason() == "action 1 (click) is 5 px outside its box 'title'"


def test_a_typo_in_typed_text() -> None:
    score = score_script(GOLD_SCRIPT.replace("Quarterly", "Quartely"), GOLD, BOXES)
    assert score.sequence_score == 1.0
    assert score.action_score == pytest.approx((2.1 - (1 - math.sqrt(0.05))) / 2.1)
    assert score.action_score == pytest.approx(0.630289, abs=1e-6)
    assert score.first_reason() == (
        "action 2 (write) typed 'Quartely report', expected 'Quarterly report' (BLEU 0.22)"
    )


def test_a_wrong_hotkey() -> None:
    gold_script = "pyautogui.click(120, 65)  # box: title\npyautogui.hotkey('ctrl', 'b')"
    gold = parse_script(gold_script)
    score = score_script(gold_script.replace("'b'", "'i'"), gold, BOXES)
    assert score.sequence_score == 1.0
    assert score.action_score == pytest.approx((1.1 - 1.0) / 1.1)  # 0.0909
    assert score.first_reason() == "action 2 (hotkey) keys ctrl+i differ from b+ctrl"


def test_penalties_add_up_and_stop_at_zero() -> None:
    script = GOLD_SCRIPT.replace("click(120, 65)", "click(145, 65)").replace("'enter'", "'tab'")
    score = score_script(script, GOLD, BOXES)
    assert score.action_raw == pytest.approx(2.1 - 5 / 5.02 - 1.0)
    worse = score_script(script.replace("Quarterly report", "nothing alike"), GOLD, BOXES)
    assert worse.action_raw == 0.0
    assert worse.sequence_score == 1.0


def test_a_single_click_outside_its_box_scores_zero() -> None:
    gold = parse_script("pyautogui.click(120, 65)  # box: title")
    score = score_script("pyautogui.click(145, 65)", gold, BOXES)
    assert score.sequence_score == 1.0
    assert score.action_score == 0.0  # max(0.1 - 0.996, 0)


def test_a_different_sequence_scores_zero() -> None:
    score = score_script("pyautogui.click(120, 65)\npyautogui.press('enter')", GOLD, BOXES)
    assert (score.sequence_score, score.action_score) == (0.0, 0.0)
    assert score.first_reason() == ("action sequence differs: expected click, write, press; got click, press")


def test_an_empty_script_scores_zero() -> None:
    score = score_script("", GOLD, BOXES)
    assert (score.sequence_score, score.action_score) == (0.0, 0.0)
    assert score.first_reason() == "the script has no pyautogui actions (expected click, write, press)"


def test_a_script_that_is_not_python_scores_zero() -> None:
    score = score_script("pyautogui.click(1, 2", GOLD, BOXES)
    assert score.action_score == 0.0
    assert score.first_reason().startswith("the script is not valid Python: line 1:")


def test_a_click_with_computed_coordinates_gets_the_full_penalty() -> None:
    script = GOLD_SCRIPT.replace("click(120, 65)", "click(100 + 20, y)")
    score = score_script(script, GOLD, BOXES)
    assert score.action_raw == pytest.approx(1.1)
    assert "has no literal coordinates" in score.first_reason()


# -- aggregation ----------------------------------------------------------------------------


def test_aggregate_is_the_papers_ratio_of_sums() -> None:
    typo = score_script(GOLD_SCRIPT.replace("Quarterly", "Quartely"), GOLD, BOXES)  # 1.3236 of 2.1
    one_click = parse_script("pyautogui.click(120, 65)  # box: title")
    missed = score_script("pyautogui.write('x')", one_click, BOXES)  # 0 of 0.1
    result = aggregate([typo, missed])
    assert result.tasks == 2
    assert result.sequence_score == pytest.approx(2.1 / 2.2)
    assert result.action_score == pytest.approx((2.1 - (1 - math.sqrt(0.05))) / 2.2)
    assert result.mean_sequence_score == pytest.approx(0.5)
    assert result.mean_action_score == pytest.approx(0.630289 / 2, abs=1e-6)


def test_aggregate_of_nothing_is_zero() -> None:
    assert aggregate([]).action_score == 0.0


# -- parsing --------------------------------------------------------------------------------


def test_parse_normalises_action_types() -> None:
    actions = parse_script(
        "\n".join(
            [
                "import pyautogui, time",
                "pyautogui.click(10, 20, button='right')",
                "pyautogui.click(x=10, y=20, clicks=2)",
                "pyautogui.typewrite('abc', interval=0.1)",
                "time.sleep(0.5)",
                "w, h = pyautogui.size()",
                "pyautogui.scroll(-3)",
                "pyautogui.doubleClick((30, 40))",
            ]
        )
    )
    assert [a.kind for a in actions] == ["rightClick", "doubleClick", "write", "scroll", "doubleClick"]
    assert actions[0].point == (10.0, 20.0)
    assert actions[1].point == (10.0, 20.0)
    assert actions[2].text == "abc"
    assert actions[4].point == (30.0, 40.0)


def test_click_arguments_by_position_follow_pyautoguis_signature() -> None:
    # click(x, y, clicks, interval, button): the button is the fifth positional argument
    actions = parse_script(
        "\n".join(
            [
                "pyautogui.click(10, 20, 1, 0.0, 'right')",
                "pyautogui.click(10, 20, 2, 0.25)",
                "pyautogui.click(10, 20, 1, 0.0, 'middle')",
                "pyautogui.click(10, 20, 3, 0.1, 'left')",
            ]
        )
    )
    assert [a.kind for a in actions] == ["rightClick", "doubleClick", "middleClick", "tripleClick"]
    gold = parse_script("pyautogui.rightClick(120, 65)  # box: title")
    score = score_script("pyautogui.click(120, 65, 1, 0.0, 'right')", gold, BOXES)
    assert (score.sequence_score, score.action_score) == (1.0, 1.0)


def test_parse_follows_the_cursor() -> None:
    actions = parse_script("pyautogui.moveTo(210, 179)\npyautogui.click()\npyautogui.dragTo(243, 179)")
    assert [a.point for a in actions] == [(210.0, 179.0), (210.0, 179.0), (243.0, 179.0)]
    (lone,) = parse_script("pyautogui.click()")
    assert lone.point is None


def test_parse_reads_box_labels_and_lines() -> None:
    first, second = parse_script("pyautogui.click(1, 2)  # box: ok_button\n\npyautogui.click(3, 4)")
    assert (first.box_key, second.box_key) == ("ok_button", "3")


def test_parse_refuses_invalid_python() -> None:
    with pytest.raises(ScriptError, match="not valid Python"):
        parse_script("pyautogui.click(")
