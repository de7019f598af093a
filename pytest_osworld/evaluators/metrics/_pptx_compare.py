"""The deck comparison behind ``compare_pptx_files``: options, and the walk over two decks.

Owns :class:`PptxOptions` (the ``examine_*`` switches), :class:`Mismatch` (the first
difference, whose message is the metric's reason) and :func:`compare_decks`, which walks
slides, shapes, paragraphs, runs and table cells in order. Shapes, paragraphs and runs are
read once through the views of :mod:`._pptx_views`; values shown in reasons are python-pptx's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_osworld.evaluators.metrics._pptx_views import (
    FREEFORM,
    GROUP,
    PICTURE,
    TABLE,
    ParagraphView,
    RunView,
    ShapeView,
)
from pytest_osworld.evaluators.metrics._utils import short

#: A moved title or table must start below this (EMU), about the middle of a 16:9 slide.
LOWER_HALF_EMU = 3600000
#: A picture moved right must start right of this (EMU).
RIGHT_PART_EMU = 4320000
#: A picture moved up must start above this (EMU).
TOP_PART_EMU = 1980000


@dataclass(frozen=True)
class PptxOptions:
    """The ``examine_*`` switches of ``compare_pptx_files`` and their defaults."""

    number_of_slides: bool = True
    shape: bool = True
    text: bool = True
    indent: bool = True
    font_name: bool = True
    font_size: bool = True
    font_bold: bool = True
    font_italic: bool = True
    color_rgb: bool = True
    font_underline: bool = True
    strike_through: bool = True
    alignment: bool = True
    bullets: bool = True
    background_color: bool = True
    note: bool = True
    run_count: bool = True
    title_bottom_position: bool = False
    table_bottom_position: bool = False
    right_position: bool = False
    top_position: bool = False
    shape_for_shift_size: bool = False
    image_size: bool = False
    modify_height: bool = False
    shape_lenient_height: bool = False
    tolerance: float = 0.005

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> PptxOptions:
        """Build from the task's ``options`` (``examine_<name>``, ``approximately_tolerance``)."""
        values: dict[str, Any] = {}
        for name in cls.__dataclass_fields__:
            key = "approximately_tolerance" if name == "tolerance" else f"examine_{name}"
            if key in options:
                values[name] = float(options[key]) if name == "tolerance" else bool(options[key])
        return cls(**values)


class Mismatch(Exception):
    """The first difference found; its message is the metric's reason."""


def _close(a: float | None, b: float | None, tolerance: float) -> bool:
    if a == b:
        return True
    if a is None or b is None or a == 0 or b == 0:
        return False
    return abs(a - b) / max(abs(a), abs(b)) <= tolerance


def _same_geometry(s1: ShapeView, s2: ShapeView, o: PptxOptions, skip_height: bool = False) -> bool:
    g1, g2 = s1.geometry, s2.geometry
    parts = range(3) if skip_height else range(4)
    return all(_close(g1[i], g2[i], o.tolerance) for i in parts)


def background_rgb(slide: Any) -> Any:
    """The slide's solid background colour, or its master's when the slide sets none."""
    for fill in (slide.background.fill, slide.slide_layout.slide_master.background.fill):
        try:
            if fill.type == 1:  # MSO_FILL.SOLID
                return fill.fore_color.rgb
        except (AttributeError, TypeError):
            return None
        if fill.type not in (None, 5):  # only "background" (5) or unset falls back to the master
            return None
    return None


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    return str(slide.notes_slide.notes_text_frame.text).strip()


def _is_title(s1: ShapeView, s2: ShapeView) -> bool:
    return (
        s1.has_text
        and s2.has_text
        and s1.is_placeholder
        and "title" in str(s1.shape.placeholder_format.type).lower()
    )


def _geometry_mismatch(s1: ShapeView, s2: ShapeView, where: str) -> Mismatch:
    return Mismatch(f"{where}: geometry {s1.geometry} vs {s2.geometry}")


