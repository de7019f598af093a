"""Gymnasium spaces of the desktop env: observations, and the two action spaces.

Observations are a ``Dict`` of the screenshot (``Box`` uint8 HxWx3), the accessibility
tree and the instruction (text). pyautogui actions are text (Python code); computer_13
actions are a ``Dict`` whose sample converts to OSWorld's ``{"action_type", "parameters"}``
form with :func:`to_osworld_action` (``step`` takes either form).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from pytest_osworld.agent.computer13 import ACTION_TYPES, BUTTONS

#: computer_13 action types in the order of the ``action_type`` Discrete.
ACTION_TYPE_NAMES: tuple[str, ...] = tuple(ACTION_TYPES)
#: The longest accessibility tree kept in an observation (characters); longer ones are cut.
MAX_TREE = 2_000_000
#: The longest instruction and pyautogui program the spaces declare.
MAX_INSTRUCTION = 8192
MAX_CODE = 65536
#: The observation types the gym env offers, with the keys each one has.
OBSERVATION_KEYS: dict[str, tuple[str, ...]] = {
    "screenshot": ("screenshot", "instruction"),
    "a11y_tree": ("accessibility_tree", "instruction"),
    "screenshot_a11y_tree": ("screenshot", "accessibility_tree", "instruction"),
}


class AnyText(spaces.Text):
    """A ``Text`` space that holds any string up to ``max_length`` (``Text`` only holds
    strings over its charset, and accessibility trees and code are arbitrary Unicode).

    Samples are drawn from the charset (alphanumeric by default), so a sampled pyautogui
    program is a harmless name or number.
    """

    def contains(self, x: Any) -> bool:
        """Any ``str`` whose length is within the bounds."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


def observation_space(observation_type: str, size: tuple[int, int]) -> spaces.Dict:
    """The observation ``Dict`` for ``observation_type`` at ``size`` (width, height)."""
    width, height = size
    every: dict[str, spaces.Space[Any]] = {
        "screenshot": spaces.Box(0, 255, shape=(height, width, 3), dtype=np.uint8),
        "accessibility_tree": AnyText(MAX_TREE, min_length=0),
        "instruction": AnyText(MAX_INSTRUCTION, min_length=0),
    }
    return spaces.Dict({key: every[key] for key in OBSERVATION_KEYS[observation_type]})


def pyautogui_space() -> AnyText:
    """Python code run inside the desktop (pyautogui is imported there)."""
    return AnyText(MAX_CODE)


def computer_13_space(size: tuple[int, int]) -> spaces.Dict:
    """computer_13 as a ``Dict``: which action, and every parameter any action takes."""
    width, height = size
    return spaces.Dict(
        {
            "action_type": spaces.Discrete(len(ACTION_TYPE_NAMES)),
            "coordinate": spaces.Box(
                low=np.array([0, 0]), high=np.array([width - 1, height - 1]), shape=(2,), dtype=np.int64
            ),
            "button": spaces.Discrete(len(BUTTONS)),
            "num_clicks": spaces.Discrete(3, start=1),
            "scroll": spaces.Box(low=-10, high=10, shape=(2,), dtype=np.int64),
            "text": AnyText(1024, min_length=0),
            "key": AnyText(64),
        }
    )


def to_osworld_action(action: Mapping[str, Any]) -> dict[str, Any]:
    """OSWorld's computer_13 dict from a sample of :func:`computer_13_space`.

    ``key`` is a key name for PRESS/KEY_DOWN/KEY_UP and ``+``-joined names for HOTKEY;
    ``scroll`` is ``(dx, dy)``. An OSWorld dict (string ``action_type``) is returned as is.
    """
    kind = action.get("action_type")
    if isinstance(kind, str):
        return dict(action)
    name = ACTION_TYPE_NAMES[int(kind)]  # type: ignore[arg-type]
    required, optional = ACTION_TYPES[name]
    x, y = (int(v) for v in action["coordinate"])
    dx, dy = (int(v) for v in action["scroll"])
    values: dict[str, Any] = {
        "x": x,
        "y": y,
        "button": BUTTONS[int(action["button"])],
        "num_clicks": int(action["num_clicks"]),
        "dx": dx,
        "dy": dy,
        "text": str(action["text"]),
        "key": str(action["key"]),
        "keys": [k for k in str(action["key"]).split("+") if k] or [str(action["key"])],
    }
    return {"action_type": name, "parameters": {k: values[k] for k in required + optional}}
