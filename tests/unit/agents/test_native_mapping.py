"""The native agents' shared mapping: key vocabularies, coordinate frames, pyautogui commands."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from pytest_osworld.agent.actions import ActionParseError
from pytest_osworld.agents.native import commands
from pytest_osworld.agents.native.geometry import OffScreen, declared, grid, parse_size, smart, smart_resize
from pytest_osworld.agents.native.keys import PRESSABLE, UnknownKey, pyautogui_key, split_combo

#: Every key Claude's xdotool vocabulary, OpenAI's CUA names and Playwright's names use for
#: the keys of a PC keyboard, with the pyautogui key each must press.
VOCABULARY = {
    # xdotool keysyms (Claude)
    "Return": "return", "KP_Enter": "enter", "BackSpace": "backspace", "Tab": "tab", "Escape": "escape",
    "Page_Down": "pagedown", "Page_Up": "pageup", "Next": "pagedown", "Prior": "pageup", "Home": "home",
    "End": "end", "Insert": "insert", "Delete": "delete", "Up": "up", "Down": "down", "Left": "left",
    "Right": "right", "super": "win", "Super_L": "winleft", "Super_R": "winright", "ctrl": "ctrl",
    "Control_L": "ctrlleft", "Control_R": "ctrlright", "Alt_L": "altleft", "Alt_R": "altright",
    "Shift_L": "shiftleft", "Shift_R": "shiftright", "Caps_Lock": "capslock", "Num_Lock": "numlock",
    "Scroll_Lock": "scrolllock", "Print": "print", "Pause": "pause", "Menu": "apps", "KP_0": "num0",
    "KP_9": "num9", "KP_Add": "add", "KP_Subtract": "subtract", "KP_Multiply": "multiply",
    "KP_Divide": "divide", "KP_Decimal": "decimal", "F1": "f1", "F12": "f12", "space": "space",
    "minus": "-", "plus": "+", "equal": "=", "comma": ",", "period": ".", "slash": "/",
    "backslash": "\\", "semicolon": ";", "apostrophe": "'", "grave": "`", "bracketleft": "[",
    "bracketright": "]", "asciitilde": "~", "exclam": "!", "at": "@", "numbersign": "#",
    "dollar": "$", "percent": "%", "asciicircum": "^", "ampersand": "&", "asterisk": "*",
    "parenleft": "(", "parenright": ")", "underscore": "_", "braceleft": "{", "braceright": "}",
    "bar": "|", "colon": ":", "quotedbl": '"', "less": "<", "greater": ">", "question": "?",
    # OpenAI's computer tool
    "ENTER": "enter", "ESC": "esc", "CTRL": "ctrl", "ALT": "alt", "SHIFT": "shift", "CMD": "win",
    "META": "win", "SUPER": "win", "OPTION": "alt", "ARROWUP": "up", "ARROWDOWN": "down",
    "ARROWLEFT": "left", "ARROWRIGHT": "right", "PAGEDOWN": "pagedown", "PAGEUP": "pageup",
    "BACKSPACE": "backspace", "DELETE": "delete", "SPACE": "space", "CAPSLOCK": "capslock",
    # Playwright (Gemini)
    "Control": "ctrl", "Meta": "win", "ControlOrMeta": "ctrl", "Enter": "enter", "ArrowUp": "up",
    "ArrowLeft": "left", "PageDown": "pagedown", "Backspace": "backspace", "ContextMenu": "apps",
    "KeyA": "a", "Digit7": "7", "Numpad3": "num3",
    # single characters stay themselves
    "a": "a", "Z": "Z", "5": "5", "/": "/", "+": "+",
}  # fmt: skip


@pytest.mark.parametrize(("name", "key"), sorted(VOCABULARY.items()))
def test_each_protocol_key_name_presses_its_key(name: str, key: str) -> None:
    assert pyautogui_key(name) == key
    assert key in PRESSABLE


@pytest.mark.parametrize(
    "name", ["Hyper_Q", "XF86AudioRaiseVolume", "F13", "volumeup", "browserback", "é", "\x00", ""]
)
def test_keys_pyautogui_cannot_press_on_x11_are_errors(name: str) -> None:
    with pytest.raises(UnknownKey):
        pyautogui_key(name)


def test_a_naive_lowercasing_would_miss_most_keysyms() -> None:
    """The reason for the table: lowercased xdotool names are mostly not pyautogui's."""
    missed = [name for name in VOCABULARY if len(name) > 1 and name.lower() not in PRESSABLE]
    assert len(missed) > 40


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("ctrl+shift+t", ["ctrl", "shift", "t"]),
        ("+", ["+"]),
        ("ctrl++", ["ctrl", "+"]),
        (" alt+Tab ", ["alt", "Tab"]),
    ],
)
def test_split_combo(text: str, keys: list[str]) -> None:
    assert split_combo(text) == keys