def _check_positions(s1: ShapeView, s2: ShapeView, o: PptxOptions, where: str) -> None:
    kind1, kind2 = s1.kind, s2.kind
    if o.title_bottom_position:
        if _is_title(s1, s2) and s1.text == s2.text:
            if s1.top <= s2.top or s1.top < LOWER_HALF_EMU:
                raise Mismatch(f"{where}: the title was not moved to the bottom (top {s1.top} vs {s2.top})")
        elif not _same_geometry(s1, s2, o):
            raise _geometry_mismatch(s1, s2, where)
    if o.table_bottom_position:
        if kind1 == kind2 == TABLE:
            if s1.top <= s2.top or s1.top < LOWER_HALF_EMU:
                raise Mismatch(f"{where}: the table was not moved to the bottom (top {s1.top} vs {s2.top})")
        elif not _same_geometry(s1, s2, o):
            raise _geometry_mismatch(s1, s2, where)
    if o.right_position and kind1 == kind2 == PICTURE and (s1.left <= s2.left or s1.left < RIGHT_PART_EMU):
        raise Mismatch(f"{where}: the picture was not moved right (left {s1.left} vs {s2.left})")
    if o.top_position and kind1 == kind2 == PICTURE and (s1.top >= s2.top or s1.top > TOP_PART_EMU):
        raise Mismatch(f"{where}: the picture was not moved up (top {s1.top} vs {s2.top})")
    if o.shape_for_shift_size:
        same_text = s1.has_text and s2.has_text and s1.text == s2.text
        if not same_text and not _same_geometry(s1, s2, o):
            raise _geometry_mismatch(s1, s2, where)
    if o.shape and not _same_geometry(s1, s2, o, skip_height=o.shape_lenient_height and s1.has_text):
        raise Mismatch(f"{where}: geometry (left, top, width, height) {s1.geometry} vs {s2.geometry}")
    if o.image_size:
        if kind1 == kind2 == PICTURE:
            if not (_close(s1.width, s2.width, o.tolerance) and _close(s1.height, s2.height, o.tolerance)):
                raise Mismatch(f"{where}: picture size {(s1.width, s1.height)} vs {(s2.width, s2.height)}")
        elif not _same_geometry(s1, s2, o):
            raise _geometry_mismatch(s1, s2, where)
    if o.modify_height:
        if (not s1.has_text and not s2.has_text) or kind1 == kind2 == FREEFORM:
            if not _close(s1.height, s2.height, o.tolerance):
                raise Mismatch(f"{where}: height {s1.height} vs {s2.height}")
        elif not _same_geometry(s1, s2, o):
            raise _geometry_mismatch(s1, s2, where)


def _falsy_equal(a: Any, b: Any) -> bool:
    return a == b or (not a and not b)


def _compare_runs(
    p1: ParagraphView, p2: ParagraphView, o: PptxOptions, where: str, table_mode: bool = False
) -> None:
    runs1, runs2 = p1.runs, p2.runs
    if (o.run_count or table_mode) and len(runs1) != len(runs2):
        raise Mismatch(f"{where}: {len(runs1)} runs vs {len(runs2)}")
    for index, (r1, r2) in enumerate(zip(runs1, runs2, strict=False), start=1):
        _compare_fonts(r1, r2, o, f"{where} run {index} ({short(r1.text, 30)})", table_mode)


def _compare_fonts(r1: RunView, r2: RunView, o: PptxOptions, at: str, table_mode: bool) -> None:
    if o.font_name and not table_mode and r1.name != r2.name:
        raise Mismatch(f"{at}: font name {r1.name} vs {r2.name}")
    if o.font_size and not table_mode and r1.size != r2.size:
        raise Mismatch(f"{at}: font size {r1.size and r1.size.pt} vs {r2.size and r2.size.pt}")
    if o.font_bold and not _falsy_equal(r1.bold, r2.bold):
        raise Mismatch(f"{at}: bold {r1.bold} vs {r2.bold}")
    if o.font_italic and not _falsy_equal(r1.italic, r2.italic):
        raise Mismatch(f"{at}: italic {r1.italic} vs {r2.italic}")
    if o.color_rgb and not (r1.color == r2.color or None in (r1.color, r2.color)):
        raise Mismatch(f"{at}: colour {r1.color} vs {r2.color}")
    if o.font_underline and not _falsy_equal(r1.underline, r2.underline):
        raise Mismatch(f"{at}: underline {r1.underline} vs {r2.underline}")
    if o.strike_through and not table_mode and r1.strike != r2.strike:
        raise Mismatch(f"{at}: strike {r1.strike} vs {r2.strike}")


def _compare_paragraphs(
    paras1: list[ParagraphView], paras2: list[ParagraphView], o: PptxOptions, where: str
) -> None:
    if len(paras1) != len(paras2):
        raise Mismatch(f"{where}: {len(paras1)} paragraphs vs {len(paras2)}")
    for index, (p1, p2) in enumerate(zip(paras1, paras2, strict=True), start=1):
        at = f"{where} paragraph {index}"
        if o.alignment and p1.align != p2.align:
            a1, a2 = p1.python_pptx().alignment, p2.python_pptx().alignment
            raise Mismatch(f"{at}: alignment {a1} vs {a2}")
        if o.text and p1.text != p2.text:
            raise Mismatch(f"{at}: text {short(p1.text)} vs {short(p2.text)}")
        if o.indent and p1.level != p2.level:
            raise Mismatch(f"{at}: level {p1.level} vs {p2.level}")
        if o.bullets and p1.text.strip() and p1.bullet != p2.bullet:
            raise Mismatch(f"{at}: bullet {p1.bullet} vs {p2.bullet}")
        _compare_runs(p1, p2, o, at)


