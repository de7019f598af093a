"""Claude's computer tool actions (``computer_20250124``, ``computer_20251124``) as desktop actions.

:func:`ours` reads every action of the tool with xdotool key names translated for
pyautogui, ``wait`` and ``hold_key`` for their ``duration``, ``zoom`` and
``cursor_position`` answered, and a wrong argument reported. :func:`osworld` reads them as
OSWorld's ``AnthropicAgent`` does (``--agent-arg parse=osworld``): keys lowercased with five
names mapped, text typed one ``press`` per character, ``wait`` half a second, ``hold_key``
never released, ``zoom`` and ``cursor_position`` refused; docs/parity.md lists each.
"""

from __future__ import annotations

from pytest_osworld.agent.actions import Action, ActionParseError

from . import arguments, commands
from .base import Context, Outcome, ToolCall
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


#: OSWorld's key renames; any other name is lowercased and passed on.
OSWORLD_KEYS = {
    "page_down": "pagedown",
    "page_up": "pageup",
    "super_l": "win",
    "super": "command",
    "escape": "esc",
}


def _osworld_xy(call: ToolCall, context: Context, name: str = "coordinate") -> tuple[int, int] | None:
    """OSWorld's scaling: the factor applied, no bounds checked."""
    pair = arguments.pair(call.args, name, call.name, required=False)
    if pair is None:
        return None
    frame = context.frame
    point = (int(pair[0] * frame.screen[0] / frame.space[0]), int(pair[1] * frame.screen[1] / frame.space[1]))
    context.pointer = point
    return point


def _code(*lines: str) -> list[Action]:
    return [Action(kind="code", code="\n".join(("import pyautogui", *lines)))]


def osworld(call: ToolCall, context: Context) -> Outcome:
    """One call as OSWorld's Claude agent maps it (see the module docstring)."""
    name, args = call.name, call.args
    held = (
        [k.lower() for k in str(args.get("text") or "").split("+") if k]
        if name in (*CLICKS, "scroll")
        else []
    )
    down = [f"pyautogui.keyDown({k!r})" for k in held]
    up = [f"pyautogui.keyUp({k!r})" for k in reversed(held)]
    xy = _osworld_xy(call, context)
    at = f"{xy[0]}, {xy[1]}" if xy else ""
    if name in CLICKS:
        verb = {"left_click": "click", "right_click": "rightClick", "middle_click": "middleClick",
                "double_click": "doubleClick", "triple_click": "tripleClick"}[name]  # fmt: skip
        return Outcome(call, _code(*down, f"pyautogui.{verb}({at})", *up))
    if name == "mouse_move" and xy:
        return Outcome(call, _code(f"pyautogui.moveTo({at}, duration=0.5)"))
    if name == "left_click_drag" and xy:
        start = _osworld_xy(call, context, "start_coordinate")
        first = [f"pyautogui.moveTo({start[0]}, {start[1]})"] if start else []
        context.pointer = xy
        return Outcome(call, _code(*first, f"pyautogui.dragTo({at}, duration=0.5)"))
    if name == "left_mouse_down":
        return Outcome(call, _code("pyautogui.mouseDown()"))
    if name == "left_mouse_up":
        return Outcome(call, _code("pyautogui.mouseUp()"))
    if name in ("key", "hold_key"):
        keys = [OSWORLD_KEYS.get(k.lower(), k.lower()) for k in str(args.get("text", "")).split("+")]
        lines = [f"pyautogui.keyDown({k!r})" for k in keys]
        if name == "key":
            lines += [f"pyautogui.keyUp({k!r})" for k in reversed(keys)]
        return Outcome(call, _code(*lines))
    if name == "type":
        typed = str(args.get("text", ""))
        presses = (f"pyautogui.press({('enter' if c == chr(10) else c)!r})" for c in typed)
        return Outcome(call, _code(*presses))
    if name == "scroll":
        amount = int(args.get("scroll_amount") or 0)
        direction = args.get("scroll_direction")
        verb, sign = {
            "up": ("scroll", 1),
            "down": ("scroll", -1),
            "left": ("hscroll", -1),
            "right": ("hscroll", 1),
        }.get(str(direction), ("scroll", -1))
        where = f", {at}" if xy else ""
        return Outcome(call, _code(*down, f"pyautogui.{verb}({sign * amount}{where})", *up))
    if name == "wait":
        return Outcome(call, _code("import time", "time.sleep(0.5)"))
    if name == "screenshot":
        return Outcome(call, _code("import time", "time.sleep(0.1)"))
    raise ActionParseError(f"Invalid action {name!r}")
