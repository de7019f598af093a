"""Claude's computer tool actions (``computer_20250124``, ``computer_20251124``) as desktop actions.

:func:`ours` reads every action of the tool with xdotool key names translated for
pyautogui, ``wait`` and ``hold_key`` for their ``duration``, ``zoom`` and
``cursor_position`` answered, and a wrong argument reported. :func:`osworld` reads them as
OSWorld's ``AnthropicAgent`` (desktop-env 1.0.2) does (``--agent-arg parse=osworld``): keys
lowercased with five names renamed, text typed by ``typewrite`` inside triple quotes,
``wait`` half a second, ``hold_key`` never released, scroll modifiers ignored, ``zoom`` and
``cursor_position`` refused; docs/parity.md lists each, and its ``protocols`` parity level
checks them against OSWorld's code.
"""

from __future__ import annotations

from typing import Any

from pytest_osworld.agent.actions import Action, ActionParseError

from . import arguments, commands
from .base import Context, Outcome, ToolCall
from .geometry import Frame
from .keys import pyautogui_keys, split_combo

CLICKS: dict[str, tuple[str, int]] = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}
#: scroll_direction -> (clicks down, clicks right) per unit of scroll_amount
SCROLLS: dict[str, tuple[int, int]] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _held(call: ToolCall) -> list[str]:
    """The modifier keys of a click or scroll (``text``, xdotool syntax)."""
    held = call.args.get("text")
    if held in (None, ""):
        return []
    return pyautogui_keys(split_combo(arguments.text(call.args, "text", call.name)))


def _point(
    call: ToolCall, context: Context, name: str = "coordinate", required: bool = False
) -> tuple[int, int] | None:
    pair = arguments.pair(call.args, name, call.name, required)
    return context.point(*pair) if pair else None


def ours(call: ToolCall, context: Context, zoom: bool) -> Outcome:
    """The desktop actions of one computer-tool call (see the module docstring)."""
    name, args = call.name, call.args
    if name in CLICKS:
        button, count = CLICKS[name]
        held = _held(call)
        return Outcome(call, [commands.click(_point(call, context), button, count, held)])
    if name == "mouse_move":
        return Outcome(call, [commands.move(_point(call, context, required=True) or (0, 0))])
    if name == "left_click_drag":
        start = _point(call, context, "start_coordinate") or context.pointer
        if start is None:
            raise ActionParseError(
                "left_click_drag needs 'start_coordinate': the pointer has not been placed yet"
            )
        end = _point(call, context, required=True)
        return Outcome(call, [commands.drag([start, end or start])])
    if name in ("left_mouse_down", "left_mouse_up"):
        return Outcome(
            call, [commands.press_button(name == "left_mouse_down", "left", _point(call, context))]
        )
    if name == "key":
        combos = arguments.text(args, "text", name).split()
        if not combos:
            raise ActionParseError("action 'key' needs a key in 'text'")
        return Outcome(call, [commands.keys(pyautogui_keys(split_combo(combo))) for combo in combos])
    if name == "hold_key":
        combo = pyautogui_keys(split_combo(arguments.text(args, "text", name)))
        return Outcome(call, [commands.hold_keys(combo, arguments.number(args, "duration", name))])
    if name == "type":
        return Outcome(call, [commands.type_text(arguments.text(args, "text", name))])
    if name == "scroll":
        direction = arguments.choice(args, "scroll_direction", name, tuple(SCROLLS))
        amount = arguments.number(args, "scroll_amount", name, default=3)
        if amount < 0 or amount != int(amount):
            raise ActionParseError(
                f"scroll_amount must be a whole number of wheel clicks >= 0, got {amount:g}"
            )
        down, right = SCROLLS[direction]
        point, held = _point(call, context), _held(call)
        return Outcome(call, [commands.scroll(point, down * int(amount), right * int(amount), held)])
    if name == "wait":
        return Outcome(call, [commands.wait(arguments.number(args, "duration", name, default=1.0))])
    if name == "screenshot":
        return Outcome(call)
    if name == "cursor_position":
        if context.pointer is None:
            return Outcome(
                call, note="the pointer has not been moved in this episode; its position is unknown"
            )
        x, y = context.frame.to_model(*context.pointer)
        return Outcome(call, note=f"X={x},Y={y}")
    if name == "zoom" and zoom:
        region = args.get("region")
        if not (isinstance(region, list) and len(region) == 4 and all(_is_number(v) for v in region)):
            raise ActionParseError(f"zoom needs 'region': [x1, y1, x2, y2] numbers, got {region!r}")
        left, top = context.frame.to_screen(region[0], region[1])
        right, bottom = context.frame.to_screen(region[2], region[3])
        if right <= left or bottom <= top:
            raise ActionParseError(
                f"zoom region {region!r} is empty: give the top-left corner, then the bottom-right"
            )
        return Outcome(call, zoom=(left, top, right, bottom))
    raise ActionParseError(f"unknown action {name!r} of the computer tool")


