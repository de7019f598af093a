"""The desktop actions every protocol maps to, written as pyautogui code run inside the desktop.

Points here are screen pixels (a :class:`~pytest_osworld.agents.native.geometry.Frame` has
already mapped them) and key names are pyautogui's (:mod:`~pytest_osworld.agents.native.keys`
has translated them). Each function returns one code :class:`Action`; the host never runs it.

Typing: printable ASCII is typed with ``pyautogui.write``, line breaks and tabs are pressed
as Enter and Tab, and any other character goes through the clipboard (``pyperclip`` and
Ctrl+V, the way OSWorld's agents type text pyautogui cannot), in order.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

from pytest_osworld.agent.actions import Action, ActionParseError

#: Screen pixels one wheel click stands for, where a protocol speaks pixels (OpenAI's
#: ``scroll_x``/``scroll_y``, Qwen's ``pixels``, Gemini's ``magnitude``). A wheel click
#: scrolls different distances in different programs; 100 px is about three lines of text
#: in the desktop's apps (docs/agents.md).
PIXELS_PER_WHEEL_CLICK = 100
#: The longest wait or key hold one action may ask for, in seconds.
MAX_WAIT_S = 60.0
#: Seconds between typed characters.
TYPE_INTERVAL_S = 0.01
BUTTONS = ("left", "right", "middle")
_TYPED = frozenset(string.printable) - frozenset("\n\r\t\x0b\x0c")

Point = tuple[int, int]


def _code(*lines: str) -> Action:
    return Action(kind="code", code="\n".join(("import pyautogui", *lines)))


def _holding(keys: Sequence[str], lines: list[str]) -> list[str]:
    """``lines`` with ``keys`` held down around them (released in reverse order)."""
    if not keys:
        return lines
    down = [f"pyautogui.keyDown({key!r})" for key in keys]
    up = [f"pyautogui.keyUp({key!r})" for key in reversed(keys)]
    return [*down, "try:", *("    " + line for line in lines), "finally:", *("    " + line for line in up)]


def _button(button: str) -> str:
    if button not in BUTTONS:
        raise ActionParseError(f"unknown mouse button {button!r}; use one of {', '.join(BUTTONS)}")
    return button


def click(point: Point | None, button: str = "left", count: int = 1, hold: Sequence[str] = ()) -> Action:
    """Click ``count`` times (1 to 3) at ``point`` (None: where the pointer is), with ``hold`` keys held."""
    if count not in (1, 2, 3):
        raise ActionParseError(f"cannot click {count} times at once")
    at = f"{point[0]}, {point[1]}, " if point else ""
    line = f"pyautogui.click({at}clicks={count}, interval=0.1, button={_button(button)!r})"
    return _code(*_holding(hold, [line]))


def move(point: Point, hold: Sequence[str] = ()) -> Action:
    """Move the pointer to ``point``."""
    return _code(*_holding(hold, [f"pyautogui.moveTo({point[0]}, {point[1]})"]))


def drag(path: Sequence[Point], button: str = "left", hold: Sequence[str] = ()) -> Action:
    """Press ``button`` at the path's first point, move through the others, release at the last."""
    if len(path) < 2:
        raise ActionParseError("a drag needs a start and an end point")
    (x0, y0), rest = path[0], path[1:]
    # The press names its point: without one, pyautogui reads the pointer back from the X
    # server and presses there (once, in CI, on GNOME, that was not the point just moved to).
    lines = [f"pyautogui.moveTo({x0}, {y0})", f"pyautogui.mouseDown({x0}, {y0}, button={_button(button)!r})"]
    lines += [f"pyautogui.moveTo({x}, {y}, duration=0.3)" for x, y in rest]
    lines.append(f"pyautogui.mouseUp(button={button!r})")
    return _code(*_holding(hold, lines))


def press_button(down: bool, button: str = "left", point: Point | None = None) -> Action:
    """Press (``down``) or release ``button``, first moving to ``point`` if given."""
    lines = [f"pyautogui.moveTo({point[0]}, {point[1]})"] if point else []
    verb = "mouseDown" if down else "mouseUp"
    lines.append(f"pyautogui.{verb}(button={_button(button)!r})")
    return _code(*lines)


def keys(combo: Sequence[str]) -> Action:
    """Press the keys of ``combo`` together (one key: a press)."""
    if not combo:
        raise ActionParseError("no key given")
    if len(combo) == 1:
        return _code(f"pyautogui.press({combo[0]!r})")
    return _code(f"pyautogui.hotkey({', '.join(repr(k) for k in combo)})")


def hold_keys(combo: Sequence[str], seconds: float) -> Action:
    """Hold the keys of ``combo`` down for ``seconds``, then release them."""
    if not combo:
        raise ActionParseError("no key given")
    return _code("import time", *_holding(combo, [f"time.sleep({_seconds(seconds)!r})"]))


def key_state(combo: Sequence[str], down: bool) -> Action:
    """Press (``down``) or release the keys of ``combo`` and leave them so."""
    verb = "keyDown" if down else "keyUp"
    return _code(*(f"pyautogui.{verb}({key!r})" for key in combo))


def type_text(text: str) -> Action:
    """Type ``text``: see the module's docstring for how each character goes."""
    if not text:
        raise ActionParseError("no text to type")
    lines: list[str] = []
    run = ""
    for char in text.replace("\r\n", "\n"):
        if char in _TYPED:
            run += char
            continue
        if run:
            lines.append(f"pyautogui.write({run!r}, interval={TYPE_INTERVAL_S})")
            run = ""
        if char in "\n\r":
            lines.append("pyautogui.press('enter')")
        elif char == "\t":
            lines.append("pyautogui.press('tab')")
        else:
            lines += [f"pyperclip.copy({char!r})", "pyautogui.hotkey('ctrl', 'v')"]
    if run:
        lines.append(f"pyautogui.write({run!r}, interval={TYPE_INTERVAL_S})")
    if any(line.startswith("pyperclip") for line in lines):
        lines.insert(0, "import pyperclip")
    return _code(*lines)


def scroll(point: Point | None, down: int = 0, right: int = 0, hold: Sequence[str] = ()) -> Action:
    """Turn the wheel ``down`` clicks down (negative: up) and ``right`` clicks right, at ``point``."""
    if not down and not right:
        raise ActionParseError("a scroll of zero clicks")
    at = f", x={point[0]}, y={point[1]}" if point else ""
    lines = []
    if down:
        lines.append(f"pyautogui.scroll({-down}{at})")
    if right:
        lines.append(f"pyautogui.hscroll({right}{at})")
    return _code(*_holding(hold, lines))


def wheel_clicks(pixels: float) -> int:
    """A scroll distance in pixels as wheel clicks: at least one click for any distance."""
    if pixels == 0:
        return 0
    clicks = round(abs(pixels) / PIXELS_PER_WHEEL_CLICK) or 1
    return clicks if pixels > 0 else -clicks


def wait(seconds: float) -> Action:
    """Do nothing for ``seconds`` (at most :data:`MAX_WAIT_S`)."""
    return _code("import time", f"time.sleep({_seconds(seconds)!r})")


def _seconds(value: float) -> float:
    if not 0 <= value <= MAX_WAIT_S:
        raise ActionParseError(f"a duration of {value:g} s is outside 0 to {MAX_WAIT_S:g} s")
    return float(value)
