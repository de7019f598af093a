"""The ``computer_13`` action space: validated structured actions, run as pyautogui code.

Each action is ``{"action_type": ..., "parameters": {...}}`` with coordinates in screen
pixels. Validation errors raise :class:`~pytest_osworld.agent.actions.ActionParseError`, which
the episode loop records as a wasted step.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_osworld.agent.actions import Action, ActionParseError

#: Parameters each action type accepts: name -> (required, optional).
ACTION_TYPES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "MOVE_TO": (("x", "y"), ()),
    "CLICK": ((), ("x", "y", "button", "num_clicks")),
    "MOUSE_DOWN": ((), ("button",)),
    "MOUSE_UP": ((), ("button",)),
    "RIGHT_CLICK": ((), ("x", "y")),
    "DOUBLE_CLICK": ((), ("x", "y")),
    "DRAG_TO": (("x", "y"), ()),
    "SCROLL": ((), ("dx", "dy")),
    "TYPING": (("text",), ()),
    "PRESS": (("key",), ()),
    "KEY_DOWN": (("key",), ()),
    "KEY_UP": (("key",), ()),
    "HOTKEY": (("keys",), ()),
    "WAIT": ((), ()),
    "DONE": ((), ()),
    "FAIL": ((), ()),
}
BUTTONS = ("left", "right", "middle")


def validate(params: dict[str, Any]) -> dict[str, Any]:
    """Check a computer_13 action; return its parameters or raise ``ActionParseError``."""
    action_type = params.get("action_type")
    if action_type not in ACTION_TYPES:
        raise ActionParseError(
            f"unknown computer_13 action_type {action_type!r}; expected one of {', '.join(ACTION_TYPES)}"
        )
    raw = params.get("parameters", {})
    if not isinstance(raw, dict):
        raise ActionParseError(f"{action_type}: 'parameters' must be an object")
    required, optional = ACTION_TYPES[action_type]
    missing = [name for name in required if name not in raw]
    unknown = [name for name in raw if name not in required + optional]
    if missing or unknown:
        raise ActionParseError(f"{action_type}: missing {missing}, unexpected {unknown}")
    for name in ("x", "y", "dx", "dy", "num_clicks"):
        if name in raw and (isinstance(raw[name], bool) or not isinstance(raw[name], int | float)):
            raise ActionParseError(f"{action_type}: {name} must be a number, got {raw[name]!r}")
    if "button" in raw and raw["button"] not in BUTTONS:
        raise ActionParseError(f"{action_type}: button must be one of {BUTTONS}")
    if "text" in raw and not isinstance(raw["text"], str):
        raise ActionParseError(f"{action_type}: text must be a string")
    if "key" in raw and not isinstance(raw["key"], str):
        raise ActionParseError(f"{action_type}: key must be a string")
    if "keys" in raw and not (
        isinstance(raw["keys"], list) and raw["keys"] and all(isinstance(k, str) for k in raw["keys"])
    ):
        raise ActionParseError(f"{action_type}: keys must be a non-empty list of strings")
    return dict(raw)


def to_pyautogui(action: Action) -> str:
    """The pyautogui code that performs a validated computer_13 ``action``."""
    params = action.params or {}
    action_type = params.get("action_type")
    p = validate(params)
    at = ", ".join(f"{json.dumps(p[k])}" for k in ("x", "y") if k in p)
    if action_type == "MOVE_TO":
        return f"pyautogui.moveTo({at})"
    if action_type == "CLICK":
        args = [at] if at else []
        if "button" in p:
            args.append(f"button={json.dumps(p['button'])}")
        if "num_clicks" in p:
            args.append(f"clicks={int(p['num_clicks'])}")
        return f"pyautogui.click({', '.join(args)})"
    if action_type in ("MOUSE_DOWN", "MOUSE_UP"):
        func = "mouseDown" if action_type == "MOUSE_DOWN" else "mouseUp"
        return f"pyautogui.{func}(button={json.dumps(p.get('button', 'left'))})"
    if action_type == "RIGHT_CLICK":
        return f"pyautogui.rightClick({at})"
    if action_type == "DOUBLE_CLICK":
        return f"pyautogui.doubleClick({at})"
    if action_type == "DRAG_TO":
        return f"pyautogui.dragTo({at}, duration=0.5, button='left')"
    if action_type == "SCROLL":
        lines = []
        if p.get("dy"):
            lines.append(f"pyautogui.scroll({int(p['dy'])})")
        if p.get("dx"):
            lines.append(f"pyautogui.hscroll({int(p['dx'])})")
        return "\n".join(lines) or "pass"
    if action_type == "TYPING":
        return f"pyautogui.typewrite({json.dumps(p['text'])})"
    if action_type == "PRESS":
        return f"pyautogui.press({json.dumps(p['key'])})"
    if action_type == "KEY_DOWN":
        return f"pyautogui.keyDown({json.dumps(p['key'])})"
    if action_type == "KEY_UP":
        return f"pyautogui.keyUp({json.dumps(p['key'])})"
    if action_type == "HOTKEY":
        return f"pyautogui.hotkey({', '.join(json.dumps(k) for k in p['keys'])})"
    return "pass"
