"""Turn recorded X input events into pyautogui statements that replay them.

Pure functions on :class:`RecordedEvent` lists (recorded by
:class:`pytest_osworld.guest.input_record.InputRecorder`); no X connection needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DOUBLE_CLICK_S = 0.5
NEAR_PX = 5.0
SCROLL_GAP_S = 1.0
DRAG_DURATION = 0.5

# keysym name -> modifier; pyautogui names, except "altgr" (shift level 3, typed as Alt_R)
_MODIFIERS = {
    "Shift_L": "shift",
    "Shift_R": "shift",
    "Control_L": "ctrl",
    "Control_R": "ctrl",
    "Alt_L": "alt",
    "Alt_R": "alt",
    "Meta_L": "alt",
    "Meta_R": "alt",
    "Super_L": "win",
    "Super_R": "win",
    "Hyper_L": "win",
    "Hyper_R": "win",
    "ISO_Level3_Shift": "altgr",
}
_SPECIAL = {
    "Return": "enter",
    "KP_Enter": "enter",
    "BackSpace": "backspace",
    "Tab": "tab",
    "ISO_Left_Tab": "tab",
    "Escape": "esc",
    "Left": "left",
    "Right": "right",
    "Up": "up",
    "Down": "down",
    "Delete": "delete",
    "Insert": "insert",
    "Home": "home",
    "End": "end",
    "Prior": "pageup",
    "Next": "pagedown",
    "Page_Up": "pageup",
    "Page_Down": "pagedown",
    "Caps_Lock": "capslock",
    "Num_Lock": "numlock",
    "Scroll_Lock": "scrolllock",
    "Print": "printscreen",
    "Pause": "pause",
    "Menu": "apps",
}
_NAMES: dict[int, str] = {}
_BUTTONS = {1: "left", 2: "middle", 3: "right"}
_SCROLLS = {4: ("scroll", 1), 5: ("scroll", -1), 6: ("hscroll", -1), 7: ("hscroll", 1)}


@dataclass(frozen=True)
class RecordedEvent:
    """One core input event: ``kind`` is key_press, key_release, button_press,
    button_release or motion; ``time`` is monotonic seconds; ``x``/``y`` the pointer on
    the root window; ``detail`` the keycode or button; ``keysyms`` the key's keysyms by
    shift level (key events only)."""

    kind: str
    time: float
    x: int = 0
    y: int = 0
    detail: int = 0
    keysyms: tuple[int, ...] = ()


@dataclass(frozen=True)
class RecordedAction:
    """One pyautogui statement and the pause before it (seconds, to 0.1)."""

    code: str
    wait_before: float

    def as_dict(self) -> dict[str, Any]:
        """``{"code", "wait_before"}``."""
        return {"code": self.code, "wait_before": self.wait_before}


@dataclass
class _Item:
    kind: str  # click, scroll, write or code
    t0: float
    t1: float
    text: str = ""
    x: int = 0
    y: int = 0
    button: int = 0
    count: int = 0
    last_press: float = 0.0


@dataclass
class _Held:
    name: str
    emitted: bool = False
    used: bool = False


@dataclass
class _Converter:
    width: int
    height: int
    items: list[_Item] = field(default_factory=list)
    mods: dict[int, _Held] = field(default_factory=dict)
    buttons: dict[int, tuple[int, int, float, float]] = field(default_factory=dict)

    def point(self, event: RecordedEvent) -> tuple[int, int]:
        return min(max(event.x, 0), self.width - 1), min(max(event.y, 0), self.height - 1)

    def code(self, code: str, t0: float, t1: float | None = None) -> None:
        self.items.append(_Item("code", t0, t0 if t1 is None else t1, text=code))

    def hold_mods(self, t: float) -> None:
        """Emit ``keyDown`` for held modifiers before a mouse action or a plain press."""
        for held in self.mods.values():
            held.used = True
            if not held.emitted:
                held.emitted = True
                self.code(f"pyautogui.keyDown({_pyautogui_mod(held.name)!r})", t)

    def feed(self, ev: RecordedEvent) -> None:
        if ev.kind == "key_press":
            self.key_press(ev)
        elif ev.kind == "key_release":
            held = self.mods.pop(ev.detail, None)
            if held is not None and held.emitted:
                self.code(f"pyautogui.keyUp({_pyautogui_mod(held.name)!r})", ev.time)
            elif held is not None and not held.used and held.name != "shift":
                self.code(f"pyautogui.press({_pyautogui_mod(held.name)!r})", ev.time)
        elif ev.kind == "motion":
            for button, (x0, y0, t0, far) in self.buttons.items():
                dist = math.hypot(ev.x - x0, ev.y - y0)
                self.buttons[button] = (x0, y0, t0, max(far, dist))
        elif ev.kind == "button_press":
            self.button_press(ev)
        elif ev.kind == "button_release" and ev.detail in self.buttons:
            self.button_release(ev)

    def key_press(self, ev: RecordedEvent) -> None:
        base = ev.keysyms[0] if ev.keysyms else 0
        mod = _MODIFIERS.get(_keysym_name(base))
        if mod is not None:
            self.mods.setdefault(ev.detail, _Held(mod))
            return
        names = [held.name for held in self.mods.values()]
        name = _key_name(base)
        if any(held.emitted for held in self.mods.values()):
            self.hold_mods(ev.time)
            self.code(f"pyautogui.press({name!r})", ev.time)
            return
        for held in self.mods.values():
            held.used = True
        if set(names) <= {"shift", "altgr"}:
            level = (1 if "shift" in names else 0) + (4 if "altgr" in names else 0)
            sym = ev.keysyms[level] if len(ev.keysyms) > level and ev.keysyms[level] else base
            char = _printable(sym)
            if char is not None:
                last = self.items[-1] if self.items else None
                if last is not None and last.kind == "write":
                    last.text += char
                    last.t1 = ev.time
                else:
                    self.items.append(_Item("write", ev.time, ev.time, text=char))
                return
        if names:
            keys = ", ".join(repr(key) for key in [*map(_pyautogui_mod, names), name])
            self.code(f"pyautogui.hotkey({keys})", ev.time)
        else:
            self.code(f"pyautogui.press({name!r})", ev.time)

    def button_press(self, ev: RecordedEvent) -> None:
        x, y = self.point(ev)
        if ev.detail in _BUTTONS:
            self.buttons[ev.detail] = (x, y, ev.time, 0.0)
            return
        if ev.detail not in _SCROLLS:
            return
        self.hold_mods(ev.time)
        func, step = _SCROLLS[ev.detail]
        last = self.items[-1] if self.items else None
        if (
            last is not None
            and last.kind == "scroll"
            and last.text == func
            and (last.count > 0) == (step > 0)
            and math.hypot(x - last.x, y - last.y) <= NEAR_PX
            and ev.time - last.t1 <= SCROLL_GAP_S
        ):
            last.count += step
            last.t1 = ev.time
        else:
            self.items.append(_Item("scroll", ev.time, ev.time, text=func, x=x, y=y, count=step))

    def button_release(self, ev: RecordedEvent) -> None:
        x0, y0, t0, far = self.buttons.pop(ev.detail)
        x1, y1 = self.point(ev)
        self.hold_mods(t0)
        if max(far, math.hypot(x1 - x0, y1 - y0)) > NEAR_PX:
            self.code(f"pyautogui.moveTo({x0}, {y0})", t0)
            button = _BUTTONS[ev.detail]
            self.code(
                f"pyautogui.dragTo({x1}, {y1}, duration={DRAG_DURATION}, button={button!r})", t0, ev.time
            )
            return
        last = self.items[-1] if self.items else None
        if (
            ev.detail == 1
            and last is not None
            and last.kind == "click"
            and last.button == 1
            and last.count < 3
            and math.hypot(x0 - last.x, y0 - last.y) <= NEAR_PX
            and t0 - last.last_press <= DOUBLE_CLICK_S
        ):
            last.count += 1
            last.last_press, last.t1 = t0, ev.time
            return
        self.items.append(_Item("click", t0, ev.time, x=x0, y=y0, button=ev.detail, count=1, last_press=t0))


def _pyautogui_mod(name: str) -> str:
    return "altright" if name == "altgr" else name


def _printable(sym: int) -> str | None:
    """The character a keysym types, for Latin-1 and Unicode keysyms."""
    if 0x20 <= sym <= 0x7E or 0xA0 <= sym <= 0xFF:
        return chr(sym)
    if sym & 0xFF000000 == 0x01000000 and (sym & 0xFFFFFF) >= 0x20:
        return chr(sym & 0xFFFFFF)
    return None


def _key_name(sym: int) -> str:
    """pyautogui's name of a key, from its unshifted keysym."""
    char = _printable(sym)
    if char is not None:
        return char.lower()
    name = _keysym_name(sym)
    return _SPECIAL.get(name, name.lower())


