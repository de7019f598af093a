"""Our side of the agent-facing parity: the same cases through pytest_osworld's functions.

Each function returns what the matching ``mm_agents`` function returns, in a JSON shape
the comparison can check for equality (see parity/agent_facing.py).
"""

from __future__ import annotations

import hashlib
import io
import re
from typing import Any

from pytest_osworld.agent.actions import ActionParseError
from pytest_osworld.agent.observe import Marks, Node, resolve_tags
from pytest_osworld.agent.observe_osworld import (
    kept_elements,
    linearize_osworld,
    set_of_marks_osworld,
    table,
    token_counter,
    trim,
)
from pytest_osworld.agent.parse import parse_computer13, parse_pyautogui
from pytest_osworld.agent.parse_osworld import bind_all_tags, to_osworld
from pytest_osworld.agent.parse_osworld import parse_code as osworld_code
from pytest_osworld.agent.parse_osworld import parse_json as osworld_json

#: The oracle's second budget (parity/oracle_side/agent_oracle.py), so every table is cut.
SMALL_BUDGET = 300


def tree_results(name: str, xml: str, png: bytes, max_tokens: int) -> dict[str, Any]:
    """Filter, linearisation (untrimmed and trimmed) and Set-of-Marks of one tree."""
    from PIL import Image

    out: dict[str, Any] = {"name": name}
    out["filter"] = [[e.tag, e.get("name", ""), e.text or ""] for e in kept_elements(xml)]
    out["linearize"] = table(xml)
    out["trim"] = linearize_osworld(xml, max_tokens) if token_counter() else None
    out["trim_small"] = linearize_osworld(xml, SMALL_BUDGET) if token_counter() else None
    image, nodes, som_table = set_of_marks_osworld(png, xml, 10**9)
    out["som_boxes"] = [n.box for n in nodes]
    out["som_tags"] = som_table
    out["som_trim"] = trim(som_table, max_tokens) if token_counter() else None
    pixels = Image.open(io.BytesIO(image)).convert("RGB").tobytes()
    out["som_image"] = hashlib.sha256(pixels).hexdigest()
    return out


def _outcome(actions: list[Any] | None, error: str | None = None) -> dict[str, Any]:
    return {"error": error} if error is not None else {"value": actions}


def parse_actions(text: str) -> dict[str, Any]:
    """Our computer_13 parser: the actions as OSWorld writes them, or the error."""
    try:
        return _outcome([a.to_json() for a in parse_computer13(text)])
    except ActionParseError as error:
        return _outcome(None, str(error))


def parse_code(text: str) -> dict[str, Any]:
    """Our pyautogui parser: the code strings and special codes, or the error."""
    try:
        return _outcome([a.to_json() for a in parse_pyautogui(text)])
    except ActionParseError as error:
        return _outcome(None, str(error))


def som_marks(masks: list[list[int]]) -> Marks:
    """A :class:`Marks` whose boxes are ``masks`` (no image needed to resolve tags)."""
    nodes = [Node("mark", "", "", x, y, w, h) for x, y, w, h in masks]
    return Marks(image=b"", boxes=[list(m) for m in masks], nodes=nodes, table="")


def parse_code_som(text: str, masks: list[list[int]]) -> dict[str, Any]:
    """Our pyautogui parser then ``tag_N`` resolution against ``masks``."""
    marks = som_marks(masks)
    try:
        actions = parse_pyautogui(text)
        out: list[Any] = []
        for action in actions:
            out.append(resolve_tags(action.code, marks) if action.kind == "code" else action.to_json())
        return _outcome(out)
    except ActionParseError as error:
        return _outcome(None, str(error))


def osworld_mode(text: str, masks: list[list[int]]) -> dict[str, dict[str, Any]]:
    """The three parsers in the ``parse=osworld`` mode: OSWorld's values, or the error.

    Set-of-Marks code is bound as the agent binds it (:func:`bind_all_tags` on code actions).
    """
    marks = som_marks(masks)
    out: dict[str, dict[str, Any]] = {}
    try:
        out["parse_actions"] = _outcome([to_osworld(a) for a in osworld_json(text)])
    except ActionParseError as error:
        out["parse_actions"] = _outcome(None, str(error))
    try:
        actions = osworld_code(text)
    except ActionParseError as error:
        out["parse_code"] = out["parse_code_som"] = _outcome(None, str(error))
        return out
    out["parse_code"] = _outcome([to_osworld(a) for a in actions])
    bound = [bind_all_tags(a.code, marks) if a.kind == "code" else to_osworld(a) for a in actions]
    out["parse_code_som"] = _outcome(bound)
    return out


_BINDING = re.compile(r"^tag_(\d+) ?= ?\((-?\d+), (-?\d+)\)$")


def split_bindings(code: str) -> tuple[dict[int, tuple[int, int]], str]:
    """The leading ``tag_N = (x, y)`` lines of ``code`` as a dict, and the rest."""
    bindings: dict[int, tuple[int, int]] = {}
    lines = code.split("\n")
    while lines:
        match = _BINDING.match(lines[0])
        if match is None:
            break
        bindings[int(match.group(1))] = (int(match.group(2)), int(match.group(3)))
        lines.pop(0)
    return bindings, "\n".join(lines)
