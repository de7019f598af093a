"""The accessibility tree in the format OSWorld's current agents show it (7 columns).

OSWorld's leaderboard agents (its ``mm_agents`` package, as published in ``desktop-env``
1.0.2) see a table of ``tag, name, text, class, description, position, size`` and a
Set-of-Marks table of ``index, tag, name, text``. This module renders that format from
our own reading of its documented behaviour; the parity level (``parity/agent_facing.py``)
checks it byte for byte against OSWorld's code on trees recorded from our desktop.

Rules, as OSWorld applies them:

* a node is kept when its tag is a kept kind, its ``showing`` and ``visible`` states are
  exactly ``"true"``, one of ``enabled``/``editable``/``expandable``/``checkable`` is
  ``"true"``, it has a non-empty ``name`` or element text (or, for Set-of-Marks, an
  ``image="true"`` attribute), and its position is >= 0 and its size > 0;
* a text holding ``"`` is written in CSV quoting, an empty text as ``""``; names and
  texts are not escaped, so a text with line breaks spans several lines;
* class and description are read under OSWorld's *Windows* attributes namespace (so on
  Ubuntu trees those two columns are empty, as the leaderboard agents saw them);
* position and size are the tree's own strings;
* the table is cut to a token budget with tiktoken's ``cl100k_base`` when it and its
  encoding file are available offline (see :func:`token_counter`), else at a line
  boundary by :func:`pytest_osworld.agent.observe.estimate_tokens`; a cut table ends ``[...]``
  and a newline.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import io
import os
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_osworld.agent.observe import (
    MAX_TREE_CHARS,
    NS,
    Marks,
    Node,
    estimate_tokens,
    keeps_tag,
    linearize,
    set_of_marks,
)
from pytest_osworld.errors import UnknownNameError

#: The header of the 7-column table.
OSWORLD_HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
#: The header of the Set-of-Marks table.
OSWORLD_MARKS_HEADER = "index\ttag\tname\ttext"
#: What ends a table cut to its budget.
CUT_MARK = "[...]\n"

_WIN = "https://accessibility.windows.example.org/ns/"
_ST = "{" + NS["st"] + "}"
_CP = "{" + NS["cp"] + "}"
_VAL = "{" + NS["val"] + "}"
_WIN_ATTR = "{" + _WIN + "attributes}"
_WIN_CLASS = "{" + _WIN + "class}class"
_ACTIONABLE = ("enabled", "editable", "expandable", "checkable")
#: Windows-only tags OSWorld also keeps (never in Ubuntu trees; kept for the same result).
_WINDOWS_TAGS = frozenset(
    {
        "netuiribbontab",
        "start",
        "trayclockwclass",
        "traydummysearchcontrol",
        "uiimage",
        "uiproperty",
        "uiribboncommandbar",
    }
)
_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def _literal_pair(value: str) -> tuple[Any, ...] | None:
    """The tree's ``"(x, y)"`` string as a tuple; None when it is not a literal tuple."""
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(parsed, tuple) or len(parsed) < 2:
        return None
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in parsed[:2]):
        return None
    return parsed


def kept(element: ET.Element, *, images_count: bool = False) -> bool:
    """True when OSWorld's rules keep ``element`` (see the module docstring)."""
    tag = element.tag
    if not (keeps_tag(tag) or tag in _WINDOWS_TAGS):
        return False
    if element.get(_ST + "showing") != "true" or element.get(_ST + "visible") != "true":
        return False
    if not any(element.get(_ST + state) == "true" for state in _ACTIONABLE):
        return False
    has_text = element.text is not None and len(element.text) > 0
    if not (element.get("name", "") != "" or has_text or (images_count and element.get("image") == "true")):
        return False
    position = _literal_pair(element.get(_CP + "screencoord", "(-1, -1)"))
    size = _literal_pair(element.get(_CP + "size", "(-1, -1)"))
    if position is None or size is None:
        return False
    return bool(position[0] >= 0 and position[1] >= 0 and size[0] > 0 and size[1] > 0)