@pytest.mark.parametrize("text", ["", "ctrl+", "+ctrl", "ctrl++a"])
def test_malformed_combinations_are_errors(text: str) -> None:
    with pytest.raises(UnknownKey):
        split_combo(text)


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed")
def test_pressable_is_what_the_installed_pyautogui_presses_on_x11() -> None:
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "640x480x24"], pass_fds=(write,)
    )
    os.close(write)
    try:
        display = os.read(read, 16).decode().strip()
        probe = (
            "import pyautogui._pyautogui_x11 as x\n"
            "print('\\n'.join(sorted(repr(k) for k, v in x.keyboardMapping.items() if v)))"
        )
        out = subprocess.run(
            [sys.executable, "-c", probe],
            env={**os.environ, "DISPLAY": f":{display}"},
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        server.terminate()
        server.wait()
        os.close(read)
    assert {eval(line) for line in out.stdout.splitlines()} == set(PRESSABLE)


# -- frames ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "args", "expected"),
    [
        ((1920, 1080), (28, 100 * 28 * 28, 16384 * 28 * 28), (1932, 1092)),  # UI-TARS-1.5
        ((1920, 1080), (28, 56 * 56, 28 * 28 * 1280), (1316, 728)),  # Qwen2.5-VL in OSWorld
        ((1280, 720), (28, 56 * 56, 28 * 28 * 1280), (1288, 728)),
        ((10, 10), (28, 56 * 56, 28 * 28 * 1280), (56, 56)),  # grown to the minimum
    ],
)
def test_smart_resize(size, args, expected) -> None:
    width, height = smart_resize(*size, *args)
    assert (width, height) == expected
    assert width % args[0] == 0 and height % args[0] == 0
    assert args[1] <= width * height <= args[2]


def test_frames_map_points_both_ways_and_refuse_points_off_the_image() -> None:
    frame = declared((1920, 1080), (1366, 768))
    assert frame.to_screen(683, 384) == (960, 540)
    assert frame.to_screen(1366, 768) == (1919, 1079)
    assert frame.to_model(960, 540) == (683, 384)
    with pytest.raises(OffScreen, match="outside the 1366x768"):
        frame.to_screen(1367, 10)
    with pytest.raises(OffScreen):
        grid((1920, 1080), (1920, 1080), 1000).to_screen(-1, 5)
    assert grid((1920, 1080), (1920, 1080), 1000).to_screen(999, 999) == (1918, 1078)
    assert smart((1920, 1080), 28, 100 * 784, 16384 * 784).to_screen(966, 546) == (960, 540)


@pytest.mark.parametrize("text", ["1366x768", " 1024X768 "])
def test_parse_size(text: str) -> None:
    assert parse_size(text)[0] in (1366, 1024)


@pytest.mark.parametrize("text", ["1366", "x768", "0x10", "axb"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="is not a size"):
        parse_size(text)


# -- commands -------------------------------------------------------------------------------


def test_typing_ascii_lines_tabs_and_other_characters() -> None:
    code = commands.type_text("ab\tc\nd€e").code
    assert code.splitlines() == [
        "import pyautogui",
        "import pyperclip",
        "pyautogui.write('ab', interval=0.01)",
        "pyautogui.press('tab')",
        "pyautogui.write('c', interval=0.01)",
        "pyautogui.press('enter')",
        "pyautogui.write('d', interval=0.01)",
        "pyperclip.copy('€')",
        "pyautogui.hotkey('ctrl', 'v')",
        "pyautogui.write('e', interval=0.01)",
    ]


@pytest.mark.parametrize(
    ("pixels", "clicks"), [(0, 0), (1, 1), (-30, -1), (100, 1), (250, 2), (-300, -3), (1000, 10)]
)
def test_pixel_distances_become_wheel_clicks(pixels: float, clicks: int) -> None:
    assert commands.wheel_clicks(pixels) == clicks


def test_held_keys_are_released_even_when_the_action_fails() -> None:
    code = commands.click((1, 2), "left", 1, ["ctrl", "shift"]).code
    assert code.index("keyDown('ctrl')") < code.index("keyDown('shift')") < code.index("try:")
    assert code.index("finally:") < code.index("keyUp('shift')") < code.index("keyUp('ctrl')")
    compile(code, "<action>", "exec")


@pytest.mark.parametrize(
    "make",
    [
        lambda: commands.wait(61),
        lambda: commands.wait(-1),
        lambda: commands.click((1, 1), "thumb"),
        lambda: commands.click((1, 1), count=4),
        lambda: commands.drag([(1, 1)]),
        lambda: commands.scroll(None, 0, 0),
        lambda: commands.type_text(""),
        lambda: commands.keys([]),
    ],
)
def test_impossible_commands_are_step_errors(make) -> None:
    with pytest.raises(ActionParseError):
        make()