def _keysym_name(sym: int) -> str:
    """A keysym's name (``Return``, ``F5``), from python-xlib's loaded keysym tables."""
    if not _NAMES:
        from Xlib import XK  # here, so the guest server starts even where Xlib is missing

        XK.load_keysym_group("xkb")
        for attr in dir(XK):
            if attr.startswith("XK_"):
                _NAMES.setdefault(getattr(XK, attr), attr[3:])
    return _NAMES.get(sym, f"0x{sym:x}")


def _render(item: _Item) -> str:
    if item.kind == "write":
        return f"pyautogui.write({item.text!r})"
    if item.kind == "scroll":
        return f"pyautogui.{item.text}({item.count}, x={item.x}, y={item.y})"
    if item.kind == "click":
        func = {2: "middleClick", 3: "rightClick"}.get(item.button)
        func = func or {1: "click", 2: "doubleClick", 3: "tripleClick"}[item.count]
        return f"pyautogui.{func}({item.x}, {item.y})"
    return item.text


def to_actions(
    events: list[RecordedEvent], screen_size: tuple[int, int], previous_end: float | None = None
) -> list[RecordedAction]:
    """pyautogui statements that replay ``events`` on a screen of ``screen_size``; the first
    one waits from ``previous_end`` (the end of the input converted before, if any).

    Left clicks within 0.5 s at one spot merge into double and triple clicks, scroll
    clicks merge per run, printable keys typed without modifiers (Shift aside) merge into
    one ``write``, modifiers with a key become a ``hotkey``; a press, a move over 5 px and
    a release become ``moveTo`` + ``dragTo``. Motion with no button down is dropped.
    """
    conv = _Converter(max(screen_size[0], 1), max(screen_size[1], 1))
    for event in events:
        conv.feed(event)
    actions: list[RecordedAction] = []
    for item in conv.items:
        wait = 0.0 if previous_end is None else max(0.0, round(item.t0 - previous_end, 1))
        actions.append(RecordedAction(_render(item), wait))
        previous_end = item.t1
    return actions


def settled_length(events: list[RecordedEvent]) -> int:
    """How many leading events end with no key or button down (the rest may be a gesture
    that is still going on, so a caller taking actions mid-recording keeps them)."""
    down: set[tuple[str, int]] = set()
    settled = 0
    for index, event in enumerate(events):
        if event.kind in ("key_press", "button_press") and not (
            event.kind == "button_press" and event.detail in _SCROLLS
        ):
            down.add((event.kind[:3], event.detail))
        elif event.kind in ("key_release", "button_release"):
            down.discard((event.kind[:3], event.detail))
        if not down:
            settled = index + 1
    return settled
