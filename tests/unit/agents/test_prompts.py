"""The system prompts."""

from __future__ import annotations

import re

import pytest

from pytest_osworld.agents.prompts import PROMPTS, system_prompt
from pytest_osworld.errors import UnknownNameError


def test_one_prompt_per_combination() -> None:
    assert len(PROMPTS) == 7
    assert ("som", "computer_13") not in PROMPTS


@pytest.mark.parametrize(("observation", "space"), sorted(PROMPTS))
def test_prompt_structure(observation: str, space: str) -> None:
    text = system_prompt(
        observation, space, password="pa{ss}", screen_size=(1280, 720), instruction="Open the file."
    )
    assert text.startswith("You operate an Ubuntu desktop")
    assert "My computer's password is 'pa{ss}'" in text
    for code in ("```WAIT```", "```FAIL```", "```DONE```"):
        assert code in text
    assert "think" in text
    assert text.endswith("Open the file.")
    assert "1280" in text and "720" in text
    assert re.search(r"\{(password|width|height|instruction)\}", text) is None


def test_pyautogui_rules_and_som_tags() -> None:
    text = system_prompt("som", "pyautogui", password="p", screen_size=(1920, 1080))
    assert "pyautogui.screenshot()" in text and "locateCenterOnScreen" in text
    assert "tag_N" in text and "pyautogui.click(tag_3)" in text
    assert "table" in system_prompt("a11y_tree", "pyautogui", password="p", screen_size=(1, 1))


def test_computer13_lists_every_action_type() -> None:
    from pytest_osworld.agent.computer13 import ACTION_TYPES

    text = system_prompt("screenshot", "computer_13", password="p", screen_size=(1920, 1080))
    for name in ACTION_TYPES:
        assert f"- {name}:" in text
    assert '{"action_type": "CLICK"' in text
    assert "x from 0 to 1920, y from 0 to 1080" in text


def test_unsupported_combination() -> None:
    with pytest.raises(UnknownNameError, match="som\\+computer_13"):
        system_prompt("som", "computer_13", password="p", screen_size=(1, 1))
