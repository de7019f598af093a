"""Key names of the computer-use protocols, translated to the names pyautogui presses on X11.

Each protocol names keys in its own vocabulary: Claude writes xdotool keysyms
(``Return``, ``Page_Down``, ``KP_0``, ``ctrl+shift+t``), OpenAI's computer tool CUA names
(``ENTER``, ``ARROWDOWN``, ``CMD``), Gemini Playwright's (``Control``, ``ArrowLeft``,
``PageDown``), and the open models pyautogui's own. pyautogui presses nothing, without an
error, for a name it does not know or cannot press on X11 (``command``, ``option``,
``volumeup``, ``f13`` ...), so every name goes through :func:`pyautogui_key`, and one that
has no pyautogui key raises :class:`UnknownKey`: a step error the agent reports to the
model, never a silent no-op.

The names do not collide between the vocabularies (compared without case), so one table
serves them all.
"""

from __future__ import annotations

import string

from pytest_osworld.agent.actions import ActionParseError

#: Every key name pyautogui 0.9.54 presses on X11: the entries of
#: ``pyautogui._pyautogui_x11.keyboardMapping`` that have a keycode (its other names, such as
#: ``command``, ``option``, ``volumeup`` or ``f13``, press nothing there). Checked against
#: the installed pyautogui by tests/unit/agents/test_native_mapping.py.
PRESSABLE: frozenset[str] = frozenset(
    set(string.ascii_letters + string.digits + string.punctuation)
    | {"\b", "\t", "\n", "\r", " ", "\\e"}
    | {f"f{n}" for n in range(1, 13)}
    | {f"num{n}" for n in range(10)}
    | {
        "add", "alt", "altleft", "altright", "apps", "backspace", "capslock", "ctrl",
        "ctrlleft", "ctrlright", "decimal", "del", "delete", "divide", "down", "end", "enter",
        "esc", "escape", "help", "home", "insert", "left", "multiply", "numlock", "pagedown",
        "pageup", "pause", "pgdn", "pgup", "print", "printscreen", "prntscrn", "prtsc",
        "prtscr", "return", "right", "scrolllock", "shift", "shiftleft", "shiftright",
        "space", "subtract", "tab", "up", "win", "winleft", "winright",
    }
)  # fmt: skip

#: Names of the protocols' vocabularies, compared without case, with their pyautogui key.
ALIASES: dict[str, str] = {
    # modifiers: xdotool, CUA and Playwright spellings; the logo key is Super on GNOME
    "control": "ctrl", "control_l": "ctrlleft", "control_r": "ctrlright", "controlormeta": "ctrl",
    "alt_l": "altleft", "alt_r": "altright", "option": "alt", "opt": "alt", "altgr": "altright",
    "iso_level3_shift": "altright",
    "shift_l": "shiftleft", "shift_r": "shiftright",
    "super": "win", "super_l": "winleft", "super_r": "winright", "meta": "win",
    "meta_l": "winleft", "meta_r": "winright", "cmd": "win", "command": "win", "os": "win",
    "windows": "win", "hyper_l": "winleft",
    # editing and navigation
    "kp_enter": "enter", "linefeed": "enter",
    "escape": "escape", "bksp": "backspace", "back_space": "backspace",
    "page_down": "pagedown", "next": "pagedown", "page_up": "pageup", "prior": "pageup",
    "arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right",
    "arrow_up": "up", "arrow_down": "down", "arrow_left": "left", "arrow_right": "right",
    "kp_up": "up", "kp_down": "down", "kp_left": "left", "kp_right": "right",
    "kp_home": "home", "kp_end": "end", "kp_prior": "pageup", "kp_next": "pagedown",
    "kp_page_up": "pageup", "kp_page_down": "pagedown", "kp_insert": "insert",
    "kp_delete": "delete", "ins": "insert", "menu": "apps", "contextmenu": "apps",
    "caps_lock": "capslock", "num_lock": "numlock", "scroll_lock": "scrolllock",
    "sys_req": "printscreen", "printscr": "printscreen",
    # the keypad
    "kp_add": "add", "kp_subtract": "subtract", "kp_multiply": "multiply",
    "kp_divide": "divide", "kp_decimal": "decimal", "kp_space": "space", "kp_tab": "tab",
    "kp_equal": "=",
    # characters by their keysym names
    "minus": "-", "plus": "+", "equal": "=", "comma": ",", "period": ".", "slash": "/",
    "backslash": "\\", "semicolon": ";", "colon": ":", "apostrophe": "'", "quoteright": "'",
    "quotedbl": '"', "grave": "`", "quoteleft": "`", "asciitilde": "~", "exclam": "!",
    "at": "@", "numbersign": "#", "dollar": "$", "percent": "%", "asciicircum": "^",
    "ampersand": "&", "asterisk": "*", "parenleft": "(", "parenright": ")",
    "underscore": "_", "bracketleft": "[", "bracketright": "]", "braceleft": "{",
    "braceright": "}", "bar": "|", "less": "<", "greater": ">", "question": "?",
}  # fmt: skip
ALIASES.update({f"kp_{n}": f"num{n}" for n in range(10)})
ALIASES.update({f"numpad{n}": f"num{n}" for n in range(10)})
ALIASES.update({f"digit{n}": str(n) for n in range(10)})
ALIASES.update({f"key{c}": c for c in string.ascii_lowercase})


class UnknownKey(ActionParseError):
    """A key name that no pyautogui key on X11 stands for."""


def pyautogui_key(name: str) -> str:
    """The pyautogui key for ``name`` in any protocol's vocabulary; :class:`UnknownKey` if none.

    A single character is that character (pyautogui shifts capitals and symbols itself).
    """
    if len(name) == 1:
        if name in PRESSABLE:
            return name
        raise UnknownKey(f"unknown key {name!r}: pyautogui cannot type it as a key (type it as text)")
    folded = name.strip().lower()
    key = ALIASES.get(folded, folded)
    if key in PRESSABLE:
        return key
    raise UnknownKey(
        f"unknown key {name!r}: no key of this desktop has that name "
        "(use names such as ctrl, alt, shift, enter, tab, escape, backspace, pagedown, "
        "up, f5, or a single character)"
    )


def pyautogui_keys(names: list[str] | tuple[str, ...]) -> list[str]:
    """Each of ``names`` as its pyautogui key (see :func:`pyautogui_key`); an empty list is an error."""
    if not names:
        raise UnknownKey("no key given")
    return [pyautogui_key(name) for name in names]


def split_combo(text: str, separator: str = "+") -> list[str]:
    """``"ctrl+shift+t"`` as ``["ctrl", "shift", "t"]``; a lone separator (``"+"``) is itself a key."""
    stripped = text.strip()
    if not stripped:
        raise UnknownKey("no key given")
    if stripped == separator:
        return [separator]
    parts = [part.strip() for part in stripped.split(separator)]
    # "ctrl++" presses ctrl and "+": the empty parts are the separator itself
    if stripped.endswith(separator + separator):
        parts = [*parts[:-2], separator]
    if any(not part for part in parts):
        raise UnknownKey(f"malformed key combination {text!r}")
    return parts
