"""OpenAI's computer tool actions (``computer_call`` ``action`` / ``actions[]``) as desktop actions.

:func:`ours` reads every action type with CUA key names translated for pyautogui, scroll
distances in pixels turned into wheel clicks (:func:`~.commands.wheel_clicks`), and the
``back`` and ``forward`` buttons as Alt+Left and Alt+Right (pyautogui has no such buttons).
:func:`osworld` maps as OSWorld's agents do (``--agent-arg parse=osworld``): the preview
agent (``computer_use_preview``) and the GPT-5.4 agent (``computer``) both pass scroll
pixels to ``pyautogui.scroll`` as wheel clicks; docs/parity.md lists every difference.
"""

from __future__ import annotations

from typing import Any

from pytest_osworld.agent.actions import Action, ActionParseError

from . import arguments, commands
from .base import Context, Outcome, ToolCall
from .keys import pyautogui_keys

#: OpenAI's mouse buttons that pyautogui presses as such.
BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "middle": "middle"}
#: The browser buttons, as the keys that do the same.
NAVIGATION = {"back": ["alt", "left"], "forward": ["alt", "right"]}
#: Seconds of the ``wait`` action, which has no duration (OpenAI's sample app waits 1 s).
WAIT_S = 1.0


def _xy(call: ToolCall, context: Context) -> tuple[int, int]:
    x = arguments.number(call.args, "x", call.name)
    y = arguments.number(call.args, "y", call.name)
    return context.point(x, y)


def _held(call: ToolCall) -> list[str]:
    held = call.args.get("keys")
    if not held:
        return []
    if not isinstance(held, list) or not all(isinstance(k, str) for k in held):
        raise ActionParseError(f"action {call.name!r}: 'keys' must be a list of key names, got {held!r}")
    return pyautogui_keys(held)


def _path(call: ToolCall, context: Context) -> list[tuple[int, int]]:
    path = call.args.get("path")
    if not isinstance(path, list) or len(path) < 2 or not all(isinstance(p, dict) for p in path):
        raise ActionParseError(f"drag needs a 'path' of at least two {{x, y}} points, got {path!r}")
    return [context.point(arguments.number(p, "x", "drag"), arguments.number(p, "y", "drag")) for p in path]


def ours(call: ToolCall, context: Context) -> Outcome:
    """The desktop actions of one computer action (see the module docstring)."""
    name, args = call.name, call.args
    if name == "click":
        button = arguments.text(args, "button", name, default="left")
        point, held = _xy(call, context), _held(call)
        if button in NAVIGATION:
            return Outcome(call, [commands.move(point), commands.keys(NAVIGATION[button])])
        if button not in BUTTONS:
            raise ActionParseError(f"click: unknown button {button!r}")
        return Outcome(call, [commands.click(point, BUTTONS[button], 1, held)])
    if name in ("double_click", "triple_click"):
        count = 2 if name == "double_click" else 3
        return Outcome(call, [commands.click(_xy(call, context), "left", count, _held(call))])
    if name == "move":
        return Outcome(call, [commands.move(_xy(call, context), _held(call))])
    if name == "drag":
        return Outcome(call, [commands.drag(_path(call, context), "left", _held(call))])
    if name == "keypress":
        names = args.get("keys")
        if not isinstance(names, list) or not all(isinstance(k, str) for k in names):
            raise ActionParseError(f"keypress needs 'keys': a list of key names, got {names!r}")
        return Outcome(call, [commands.keys(pyautogui_keys(names))])
    if name == "type":
        return Outcome(call, [commands.type_text(arguments.text(args, "text", name))])
    if name == "scroll":
        point = _xy(call, context)
        down = commands.wheel_clicks(arguments.number(args, "scroll_y", name, default=0))
        right = commands.wheel_clicks(arguments.number(args, "scroll_x", name, default=0))
        return Outcome(call, [commands.scroll(point, down, right, _held(call))])
    if name == "wait":
        return Outcome(call, [commands.wait(WAIT_S)])
    if name == "screenshot":
        return Outcome(call)
    raise ActionParseError(f"unknown computer action type {name!r}")


#: The OSWorld agents' key renames (after lowercasing).
OSWORLD_KEYS = {
    "arrowup": "up",
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
    "cmd": "command",
}


def _code(*lines: str) -> list[Action]:
    return [Action(kind="code", code="\n".join(("import pyautogui", *lines)))]


def _raw_xy(args: dict[str, Any]) -> tuple[int, int]:
    return int(args.get("x") or 0), int(args.get("y") or 0)


def osworld(call: ToolCall, context: Context, ga: bool) -> Outcome:
    """One action as OSWorld's preview agent (``ga`` False) or GPT-5.4 agent maps it."""
    name, args = call.name, call.args
    x, y = _raw_xy(args)
    if name == "click":
        button = str(args.get("button", "left"))
        button = button if button in ("left", "middle", "right") else "left"
        return Outcome(call, _code(f"pyautogui.moveTo({x}, {y})", f"pyautogui.click(button={button!r})"))
    if name == "double_click":
        return Outcome(call, _code(f"pyautogui.doubleClick({x}, {y})"))
    if name == "type":
        typed = str(args.get("text", ""))
        if not ga:
            return Outcome(call, _code(f"pyautogui.typewrite({typed!r})"))
        if not typed.isascii():
            return Outcome(
                call, _code("import pyperclip", f"pyperclip.copy({typed!r})", "pyautogui.hotkey('ctrl', 'v')")
            )
        lines = typed.split("\n")
        code = [
            f"pyautogui.typewrite({line!r})" + ("\npyautogui.press('enter')" if i < len(lines) - 1 else "")
            for i, line in enumerate(lines)
        ]
        return Outcome(call, _code(*code))
    if name == "keypress":
        keys = [OSWORLD_KEYS.get(str(k).lower(), str(k).lower()) for k in args.get("keys") or []]
        return Outcome(call, _code(f"pyautogui.hotkey({', '.join(repr(k) for k in keys)})"))
    if name == "scroll":
        lines = []
        if args.get("scroll_y"):
            lines.append(f"pyautogui.scroll({-int(args['scroll_y'])}, x={x}, y={y})")
        if args.get("scroll_x"):
            lines.append(f"pyautogui.hscroll({-int(args['scroll_x'])}, x={x}, y={y})")
        return Outcome(call, _code(*lines))
    if name == "move":
        return Outcome(call, _code(f"pyautogui.moveTo({x}, {y})"))
    if name == "drag":
        points = [_raw_xy(p) for p in args.get("path") or [] if isinstance(p, dict)]
        if not points:
            raise ActionParseError("drag without a path")
        lines = [f"pyautogui.moveTo({points[0][0]}, {points[0][1]})"]
        lines += [f"pyautogui.dragTo({px}, {py})" for px, py in points[1:]]
        return Outcome(call, _code(*lines))
    if name == "wait":
        return Outcome(call, _code("import time", "time.sleep(1.0)"))
    if name == "screenshot":
        return Outcome(call, _code("import time", "time.sleep(0.1)"))
    raise ActionParseError(f"unsupported action type {name!r}")
