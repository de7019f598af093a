"""OmniACT script parsing: a PyAutoGUI script read into the actions scoring compares.

Owns the action kinds (pointer, key, write), the function and key-name aliases, the
``# box: NAME`` labels, and :func:`parse_script`; the score itself is in
:mod:`pytest_osworld.omniact.score`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_osworld.errors import OSWorldError

#: Action types that act at a screen position: the click penalty applies to them.
POINTER_KINDS = frozenset(
    {
        "click",
        "doubleClick",
        "rightClick",
        "middleClick",
        "tripleClick",
        "moveTo",
        "dragTo",
        "mouseDown",
        "mouseUp",
    }
)
#: Action types whose argument is keys: the key penalty applies.
KEY_KINDS = frozenset({"press", "hotkey", "keyDown", "keyUp"})
#: Action types whose argument is text: the write penalty applies.
WRITE_KINDS = frozenset({"write"})
#: Function names normalised to one action type.
ALIASES: Mapping[str, str] = {"typewrite": "write", "vscroll": "scroll", "move": "moveRel", "drag": "dragRel"}
#: pyautogui functions that are not actions (queries, pauses): left out of the sequence.
NOT_ACTIONS = frozenset(
    {
        "size",
        "position",
        "onScreen",
        "sleep",
        "countdown",
        "isValidKey",
        "getPointOnLine",
        "easeInQuad",
        "linear",
    }
)
#: Key names normalised before keys are compared as sets.
KEY_ALIASES: Mapping[str, str] = {
    "return": "enter",
    "esc": "escape",
    "control": "ctrl",
    "ctrlleft": "ctrl",
    "ctrlright": "ctrl",
    "shiftleft": "shift",
    "shiftright": "shift",
    "altleft": "alt",
    "altright": "alt",
    "option": "alt",
    "cmd": "command",
    "super": "win",
    "winleft": "win",
    "winright": "win",
    "del": "delete",
    "pgdn": "pagedown",
    "pgup": "pageup",
    "spacebar": "space",
}

#: Message template (tests match it).
NOT_PYTHON = "the script is not valid Python: {error}"

_BOX_COMMENT = re.compile(r"#\s*box:\s*(\S+)")


class ScriptError(OSWorldError):
    """A script cannot be read into actions (it is not valid Python)."""


@dataclass(frozen=True)
class ScriptAction:
    """One pyautogui call of a script, reduced to what scoring compares."""

    #: Normalised action type (``click``, ``doubleClick``, ``write``, ``hotkey``...).
    kind: str
    #: 1-based line of the call in the script.
    line: int
    #: Where a pointer action acts (explicit, or the cursor left by an earlier action);
    #: None when unknown or not written as literal numbers.
    point: tuple[float, float] | None = None
    #: The keys of a key action, normalised (None for other kinds or non-literal keys).
    keys: frozenset[str] | None = None
    #: The text of a ``write`` action (None when not a literal string).
    text: str | None = None
    #: The box named by a ``# box: NAME`` comment on the call's line.
    box_label: str | None = None
    #: The call's own source text, as written (what the release form of a script keeps).
    source: str = ""

    @property
    def box_key(self) -> str:
        """The key of this action's box in the task's ``boxes``: its label, else its line."""
        return self.box_label if self.box_label is not None else str(self.line)


def normalise_key(key: str) -> str:
    """A key name as compared by the key penalty: lower case, common aliases merged."""
    if key == " ":
        return "space"
    name = key if len(key) == 1 else key.strip().lower()
    return KEY_ALIASES.get(name, name)


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


_NOT_LITERAL = object()


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _call_name(call: ast.Call) -> str | None:
    """``pyautogui.click`` -> ``click``; other calls -> None."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "pyautogui":
        return func.attr
    return None


