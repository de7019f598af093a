"""The vocabulary of OSWorld's accessibility XML, shared by both tree walks.

Owns the namespaces and their prefixes (``st:``, ``attr:``, ``cp:``, ``val:``,
``act:``), the cleaning of names and text into what XML 1.0 can carry, the
serialisation of extents and values, and :class:`Limits`, the bounds of one walk.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

_BASE = "https://accessibility.ubuntu.example.org/ns/"
#: XML namespaces of the tree, by prefix (the URIs OSWorld's Ubuntu server emits).
NAMESPACES: dict[str, str] = {
    "st": _BASE + "state",
    "attr": _BASE + "attributes",
    "cp": _BASE + "component",
    "val": _BASE + "value",
    "act": _BASE + "action",
}
for _prefix, _uri in NAMESPACES.items():
    ET.register_namespace(_prefix, _uri)

#: Qualified-name prefixes of the five namespaces.
ST = "{" + NAMESPACES["st"] + "}"
ATTR = "{" + NAMESPACES["attr"] + "}"
CP = "{" + NAMESPACES["cp"] + "}"
VAL = "{" + NAMESPACES["val"] + "}"
ACT = "{" + NAMESPACES["act"] + "}"

#: Removes U+FFFC (object replacement) and U+FFFD (replacement character).
STRIP = str.maketrans("", "", "\ufffc\ufffd")
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffb\U00010000-\U0010ffff]")
_XML_NAME_BAD = re.compile(r"[^\w.-]", re.ASCII)


@dataclass(frozen=True)
class Limits:
    """Bounds of one walk: OSWorld's depth and fan-out limits plus our table caps."""

    max_depth: int = 50
    max_children: int = 1024
    #: a node with more children than this is a "giant table": only visible cells are read.
    giant: int = 5000
    max_cells: int = 2000
    text_chars: int = 10_000


def xml_name(raw: str) -> str:
    """A string usable as an XML local name (AT-SPI attribute keys are free-form)."""
    cleaned = _XML_NAME_BAD.sub("-", raw.strip())
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "_" + cleaned
    return cleaned


def xml_text(raw: str) -> str:
    """Drop characters XML 1.0 cannot carry (control characters, U+FFFC/U+FFFD, surrogates)."""
    return _NOT_XML.sub("", raw)


def put_extents(element: ET.Element, extents: tuple[int, int, int, int]) -> None:
    """``cp:screencoord`` and ``cp:size`` from ``(x, y, width, height)``."""
    x, y, width, height = extents
    element.set(CP + "screencoord", f"({x}, {y})")
    element.set(CP + "size", f"({width}, {height})")


def put_value(element: ET.Element, props: dict[str, Any]) -> None:
    """``val:value|min|max|step`` from the Value interface's properties, up to the first one missing."""
    for attribute, prop in (
        ("value", "CurrentValue"),
        ("min", "MinimumValue"),
        ("max", "MaximumValue"),
        ("step", "MinimumIncrement"),
    ):
        if prop not in props:
            return
        element.set(VAL + attribute, str(float(props[prop])))
