from __future__ import annotations

import pytest

from pytest_osworld.agent.actions import Action, ActionParseError, action_from_json
from pytest_osworld.agent.computer13 import to_pyautogui


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}, "pyautogui.click(10, 20)"),
        (
            {"action_type": "CLICK", "parameters": {"button": "right", "num_clicks": 2}},
            'pyautogui.click(button="right", clicks=2)',
        ),
        (
            {"action_type": "TYPING", "parameters": {"text": "a'b\"c"}},
            'pyautogui.typewrite("a\'b\\"c")',
        ),
        (
            {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "s"]}},
            'pyautogui.hotkey("ctrl", "s")',
        ),
        ({"action_type": "SCROLL", "parameters": {"dy": -3}}, "pyautogui.scroll(-3)"),
        (
            {"action_type": "DRAG_TO", "parameters": {"x": 1, "y": 2}},
            "pyautogui.dragTo(1, 2, duration=0.5, button='left')",
        ),
    ],
)
def test_translation(action, code) -> None:
    assert to_pyautogui(action_from_json(action)) == code


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"action_type": "JUMP"}, "unknown computer_13 action_type 'JUMP'"),
        ({"action_type": "MOVE_TO", "parameters": {"x": 1}}, r"missing \['y'\]"),
        ({"action_type": "CLICK", "parameters": {"button": "side"}}, "button must be one of"),
        ({"action_type": "TYPING", "parameters": {"text": 5}}, "text must be a string"),
        ({"action_type": "HOTKEY", "parameters": {"keys": []}}, "keys must be a non-empty list"),
        ({"action_type": "CLICK", "parameters": {"x": True, "y": 1}}, "x must be a number"),
    ],
)
def test_validation(action, message) -> None:
    with pytest.raises(ActionParseError, match=message):
        to_pyautogui(action_from_json(action))


def test_special_actions() -> None:
    assert action_from_json("DONE") == Action("DONE")
    assert action_from_json({"action_type": "FAIL"}).is_terminal
    assert action_from_json(" WAIT ").kind == "WAIT"
    with pytest.raises(ActionParseError):
        action_from_json(3)