def _arg(call: ast.Call, position: int, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return None


def _point_arg(call: ast.Call) -> tuple[float, float] | object | None:
    """The literal ``(x, y)`` of a pointer call; None if absent; ``_NOT_LITERAL`` if not literal."""
    x_node, y_node = _arg(call, 0, "x"), _arg(call, 1, "y")
    if x_node is None and y_node is None:
        return None
    x_value = _literal(x_node)
    if y_node is None and isinstance(x_value, tuple | list) and len(x_value) >= 2:
        x, y = _number(x_value[0]), _number(x_value[1])
    else:
        x, y = _number(x_value), _number(_literal(y_node))
    if x is None or y is None:
        return _NOT_LITERAL
    return (x, y)


def _click_kind(call: ast.Call) -> str:
    """``click`` refined by its ``button`` and ``clicks`` arguments.

    ``pyautogui.click(x, y, clicks, interval, button, ...)``: ``button`` is the fifth
    positional argument.
    """
    button = _literal(_arg(call, 4, "button"))
    clicks = _literal(_arg(call, 2, "clicks"))
    if button in ("right", "secondary"):
        return "rightClick"
    if button == "middle":
        return "middleClick"
    if clicks == 2:
        return "doubleClick"
    if clicks == 3:
        return "tripleClick"
    return "click"


def _keys(call: ast.Call, kind: str) -> frozenset[str] | None:
    values = [_literal(a) for a in call.args] if kind == "hotkey" else [_literal(_arg(call, 0, "keys"))]
    if kind != "hotkey" and values == [None]:
        values = [_literal(_arg(call, 0, "key"))]
    keys: set[str] = set()
    for value in values:
        items = value if isinstance(value, list | tuple) else [value]
        for item in items:
            if not isinstance(item, str):
                return None
            keys.add(normalise_key(item))
    return frozenset(keys)


def parse_script(code: str) -> list[ScriptAction]:
    """Read a PyAutoGUI script into its actions, in source order.

    Every ``pyautogui.<name>(...)`` call is an action, wherever it is (a call in a loop
    counts once); other statements (``import``, ``time.sleep``) and pyautogui queries
    (:data:`NOT_ACTIONS`) are ignored. Arguments are read as literals only. The cursor is
    followed, so a ``click()`` without coordinates acts where the last pointer action
    left it. Raises :class:`ScriptError` if ``code`` is not valid Python.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise ScriptError(NOT_PYTHON.format(error=f"{where}{exc.msg}")) from None
    lines = code.splitlines()
    calls = sorted(
        (node for node in ast.walk(tree) if isinstance(node, ast.Call) and _call_name(node) is not None),
        key=lambda node: (node.lineno, node.col_offset),
    )
    actions: list[ScriptAction] = []
    cursor: tuple[float, float] | None = None
    for call in calls:
        name = _call_name(call)
        if name is None or name in NOT_ACTIONS or name.startswith("_") or name[:1].isupper():
            continue
        kind = ALIASES.get(name, name)
        if kind == "click":
            kind = _click_kind(call)
        end_line = call.end_lineno or call.lineno
        comment = _BOX_COMMENT.search(lines[end_line - 1]) if end_line <= len(lines) else None
        label = comment.group(1) if comment else None
        point: tuple[float, float] | None = None
        keys: frozenset[str] | None = None
        text: str | None = None
        if kind in POINTER_KINDS:
            found = _point_arg(call)
            if isinstance(found, tuple):
                point = found
                cursor = found
            elif found is None:
                point = cursor
            else:
                point, cursor = None, None
        elif kind in KEY_KINDS:
            keys = _keys(call, kind)
        elif kind in WRITE_KINDS:
            value = _literal(_arg(call, 0, "message"))
            text = value if isinstance(value, str) else None
        elif kind in ("moveRel", "dragRel"):
            cursor = None
        source = ast.get_source_segment(code, call) or ""
        actions.append(ScriptAction(kind, call.lineno, point, keys, text, label, source))
    return actions