#: OSWorld's renames of a ``key`` action's names (after lowercasing); any other name is
#: passed on lowercased, even one pyautogui does not know (it then presses nothing).
OSWORLD_KEYS = {
    "page_down": "pagedown",
    "page_up": "pageup",
    "super_l": "win",
    "super": "command",
    "escape": "esc",
}
#: OSWorld's names of two actions written with a blank (the second is not a tool action).
OSWORLD_RENAMED = {"left click": "click", "right click": "right_click"}
#: The click actions OSWorld's agent knows, as pyautogui functions; ``left_press`` is its own.
OSWORLD_CLICKS = {
    "left_click": "click",
    "right_click": "rightClick",
    "double_click": "doubleClick",
    "middle_click": "middleClick",
    "triple_click": "tripleClick",
    "left_press": "",
}
#: What OSWorld's agent answers to its three ending actions (``CALL_USER`` runs as code).
OSWORLD_ENDINGS = {"fail": "FAIL", "done": "DONE", "call_user": "CALL_USER"}


def _refused(why: str) -> ActionParseError:
    return ActionParseError(f"OSWorld's agent refuses this call: {why}")


def _osworld_scaled(value: Any, frame: Frame) -> Any:
    """OSWorld's scaling of a coordinate: each of the first two numbers times the display's
    factor, truncated; a missing or empty value is left as it is."""
    if not value:
        return value
    factor_x, factor_y = frame.screen[0] / frame.space[0], frame.screen[1] / frame.space[1]
    try:
        return int(value[0] * factor_x), int(value[1] * factor_y)
    except Exception as exc:  # whatever OSWorld's agent would raise on it
        raise _refused(f"cannot scale {value!r} ({type(exc).__name__})") from None


def _keys(text: str) -> list[str]:
    return [key.strip().lower() for key in text.split("+")]


def _osworld_key_lines(verb: str, keys: list[str]) -> list[str]:
    # OSWorld writes the name between quotes as it is (a quote in it breaks the code)
    return [f"pyautogui.{verb}('{key}')" for key in keys]


def _osworld_code(lines: list[str]) -> list[Action]:
    # nothing to do (a scroll in an unknown direction) is an empty script there
    return [Action(kind="code", code="".join(line + "\n" for line in lines) or "import pyautogui")]


