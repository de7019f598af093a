"""The protocols parity level's comparison (parity/protocols.py): code read as calls, outcomes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from parity.protocol_cases import PROTOCOLS, build_cases
from parity.protocols import Tally, calls, our_agents, ours, same, shape


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("pyautogui.click(960, 540)", "import pyautogui\npyautogui.click(x=960, y=540)"),
        ("pyautogui.click(960, 540)", "pyautogui.click(960.0, 540.0, clicks=1, button='primary')"),
        ("pyautogui.typewrite('a')", "pyautogui.write(message='a', interval=0.0)"),
        ("pyautogui.sleep(0.5)\n", "import time\ntime.sleep(0.5)"),
        ("'''a docstring'''\npyautogui.scroll(-5, x=1, y=2)", "pyautogui.scroll(clicks=-5, x=1, y=2)"),
        ("pyautogui.hotkey('ctrl', 'c')", "pyautogui.hotkey('ctrl', 'c', _pause=True)"),
        ("pyautogui.press(['a', 'b'])", "pyautogui.press(('a', 'b'))"),
    ],
)
def test_equivalent_code_reads_as_the_same_calls(left: str, right: str) -> None:
    assert calls(left) == calls(right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("pyautogui.click(960, 540)", "pyautogui.click(960, 541)"),
        ("pyautogui.click(960, 540)", "pyautogui.rightClick(960, 540)"),
        ("pyautogui.click(1, 2)\npyautogui.press('a')", "pyautogui.press('a')\npyautogui.click(1, 2)"),
        ("pyautogui.hotkey('ctrl', 'c')", "pyautogui.hotkey('c', 'ctrl')"),
        ("pyautogui.write('a')", "pyautogui.write('a', interval=0.01)"),
        ("pyautogui.scroll(5)", "pyautogui.scroll(5)\npyautogui.scroll(5)"),
    ],
)
def test_different_code_reads_as_different_calls(left: str, right: str) -> None:
    assert calls(left) != calls(right)


def test_invalid_code_agrees_only_with_invalid_code() -> None:
    broken = {"value": ["pyperclip.copy('a\nb')"]}
    assert calls(broken["value"][0]) == {"invalid": "SyntaxError"}
    assert same(broken, {"value": ["pyautogui.typewrite('it's')"]})
    assert not same(broken, {"value": ["pyperclip.copy('a b')"]})


def test_unbindable_and_non_literal_arguments_are_kept_as_written() -> None:
    assert calls("pyautogui.press()") == {"calls": [["pyautogui.press", {"args": [], "kwargs": {}}]]}
    assert calls("pyautogui.moveTo(x, 1)")["calls"][0][1]["x"] == {"expr": "x"}
    assert calls("CALL_USER") == {"calls": [["statement", "CALL_USER"]]}


def test_outcomes_compare_specials_raises_and_action_boundaries() -> None:
    assert shape({"value": ["DONE"]}) == ["DONE"]
    assert same({"raised": "refused"}, {"raised": "ValueError"})
    assert not same({"raised": "refused"}, {"value": []})
    assert not same({"value": ["DONE"]}, {"value": ["FAIL"]})
    assert not same({"value": []}, {"value": ["import pyautogui"]})  # no action vs a no-op script
    assert not same({"crashed": "KeyError: x"}, {"raised": "KeyError"})
    one, two = (
        "pyautogui.click(1, 2)\npyautogui.press('a')",
        ["pyautogui.click(1, 2)", "pyautogui.press('a')"],
    )
    assert not same({"value": [one]}, {"value": two})


def test_a_disagreement_is_counted_named_and_undocumented_unless_listed() -> None:
    tally = Tally()
    case = {"protocol": "claude", "kind": "key", "input": {"action": "key", "text": "a"}}
    tally.add(
        case,
        {"value": ["pyautogui.keyDown('a')\npyautogui.keyUp('a')\n"]},
        {"value": ["pyautogui.press('a')"]},
    )
    tally.add(case, {"value": ["DONE"]}, {"value": ["DONE"]})
    (row,) = tally.report(set(), 1.0)["rows"]
    assert (row["cases"], row["agree"], row["undocumented"]) == (2, 1, 1)
    assert "claude/key" in row["note"]
    (row,) = tally.report({"claude/key"}, 1.0)["rows"]
    assert (row["documented"], row["undocumented"]) == (1, 0)


def test_cases_cover_every_protocol_and_are_seeded() -> None:
    quick = build_cases(quick=True)
    assert {c["protocol"] for c in quick} == set(PROTOCOLS)
    assert quick == build_cases(quick=True)
    assert len(build_cases(quick=False)) > len(quick)


def test_our_side_maps_a_claude_call_and_reads_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("anthropic")
    pytest.importorskip("openai")
    monkeypatch.setenv("PARITY_PROTOCOLS_KEY", "unused")  # no model is called
    agents = our_agents()
    click = ours(agents["claude"], "claude", {"action": "left_click", "coordinate": [640, 360]})
    assert shape(click) == shape({"value": ["pyautogui.click(960, 540)"]})
    assert ours(agents["claude"], "claude", {"action": "zoom"}).keys() == {"raised"}
    done = ours(agents["ui-tars"], "ui-tars", "Thought: ok\nAction: finished()")
    assert done == {"value": ["DONE"]}
    unreadable = ours(agents["ui-tars"], "ui-tars", "no action here")
    assert unreadable == {"value": ["DONE"]}  # OSWorld's agent asks three times, then DONE