def _parse(tree_xml: str) -> ET.Element:
    if len(tree_xml) > MAX_TREE_CHARS:
        raise ValueError(
            f"the accessibility tree is {len(tree_xml)} characters, over the limit of {MAX_TREE_CHARS}"
        )
    try:
        return ET.fromstring(tree_xml)
    except ET.ParseError as exc:
        raise ValueError(f"the accessibility tree is not valid XML: {exc}") from None


def kept_elements(tree_xml: str, *, images_count: bool = False) -> list[ET.Element]:
    """The elements of ``tree_xml`` OSWorld's rules keep, in document order."""
    return [e for e in _parse(tree_xml).iter() if kept(e, images_count=images_count)]


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if '"' in text else text


def text_cell(element: ET.Element) -> str:
    """The text column: the element's text, or a Windows edit box's value, or ``""``."""
    if element.text:
        return _quoted(element.text)
    value = element.get(_VAL + "value")
    if element.get(_WIN_CLASS, "").endswith("EditWrapper") and value:
        return _quoted(value)
    return '""'


def _scaled(value: str, scale: float) -> str:
    if scale == 1.0:
        return value
    pair = _literal_pair(value)
    if pair is None:
        return value
    return f"({round(pair[0] / scale)}, {round(pair[1] / scale)})"


def table(tree_xml: str, scale: float = 1.0) -> str:
    """The untrimmed 7-column table; pixels divided by ``scale`` (1.0 keeps the tree's strings)."""
    rows = [OSWORLD_HEADER]
    for element in kept_elements(tree_xml):
        cells = (
            element.tag,
            element.get("name", ""),
            text_cell(element),
            element.get(_WIN_ATTR + "class", ""),
            element.get(_WIN_ATTR + "description", ""),
            _scaled(element.get(_CP + "screencoord", ""), scale),
            _scaled(element.get(_CP + "size", ""), scale),
        )
        rows.append("\t".join(cells))
    return "\n".join(rows)


# -- trimming --------------------------------------------------------------------------------


def _tiktoken_cache() -> Path:
    explicit = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    return Path(explicit) if explicit else Path(tempfile.gettempdir()) / "data-gym-cache"


def _osworld_agents_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-osworld" / "osworld-agents" / "tiktoken"


@functools.cache
def token_counter() -> tuple[Callable[[str], list[int]], Callable[[list[int]], str]] | None:
    """tiktoken's cl100k_base ``(encode, decode)``, or None when it cannot load offline.

    The encoding file is looked for where tiktoken caches it (``TIKTOKEN_CACHE_DIR``) and
    where ``scripts/osworld-agents`` builds it; nothing is downloaded.
    """
    try:
        import tiktoken
    except ImportError:
        return None
    key = hashlib.sha1(_CL100K_URL.encode()).hexdigest()
    for folder in (_tiktoken_cache(), _osworld_agents_cache()):
        if (folder / key).is_file():
            previous = os.environ.get("TIKTOKEN_CACHE_DIR")
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
            try:
                encoding = tiktoken.get_encoding("cl100k_base")
            except Exception:  # a broken cache means "not available"
                return None
            finally:
                if previous is None:
                    del os.environ["TIKTOKEN_CACHE_DIR"]
                else:
                    os.environ["TIKTOKEN_CACHE_DIR"] = previous
            return encoding.encode, encoding.decode
    return None


def trim(text: str, max_tokens: int) -> str:
    """``text`` cut to ``max_tokens`` (tiktoken when available, else the estimate), ``[...]`` added."""
    counter = token_counter()
    if counter is not None:
        encode, decode = counter
        tokens = encode(text)
        return text if len(tokens) <= max_tokens else decode(tokens[:max_tokens]) + CUT_MARK
    if estimate_tokens(text) <= max_tokens:
        return text
    kept_lines: list[str] = []
    spent = 0
    for line in text.split("\n"):
        cost = estimate_tokens(line) + 1
        if spent + cost > max_tokens:
            break
        kept_lines.append(line)
        spent += cost
    return "\n".join(kept_lines) + CUT_MARK


def linearize_osworld(tree_xml: str, max_tokens: int, scale: float = 1.0) -> str:
    """The 7-column table of ``tree_xml`` cut to ``max_tokens``."""
    return trim(table(tree_xml, scale), max_tokens)


# -- Set-of-Marks ----------------------------------------------------------------------------


