"""Read-once views of python-pptx shapes, paragraphs and runs, for ``compare_pptx_files``.

Owns :class:`ShapeView`, :class:`ParagraphView` and :class:`RunView`: the values the deck
comparison needs, read straight from each element's XML once, and equal to what
python-pptx's properties return (python-pptx resolves every property through several
layers of lookups; a 200-slide deck spent most of its time there). Where the XML is not
in the plain form these readers know (an unexpected attribute value, a placeholder's
inherited geometry, a table or picture frame), the value comes from python-pptx itself,
so that it is the same value, or the same error, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_SP, _PIC, _CXN, _GROUP_TAG = (f"{{{_P}}}{name}" for name in ("sp", "pic", "cxnSp", "grpSp"))
_PH, _CNVPR = f"{{{_P}}}ph", f"{{{_P}}}cNvPr"
_SPPR = f"{{{_P}}}spPr"
_XFRM, _OFF, _EXT = (f"{{{_A}}}{name}" for name in ("xfrm", "off", "ext"))
_TXBODY = f"{{{_P}}}txBody"
_PARAGRAPH, _PPR, _RUN, _RPR, _TEXT = (f"{{{_A}}}{name}" for name in ("p", "pPr", "r", "rPr", "t"))
_BREAK, _FIELD, _LATIN, _CUSTGEOM = (f"{{{_A}}}{name}" for name in ("br", "fld", "latin", "custGeom"))
_BU_CHAR = f"{{{_A}}}buChar"
_SOLID_FILL = f"{{{_A}}}solidFill"
_SRGB = f"{{{_A}}}srgbClr"
# python-pptx looks fill and colour children up in this order (not the document's).
_FILLS = tuple(
    f"{{{_A}}}{name}" for name in ("noFill", "solidFill", "gradFill", "blipFill", "pattFill", "grpFill")
)
_COLOURS = tuple(
    f"{{{_A}}}{name}" for name in ("scrgbClr", "srgbClr", "hslClr", "sysClr", "schemeClr", "prstClr")
)
_BOOLEANS = {"1": True, "true": True, "0": False, "false": False}
_UNDERLINES = {"none": False, "sng": True}

_NO_PARENT: Any = None

#: MSO_SHAPE_TYPE values the comparison tells apart.
PICTURE, TABLE, FREEFORM, GROUP, PLACEHOLDER = 13, 19, 5, 6, 14


class _Irregular(Exception):
    """The XML is not in a form the fast reader knows: ask python-pptx."""


def _first(element: Any, tags: tuple[str, ...]) -> Any:
    for tag in tags:
        child = element.find(tag)
        if child is not None:
            return child
    return None


@functools.cache
def _lengths() -> tuple[Any, Any, Any]:
    # python-pptx's value classes, imported on first use (this module loads no heavy library).
    from pptx.dml.color import RGBColor
    from pptx.util import Centipoints, Emu

    return Emu, Centipoints, RGBColor


def _emu(value: str | None) -> Any:
    if value is None:
        return None
    if not value.lstrip("-").isdigit():
        raise _Irregular(value)
    return _lengths()[0](int(value))


class RunView:
    """One ``a:r``: its text and the font values the comparison checks."""

    __slots__ = ("bold", "color", "italic", "name", "size", "strike", "text", "underline")

    def __init__(self, r: Any) -> None:
        try:
            self._fast(r)
        except _Irregular:
            self._slow(r)

    def _fast(self, r: Any) -> None:
        _, centipoints, rgb_color = _lengths()
        t = r.find(_TEXT)
        if t is None:
            raise _Irregular("a:r without a:t")
        self.text = t.text or ""
        rpr = r.find(_RPR)
        if rpr is None:
            self.name = self.size = self.bold = self.italic = self.underline = self.color = None
            self.strike = "noStrike"
            return
        attrib = rpr.attrib
        children = len(rpr)
        latin = rpr.find(_LATIN) if children else None
        self.name = None if latin is None else latin.get("typeface")
        if latin is not None and self.name is None:
            raise _Irregular("a:latin without typeface")
        size = attrib.get("sz")
        if size is not None and not size.isdigit():
            raise _Irregular(size)
        self.size = None if size is None else centipoints(int(size))
        self.bold, self.italic = self._flag(attrib.get("b")), self._flag(attrib.get("i"))
        underline = attrib.get("u")
        if underline is not None and underline not in _UNDERLINES:
            raise _Irregular(underline)
        self.underline = None if underline is None else _UNDERLINES[underline]
        self.strike = str(attrib.get("strike", "noStrike"))
        self.color = None
        fill = _first(rpr, _FILLS) if children else None
        if fill is not None and fill.tag == _SOLID_FILL:
            colour = _first(fill, _COLOURS)
            if colour is not None and colour.tag == _SRGB:
                value = colour.get("val")
                if value is None:
                    raise _Irregular("a:srgbClr without val")
                self.color = rgb_color.from_string(value)

    @staticmethod
    def _flag(value: str | None) -> bool | None:
        if value is None:
            return None
        if value not in _BOOLEANS:
            raise _Irregular(value)
        return _BOOLEANS[value]

    def _slow(self, r: Any) -> None:
        from pptx.text.text import _Run

        run = _Run(r, _NO_PARENT)  # values only: no part is needed
        font = run.font
        self.text = run.text
        self.name, self.size, self.bold, self.italic = font.name, font.size, font.bold, font.italic
        self.underline = font.underline
        self.strike = str(font._element.attrib.get("strike", "noStrike"))
        try:
            self.color = font.color.rgb if font.color.type is not None else None
        except AttributeError:
            self.color = None


class ParagraphView:
    """One ``a:p``: alignment, level, bullet, text and runs."""

    __slots__ = ("_p", "align", "bullet", "level", "runs", "text")

    def __init__(self, p: Any) -> None:
        self._p = p
        ppr = p.find(_PPR)
        self.align = "l" if ppr is None else ppr.get("algn", "l")
        level = "0" if ppr is None else ppr.get("lvl", "0")
        if not level.isdigit():
            self.level = self.python_pptx().level
        else:
            self.level = int(level)
        char = None if ppr is None else ppr.find(_BU_CHAR)
        self.bullet = (
            ("0", "")
            if ppr is None
            else (ppr.get("lvl") or "0", "" if char is None else (char.get("char") or ""))
        )
        self.runs: list[RunView] = []
        pieces: list[str] = []
        for child in p.iterchildren(_RUN, _BREAK, _FIELD):
            if child.tag == _RUN:
                run = RunView(child)
                self.runs.append(run)
                pieces.append(run.text)
            elif child.tag == _BREAK:
                pieces.append("\v")
            else:
                t = child.find(_TEXT)
                pieces.append("" if t is None else (t.text or ""))
        self.text = "".join(pieces)

    def python_pptx(self) -> Any:
        """The python-pptx paragraph (for values shown in reasons)."""
        from pptx.text.text import _Paragraph

        return _Paragraph(self._p, _NO_PARENT)


def paragraphs_of(text_body: Any) -> list[ParagraphView]:
    """The paragraphs of a ``txBody``; python-pptx gives one empty paragraph when it is absent."""
    if text_body is None:
        from pptx.oxml import parse_xml

        return [ParagraphView(parse_xml(f'<a:p xmlns:a="{_A}"/>'))]
    return [ParagraphView(p) for p in text_body.iterchildren(_PARAGRAPH)]


class ShapeView:
    """One shape: its kind, geometry and text read once; python-pptx's object on demand.

    ``inherited`` is shared by the shapes of one deck: the geometry placeholders without
    their own ``a:xfrm`` inherit from their layout, keyed by tag, layout and ``idx``.
    """

    __slots__ = (
        "_factory",
        "_paragraphs",
        "_shape",
        "element",
        "has_text",
        "height",
        "is_placeholder",
        "kind",
        "left",
        "name",
        "top",
        "width",
    )

    def __init__(
        self,
        element: Any,
        factory: Callable[[Any], Any],
        layout: Any = None,
        inherited: dict[Any, tuple[Any, Any, Any, Any]] | None = None,
    ) -> None:
        self.element, self._factory, self._shape = element, factory, None
        tag = element.tag
        nv = element[0] if len(element) else None
        nvpr = None if nv is None else nv.find(f"{{{_P}}}nvPr")
        ph = None if nvpr is None else nvpr.find(_PH)
        self.is_placeholder = ph is not None
        self.has_text = tag == _SP
        cnvpr = None if nv is None else nv.find(_CNVPR)
        name = None if cnvpr is None else cnvpr.get("name")
        self.name = name if name is not None else self.shape.name
        self.kind = self._kind(element, tag)
        self._paragraphs: list[ParagraphView] | None = None
        sppr = element.find(_SPPR) if tag in (_SP, _PIC, _CXN) else None
        xfrm = None if sppr is None else sppr.find(_XFRM)
        try:
            if ph is not None:
                if xfrm is not None or sppr is None or inherited is None or layout is None:
                    raise _Irregular("a placeholder with its own or no spPr")
                key = (tag, layout, ph.get("idx", "0"), ph.get("type"))
                if key not in inherited:
                    shape = self.shape
                    inherited[key] = (shape.left, shape.top, shape.width, shape.height)
                self.left, self.top, self.width, self.height = inherited[key]
                return
            if sppr is None:
                raise _Irregular("frame or group geometry")
            off = None if xfrm is None else xfrm.find(_OFF)
            ext = None if xfrm is None else xfrm.find(_EXT)
            self.left = None if off is None else _emu(off.get("x"))
            self.top = None if off is None else _emu(off.get("y"))
            self.width = None if ext is None else _emu(ext.get("cx"))
            self.height = None if ext is None else _emu(ext.get("cy"))
        except _Irregular:
            shape = self.shape
            self.left, self.top, self.width, self.height = shape.left, shape.top, shape.width, shape.height

    @property
    def shape(self) -> Any:
        """The python-pptx shape object (made on first use)."""
        if self._shape is None:
            self._shape = self._factory(self.element)
        return self._shape

    def _kind(self, element: Any, tag: str) -> int | None:
        # Only PICTURE, TABLE, FREEFORM and GROUP matter; a plain <p:sp> is FREEFORM when
        # it has custom geometry and is no placeholder, like python-pptx's shape_type.
        if tag == _SP and self.is_placeholder:
            return PLACEHOLDER  # what python-pptx gives every slide placeholder of this tag
        sppr = element.find(_SPPR) if tag == _SP else None
        if sppr is not None:
            return FREEFORM if sppr.find(_CUSTGEOM) is not None else None
        if tag == _GROUP_TAG:
            return GROUP
        try:
            kind = self.shape.shape_type
            return int(kind) if kind is not None else None
        except (NotImplementedError, ValueError):
            return None

    @property
    def geometry(self) -> tuple[Any, Any, Any, Any]:
        """``(left, top, width, height)`` in EMU, as python-pptx gives them."""
        return self.left, self.top, self.width, self.height

    @property
    def paragraphs(self) -> list[ParagraphView]:
        """The text frame's paragraphs (only for shapes with text)."""
        if self._paragraphs is None:
            self._paragraphs = paragraphs_of(self.element.find(_TXBODY))
        return self._paragraphs

    @property
    def text(self) -> str:
        """The text frame's text: paragraphs joined by newlines."""
        return "\n".join(p.text for p in self.paragraphs)
