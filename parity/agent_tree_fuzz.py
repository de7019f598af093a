"""Variants of the recorded trees for the tree rows: the same apps, edge cases injected.

Each variant changes a few seeded-random elements of a recorded tree in ways a real tree
can show: names and texts with quotes, tabs, line breaks, blanks or nothing; states
capitalised, false or missing; boxes at negative positions, of zero size, or past the
screenshot's edge; an unnamed image; a Windows edit box's value.
"""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from collections.abc import Callable

_ST = "{https://accessibility.ubuntu.example.org/ns/state}"
_CP = "{https://accessibility.ubuntu.example.org/ns/component}"
_VAL = "{https://accessibility.ubuntu.example.org/ns/value}"
_WIN_CLASS = "{https://accessibility.windows.example.org/ns/class}class"
_WIN_ATTR = "{https://accessibility.windows.example.org/ns/attributes}"


def _quoted_name(e: ET.Element, rng: random.Random) -> None:
    e.set("name", rng.choice(['say "hi"', " padded ", "tab\there", "two\nlines", "", "ünï ✓", '""']))


def _text(e: ET.Element, rng: random.Random) -> None:
    e.text = rng.choice(['a "quoted" text', "line one\nline two", "  ", "", None, "tab\tin text", "x"])


def _state(e: ET.Element, rng: random.Random) -> None:
    state = rng.choice(("showing", "visible", "enabled", "editable", "checkable", "expandable"))
    choice = rng.choice(("True", "false", "TRUE", None, "true"))
    if choice is None:
        e.attrib.pop(_ST + state, None)
    else:
        e.set(_ST + state, choice)


def _box(e: ET.Element, rng: random.Random) -> None:
    key = rng.choice((_CP + "screencoord", _CP + "size"))
    value = rng.choice(("(-5, 10)", "(0, 0)", "(3000, 2000)", "(1910, 1070)", "(0, 7)", "(7, 0)", "(1, 1)"))
    e.set(key, value)


def _image(e: ET.Element, rng: random.Random) -> None:
    e.set("name", "")
    e.text = None
    e.set("image", rng.choice(("true", "false")))


def _windows(e: ET.Element, rng: random.Random) -> None:
    e.text = None
    e.set(_WIN_CLASS, rng.choice(("EditWrapper", "ButtonWrapper")))
    e.set(_VAL + "value", rng.choice(('v "1"', "plain", "")))
    e.set(_WIN_ATTR + "class", "Edit")
    e.set(_WIN_ATTR + "description", "a description")


MUTATIONS: tuple[Callable[[ET.Element, random.Random], None], ...] = (
    _quoted_name,
    _text,
    _state,
    _box,
    _image,
    _windows,
)


def variants(name: str, xml: str, count: int, seed: int = 17) -> list[tuple[str, str]]:
    """``count`` mutated copies of ``xml`` named ``<name>~<i>``."""
    for prefix, uri in (
        ("st", _ST[1:-1]),
        ("cp", _CP[1:-1]),
        ("val", _VAL[1:-1]),
        ("cls", _WIN_CLASS[1:].split("}")[0]),
        ("wattr", _WIN_ATTR[1:-1]),
    ):
        ET.register_namespace(prefix, uri)
    rng = random.Random(f"{seed}-{name}")
    out: list[tuple[str, str]] = []
    for index in range(count):
        root = ET.fromstring(xml)
        elements = [e for e in root.iter() if e.get(_CP + "screencoord")]
        if not elements:
            break
        for element in rng.sample(elements, min(len(elements), 12)):
            rng.choice(MUTATIONS)(element, rng)
        out.append((f"{name}~{index}", ET.tostring(root, encoding="unicode")))
    return out
