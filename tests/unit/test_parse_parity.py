"""Fence reading that agent-facing parity settled (docs/parity.md, "Found by agent-facing parity")."""

from __future__ import annotations

import pytest

from pytest_osworld.agent.actions import ActionParseError
from pytest_osworld.agent.parse import fenced_blocks, parse_pyautogui


@pytest.mark.parametrize(
    ("answer", "blocks"),
    [
        ("```python pyautogui.click(1, 2)```", ["pyautogui.click(1, 2)"]),  # tag then code, one line
        ("```python [1, 2]\n```", ["[1, 2]"]),  # tag then code, then a newline
        ("```python ```", [""]),  # a tag and nothing else
        ("```x = 1```", ["x = 1"]),  # not a language: kept (OSWorld drops "x")
        ("``` tag_1\n```", [" tag_1"]),  # a blank after the fence: not a tag
        ("```python\nWAIT\n```", ["WAIT"]),
        ("```\nDONE\n```", ["DONE"]),
    ],
)
def test_language_tags(answer: str, blocks: list[str]) -> None:
    assert fenced_blocks(answer) == blocks


def test_a_tag_only_block_is_no_action() -> None:
    with pytest.raises(ActionParseError, match="no ```code``` block"):
        parse_pyautogui("```python ```")


def test_a_nul_byte_is_a_parse_error_not_a_crash() -> None:
    with pytest.raises(ActionParseError, match="not valid Python"):
        parse_pyautogui("```python\npyautogui.write('a\x00b')\n```")
