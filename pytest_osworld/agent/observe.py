"""What a model sees: the filtered, linearised accessibility tree and Set-of-Marks.

The accessibility tree arrives as OSWorld's XML (see :mod:`pytest_osworld.guest.a11y`).
:func:`filter_nodes` keeps the nodes a model can act on, by the rules of the OSWorld
paper; :func:`linearize` writes them as a tab-separated table, one node per line,
truncated to a token budget measured by :func:`estimate_tokens` (an offline estimate:
no tokenizer is downloaded). :func:`set_of_marks` draws a numbered box around each kept
node on the screenshot and returns the marks; :func:`resolve_tags` turns the ``tag_N``
names a model writes into the centres of those boxes.

Screens are large and models are billed by the pixel, so :func:`downscale` shrinks a
screenshot to fit ``max_side`` and returns the scale; :func:`scale_code` and
:func:`scale_params` map the coordinates a model wrote on the small image back to the
screen by rewriting the numeric arguments of pyautogui calls (see their docstrings).
"""

from __future__ import annotations

import ast
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytest_osworld.agent.actions import ActionParseError

_BASE = "https://accessibility.ubuntu.example.org/ns/"
#: The namespaces of the tree's attributes, by prefix (the guest's serializer uses these).
NS: dict[str, str] = {
    "st": _BASE + "state",
    "attr": _BASE + "attributes",
    "cp": _BASE + "component",
    "val": _BASE + "value",
}
_ST = "{" + NS["st"] + "}"
_CP = "{" + NS["cp"] + "}"
_VAL = "{" + NS["val"] + "}"

#: Kept when the tag starts with one of these.
KEEP_PREFIXES = ("document",)
#: Kept when the tag ends with one of these.
KEEP_SUFFIXES = (
    "item",
    "button",
    "heading",
    "label",
    "scrollbar",
    "searchbox",
    "textbox",
    "link",
    "tabelement",
    "textfield",
    "textarea",
    "menu",
)
#: Kept when the tag is one of these.
KEEP_TAGS = frozenset(
    {
        "alert",
        "canvas",
        "check-box",
        "combo-box",
        "entry",
        "icon",
        "image",
        "paragraph",
        "scroll-bar",
        "section",
        "slider",
        "static",
        "table-cell",
        "terminal",
        "text",
    }
)
#: At least one of these states must be set for a node to be kept.
ACTIONABLE_STATES = ("enabled", "editable", "expandable", "checkable")

#: The header of the linearised table.
TREE_HEADER = "tag\tname\ttext\tposition (top-left x&y)\tsize (w&h)"
#: The header of the Set-of-Marks table.
MARKS_HEADER = "index\ttag\tname\ttext"
#: The line that ends a table cut to its token budget.
TRUNCATED = "[...]"
#: The default token budget of the linearised tree (OSWorld's PromptAgent uses 10,000).
DEFAULT_TREE_TOKENS = 10_000

_PAIR = re.compile(r"\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\)")
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Node:
    """One kept accessibility node, in screen pixels."""

    tag: str
    name: str
    text: str
    x: int
    y: int
    w: int
    h: int

    @property
    def box(self) -> list[int]:
        """``[x, y, w, h]``."""
        return [self.x, self.y, self.w, self.h]

    @property
    def centre(self) -> tuple[int, int]:
        """The box's centre, rounded down."""
        return self.x + self.w // 2, self.y + self.h // 2


