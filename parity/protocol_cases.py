"""Cases of the ``protocols`` parity level: model outputs in each native protocol's format.

Each case is ``{"protocol", "kind", "input"}``: ``input`` is one tool call's input for the
tool protocols (``claude``: the computer tool's ``input`` with its ``action``; ``openai``:
one computer action with its ``type``) and one whole model answer for the text protocols
(``ui-tars``, ``qwen3-vl``, ``qwen2.5-vl``, ``opencua``; ``-relative`` is the same protocol
with the model's other coordinate convention). ``kind`` names the action the case is about,
for the disagreements' names.

Per protocol: hand-picked cases covering every action kind with its quirks (xdotool and
CUA key names, unknown keys, modifiers held during clicks, pixel scrolls, drags with and
without a start, multi-line and non-ASCII text, quotes, endings, malformed arguments),
then seeded random ones built from the protocol's vocabulary.
"""

from __future__ import annotations

import random
from typing import Any

from parity.protocol_cases_text import opencua_cases, qwen_cases, uitars_cases
from parity.protocol_vocab import (
    KEYS,
    PROTOCOLS,
    SCREEN,
    TEXT_PROTOCOLS,
    TEXTS,
    TOOL_PROTOCOLS,
    new_case,
    pick,
)

__all__ = ["PROTOCOLS", "SCREEN", "TEXT_PROTOCOLS", "TOOL_PROTOCOLS", "build_cases"]

# -- Claude's computer tool -------------------------------------------------------------------

CLAUDE_ACTIONS = (
    "left_click", "right_click", "middle_click", "double_click", "triple_click", "left_press",
    "mouse_move", "left_click_drag", "left_mouse_down", "left_mouse_up", "key", "hold_key",
    "type", "scroll", "wait", "screenshot", "cursor_position", "zoom", "done", "fail",
    "call_user", "left click", "right click", "drag", "",
)  # fmt: skip
CLAUDE_POINTS: tuple[Any, ...] = (
    [640, 360], [0, 0], [1279, 719], [1280, 720], [1, 1], [333, 211], [640.7, 360.2],
    [2000, 100], [-5, 10], [10, 20, 30], [5], [], "640,360", None,
)  # fmt: skip


def _claude_key_text(rng: random.Random) -> str:
    keys = [pick(rng, KEYS) for _ in range(rng.choice((1, 1, 2, 3)))]
    return pick(rng, ("+", "+", " + ", "+")).join(keys)


