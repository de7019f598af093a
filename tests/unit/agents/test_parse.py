"""Parsing models' answers into actions."""

from __future__ import annotations

import pytest

from pytest_osworld.agent.actions import Action, ActionParseError
from pytest_osworld.agent.parse import (
    NO_ACTION,
    fenced_blocks,
    parse_actions,
    parse_computer13,
    parse_pyautogui,
    thought_of,
)
from pytest_osworld.errors import UnknownNameError


def code(text: str) -> Action:
    return Action("code", code=text)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("DONE", [Action("DONE")]),
        ("  WAIT \n", [Action("WAIT")]),
        ("FAIL", [Action("FAIL")]),
        ("```DONE```", [Action("DONE")]),
        ("```\nFAIL\n```", [Action("FAIL")]),
        ("I clicked it.\n```python\npyautogui.click(1, 2)\n```", [code("pyautogui.click(1, 2)")]),
        ("```py\npyautogui.press('enter')\n```", [code("pyautogui.press('enter')")]),
        ("```\npyautogui.press('tab')\n```", [code("pyautogui.press('tab')")]),
        (
            "```python\npyautogui.click(5, 6)\nDONE\n```",
            [code("pyautogui.click(5, 6)"), Action("DONE")],
        ),
        (
            "```python\npyautogui.click(1, 1)\n```\nthen\n```python\npyautogui.click(2, 2)\n```",
            [code("pyautogui.click(1, 1)"), code("pyautogui.click(2, 2)")],
        ),
        ("First this:\n```python\nx = 1\n```\n```WAIT```", [code("x = 1"), Action("WAIT")]),
        ("The task is complete.\nDONE", [Action("DONE")]),
        ("```python\n\n```\n```DONE```", [Action("DONE")]),
    ],
)
def test_pyautogui_answers(answer: str, expected: list[Action]) -> None:
    assert parse_pyautogui(answer) == expected


def test_semicolons_are_never_split() -> None:
    answer = "```python\npyautogui.typewrite('a; b; c'); pyautogui.press('enter')\n```"
    (action,) = parse_pyautogui(answer)
    assert action.code == "pyautogui.typewrite('a; b; c'); pyautogui.press('enter')"


def test_multiline_code_is_kept_whole() -> None:
    body = "import time\nfor i in range(3):\n    pyautogui.press('down')\n    time.sleep(0.5)"
    (action,) = parse_pyautogui(f"```python\n{body}\n```")
    assert action.code == body


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("", "the answer is empty"),
        ("I would click the button.", "no ```code``` block"),
        ("```python\nimg = pyautogui.screenshot()\n```", r"calls screenshot\(\)"),
        ("```python\nx, y = pyautogui.locateCenterOnScreen('ok.png')\n```", "locateOnScreen"),
        ("```python\npyautogui.locateOnScreen('ok.png')\n```", "locateOnScreen"),
        ("```python\npyautogui.click(1, \n```", "code block 1 is not valid Python"),
        ("```python\npyautogui.click(1, 1)\n```\n```python\nif:\n```", "code block 2"),
    ],
)
def test_pyautogui_refusals(answer: str, message: str) -> None:
    with pytest.raises(ActionParseError, match=message):
        parse_pyautogui(answer)


def test_refusal_message_says_why() -> None:
    with pytest.raises(ActionParseError) as info:
        parse_pyautogui("```python\npyautogui.screenshot('a.png')\n```")
    assert "not allowed" in str(info.value)
    assert "coordinates from the observation" in str(info.value)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            '```json\n{"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}\n```',
            [Action("computer_13", params={"action_type": "CLICK", "parameters": {"x": 10, "y": 20}})],
        ),
        (
            '{"action_type": "TYPING", "parameters": {"text": "hi; there"}}',
            [Action("computer_13", params={"action_type": "TYPING", "parameters": {"text": "hi; there"}})],
        ),
        (
            '```\n[{"action_type": "PRESS", "parameters": {"key": "enter"}}, {"action_type": "DONE"}]\n```',
            [
                Action("computer_13", params={"action_type": "PRESS", "parameters": {"key": "enter"}}),
                Action("DONE"),
            ],
        ),
        ("```WAIT```", [Action("WAIT")]),
        ("FAIL", [Action("FAIL")]),
        ('{"action_type": "DONE"}', [Action("DONE")]),
    ],
)
def test_computer13_answers(answer: str, expected: list[Action]) -> None:
    assert parse_computer13(answer) == expected


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("click the OK button", "block 1 is not valid JSON"),
        (
            '```json\n{"action_type": "CLICK", "parameters": {"x": 1}}\n```\n```json\n{oops}\n```',
            "block 2 is not valid JSON",
        ),
        ('{"action_type": "TELEPORT", "parameters": {}}', "unknown computer_13 action_type 'TELEPORT'"),
        ('{"action_type": "CLICK", "parameters": {"x": "ten"}}', "x must be a number"),
        ('{"action_type": "TYPING", "parameters": {}}', "missing"),
        ("[1, 2]", "must be a JSON object, got int"),
        ("", "the answer is empty"),
    ],
)
def test_computer13_refusals(answer: str, message: str) -> None:
    with pytest.raises(ActionParseError, match=message):
        parse_computer13(answer)


def test_parse_actions_dispatches_and_names_unknown_spaces() -> None:
    assert parse_actions("DONE", "computer_13") == [Action("DONE")]
    assert parse_actions("```python\npass\n```", "pyautogui") == [code("pass")]
    with pytest.raises(UnknownNameError, match="unknown action space 'xdotool'"):
        parse_actions("DONE", "xdotool")


def test_no_action_message_is_the_constant() -> None:
    with pytest.raises(ActionParseError) as info:
        parse_pyautogui("nothing here")
    assert str(info.value) == NO_ACTION


def test_fenced_blocks_and_thought() -> None:
    answer = "Look at the menu.\n```python\npyautogui.click(3, 4)\n```\nThen wait."
    assert fenced_blocks(answer) == ["pyautogui.click(3, 4)"]
    assert thought_of(answer) == "Look at the menu.\n\nThen wait."
