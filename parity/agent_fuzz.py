"""Model answers for the action-parsing parity: hand-picked shapes plus seeded fuzz.

Answers mix prose, fenced blocks (```` ``` ````, ```` ```python ````, ```` ```json ````,
unterminated), several blocks, WAIT/DONE/FAIL alone, at a block's end or in prose,
computer_13 JSON (objects, lists, invalid), Set-of-Marks ``tag_N`` code, semicolons,
indentation, garbage, unicode and empty answers.
"""

from __future__ import annotations

import json
import random

SPECIALS = ("WAIT", "DONE", "FAIL")

_CODE = (
    "pyautogui.click(100, 200)",
    "pyautogui.doubleClick(tag_3)",
    "pyautogui.click(tag_1)",
    "pyautogui.moveTo(tag_2); pyautogui.click()",
    "pyautogui.typewrite('a;b')",
    "pyautogui.write('héllo wörld ✓')",
    "pyautogui.hotkey('ctrl', 's')",
    "import time\ntime.sleep(0.5)\npyautogui.press('enter')",
    "for i in range(3):\n    pyautogui.press('down')",
    "pyautogui.click(tag_12)\npyautogui.typewrite('x')",
    "pyautogui.screenshot()",
    "pyautogui.click(10, ",
    "x = 1;y = 2",
    "pyautogui.scroll(-3)",
)
_JSON = (
    {"action_type": "CLICK", "parameters": {"x": 10, "y": 20}},
    {"action_type": "TYPING", "parameters": {"text": "hello ✓"}},
    {"action_type": "MOVE_TO", "parameters": {"x": 5, "y": 5}},
    {"action_type": "PRESS", "parameters": {"key": "enter"}},
    {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "c"]}},
    {"action_type": "SCROLL", "parameters": {"dx": 0, "dy": -2}},
    {"action_type": "DONE"},
    {"action_type": "WAIT"},
    {"action_type": "BOGUS", "parameters": {}},
    {"action_type": "CLICK", "x": 10, "y": 20},
    {"x": 1},
)
_PROSE = (
    "Let me click the button.",
    "I will now type the text.",
    "Thought: the dialog is open.",
    "Das ist ein Test — ünïcödé 漢字 🙂",
    "",
    "The task is done.",
)
_GARBAGE = ("{not json", "```", "``` ```", "\x00\x01", "tag_", "DONE DONE", "wait", " \n\t ")


def _fence(body: str, rng: random.Random) -> str:
    tag = rng.choice(("", "python", "json", "py", "python ", "Python"))
    sep = rng.choice(("\n", "\n", " ", ""))
    end = rng.choice(("\n```", "```", "\n```\n", "\n"))
    return f"```{tag}{sep}{body}{end}"


def _body(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.45:
        body = rng.choice(_CODE)
    elif kind < 0.75:
        value: object = rng.choice(_JSON)
        if rng.random() < 0.2:
            value = [rng.choice(_JSON), rng.choice(_JSON)]
        body = json.dumps(value, indent=rng.choice((None, 2)))
    elif kind < 0.85:
        body = rng.choice(SPECIALS)
    else:
        body = rng.choice(_GARBAGE)
    if rng.random() < 0.2:
        body += "\n" + rng.choice(SPECIALS)
    if rng.random() < 0.1:
        body = "    " + body
    return body


def fuzzed(count: int, seed: int = 17) -> list[str]:
    """``count`` answers from a seeded generator (the same list for the same arguments)."""
    rng = random.Random(seed)
    answers: list[str] = []
    for _ in range(count):
        parts: list[str] = []
        for _ in range(rng.choice((1, 1, 2, 3, 4))):
            roll = rng.random()
            if roll < 0.55:
                parts.append(_fence(_body(rng), rng))
            elif roll < 0.8:
                parts.append(rng.choice(_PROSE))
            elif roll < 0.9:
                parts.append(rng.choice(SPECIALS))
            else:
                parts.append(rng.choice(_GARBAGE))
        answers.append(rng.choice(("\n", "\n\n", " ", "")).join(parts))
    return answers


def handpicked() -> list[str]:
    """Answers of every documented shape, one each."""
    answers = ["", " ", "WAIT", " DONE\n", "FAIL", "done", "All set.\nDONE"]
    answers += [f"```python\n{code}\n```" for code in _CODE]
    answers += [f"```\n{code}\n```" for code in _CODE]
    answers += [f"```json\n{json.dumps(v)}\n```" for v in _JSON]
    answers += [json.dumps(v) for v in _JSON]
    answers += [
        "```python\npyautogui.click(1, 2)\n```\n```python\npyautogui.click(3, 4)\nDONE\n```",
        "```python\nWAIT\n```",
        "```DONE```",
        "```python\npyautogui.click(tag_2)\n```",
        "I click.\n```python\npyautogui.click(tag_99)\n```",
        '```json\n[{"action_type": "CLICK"}, {"action_type": "DONE"}]\n```',
        '``` \n{"action_type": "PRESS", "key": "a"}\n ```',
    ]
    return answers


def answers(count: int) -> list[str]:
    """The hand-picked answers then ``count`` fuzzed ones."""
    return handpicked() + fuzzed(count)