def claude_cases(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Hand-picked inputs of the computer tool, then ``count`` random ones."""
    hand: list[dict[str, Any]] = [
        {"action": "left_click", "coordinate": [640, 360]},
        {"action": "left_click"},
        {"action": "left_click", "coordinate": [640, 360], "text": "ctrl"},
        {"action": "left_click", "coordinate": [100, 200], "text": "ctrl+shift"},
        {"action": "left_click", "coordinate": [100, 200], "text": "Control_L+Shift_L"},
        {"action": "left_click", "coordinate": [100, 200], "text": ""},
        {"action": "right_click", "coordinate": [1279, 719]},
        {"action": "middle_click", "coordinate": [5, 5]},
        {"action": "double_click", "coordinate": [640.6, 359.9]},
        {"action": "double_click", "coordinate": [640, 360], "text": "shift"},
        {"action": "triple_click", "coordinate": [10, 700]},
        {"action": "triple_click"},
        {"action": "left_press", "coordinate": [300, 300]},
        {"action": "left_press"},
        {"action": "mouse_move", "coordinate": [800, 450]},
        {"action": "mouse_move", "coordinate": [800, 450], "duration": 1.5},
        {"action": "mouse_move"},
        {"action": "mouse_move", "coordinate": [800, 450], "text": "ctrl"},
        {"action": "left_click_drag", "coordinate": [900, 500]},
        {"action": "left_click_drag", "start_coordinate": [100, 100], "coordinate": [900, 500]},
        {"action": "left_click_drag", "start_coordinate": [], "coordinate": [900, 500]},
        {"action": "left_click_drag", "start_coordinate": [100, 100]},
        {"action": "left_mouse_down"},
        {"action": "left_mouse_down", "coordinate": [50, 60]},
        {"action": "left_mouse_up", "coordinate": [70, 80]},
        {"action": "key", "text": "Return"},
        {"action": "key", "text": "ctrl+s"},
        {"action": "key", "text": "ctrl+shift+t"},
        {"action": "key", "text": "Page_Down"},
        {"action": "key", "text": "page_up"},
        {"action": "key", "text": "KP_0"},
        {"action": "key", "text": "super"},
        {"action": "key", "text": "Super_L"},
        {"action": "key", "text": "Escape"},
        {"action": "key", "text": "alt+F4"},
        {"action": "key", "text": "ctrl+a ctrl+c"},
        {"action": "key", "text": " ctrl + a "},
        {"action": "key", "text": "ctrl++"},
        {"action": "key", "text": "XF86AudioMute"},
        {"action": "key", "text": "'"},
        {"action": "key"},
        {"action": "key", "text": "a", "coordinate": [1, 1]},
        {"action": "key", "text": 5},
        {"action": "hold_key", "text": "shift", "duration": 2},
        {"action": "hold_key", "text": "ctrl+alt"},
        {"action": "hold_key"},
        {"action": "type", "text": "hello world"},
        {"action": "type", "text": "line one\nline two"},
        {"action": "type", "text": "ünïcödé 日本"},
        {"action": "type", "text": 'it\'s "quoted"'},
        {"action": "type", "text": 'ends with quote"'},
        {"action": "type", "text": "back\\slash \\n"},
        {"action": "type", "text": ""},
        {"action": "type"},
        {"action": "scroll", "scroll_direction": "down", "scroll_amount": 3},
        {"action": "scroll", "scroll_direction": "up", "scroll_amount": 5, "coordinate": [640, 360]},
        {"action": "scroll", "scroll_direction": "left", "scroll_amount": 2},
        {"action": "scroll", "scroll_direction": "right", "scroll_amount": 2, "coordinate": [1, 2]},
        {"action": "scroll", "scroll_direction": "down", "scroll_amount": 3, "text": "ctrl"},
        {"action": "scroll", "scroll_direction": "down"},
        {"action": "scroll", "scroll_direction": "up"},
        {"action": "scroll", "scroll_direction": "sideways", "scroll_amount": 3},
        {"action": "scroll", "scroll_direction": "down", "scroll_amount": "4"},
        {"action": "scroll", "scroll_direction": "up", "scroll_amount": 2.5},
        {"action": "wait"},
        {"action": "wait", "duration": 3},
        {"action": "screenshot"},
        {"action": "cursor_position"},
        {"action": "zoom", "region": [0, 0, 640, 360]},
        {"action": "done"},
        {"action": "fail"},
        {"action": "call_user"},
        {"action": "left click", "coordinate": [10, 10]},
        {"action": "right click", "coordinate": [10, 10]},
        {"action": "teleport"},
        {},
    ]
    for _ in range(count):
        action = pick(rng, CLAUDE_ACTIONS)
        case: dict[str, Any] = {"action": action} if action else {}
        if rng.random() < 0.8:
            case["coordinate"] = pick(rng, CLAUDE_POINTS)
        if rng.random() < 0.3:
            case["start_coordinate"] = pick(rng, CLAUDE_POINTS)
        if action in ("key", "hold_key") or rng.random() < 0.25:
            case["text"] = _claude_key_text(rng) if action != "type" else pick(rng, TEXTS)
        if action == "type":
            case["text"] = pick(rng, TEXTS)
        if action == "scroll" or rng.random() < 0.1:
            case["scroll_direction"] = pick(rng, ("up", "down", "left", "right", "up", "down", "diagonal"))
            case["scroll_amount"] = pick(rng, (1, 3, 5, 10, 0, -2, None, 2.5))
        if rng.random() < 0.15:
            case["duration"] = pick(rng, (0.1, 1, 2.5, None))
        hand.append({k: v for k, v in case.items() if v is not None or k == "coordinate"})
    return [new_case("claude", str(c.get("action", "(none)")) or "(empty)", c) for c in hand]


# -- OpenAI's computer tool (computer_use_preview) --------------------------------------------

OPENAI_ACTIONS = (
    "click", "double_click", "type", "keypress", "scroll", "move", "drag", "wait", "screenshot",
    "triple_click", "",
)  # fmt: skip
OPENAI_BUTTONS = ("left", "right", "wheel", "back", "forward", "middle")


def openai_cases(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Hand-picked computer actions, then ``count`` random ones."""
    hand: list[dict[str, Any]] = [
        {"type": "click", "x": 960, "y": 540, "button": "left"},
        {"type": "click", "x": 0, "y": 0, "button": "right"},
        {"type": "click", "x": 10, "y": 20, "button": "wheel"},
        {"type": "click", "x": 10, "y": 20, "button": "back"},
        {"type": "click", "x": 10, "y": 20, "button": "forward"},
        {"type": "click", "x": 10, "y": 20},
        {"type": "click", "x": 10, "button": "left"},
        {"type": "click", "x": 10.5, "y": 20.25, "button": "left"},
        {"type": "click", "x": 5, "y": 5, "button": "left", "keys": ["ctrl"]},
        {"type": "double_click", "x": 300, "y": 400},
        {"type": "double_click", "y": 400},
        {"type": "type", "text": "hello"},
        {"type": "type", "text": "multi\nline\ntext"},
        {"type": "type", "text": "ünïcödé"},
        {"type": "type", "text": "it's"},
        {"type": "type", "text": ""},
        {"type": "type"},
        {"type": "keypress", "keys": ["CTRL", "C"]},
        {"type": "keypress", "keys": ["ctrl", "c"]},
        {"type": "keypress", "keys": ["ENTER"]},
        {"type": "keypress", "keys": ["ARROWUP"]},
        {"type": "keypress", "keys": ["arrowup"]},
        {"type": "keypress", "keys": ["CMD", "SPACE"]},
        {"type": "keypress", "keys": ["cmd"]},
        {"type": "keypress", "keys": ["super"]},
        {"type": "keypress", "keys": ["option"]},
        {"type": "keypress", "keys": ["/"]},
        {"type": "keypress", "keys": ["'"]},
        {"type": "keypress", "keys": []},
        {"type": "keypress", "keys": [1, "a"]},
        {"type": "keypress", "keys": "ctrl"},
        {"type": "scroll", "x": 500, "y": 500, "scroll_x": 0, "scroll_y": 300},
        {"type": "scroll", "x": 500, "y": 500, "scroll_x": 0, "scroll_y": -120},
        {"type": "scroll", "x": 500, "y": 500, "scroll_x": 200, "scroll_y": 0},
        {"type": "scroll", "x": 500, "y": 500, "scroll_x": 200, "scroll_y": 100},
        {"type": "scroll", "x": 500, "y": 500, "scroll_x": 0, "scroll_y": 0},
        {"type": "scroll", "scroll_y": 50},
        {"type": "scroll", "x": 500, "scroll_y": 50},
        {"type": "scroll", "x": 1, "y": 2, "scroll_y": 2.7},
        {"type": "scroll", "x": 1, "y": 2, "scroll_y": "abc"},
        {"type": "scroll", "x": 1, "y": 2, "scroll_y": 50, "keys": ["shift"]},
        {"type": "move", "x": 100, "y": 200},
        {"type": "move", "x": 100},
        {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 300, "y": 400}]},
        {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 30, "y": 40}, {"x": 300, "y": 400}]},
        {"type": "drag", "path": [{"x": 1, "y": 2}]},
        {"type": "drag", "path": []},
        {"type": "drag"},
        {"type": "drag", "path": [{"x": 1}, {"x": 3, "y": 4}]},
        {"type": "wait"},
        {"type": "wait", "ms": 2500},
        {"type": "wait", "ms": 10},
        {"type": "screenshot"},
        {"type": "triple_click", "x": 1, "y": 1},
        {"type": ""},
        {},
    ]
    for _ in range(count):
        kind = pick(rng, OPENAI_ACTIONS)
        case: dict[str, Any] = {"type": kind}
        if kind in ("click", "double_click", "move", "scroll", "triple_click") or rng.random() < 0.2:
            if rng.random() < 0.93:
                case["x"] = rng.randrange(-10, 2000)
            if rng.random() < 0.93:
                case["y"] = rng.randrange(-10, 1100)
        if kind == "click":
            case["button"] = pick(rng, OPENAI_BUTTONS)
        if kind == "type":
            case["text"] = pick(rng, TEXTS)
        if kind == "keypress" or rng.random() < 0.1:
            case["keys"] = [pick(rng, KEYS) for _ in range(rng.choice((1, 1, 2, 3)))]
        if kind == "scroll":
            case["scroll_x"] = pick(rng, (0, 0, 0, 100, -100, 37))
            case["scroll_y"] = pick(rng, (0, 100, -100, 300, -50, 5))
        if kind == "drag":
            points = rng.choice((0, 1, 2, 2, 3, 4))
            case["path"] = [{"x": rng.randrange(0, 1920), "y": rng.randrange(0, 1080)} for _ in range(points)]
        if kind == "wait" and rng.random() < 0.5:
            case["ms"] = pick(rng, (0, 50, 1000, 3000))
        hand.append(case)
    return [new_case("openai", str(c.get("type", "(none)")) or "(empty)", c) for c in hand]


# -- all --------------------------------------------------------------------------------------


def build_cases(quick: bool, seed: int = 20261201) -> list[dict[str, Any]]:
    """Every protocol's cases: the hand-picked ones, and 300 random ones each (60 with ``quick``)."""
    count = 60 if quick else 300
    cases: list[dict[str, Any]] = []
    for offset, protocol in enumerate(PROTOCOLS):
        rng = random.Random(seed + offset)
        if protocol == "claude":
            cases += claude_cases(rng, count)
        elif protocol == "openai":
            cases += openai_cases(rng, count)
        elif protocol.startswith("ui-tars"):
            cases += uitars_cases(rng, count, relative=protocol.endswith("relative"))
        elif protocol.startswith("qwen"):
            cases += qwen_cases(rng, count, protocol)
        else:
            cases += opencua_cases(rng, count, relative=protocol.endswith("relative"))
    return cases
