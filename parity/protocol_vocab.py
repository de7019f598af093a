"""The vocabulary the ``protocols`` parity level draws its cases from (parity/protocol_cases.py)."""

from __future__ import annotations

import random
from typing import Any

SCREEN = (1920, 1080)
TOOL_PROTOCOLS = ("claude", "openai")
TEXT_PROTOCOLS = (
    "ui-tars",
    "ui-tars-relative",
    "qwen3-vl",
    "qwen2.5-vl",
    "opencua",
    "opencua-relative",
)
PROTOCOLS = TOOL_PROTOCOLS + TEXT_PROTOCOLS

#: Key names of every vocabulary: xdotool keysyms, OpenAI's CUA names, pyautogui's, unknown.
KEYS = (
    "ctrl", "Control_L", "control", "alt", "Alt_L", "shift", "Shift_R", "super", "Super_L",
    "super_l", "win", "cmd", "CMD", "command", "option", "meta", "Return", "Enter", "ENTER",
    "enter", "KP_Enter", "Page_Down", "Page_Up", "page_down", "PAGEDOWN", "pagedown", "Next",
    "KP_0", "KP_5", "Escape", "escape", "ESC", "esc", "Tab", "TAB", "BackSpace", "backspace",
    "Delete", "Home", "End", "F5", "f12", "Up", "Down", "ArrowUp", "ARROWDOWN", "arrowleft",
    "arrowright", "left", "space", "SPACE", "Insert", "CapsLock", "Print", "minus", "plus",
    "a", "A", "z", "1", "+", "-", "/", "\\", "'", '"', "ä", "Foo", "XF86AudioMute", "",
)  # fmt: skip
TEXTS = (
    "hello", "Hello World", "line1\nline2", "tab\there", "quote's", 'dq"x', "back\\slash",
    "ends with backslash n\\n", "ünïcödé", "日本語テキスト", "emoji 🎉", "", " ", "a'b\"c", '"""',
    "trailing newline\n", "two\n\nparagraphs\n", "{braces} %s", "=SUM(A1:A3)", "Lemon\n",
    "https://example.org/?q=1&r=2", "x" * 60,
)  # fmt: skip


def pick(rng: random.Random, values: tuple[Any, ...] | list[Any]) -> Any:
    return values[rng.randrange(len(values))]


def new_case(protocol: str, kind: str, value: Any) -> dict[str, Any]:
    """One case of the level."""
    return {"protocol": protocol, "kind": kind, "input": value}
