"""The official scoring rule by rule, against hand-computed values and against the paper scoring.

Each ``test_rule_*`` case scores one prediction both ways and asserts that they differ as
the rule says (issue 53's rules 1-9); the numbers are worked out in the comments.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from pytest_osworld.omniact.official import (
    GOLD_CLICK_OFF_BOX,
    NO_GOLD_LINES,
    GoldClickOffBox,
    GoldScriptError,
    prepare_gold,
    score,
)
from pytest_osworld.omniact.official_text import box_miss, char_bleu, hotkey_keys, kept_lines, point
from pytest_osworld.omniact.release import ReleaseBox, ReleaseSample
from pytest_osworld.omniact.scorings import (
    GOLD_NOT_PYTHON,
    pointer_box,
    sample_figures,
    score_official,
    score_paper,
)

#: A 20x30 box centred on (110, 65): diagonal sqrt(1300) = 36.0555.
TALL = ((100.0, 50.0), (120.0, 80.0))
#: A 20x20 box centred on (110, 110): diagonal 20 * sqrt(2) = 28.2843.
SQUARE = ((100.0, 100.0), (120.0, 120.0))
BOXES = {"tall": TALL, "square": SQUARE}


def sample(
    *gold: str, boxes: dict[str, tuple[tuple[float, float], tuple[float, float]]] = BOXES
) -> ReleaseSample:
    """A release sample with this gold script, without files."""
    text = "Task: do it\nOutput Script:\n" + "\n".join(gold) + "\n"
    return ReleaseSample(
        split="test",
        key="0",
        domain="desktop",
        app="calculator",
        instruction="do it",
        task_text=text,
        task_path=Path("task.txt"),
        image=Path("screen.png"),
        box_path=Path("screen.json"),
        boxes={name: ReleaseBox(name, tl, br) for name, (tl, br) in boxes.items()},
        official=prepare_gold(text, boxes),
    )


def both(case: ReleaseSample, prediction: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """(sequence, action) of the official and of the paper scoring."""
    official = score_official(case, prediction)
    paper = score_paper(case, prediction)
    return (official.sequence_score, official.action_score), (paper.sequence_score, paper.action_score)


# -- rule 1: lines, lowercased, not stripped; the text stripped as a whole -----------------------


def test_kept_lines() -> None:
    text = "Task: x\nOutput Script:\n  PyAutoGUI.Click(1,2)\n# note\npyautogui_x = 1\n"
    # the first line goes; "Output Script:" and the comment are not pyautogui lines; case goes, indent stays
    assert kept_lines(text, gold=True) == ("  pyautogui.click(1,2)", "pyautogui_x = 1")
    assert kept_lines("  pyautogui.press('a')\n  pyautogui.press('b')", gold=False) == (
        "pyautogui.press('a')",  # the whole text is stripped: the first line loses its indent
        "  pyautogui.press('b')",
    )


def test_rule_1_an_indented_first_line_passes_official_but_is_not_python() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.press("enter")')
    official, paper = both(case, "    pyautogui.click(110,65)\npyautogui.press('enter')")
    assert official == (1.0, 1.0)
    assert paper == (0.0, 0.0)  # IndentationError


def test_rule_1_an_indented_later_line_fails_official_only() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.press("enter")')
    official, paper = both(case, "pyautogui.click(110,65)\nif True:\n    pyautogui.press('enter')")
    assert official == (0.0, 0.0)  # line 2 is "    pyautogui.press(...)": no 'pyautogui.' at its start
    assert paper == (1.0, 1.0)  # the call in the block is an action


# -- rule 2: the penalties are divided by the number of gold lines ------------------------------


def test_rule_2_a_penalty_costs_one_line_of_n() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.press("enter")')
    official, paper = both(case, "pyautogui.click(110,65)\npyautogui.press('tab')")
    assert official == (1.0, pytest.approx(1 - 1 / 2))  # 1 - 1/2
    assert paper == (1.0, pytest.approx((1.1 - 1) / 1.1))  # (beta1 + beta2 - 1) / 1.1 = 0.0909
    assert score_official(case, "").weight == pytest.approx(2 - 0.9)


# -- rule 3: the sequence by call names as written ------------------------------------------------


def test_rule_3_names_are_compared_as_written() -> None:
    case = sample('pyautogui.write("Dune")')
    official, paper = both(case, "pyautogui.typewrite('Dune')")
    assert official == (0.0, 0.0)  # 'typewrite' is not 'write'
    assert paper == (1.0, 1.0)  # the paper scoring merges the alias


def test_rule_3_a_right_button_click_is_not_a_rightclick_for_official() -> None:
    case = sample("pyautogui.rightClick(110.0,65.0)")
    official, paper = both(case, "pyautogui.click(110, 65, button='right')")
    assert official == (0.0, 0.0)
    assert paper == (1.0, 1.0)


def test_rule_3_arguments_do_not_count_for_the_sequence() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.press("enter")')
    result = score(case.official, "pyautogui.click(999, 999)\npyautogui.press('x', presses=3)")
    assert result.sequence_flag == 1


# -- rule 4: only `click` has a position penalty, smoothed by the diagonal itself ------------------


def test_rule_4_a_rightclick_anywhere_costs_nothing_officially() -> None:
    case = sample("pyautogui.rightClick(110.0,65.0)", 'pyautogui.press("enter")')
    official, paper = both(case, "pyautogui.rightClick(300, 190)\npyautogui.press('enter')")
    assert official == (1.0, 1.0)
    assert paper[0] == 1.0 and paper[1] < 0.1  # 1.1 minus a near-whole click penalty, over 1.1


@pytest.mark.parametrize("kind", ["doubleClick", "moveTo", "dragTo"])
def test_rule_4_other_pointer_actions_get_no_position_penalty(kind: str) -> None:
    case = sample(f"pyautogui.{kind}(110.0,65.0)", 'pyautogui.press("enter")')
    official, paper = both(case, f"pyautogui.{kind}(5, 5)\npyautogui.press('enter')")
    assert official == (1.0, 1.0)
    assert paper[1] < official[1]


def test_rule_4_a_click_35_px_outside_a_20_px_box() -> None:
    case = sample("pyautogui.click(110.0,110.0)", 'pyautogui.press("enter")')
    official, paper = both(case, "pyautogui.click(155, 110)\npyautogui.press('enter')")
    diagonal = 20 * math.sqrt(2)  # 28.2843
    miss = 1 - diagonal / (diagonal + 35)  # 0.5531: the official's smoothing is the diagonal
    assert miss == pytest.approx(0.55306, abs=1e-5)
    assert official == (1.0, pytest.approx(1 - miss / 2))  # 0.7235
    mu = 1 / diagonal  # the paper's text: the inverse of the diagonal
    paper_miss = 1 - mu / (mu + 35)  # 0.99899
    assert paper == (1.0, pytest.approx((1.1 - paper_miss) / 1.1))  # 0.0918


def test_box_miss_is_measured_from_the_edges() -> None:
    assert box_miss(TALL, 100, 80) == 0.0  # on the corner
    # 3 px left and 4 px above the top-left corner: d = 5, diagonal sqrt(1300)
    assert box_miss(TALL, 97, 46) == pytest.approx(1 - math.sqrt(1300) / (math.sqrt(1300) + 5))
    assert box_miss(((5.0, 5.0), (5.0, 5.0)), 5, 5) == 0.0  # a box of no size, hit exactly
    assert box_miss(((5.0, 5.0), (5.0, 5.0)), 6, 5) == 1.0


# -- rule 5: press, the key between quotes, no aliases -------------------------------------------


def test_rule_5_press_has_no_key_aliases() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.press("enter")')
    official, paper = both(case, "pyautogui.click(110,65)\npyautogui.press('return')")
    assert official == (1.0, 0.5)  # 'return' != 'enter': 1/2
    assert paper == (1.0, 1.0)  # return = enter


def test_press_reads_either_quote_and_strips_spaces() -> None:
    case = sample('pyautogui.press("enter")')
    assert score(case.official, "pyautogui.press(' Enter ')").action_score == 1.0
    assert score(case.official, 'pyautogui.press("enter", presses=2)').action_score == 1.0


# -- rule 6: hotkey, the text between the parentheses cut at commas -------------------------------


def test_hotkey_pieces() -> None:
    assert hotkey_keys('pyautogui.hotkey("ctrl","v")') == {"ctrl", "v"}
    assert hotkey_keys('pyautogui.hotkey("ctrl", "v")') == {"ctrl", '"v'}  # ' "v"' loses ' ' and '"'
    assert hotkey_keys("pyautogui.hotkey(ab,'cd')") == {"cd"}  # 'ab' is too short: dropped, not kept
    assert hotkey_keys("pyautogui.hotkey") is None


def test_rule_6_a_space_after_the_comma_is_a_different_hotkey() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.hotkey("ctrl","v")')
    official, paper = both(case, 'pyautogui.click(110,65)\npyautogui.hotkey("ctrl", "v")')
    assert official == (1.0, 0.5)
    assert paper == (1.0, 1.0)


# -- rule 7: write, NLTK's BLEU over characters, the candidate cut at a quote ---------------------


def test_char_bleu_by_hand() -> None:
    # "dune" vs "dunes": p1 = 4/5, p2 = 3/4 (du un ne of du un ne es), no brevity penalty
    assert char_bleu("dune", "dunes") == pytest.approx(math.sqrt(4 / 5 * 3 / 4))
    # "dune" vs "du": p1 = p2 = 1, brevity exp(1 - 4/2)
    assert char_bleu("dune", "du") == pytest.approx(math.exp(-1))
    assert char_bleu("ab", "ba") < 1e-100  # no bigram in common, no smoothing
    assert char_bleu("dune", "") == 0.0


def test_rule_7_bleu_over_characters() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.write("Quarterly report")')
    official, paper = both(case, "pyautogui.click(110,65)\npyautogui.write('Quartely report')")
    # characters: p1 = 15/15, p2 = 13/14 (el is not in the reference; rt twice), c = 15 < r = 16
    bleu = math.exp(1 - 16 / 15) * math.sqrt(13 / 14)  # 0.9015
    assert official == (1.0, pytest.approx(1 - (1 - bleu) / 2))  # 0.9507
    # words: N = 2, p1 = 1/2, p2 = 0.1 / 1 (smoothed): BLEU sqrt(0.05)
    assert paper == (1.0, pytest.approx((1.1 - (1 - math.sqrt(0.05))) / 1.1))  # 0.2942


def test_rule_7_an_apostrophe_ends_the_candidate() -> None:
    case = sample('pyautogui.write("it\'s")')
    official, paper = both(case, 'pyautogui.write("it\'s")')
    # the candidate is "it": p1 = p2 = 1, brevity exp(1 - 4/2)
    assert official == (1.0, pytest.approx(math.exp(-1)))
    assert paper == (1.0, 1.0)


def test_rule_7_no_shared_bigram_is_a_whole_penalty() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.write("ab")')
    official, paper = both(case, "pyautogui.click(110,65)\npyautogui.write('ba')")
    assert official == (1.0, pytest.approx(0.5))  # BLEU 0: a whole line of 2
    assert paper == (1.0, pytest.approx((1.1 - 0.9) / 1.1))  # one word, smoothed: BLEU 0.1


# -- rule 8: lowercased; scroll amounts, drags and moves not scored --------------------------------


def test_rule_8_case_does_not_count_officially() -> None:
    case = sample('pyautogui.write("Dune")')
    official, paper = both(case, "pyautogui.write('dune')")
    assert official == (1.0, 1.0)
    assert paper == (1.0, 0.0)  # 'dune' is another word: BLEU 0.1, max(0.1 - 0.9, 0)


def test_rule_8_scroll_amounts_are_scored_by_neither() -> None:
    case = sample("pyautogui.scroll(-3)", 'pyautogui.press("enter")')
    official, paper = both(case, "pyautogui.scroll(10)\npyautogui.press('enter')")
    assert official == paper == (1.0, 1.0)


def test_rule_8_a_drag_target_counts_for_the_paper_only() -> None:
    case = sample("pyautogui.moveTo(110.0,65.0)", "pyautogui.dragTo(110.0,110.0)")
    official, paper = both(case, "pyautogui.moveTo(110,65)\npyautogui.dragTo(300,190)")
    assert official == (1.0, 1.0)
    assert paper[1] < 1.0


# -- rule 9: where the official scorer would stop ---------------------------------------------------


def test_point_reads_two_plain_numbers_only() -> None:
    assert point("pyautogui.click(1064.0,116.5)") == (1064.0, 116.5)
    assert point("pyautogui.click(10, 20, button='left')") == (10.0, 20.0)
    for line in ("pyautogui.click(x=10, y=20)", "pyautogui.click()", "pyautogui.click((10, 20))"):
        assert point(line) is None, line
    assert point("pyautogui.click(nan, 1)") is None


def test_rule_9_keyword_coordinates_are_a_miss_officially() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.press("enter")')
    official, paper = both(case, "pyautogui.click(x=110, y=65)\npyautogui.press('enter')")
    assert official == (1.0, 0.5)  # the full click penalty, 1/2
    assert paper == (1.0, 1.0)
    (penalty,) = score_official(case, "pyautogui.click(x=110, y=65)\npyautogui.press('enter')").penalties
    assert penalty.unreadable and "stops here" in penalty.reason


@pytest.mark.parametrize(
    ("gold", "prediction"),
    [('pyautogui.press("enter")', "pyautogui.press(enter)"), ('pyautogui.write("a")', "pyautogui.write(a)")],
)
def test_rule_9_unquoted_keys_and_text_are_a_miss(gold: str, prediction: str) -> None:
    result = score(sample(gold).official, prediction)
    assert (result.sequence_flag, result.action_score) == (1, 0.0)


def test_rule_9_a_gold_click_at_no_box_centre_is_an_error() -> None:
    with pytest.raises(GoldClickOffBox) as caught:
        prepare_gold("Task: x\nOutput Script:\npyautogui.click(111.0,65.0)\n", BOXES)
    assert str(caught.value) == GOLD_CLICK_OFF_BOX.format(index=1, x=111, y=65)
    assert caught.value.index == 1


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        ("Output Script:\n", NO_GOLD_LINES),
        ("pyautogui.click(a, b)", "not two plain numbers"),
        ("pyautogui.press('enter')", "between double quotes"),
        ("pyautoguiclick(1, 2)", "has no 'pyautogui.'"),
    ],
)
def test_gold_scripts_the_official_scorer_cannot_read(script: str, problem: str) -> None:
    with pytest.raises(GoldScriptError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        prepare_gold("Task: x\n" + script, BOXES)


# -- per sample -------------------------------------------------------------------------------------


def test_a_wrong_sequence_is_charged_every_penalty_but_scores_zero() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.write("a")', "pyautogui.rightClick(20.0,20.0)")
    result = score(case.official, "pyautogui.click(110,65)")
    assert result.sequence_flag == 0
    assert result.reason() == "the prediction has 1 pyautogui line(s), the gold 3"
    # click and write: 1/3 each; the rightclick has no kind of penalty
    assert (result.click_penalty, result.press_penalty, result.write_penalty) == (1 / 3, 0.0, 1 / 3)
    assert result.action_score == 0.0


def test_penalties_stop_at_zero() -> None:
    case = sample("pyautogui.click(110.0,65.0)")
    result = score(case.official, "pyautogui.click(x=1)")
    assert result.click_penalty == 1.0 and result.action_score == 0.0


def test_the_paper_box_of_a_pointer_action() -> None:
    boxes = {"big": ReleaseBox("big", (0, 0), (100, 100)), "small": ReleaseBox("small", (40, 40), (60, 60))}
    assert pointer_box(boxes, 50, 50).to_json() == [0, 0, 100, 100]  # centred there, first in the file
    assert pointer_box(boxes, 45, 45).to_json() == [40, 40, 20, 20]  # else the smallest holding it
    assert pointer_box(boxes, 200, 5).to_json() == [200, 5, 0, 0]


def test_without_nltk_the_official_scoring_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_osworld.omniact import official_text

    official_text._nltk_bleu.cache_clear()
    monkeypatch.setitem(sys.modules, "nltk.translate.bleu_score", None)
    try:
        with pytest.raises(official_text.NltkMissing, match=r"pip install 'pytest-osworld\[omniact\]'"):
            char_bleu("a", "b")
    finally:
        official_text._nltk_bleu.cache_clear()


def test_a_gold_script_that_is_not_python_scores_zero_on_paper_only() -> None:
    case = sample('pyautogui.write("say "hi"")')  # between the first two double quotes: 'say '
    paper = score_paper(case, 'pyautogui.write("say ")')
    assert (paper.sequence_score, paper.action_score) == (0.0, 0.0)
    assert paper.first_reason().startswith(GOLD_NOT_PYTHON.split("{")[0])
    assert paper.maximum == pytest.approx(0.1)
    assert score_official(case, 'pyautogui.write("say ")').action_score == 1.0


def test_the_paper_figures_of_a_sample() -> None:
    case = sample("pyautogui.click(110.0,65.0)", 'pyautogui.press("enter")')
    figures = sample_figures(case, "pyautogui.click(110,65)\npyautogui.press('tab')", "paper")
    # the key penalty (1) over the weight 1.1, as the official figures' press penalty
    assert (figures.weight, figures.press_penalty, figures.click_penalty) == (
        pytest.approx(1.1),
        pytest.approx(1 / 1.1),
        0.0,
    )
    official = sample_figures(case, "pyautogui.click(110,65)\npyautogui.press('tab')", "official")
    assert official.press_penalty == pytest.approx(1 / 2)
    with pytest.raises(ValueError, match="unknown scoring 'best'; use one of: official, paper"):
        sample_figures(case, "", "best")