# -- filtering -------------------------------------------------------------------------------


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _pair(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    match = _PAIR.search(value)
    if match is None:
        return None
    return round(float(match.group(1))), round(float(match.group(2)))


def keeps_tag(tag: str) -> bool:
    """True when a node with this tag may be shown to the model."""
    return tag.startswith(KEEP_PREFIXES) or tag.endswith(KEEP_SUFFIXES) or tag in KEEP_TAGS


def _state(element: ET.Element, name: str) -> bool:
    return element.get(_ST + name, "").lower() == "true"


def _text_of(element: ET.Element) -> str:
    text = (element.text or "").strip()
    if not text:
        text = element.get(_VAL + "value", "").strip()
    return text


#: The largest accessibility tree parsed, in characters. A Calc window's tree (~3000
#: elements) is about 1 MB; a tree past this limit comes from a broken or hostile app.
MAX_TREE_CHARS = 64 * 1024 * 1024


def filter_nodes(tree_xml: str, *, images_count: bool = False) -> list[Node]:
    """The nodes of ``tree_xml`` worth showing, in document order.

    A node is kept when its tag is one of the kept kinds, it is both showing and
    visible, it is enabled, editable, expandable or checkable, it has a name or text
    (with ``images_count``, as for Set-of-Marks, an ``image="true"`` node needs
    neither), and it lies on screen: coordinates >= 0 and a size > 0.

    Raises ``ValueError`` when ``tree_xml`` is not XML or is longer than
    :data:`MAX_TREE_CHARS`. Entity bombs are refused by the parser (expat's amplification
    limit) and external entities are never loaded.
    """
    if len(tree_xml) > MAX_TREE_CHARS:
        raise ValueError(
            f"the accessibility tree is {len(tree_xml)} characters, over the limit of {MAX_TREE_CHARS}; "
            "use a screenshot observation for this app"
        )
    try:
        root = ET.fromstring(tree_xml)
    except ET.ParseError as exc:
        raise ValueError(f"the accessibility tree is not valid XML: {exc}") from None
    kept: list[Node] = []
    for element in root.iter():
        tag = _local(element.tag)
        if not keeps_tag(tag):
            continue
        if not (_state(element, "showing") and _state(element, "visible")):
            continue
        if not any(_state(element, state) for state in ACTIONABLE_STATES):
            continue
        name = element.get("name", "").strip()
        text = _text_of(element)
        if not (name or text or (images_count and element.get("image") == "true")):
            continue
        position = _pair(element.get(_CP + "screencoord"))
        size = _pair(element.get(_CP + "size"))
        if position is None or size is None:
            continue
        (x, y), (w, h) = position, size
        if x < 0 or y < 0 or w <= 0 or h <= 0:
            continue
        kept.append(Node(tag, name, text, x, y, w, h))
    return kept


# -- linearisation ---------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """An offline, deliberately generous estimate of a text's token count.

    Counts words and punctuation marks, and never less than a quarter of the characters
    (long words split into several tokens). It errs high, so a table cut to a budget by
    this estimate fits that budget in the common tokenizers.
    """
    return max(len(_TOKEN.findall(text)), (len(text) + 3) // 4)


def _cell(value: str) -> str:
    """One table cell on one line: tabs and line breaks escaped as ``\\t`` and ``\\n``."""
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "").replace("\n", "\\n")


def node_line(node: Node, scale: float = 1.0) -> str:
    """One node as a line of the linearised table, its pixels divided by ``scale``."""
    x, y, w, h = (round(v / scale) for v in node.box)
    return "\t".join((node.tag, _cell(node.name), _cell(node.text), f"({x}, {y})", f"({w}, {h})"))


def truncate_lines(lines: Iterable[str], max_tokens: int) -> str:
    """Join ``lines`` with newlines, stopping before the budget is spent (then ``[...]``)."""
    kept: list[str] = []
    spent = 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if spent + cost > max_tokens:
            kept.append(TRUNCATED)
            break
        kept.append(line)
        spent += cost
    return "\n".join(kept)


def linearize(tree_xml: str, max_tokens: int = DEFAULT_TREE_TOKENS, scale: float = 1.0) -> str:
    """The filtered tree as a TSV table under :data:`TREE_HEADER`, within ``max_tokens``.

    Each line is ``tag, name, text, position (x, y), size (w, h)``; tabs and line breaks
    inside a name or text are escaped, so one line is one node. With ``scale`` (the
    factor returned by :func:`downscale`) the pixels are those of the scaled screenshot.
    """
    nodes = filter_nodes(tree_xml)
    lines = (node_line(n, scale) for n in nodes)
    return truncate_lines([TREE_HEADER, *lines], max_tokens)


# -- Set-of-Marks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Marks:
    """A Set-of-Marks observation: the marked screenshot and what each number means."""

    image: bytes
    boxes: list[list[int]]
    nodes: list[Node]
    table: str

    def centre(self, index: int) -> tuple[int, int]:
        """The centre of mark ``index`` (1-based, as drawn); ``ActionParseError`` if none."""
        if not 1 <= index <= len(self.nodes):
            shown = f"1..{len(self.nodes)}" if self.nodes else "none on this screen"
            raise ActionParseError(f"tag_{index} is not a mark on this screen (marks: {shown})")
        return self.nodes[index - 1].centre


_BOX_COLOUR = (255, 0, 0)
_LABEL_FG = (255, 255, 255)
_LABEL_BG = (0, 0, 0)


def _single_colour(image: Any, box: tuple[int, int, int, int]) -> bool:
    """True when the cropped area has one colour only (nothing there to point at)."""
    extrema = image.crop(box).getextrema()
    return all(low == high for low, high in extrema)


def set_of_marks(screenshot: bytes, tree_xml: str, max_tokens: int = DEFAULT_TREE_TOKENS) -> Marks:
    """Draw numbered boxes around the tree's kept nodes on ``screenshot`` (a PNG).

    Boxes that fall off the image, and boxes over an area of a single colour, are
    skipped; the remaining boxes are numbered from 1 in document order. Each box is a
    1-pixel red rectangle with its number in white on black at its top-left corner.
    The table (``index, tag, name, text``) is cut to ``max_tokens``. Needs Pillow.
    """
    from PIL import Image, ImageDraw, ImageFont  # lazy: optional extra

    image = Image.open(io.BytesIO(screenshot)).convert("RGB")
    candidates = filter_nodes(tree_xml, images_count=True)
    drawn: list[Node] = []
    for node in candidates:
        right = min(node.x + node.w, image.width)
        bottom = min(node.y + node.h, image.height)
        if node.x >= image.width or node.y >= image.height or right <= node.x or bottom <= node.y:
            continue
        if _single_colour(image, (node.x, node.y, right, bottom)):
            continue
        drawn.append(node)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    for index, node in enumerate(drawn, start=1):
        right = min(node.x + node.w, image.width) - 1
        bottom = min(node.y + node.h, image.height) - 1
        draw.rectangle((node.x, node.y, right, bottom), outline=_BOX_COLOUR, width=1)
        label = str(index)
        left, top, lright, lbottom = draw.textbbox((node.x, node.y), label, font=font)
        draw.rectangle((left, top, lright + 1, lbottom + 1), fill=_LABEL_BG)
        draw.text((node.x, node.y), label, fill=_LABEL_FG, font=font)
    out = io.BytesIO()
    image.save(out, format="PNG")
    rows = [f"{i}\t{n.tag}\t{_cell(n.name)}\t{_cell(n.text)}" for i, n in enumerate(drawn, start=1)]
    return Marks(
        image=out.getvalue(),
        boxes=[n.box for n in drawn],
        nodes=drawn,
        table=truncate_lines([MARKS_HEADER, *rows], max_tokens),
    )


_TAG_NAME = re.compile(r"\btag_(\d+)\b")


def resolve_tags(code: str, marks: Marks) -> str:
    """Prepend ``tag_N = (cx, cy)`` for every ``tag_N`` the code uses.

    The centres are in screen pixels. An index that is not a mark raises
    ``ActionParseError`` (the step is wasted with that message, not run half-way).
    """
    used = sorted({int(n) for n in _TAG_NAME.findall(code)})
    if not used:
        return code
    assignments = [f"tag_{i} = {marks.centre(i)}" for i in used]
    return "\n".join([*assignments, code])


# -- screenshot scaling ----------------------------------------------------------------------


def png_size(png: bytes) -> tuple[int, int]:
    """The (width, height) of a PNG, read from its header; ``ValueError`` if not a PNG."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("the screenshot is not a PNG image")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def downscale(screenshot: bytes, max_side: int | None) -> tuple[bytes, float]:
    """Shrink ``screenshot`` so that its longer side is at most ``max_side`` pixels.

    Returns the PNG to send and the factor ``screen / model`` (1.0 when nothing was
    done). Needs Pillow only when the image must shrink.
    """
    if not max_side:
        return screenshot, 1.0
    from PIL import Image

    image = Image.open(io.BytesIO(screenshot))
    longest = max(image.size)
    if longest <= max_side:
        return screenshot, 1.0
    factor = longest / max_side
    size = (max(1, round(image.width / factor)), max(1, round(image.height / factor)))
    out = io.BytesIO()
    image.convert("RGB").resize(size, Image.Resampling.LANCZOS).save(out, format="PNG")
    return out.getvalue(), factor


#: pyautogui functions whose arguments are coordinates: name -> positional indices.
#: A first argument that is an ``(x, y)`` tuple is scaled too. ``scroll``'s first
#: argument is a number of clicks, so only its ``x``/``y`` (positions 1 and 2) scale.
COORDINATE_ARGS: dict[str, tuple[int, ...]] = {
    "click": (0, 1),
    "doubleClick": (0, 1),
    "tripleClick": (0, 1),
    "rightClick": (0, 1),
    "middleClick": (0, 1),
    "leftClick": (0, 1),
    "moveTo": (0, 1),
    "dragTo": (0, 1),
    "moveRel": (0, 1),
    "move": (0, 1),
    "dragRel": (0, 1),
    "drag": (0, 1),
    "mouseDown": (0, 1),
    "mouseUp": (0, 1),
    "scroll": (1, 2),
    "hscroll": (1, 2),
    "vscroll": (1, 2),
}
_KEYWORDS = ("x", "y", "xOffset", "yOffset")


def _scaled_literal(node: ast.expr, factor: float) -> str | None:
    """The scaled source of a number literal (``-3`` included), or None for other nodes."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _scaled_literal(node.operand, factor)
        return None if inner is None else f"-{inner}"
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(round(value * factor))
    return None


def scale_code(code: str, factor: float) -> str:
    """Map the coordinates in pyautogui calls from the model's image to the screen.

    Only number literals that are coordinate arguments of ``pyautogui.<function>``
    calls listed in :data:`COORDINATE_ARGS` (positional, ``x=``/``y=`` keywords or an
    ``(x, y)`` tuple) are multiplied by ``factor`` and rounded; everything else,
    comments and layout included, is left byte for byte. Coordinates computed at run
    time (variables, arithmetic) cannot be mapped, which the prompt tells the model.
    Code that does not parse is returned unchanged.
    """
    if factor == 1.0:
        return code
    try:
        module = ast.parse(code)
    except SyntaxError:
        return code
    edits: list[tuple[ast.expr, str]] = []
    for call in ast.walk(module):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            continue
        owner, name = call.func.value, call.func.attr
        if not (isinstance(owner, ast.Name) and owner.id == "pyautogui"):
            continue
        if name not in COORDINATE_ARGS:
            continue
        targets: list[ast.expr] = []
        positions = COORDINATE_ARGS[name]
        if call.args and isinstance(call.args[0], ast.Tuple) and positions[0] == 0:
            targets.extend(call.args[0].elts[:2])
        else:
            targets.extend(call.args[i] for i in positions if i < len(call.args))
        targets.extend(k.value for k in call.keywords if k.arg in _KEYWORDS)
        for target in targets:
            scaled = _scaled_literal(target, factor)
            if scaled is not None:
                edits.append((target, scaled))
    return _apply_edits(code, edits)


def _apply_edits(code: str, edits: list[tuple[ast.expr, str]]) -> str:
    lines = code.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    raw = code.encode()
    spans: list[tuple[int, int, str]] = []
    for node, text in edits:
        if node.end_lineno is None or node.end_col_offset is None:
            continue
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        spans.append((start, end, text))
    for start, end, text in sorted(spans, reverse=True):
        raw = raw[:start] + text.encode() + raw[end:]
    return raw.decode()


def scale_params(params: dict[str, Any], factor: float) -> dict[str, Any]:
    """A computer_13 action with its ``x``/``y`` parameters mapped to the screen."""
    if factor == 1.0:
        return params
    inner = dict(params.get("parameters") or {})
    for key in ("x", "y"):
        value = inner.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            inner[key] = round(value * factor)
    return {**params, "parameters": inner}
