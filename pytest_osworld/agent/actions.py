"""Actions: what an agent asks the environment to do, in either action space.

``pyautogui`` actions are Python code run inside the environment; ``computer_13``
actions are structured dicts; ``WAIT``, ``DONE`` and ``FAIL`` are special in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pytest_osworld.errors import OSWorldError

ActionKind = Literal["code", "computer_13", "WAIT", "DONE", "FAIL"]
SPECIAL = ("WAIT", "DONE", "FAIL")


class ActionParseError(OSWorldError):
    """An agent's answer could not be turned into actions (a wasted step, not a crash)."""


@dataclass(frozen=True)
class Action:
    """One action: pyautogui ``code``, a ``computer_13`` dict, or a special code."""

    kind: ActionKind
    code: str = ""
    params: dict[str, Any] | None = None

    @property
    def is_terminal(self) -> bool:
        """True for DONE and FAIL, which end the episode."""
        return self.kind in ("DONE", "FAIL")

    def to_json(self) -> str | dict[str, Any]:
        """The action as OSWorld writes it in ``traj.jsonl``: a string or a dict."""
        if self.kind == "code":
            return self.code
        if self.kind == "computer_13":
            return dict(self.params or {})
        return self.kind


def action_from_json(value: object) -> Action:
    """Build an :class:`Action` from OSWorld's JSON form (string or dict)."""
    if isinstance(value, str):
        text = value.strip()
        if text in SPECIAL:
            return Action(kind=text)  # type: ignore[arg-type]
        if not text:
            raise ActionParseError("empty action")
        return Action(kind="code", code=value)
    if isinstance(value, dict):
        action_type = value.get("action_type")
        if not isinstance(action_type, str):
            raise ActionParseError(f"action {value!r} has no string 'action_type'")
        if action_type in SPECIAL:
            return Action(kind=action_type)  # type: ignore[arg-type]
        return Action(kind="computer_13", params=dict(value))
    raise ActionParseError(f"an action must be a string or an object, got {type(value).__name__}")