def osworld(call: ToolCall, context: Context) -> Outcome:
    """One call as OSWorld's ``AnthropicAgent`` (desktop-env 1.0.2) maps it.

    Coordinates are scaled by the display's factor and truncated, never checked; keys are
    lowercased and five names renamed; text is typed with ``typewrite`` inside triple
    quotes; a scroll ignores its modifiers; ``wait`` sleeps half a second; ``hold_key``
    never releases; ``fail``/``done`` end the episode and ``call_user`` is passed on as
    code. A call OSWorld's agent raises on is refused (:class:`ActionParseError`).
    """
    args = call.args
    action = OSWORLD_RENAMED.get(call.name, call.name)
    if not action:
        raise _refused("the call names no action")
    text = args.get("text")
    coordinate = _osworld_scaled(args.get("coordinate"), context.frame)
    start = _osworld_scaled(args.get("start_coordinate"), context.frame)
    duration = args.get("duration")
    if action in ("left_mouse_down", "left_mouse_up"):
        verb = "mouseDown" if action == "left_mouse_down" else "mouseUp"
        return Outcome(call, _osworld_code([f"pyautogui.{verb}()"]))
    if action == "hold_key":
        if not isinstance(text, str):
            raise _refused(f"hold_key needs 'text' as a string, got {text!r}")
        return Outcome(call, _osworld_code(_osworld_key_lines("keyDown", _keys(text))))
    if action in ("mouse_move", "left_click_drag"):
        if coordinate is None:
            raise _refused(f"{action} needs 'coordinate'")
        if text is not None:
            raise _refused(f"{action} takes no 'text'")
        if not isinstance(coordinate, list | tuple) or len(coordinate) != 2:
            raise _refused(f"{action}: 'coordinate' must be two numbers, got {coordinate!r}")
        x, y = coordinate
        lines = []
        if action == "left_click_drag" and start:
            lines.append(f"pyautogui.moveTo({start[0]}, {start[1]}, duration={duration or 0.5})")
        verb = "moveTo" if action == "mouse_move" else "dragTo"
        lines.append(f"pyautogui.{verb}({x}, {y}, duration={duration or 0.5})")
        context.pointer = (x, y)
        return Outcome(call, _osworld_code(lines))
    if action in ("key", "type"):
        if text is None:
            raise _refused(f"{action} needs 'text'")
        if coordinate is not None:
            raise _refused(f"{action} takes no 'coordinate'")
        if not isinstance(text, str):
            raise _refused(f"{action}: 'text' must be a string, got {text!r}")
        if action == "type":
            return Outcome(call, _osworld_code([f'pyautogui.typewrite("""{text}""", interval=0.01)']))
        keys = [OSWORLD_KEYS.get(key, key) for key in _keys(text)]
        lines = _osworld_key_lines("keyDown", keys) + _osworld_key_lines("keyUp", keys[::-1])
        return Outcome(call, _osworld_code(lines))
    if action == "scroll":
        return Outcome(call, _osworld_code(_osworld_scroll(args, coordinate)))
    if action in OSWORLD_CLICKS:
        if text and not isinstance(text, str):
            raise _refused(f"{action}: 'text' must be a string, got {text!r}")
        held = _keys(text) if text else []
        lines = _osworld_key_lines("keyDown", held)
        at = ""
        if coordinate is not None:
            try:
                x, y = coordinate
            except (TypeError, ValueError):
                raise _refused(f"{action}: 'coordinate' must be two numbers, got {coordinate!r}") from None
            at = f"{x}, {y}"
            context.pointer = (x, y)
        if action == "left_press":
            lines += [f"pyautogui.mouseDown({at})", "time.sleep(1)", f"pyautogui.mouseUp({at})"]
        else:
            lines.append(f"pyautogui.{OSWORLD_CLICKS[action]}({at})")
        lines += _osworld_key_lines("keyUp", held[::-1])
        return Outcome(call, _osworld_code(lines))
    if action == "wait":
        return Outcome(call, _osworld_code(["pyautogui.sleep(0.5)"]))
    if action in OSWORLD_ENDINGS:
        ending = OSWORLD_ENDINGS[action]
        if ending == "CALL_USER":  # not an ending of OSWorld's environment: a NameError there
            return Outcome(call, [Action(kind="code", code=ending)])
        return Outcome(call, [Action(kind="FAIL" if ending == "FAIL" else "DONE")])
    if action == "screenshot":
        return Outcome(call, _osworld_code(["pyautogui.sleep(0.1)"]))
    raise _refused(f"invalid action {action!r}")


def _osworld_scroll(args: dict[str, Any], coordinate: Any) -> list[str]:
    """OSWorld's scroll: ``scroll_amount`` wheel clicks as given, at the coordinate if any."""
    direction = args.get("scroll_direction")
    amount: Any = args.get("scroll_amount")
    if direction in ("up", "down"):
        verb, positive = "scroll", direction == "up"
    elif direction in ("left", "right"):
        verb, positive = "hscroll", direction == "right"
    else:
        return []  # OSWorld writes nothing for another direction
    if not positive:
        try:
            amount = -amount
        except TypeError:
            raise _refused(f"scroll_amount {amount!r} is not a number") from None
    if coordinate is None:
        return [f"pyautogui.{verb}({amount})"]
    try:
        x, y = coordinate[0], coordinate[1]
    except (TypeError, IndexError, KeyError):
        raise _refused(f"scroll: 'coordinate' must be two numbers, got {coordinate!r}") from None
    return [f"pyautogui.{verb}({amount}, {x}, {y})"]
