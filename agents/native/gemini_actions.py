"""Gemini's Computer Use functions as desktop actions.

Points are on Gemini's 0-999 grid over the screen, and so are scroll magnitudes (along
the scroll's axis), which become wheel clicks. Two function sets exist: the legacy one of
``gemini-2.5-computer-use-preview`` and the Gemini 3 previews (``click_at``,
``type_text_at``, ``scroll_at``, ``key_combination`` ...), and the current one of Gemini 3.5
and later (``click``, ``type``, ``scroll``, ``hotkey`` ...). Both are read here.

The browser functions work on the desktop's Chrome: ``open_web_browser`` starts it,
``navigate`` and ``search`` type an address into its address bar, ``go_back`` and
``go_forward`` are Alt+Left and Alt+Right. OSWorld has no Gemini computer-use agent, so
this protocol has no ``parse=osworld`` mode.
"""

from __future__ import annotations

from pytest_osworld.agent.actions import Action, ActionParseError

from . import arguments, commands
from .base import Context, Outcome, ToolCall
from .keys import pyautogui_keys, split_combo

#: Gemini's default scroll magnitude, on the grid.
DEFAULT_MAGNITUDE = 800.0
SEARCH_PAGE = "https://www.google.com/"
DIRECTIONS = ("up", "down", "left", "right")
CLICKS = {
    "click": ("left", 1),
    "click_at": ("left", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
    "middle_click": ("middle", 1),
    "right_click": ("right", 1),
}


def _xy(call: ToolCall, context: Context, x: str = "x", y: str = "y") -> tuple[int, int]:
    return context.point(arguments.number(call.args, x, call.name), arguments.number(call.args, y, call.name))


def _scroll(call: ToolCall, context: Context, point: tuple[int, int] | None) -> Action:
    direction = arguments.choice(call.args, "direction", call.name, DIRECTIONS)
    magnitude = arguments.number(call.args, "magnitude", call.name, default=DEFAULT_MAGNITUDE)
    axis = 1 if direction in ("up", "down") else 0
    clicks = abs(commands.wheel_clicks(context.frame.length_to_screen(magnitude, axis)))
    sign = -1 if direction in ("up", "left") else 1
    return commands.scroll(point, sign * clicks if axis else 0, 0 if axis else sign * clicks)


def _address(url: str) -> list[Action]:
    """Type ``url`` into the focused browser's address bar."""
    return [commands.keys(["ctrl", "l"]), commands.type_text(url + "\n")]


def _typing(call: ToolCall, context: Context, at: bool) -> list[Action]:
    args = call.args
    actions = [commands.click(_xy(call, context), "left")] if at else []
    if at and args.get("clear_before_typing", True):
        actions += [commands.keys(["ctrl", "a"]), commands.keys(["backspace"])]
    text = arguments.text(args, "text", call.name)
    actions.append(commands.type_text(text) if text else commands.wait(0))
    if args.get("press_enter", False):
        actions.append(commands.keys(["enter"]))
    return actions


def _key_list(call: ToolCall, name: str) -> list[str]:
    value = call.args.get(name)
    if isinstance(value, str):
        return pyautogui_keys(split_combo(value))
    if isinstance(value, list) and value and all(isinstance(k, str) for k in value):
        return pyautogui_keys(value)
    raise ActionParseError(f"action {call.name!r} needs {name!r}: keys such as 'control+c', got {value!r}")


def ours(call: ToolCall, context: Context) -> Outcome:
    """The desktop actions of one function call (see the module docstring)."""
    name, args = call.name, call.args
    if name in CLICKS:
        button, count = CLICKS[name]
        return Outcome(call, [commands.click(_xy(call, context), button, count)])
    if name in ("hover_at", "move"):
        return Outcome(call, [commands.move(_xy(call, context))])
    if name in ("mouse_down", "mouse_up"):
        point = _xy(call, context) if "x" in args else None
        return Outcome(call, [commands.press_button(name == "mouse_down", "left", point)])
    if name == "type_text_at":
        return Outcome(call, _typing(call, context, at=True))
    if name == "type":
        return Outcome(call, _typing(call, context, at="x" in args))
    if name == "drag_and_drop":
        start = _xy(call, context)
        end = _xy(call, context, "destination_x", "destination_y")
        return Outcome(call, [commands.drag([start, end])])
    if name in ("scroll_at", "scroll"):
        point = _xy(call, context) if "x" in args else None
        return Outcome(call, [_scroll(call, context, point)])
    if name == "scroll_document":
        centre = (context.frame.screen[0] // 2, context.frame.screen[1] // 2)
        return Outcome(call, [_scroll(call, context, centre)])
    if name in ("key_combination", "hotkey"):
        return Outcome(call, [commands.keys(_key_list(call, "keys"))])
    if name == "press_key":
        return Outcome(call, [commands.keys(_key_list(call, "key"))])
    if name in ("key_down", "key_up"):
        return Outcome(call, [commands.key_state(_key_list(call, "key"), name == "key_down")])
    if name == "wait_5_seconds":
        return Outcome(call, [commands.wait(5)])
    if name == "wait":
        return Outcome(call, [commands.wait(arguments.number(args, "seconds", name, default=5))])
    if name == "take_screenshot":
        return Outcome(call)
    if name == "open_web_browser":
        launch = "import subprocess\nsubprocess.Popen(['google-chrome'], start_new_session=True)"
        return Outcome(call, [Action(kind="code", code=launch), commands.wait(3)])
    if name == "navigate":
        return Outcome(call, _address(arguments.text(args, "url", name)))
    if name == "search":
        return Outcome(call, _address(SEARCH_PAGE))
    if name in ("go_back", "go_forward"):
        return Outcome(call, [commands.keys(["alt", "left" if name == "go_back" else "right"])])
    raise ActionParseError(f"unknown computer-use function {name!r}")