def _int_pair(value: str | None) -> tuple[int, ...] | None:
    """``"(x, y)"`` as ints the way OSWorld reads it for drawing; None when it cannot."""
    if not value:
        return None
    try:
        return tuple(int(part) for part in value.strip("()").split(", "))
    except ValueError:
        return None


def _extrema(image: Any) -> list[tuple[Any, Any]]:
    extrema = image.getextrema()
    return [extrema] if image.mode in ("1", "L", "P", "I", "F") else list(extrema)


def set_of_marks_osworld(screenshot: bytes, tree_xml: str, max_tokens: int) -> tuple[bytes, list[Node], str]:
    """The marked screenshot (PNG), the marked nodes and the marks table cut to ``max_tokens``.

    A kept node (images count) is marked unless its box cannot be read as integers, its
    size is not positive, or the area it covers has a single colour. That area is read
    from the image as drawn so far (the boxes and numbers of earlier marks included), and
    past the image's edge it is black, as in OSWorld. Each box is a red rectangle from its
    corner to ``(x + w, y + h)`` inclusive, its number in white on black at its
    bottom-left corner. Needs Pillow.
    """
    from PIL import Image, ImageDraw, ImageFont

    image = Image.open(io.BytesIO(screenshot))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    rows = [OSWORLD_MARKS_HEADER]
    nodes: list[Node] = []
    for element in kept_elements(tree_xml, images_count=True):
        position = _int_pair(element.get(_CP + "screencoord"))
        size = _int_pair(element.get(_CP + "size"))
        if position is None or size is None or len(position) < 2 or len(size) < 2:
            continue
        x, y, w, h = position[0], position[1], size[0], size[1]
        if w <= 0 or h <= 0:
            continue
        if all(low == high for low, high in _extrema(image.crop((x, y, x + w, y + h)))):
            continue
        index = len(nodes) + 1
        draw.rectangle(((x, y), (x + w, y + h)), outline="red", width=1)
        draw.rectangle(draw.textbbox((x, y + h), str(index), font=font, anchor="lb"), fill="black")
        draw.text((x, y + h), str(index), font=font, anchor="lb", fill="white")
        name = element.get("name", "")
        rows.append(f"{index}\t{element.tag}\t{name}\t{text_cell(element)}")
        nodes.append(Node(element.tag, name, element.text or "", x, y, w, h))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue(), nodes, trim("\n".join(rows), max_tokens)


# -- the format registry ---------------------------------------------------------------------


def _marks_osworld(screenshot: bytes, tree_xml: str, max_tokens: int) -> Marks:
    image, nodes, marks_table = set_of_marks_osworld(screenshot, tree_xml, max_tokens)
    return Marks(image=image, boxes=[n.box for n in nodes], nodes=nodes, table=marks_table)


#: Tree formats by name: (linearise(tree, max_tokens, scale), set_of_marks(png, tree, max_tokens)).
#: ``osworld`` is what OSWorld's current agents see (the default); ``paper`` is the 5-column
#: table of the OSWorld paper's code with escaped cells and line-boundary cuts.
TREE_FORMATS: dict[str, tuple[Callable[[str, int, float], str], Callable[[bytes, str, int], Marks]]] = {
    "osworld": (linearize_osworld, _marks_osworld),
    "paper": (linearize, set_of_marks),
}
#: The format agents use unless ``--agent-arg a11y_format=...`` names another.
DEFAULT_TREE_FORMAT = "osworld"


def _format(name: str) -> tuple[Callable[[str, int, float], str], Callable[[bytes, str, int], Marks]]:
    try:
        return TREE_FORMATS[name]
    except KeyError:
        raise UnknownNameError("accessibility tree format", name, None, sorted(TREE_FORMATS)) from None


def linearize_as(fmt: str, tree_xml: str, max_tokens: int, scale: float = 1.0) -> str:
    """The tree linearised in format ``fmt`` (a :data:`TREE_FORMATS` name)."""
    return _format(fmt)[0](tree_xml, max_tokens, scale)


def marks_as(fmt: str, screenshot: bytes, tree_xml: str, max_tokens: int) -> Marks:
    """The Set-of-Marks observation in format ``fmt`` (a :data:`TREE_FORMATS` name)."""
    return _format(fmt)[1](screenshot, tree_xml, max_tokens)
