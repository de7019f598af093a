"""``to_actions``: recorded X input events become pyautogui statements."""

from __future__ import annotations

from Xlib import XK

from pytest_osworld.guest.input_actions import settled_length
from pytest_osworld.guest.input_record import RecordedAction, RecordedEvent, to_actions

SCREEN = (1280, 800)

# A small US keyboard: keycode -> keysyms by shift level.
_KEYS: dict[str, tuple[int, tuple[int, ...]]] = {}
for _code, _names in enumerate(
    [
        ("a", "A"),
        ("c", "C"),
        ("h", "H"),
        ("i", "I"),
        ("1", "exclam"),
        ("space",),
        ("Return",),
        ("BackSpace",),
        ("Tab", "ISO_Left_Tab"),
        ("Escape",),
        ("Left",),
        ("Prior",),
        ("Next",),
        ("F5",),
        ("Shift_L",),
        ("Control_L",),
        ("Alt_L", "Meta_L"),
        ("Super_L",),
    ],
    start=20,
):
    _KEYS[_names[0]] = (_code, tuple(XK.string_to_keysym(n) for n in _names))


class Events:
    """Builds an event list with a running clock."""

    def __init__(self) -> None:
        self.events: list[RecordedEvent] = []
        self.now = 100.0

    def wait(self, seconds: float) -> Events:
        self.now += seconds
        return self

    def add(
        self, kind: str, x: int = 0, y: int = 0, detail: int = 0, keysyms: tuple[int, ...] = ()
    ) -> Events:
        self.events.append(RecordedEvent(kind, self.now, x, y, detail, keysyms))
        self.now += 0.01
        return self

    def down(self, key: str) -> Events:
        code, syms = _KEYS[key]
        return self.add("key_press", detail=code, keysyms=syms)

    def up(self, key: str) -> Events:
        code, syms = _KEYS[key]
        return self.add("key_release", detail=code, keysyms=syms)

    def tap(self, *keys: str) -> Events:
        for key in keys:
            self.down(key).up(key)
        return self

    def click(self, x: int, y: int, button: int = 1) -> Events:
        return self.add("button_press", x, y, button).add("button_release", x, y, button)

    def move(self, x: int, y: int) -> Events:
        return self.add("motion", x, y)


def codes(events: Events) -> list[str]:
    return [action.code for action in to_actions(events.events, SCREEN)]


def test_click_double_click_and_triple_click() -> None:
    ev = Events().move(5, 5).click(412, 300).wait(1).click(10, 10).wait(0.2).click(12, 11)
    ev.wait(1).click(50, 50).click(50, 50).click(50, 50)
    assert codes(ev) == [
        "pyautogui.click(412, 300)",
        "pyautogui.doubleClick(10, 10)",
        "pyautogui.tripleClick(50, 50)",
    ]


def test_clicks_that_must_not_merge() -> None:
    ev = Events().click(10, 10).wait(0.6).click(10, 10)  # too slow
    ev.wait(1).click(100, 100).wait(0.1).click(120, 100)  # too far apart
    ev.wait(1).click(200, 200, 3).click(200, 200, 3)  # right clicks never merge
    assert codes(ev) == [
        "pyautogui.click(10, 10)",
        "pyautogui.click(10, 10)",
        "pyautogui.click(100, 100)",
        "pyautogui.click(120, 100)",
        "pyautogui.rightClick(200, 200)",
        "pyautogui.rightClick(200, 200)",
    ]


def test_middle_click_and_coordinates_clamped_to_the_screen() -> None:
    assert codes(Events().click(5000, -3, 2)) == ["pyautogui.middleClick(1279, 0)"]


def test_scrolls_merge_per_run() -> None:
    ev = Events()
    for _ in range(3):
        ev.click(400, 300, 5)
    ev.click(400, 300, 4).click(401, 300, 4)  # direction changed: a new run
    ev.wait(2).click(401, 300, 4)  # a pause: a new run
    ev.click(700, 300, 4)  # moved: a new run
    ev.click(700, 300, 6).click(700, 300, 7)
    assert codes(ev) == [
        "pyautogui.scroll(-3, x=400, y=300)",
        "pyautogui.scroll(2, x=400, y=300)",
        "pyautogui.scroll(1, x=401, y=300)",
        "pyautogui.scroll(1, x=700, y=300)",
        "pyautogui.hscroll(-1, x=700, y=300)",
        "pyautogui.hscroll(1, x=700, y=300)",
    ]


