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


#: OSWorld's preview agent's key renames, looked up with the name as the model wrote it
#: (so ``ARROWUP`` is not renamed), then lowercased; an unknown name is passed on.
OSWORLD_KEYS = {
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
    "arrowup": "up",
    "cmd": "command",
}
#: The buttons OSWorld's preview agent clicks as such; any other is a left click.
OSWORLD_BUTTONS = ("left", "middle", "right")


def _code(*lines: str) -> list[Action]:
    return [Action(kind="code", code="\n".join(lines))]


def _point_xy(point: Any) -> tuple[Any, Any] | None:
    """A drag point's ``x`` and ``y`` as OSWorld's agent reads them (None: not a point)."""
    if isinstance(point, list | tuple) and len(point) == 2:
        return point[0], point[1]
    if isinstance(point, dict) and "x" in point and "y" in point:
        return point.get("x"), point.get("y")
    return None


def osworld(call: ToolCall, context: Context, ga: bool) -> Outcome:
    """One action as OSWorld's agent maps it (``ga`` False: the preview agent of
    desktop-env 1.0.2; True: the GPT-5.4 agent, which 1.0.2 does not ship)."""
    if ga:
        return _osworld_ga(call)
    try:
        actions = _osworld_preview(call.name, call.args)
    except Exception:  # OSWorld's agent turns any error into no action
        actions = None
    return Outcome(call, actions or [])


def _osworld_preview(name: str, args: dict[str, Any]) -> list[Action] | None:
    """The preview agent's code for one action; None (no action) where it gives none.

    Coordinates are passed as they are; a scroll's pixels become as many wheel clicks,
    vertical first (a scroll with both moves only vertically); modifier ``keys`` are
    ignored.
    """
    x, y = args.get("x"), args.get("y")
    if name == "click":
        button = args.get("button", "left")
        button = button if button in OSWORLD_BUTTONS else "left"
        if x is None or y is None:
            return None
        return _code("import pyautogui", f"pyautogui.moveTo({x}, {y})", f"pyautogui.click(button='{button}')")
    if name == "double_click":
        if x is None or y is None:
            return None
        return _code("import pyautogui", f"pyautogui.moveTo({x}, {y})", "pyautogui.doubleClick()")
    if name == "type":
        text = args.get("text", "")
        if not text:
            return _code("import pyautogui", "# Empty text, no action taken")
        return _code("import pyautogui", f"pyautogui.typewrite({text!r})")
    if name == "keypress":
        keys = [OSWORLD_KEYS.get(k, k).lower() for k in args.get("keys", []) or [] if isinstance(k, str)]
        if not keys:
            return None
        return _code(
            "import pyautogui", f"pyautogui.hotkey({', '.join(f'{chr(39)}{k}{chr(39)}' for k in keys)})"
        )
    if name == "scroll":
        down = int(args.get("scroll_y", 0)) if args.get("scroll_y", 0) else 0
        right = int(args.get("scroll_x", 0)) if args.get("scroll_x", 0) else 0
        at = f", x={x}, y={y}" if x is not None and y is not None else ""
        if down:
            return _code("import pyautogui", f"pyautogui.scroll({-down}{at})")
        if right:
            return _code("import pyautogui", f"pyautogui.hscroll({-right}{at})")
        return None
    if name == "move":
        if x is None or y is None:
            return None
        return _code("import pyautogui", f"pyautogui.moveTo({x}, {y})")
    if name == "drag":
        path = args.get("path")
        if not path or len(path) < 2:
            return None
        points = [_point_xy(p) for p in path]
        if any(p is None for p in points):
            return None
        (first_x, first_y), rest = points[0], points[1:]  # type: ignore[misc]
        duration = 0.5 if len(points) == 2 else 0.2
        lines = ["import pyautogui", f"pyautogui.moveTo({first_x}, {first_y})"]
        lines += [f"pyautogui.dragTo({px}, {py}, duration={duration}, button='left')" for px, py in rest]  # type: ignore[misc]
        return _code(*lines)
    if name == "wait":
        return _code("import time", f"time.sleep({max(0.1, args.get('ms', 1000) / 1000)})")
    if name == "screenshot":
        return _code("import time", "time.sleep(0.1)")
    return None


def _osworld_ga(call: ToolCall) -> Outcome:
    """OSWorld's GPT-5.4 agent (newer than desktop-env 1.0.2; not checked by the parity level)."""
    name, args = call.name, call.args
    x, y = int(args.get("x") or 0), int(args.get("y") or 0)
    if name == "click":
        button = str(args.get("button", "left"))
        button = button if button in ("left", "middle", "right") else "left"
        return Outcome(
            call,
            _code("import pyautogui", f"pyautogui.moveTo({x}, {y})", f"pyautogui.click(button={button!r})"),
        )
    if name == "double_click":
        return Outcome(call, _code("import pyautogui", f"pyautogui.doubleClick({x}, {y})"))
    if name == "type":
        typed = str(args.get("text", ""))
        if not typed.isascii():
            return Outcome(
                call,
                _code(
                    "import pyautogui",
                    "import pyperclip",
                    f"pyperclip.copy({typed!r})",
                    "pyautogui.hotkey('ctrl', 'v')",
                ),
            )
        lines = typed.split("\n")
        code = [
            f"pyautogui.typewrite({line!r})" + ("\npyautogui.press('enter')" if i < len(lines) - 1 else "")
            for i, line in enumerate(lines)
        ]
        return Outcome(call, _code("import pyautogui", *code))
    if name == "keypress":
        ga_keys = {
            "arrowup": "up",
            "arrowdown": "down",
            "arrowleft": "left",
            "arrowright": "right",
            "cmd": "command",
        }
        keys = [ga_keys.get(str(k).lower(), str(k).lower()) for k in args.get("keys") or []]
        return Outcome(
            call, _code("import pyautogui", f"pyautogui.hotkey({', '.join(repr(k) for k in keys)})")
        )
    if name == "scroll":
        lines = ["import pyautogui"]
        if args.get("scroll_y"):
            lines.append(f"pyautogui.scroll({-int(args['scroll_y'])}, x={x}, y={y})")
        if args.get("scroll_x"):
            lines.append(f"pyautogui.hscroll({-int(args['scroll_x'])}, x={x}, y={y})")
        return Outcome(call, _code(*lines))
    if name == "move":
        return Outcome(call, _code("import pyautogui", f"pyautogui.moveTo({x}, {y})"))
    if name == "drag":
        points = [
            (int(p.get("x") or 0), int(p.get("y") or 0))
            for p in args.get("path") or []
            if isinstance(p, dict)
        ]
        if not points:
            raise ActionParseError("drag without a path")
        lines = ["import pyautogui", f"pyautogui.moveTo({points[0][0]}, {points[0][1]})"]
        lines += [f"pyautogui.dragTo({px}, {py})" for px, py in points[1:]]
        return Outcome(call, _code(*lines))
    if name == "wait":
        return Outcome(call, _code("import time", "time.sleep(1.0)"))
    if name == "screenshot":
        return Outcome(call, _code("import time", "time.sleep(0.1)"))
    raise ActionParseError(f"unsupported action type {name!r}")