def _compare_text(s1: ShapeView, s2: ShapeView, o: PptxOptions, where: str) -> None:
    if o.text and s1.text.strip() != s2.text.strip():
        raise Mismatch(f"{where}: text {short(s1.text.strip())} vs {short(s2.text.strip())}")
    _compare_paragraphs(s1.paragraphs, s2.paragraphs, o, where)


def _compare_table(s1: ShapeView, s2: ShapeView, o: PptxOptions, where: str) -> None:
    t1, t2 = s1.shape.table, s2.shape.table
    if len(t1.rows) != len(t2.rows) or len(t1.columns) != len(t2.columns):
        raise Mismatch(f"{where}: table {len(t1.rows)}x{len(t1.columns)} vs {len(t2.rows)}x{len(t2.columns)}")
    for r in range(len(t1.rows)):
        for c in range(len(t1.columns)):
            c1, c2 = t1.cell(r, c), t2.cell(r, c)
            at = f"{where} cell ({r},{c})"
            if o.text and c1.text.strip() != c2.text.strip():
                raise Mismatch(f"{at}: text {short(c1.text)} vs {short(c2.text)}")
            paras1 = [ParagraphView(p._p) for p in c1.text_frame.paragraphs]
            paras2 = [ParagraphView(p._p) for p in c2.text_frame.paragraphs]
            if len(paras1) != len(paras2):
                raise Mismatch(f"{at}: {len(paras1)} paragraphs vs {len(paras2)}")
            for i, (p1, p2) in enumerate(zip(paras1, paras2, strict=True), start=1):
                _compare_runs(p1, p2, o, f"{at} paragraph {i}", table_mode=True)


def _views(shapes: Any, layout: Any, inherited: dict[Any, Any]) -> list[ShapeView]:
    # The shape tree's elements, in python-pptx's order; its shape objects only on demand.
    return [
        ShapeView(element, shapes._shape_factory, layout, inherited) for element in shapes._iter_member_elms()
    ]


def _compare_shapes(
    shapes1: Any,
    shapes2: Any,
    o: PptxOptions,
    where: str,
    context: tuple[Any, Any, dict[Any, Any], dict[Any, Any]],
) -> None:
    layout1, layout2, inherited1, inherited2 = context
    list1, list2 = _views(shapes1, layout1, inherited1), _views(shapes2, layout2, inherited2)
    if len(list1) != len(list2):
        raise Mismatch(f"{where}: {len(list1)} shapes vs {len(list2)}")
    for index, (s1, s2) in enumerate(zip(list1, list2, strict=True), start=1):
        at = f"{where} shape {index} ({s1.name!r})"
        _check_positions(s1, s2, o, at)
        if s1.kind == TABLE and s2.kind == TABLE:
            _compare_table(s1, s2, o, at)
        if s1.has_text and s2.has_text:
            _compare_text(s1, s2, o, at)
        elif s1.has_text != s2.has_text and o.text:
            raise Mismatch(f"{at}: one shape has text, the other not")
        if s1.kind == GROUP and s2.kind == GROUP:
            _compare_shapes(s1.shape.shapes, s2.shape.shapes, o, f"{at} group", context)


def compare_decks(path1: str, path2: str, o: PptxOptions) -> int:
    """Walk both decks in order; raise :class:`Mismatch` at the first difference.

    Returns the number of slides compared.
    """
    from pptx import Presentation

    deck1, deck2 = Presentation(path1), Presentation(path2)
    slides1, slides2 = list(deck1.slides), list(deck2.slides)
    if o.number_of_slides and len(slides1) != len(slides2):
        raise Mismatch(f"{len(slides1)} slides vs {len(slides2)}")
    inherited1: dict[Any, Any] = {}
    inherited2: dict[Any, Any] = {}
    for number, (a, b) in enumerate(zip(slides1, slides2, strict=False), start=1):
        where = f"slide {number}"
        if o.background_color and background_rgb(a) != background_rgb(b):
            raise Mismatch(f"{where}: background {background_rgb(a)} vs {background_rgb(b)}")
        if o.note and _notes(a) != _notes(b):
            raise Mismatch(f"{where}: notes {short(_notes(a))} vs {short(_notes(b))}")
        context = (a.slide_layout.part.partname, b.slide_layout.part.partname, inherited1, inherited2)
        _compare_shapes(a.shapes, b.shapes, o, where, context)
    return min(len(slides1), len(slides2))