def test_drag_and_small_wobble_is_a_click() -> None:
    ev = Events().add("button_press", 10, 20, 1).move(40, 60).move(90, 70).add("button_release", 90, 70, 1)
    ev.wait(1).add("button_press", 300, 300, 1).move(303, 302).add("button_release", 302, 301, 1)
    ev.wait(1).add("button_press", 10, 10, 3).move(100, 10).add("button_release", 100, 10, 3)
    assert codes(ev) == [
        "pyautogui.moveTo(10, 20)",
        "pyautogui.dragTo(90, 70, duration=0.5, button='left')",
        "pyautogui.click(300, 300)",
        "pyautogui.moveTo(10, 10)",
        "pyautogui.dragTo(100, 10, duration=0.5, button='right')",
    ]


def test_motion_without_buttons_is_dropped() -> None:
    assert codes(Events().move(1, 1).move(500, 500).move(9, 9)) == []


def test_typing_merges_into_one_write_with_shift_levels() -> None:
    ev = Events().down("Shift_L").tap("h").up("Shift_L").tap("i", "space")
    ev.down("Shift_L").tap("1", "a").up("Shift_L").move(3, 3).tap("a")
    assert codes(ev) == ["pyautogui.write('Hi !Aa')"]


def test_write_uses_repr_quoting() -> None:
    quote = XK.string_to_keysym("apostrophe")
    backslash = XK.string_to_keysym("backslash")
    ev = (
        Events()
        .add("key_press", detail=80, keysyms=(quote,))
        .add("key_press", detail=81, keysyms=(backslash,))
    )
    assert codes(ev) == ['pyautogui.write("\'\\\\")']
    assert eval(codes(ev)[0].removeprefix("pyautogui.write")) == "'\\"


def test_special_keys_use_pyautogui_names() -> None:
    ev = Events().tap("Return", "BackSpace", "Tab", "Escape", "Left", "Prior", "Next", "F5")
    assert codes(ev) == [
        f"pyautogui.press({name!r})"
        for name in ["enter", "backspace", "tab", "esc", "left", "pageup", "pagedown", "f5"]
    ]


def test_special_keys_end_a_write() -> None:
    ev = Events().tap("h", "i", "Return", "a")
    assert codes(ev) == ["pyautogui.write('hi')", "pyautogui.press('enter')", "pyautogui.write('a')"]


def test_modifiers_with_a_key_become_a_hotkey() -> None:
    ev = Events().down("Control_L").tap("c").up("Control_L")
    ev.down("Control_L").down("Shift_L").tap("Tab").up("Shift_L").up("Control_L")
    ev.down("Shift_L").tap("Tab").up("Shift_L")
    ev.down("Alt_L").tap("F5").up("Alt_L")
    ev.tap("a")  # modifiers released: plain typing again
    assert codes(ev) == [
        "pyautogui.hotkey('ctrl', 'c')",
        "pyautogui.hotkey('ctrl', 'shift', 'tab')",
        "pyautogui.hotkey('shift', 'tab')",
        "pyautogui.hotkey('alt', 'f5')",
        "pyautogui.write('a')",
    ]


def test_lone_modifier_taps() -> None:
    ev = Events().tap("Shift_L").tap("Super_L")
    assert codes(ev) == ["pyautogui.press('win')"]


def test_modifier_held_over_a_click_is_key_down_and_up() -> None:
    ev = Events().down("Control_L").click(30, 40).up("Control_L")
    assert codes(ev) == [
        "pyautogui.keyDown('ctrl')",
        "pyautogui.click(30, 40)",
        "pyautogui.keyUp('ctrl')",
    ]


def test_wait_before_is_the_pause_since_the_previous_action() -> None:
    ev = Events().wait(3).click(1, 1).wait(1.26).tap("a").wait(0.5).tap("c").wait(2.0).click(9, 9)
    actions = to_actions(ev.events, SCREEN)
    assert actions == [
        RecordedAction("pyautogui.click(1, 1)", 0.0),
        RecordedAction("pyautogui.write('ac')", 1.3),
        RecordedAction("pyautogui.click(9, 9)", 2.0),
    ]
    assert actions[1].as_dict() == {"code": "pyautogui.write('ac')", "wait_before": 1.3}


def test_settled_length_keeps_a_gesture_in_progress() -> None:
    ev = Events().click(1, 1).tap("a").down("Control_L").down("c")
    assert settled_length(ev.events) == 4
    ev.up("c").up("Control_L").add("button_press", 5, 5, 1).move(50, 50)
    assert settled_length(ev.events) == 8
    assert settled_length(Events().click(1, 1, 4).click(1, 1, 5).events) == 4
