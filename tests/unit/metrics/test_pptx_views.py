"""The read-once views of compare_pptx_files give python-pptx's own values.

Each deck here exercises one kind of XML the views read by hand (font attributes, fills and
colours, breaks and fields, placeholders that inherit their geometry, groups, tables,
pictures, freeforms) or hand back to python-pptx (unusual attribute values). Every
shape, paragraph and run is compared with what python-pptx's properties return.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from metric_files import gradient
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.dml import MSO_THEME_COLOR
from pptx.enum.text import MSO_UNDERLINE, PP_ALIGN
from pptx.util import Inches, Pt

from pytest_osworld.evaluators.metrics import slides
from pytest_osworld.evaluators.metrics._pptx_views import ParagraphView, RunView, ShapeView


def _python_pptx_color(font: Any) -> Any:
    # What the metric always compared: font.color.rgb, None for no or non-RGB colour.
    try:
        return font.color.rgb if font.color.type is not None else None
    except AttributeError:
        return None


def run_values(run: Any) -> tuple[Any, ...]:
    font = run.font
    strike = str(font._element.attrib.get("strike", "noStrike"))
    return (
        run.text,
        font.name,
        font.size,
        font.bold,
        font.italic,
        font.underline,
        strike,
        _python_pptx_color(font),
    )


def view_values(view: RunView) -> tuple[Any, ...]:
    return (view.text, view.name, view.size, view.bold, view.italic, view.underline, view.strike, view.color)


def _kind(shape: Any) -> int | None:
    try:
        return int(shape.shape_type) if shape.shape_type is not None else None
    except NotImplementedError:
        return None


def assert_views_match(path: str) -> int:
    """Every shape, paragraph and run of the deck reads the same both ways; returns the runs seen."""
    checked = 0
    # Views first, on a deck of their own: python-pptx's colour getter writes into the XML.
    views_deck, pptx_deck = Presentation(path), Presentation(path)
    for slide_v, slide_p in zip(views_deck.slides, pptx_deck.slides, strict=True):
        inherited: dict[Any, Any] = {}
        checked += _match_tree(slide_v.shapes, slide_p.shapes, slide_v.slide_layout.part.partname, inherited)
    return checked


def _match_tree(shapes_v: Any, shapes_p: Any, layout: Any, inherited: dict[Any, Any]) -> int:
    checked = 0
    views = [ShapeView(e, shapes_v._shape_factory, layout, inherited) for e in shapes_v._iter_member_elms()]
    shapes = list(shapes_p)
    assert len(views) == len(shapes)
    for view, shape in zip(views, shapes, strict=True):
        assert view.name == shape.name
        assert view.geometry == (shape.left, shape.top, shape.width, shape.height), shape.name
        assert view.has_text == bool(getattr(shape, "has_text_frame", False))
        assert view.is_placeholder == shape.is_placeholder
        kind = _kind(shape)
        assert view.kind == kind or (view.kind is None and kind not in (5, 6, 13, 19)), (view.kind, kind)
        if view.has_text:
            views_p = view.paragraphs
            paras = shape.text_frame.paragraphs
            assert view.text == shape.text_frame.text
            assert len(views_p) == len(paras)
            for pv, pp in zip(views_p, paras, strict=True):
                checked += _match_paragraph(pv, pp)
        if kind == 6:
            checked += _match_tree(view.shape.shapes, shape.shapes, layout, inherited)
    return checked


def _match_paragraph(view: ParagraphView, paragraph: Any) -> int:
    assert view.text == paragraph.text
    assert view.level == paragraph.level
    assert (view.align != "l") == ((paragraph.alignment or PP_ALIGN.LEFT) != PP_ALIGN.LEFT)
    assert len(view.runs) == len(paragraph.runs)
    for run_view, run in zip(view.runs, paragraph.runs, strict=True):
        assert view_values(run_view) == run_values(run)
    return len(view.runs)


def build(path: Path, edit: Any) -> str:
    deck = Presentation()
    edit(deck)
    deck.save(str(path))
    return str(path)


def _fonts(deck: Any) -> None:
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    box = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(5), Inches(3))
    frame = box.text_frame
    frame.text = "first"
    settings: list[dict[str, Any]] = [
        {"bold": True},
        {"bold": False, "italic": True},
        {"underline": True},
        {"underline": False},
        {"underline": MSO_UNDERLINE.DOUBLE_LINE},
        {"size": Pt(13.5), "name": "Arial"},
        {"rgb": RGBColor(0x12, 0xAB, 0xEF)},
        {"theme": MSO_THEME_COLOR.ACCENT_2},
        {},
    ]
    for index, setting in enumerate(settings):
        paragraph = frame.add_paragraph()
        paragraph.level = index % 3
        paragraph.alignment = [None, PP_ALIGN.CENTER, PP_ALIGN.RIGHT][index % 3]
        run = paragraph.add_run()
        run.text = f"run {index}"
        font = run.font
        for key in ("bold", "italic", "underline", "size", "name"):
            if key in setting:
                setattr(font, key, setting[key])
        if "rgb" in setting:
            font.color.rgb = setting["rgb"]
        if "theme" in setting:
            font.color.theme_color = setting["theme"]
    last = frame.paragraphs[-1]
    last.add_line_break()
    tail = last.add_run()
    tail.text = "after break"
    tail.font._element.set("strike", "sngStrike")
    tail.font._element.set("b", "true")  # the other spelling of a boolean


def _placeholders(deck: Any) -> None:
    for layout in (0, 1, 5, 0, 1):  # twice each: the second reuses the inherited geometry
        slide = deck.slides.add_slide(deck.slide_layouts[layout])
        slide.shapes.title.text = f"Title on layout {layout}"
        for placeholder in slide.placeholders:
            if placeholder.placeholder_format.idx == 1:
                placeholder.text_frame.text = "body\nsecond line"
    moved = deck.slides.add_slide(deck.slide_layouts[5])
    moved.shapes.title.text = "moved title"
    moved.shapes.title.left = Inches(2)  # its own xfrm now: no inheritance


def _frames(deck: Any) -> None:
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    image = io.BytesIO()
    gradient((40, 30)).save(image, format="PNG")
    slide.shapes.add_picture(io.BytesIO(image.getvalue()), Inches(1), Inches(1))
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    table.cell(0, 0).text = "cell"
    group = slide.shapes.add_group_shape()
    inner = group.shapes.add_textbox(Inches(5), Inches(5), Inches(1), Inches(1))
    inner.text_frame.text = "grouped"
    builder = slide.shapes.build_freeform(Inches(1), Inches(1))
    builder.add_line_segments([(Inches(2), Inches(2)), (Inches(1), Inches(2))])
    builder.convert_to_shape()
    slide.shapes.add_shape(1, Inches(6), Inches(1), Inches(1), Inches(1)).text_frame.text = "auto"


@pytest.mark.parametrize("edit", [_fonts, _placeholders, _frames], ids=["fonts", "placeholders", "frames"])
def test_views_read_what_python_pptx_reads(tmp_path: Path, edit: Any) -> None:
    path = build(tmp_path / "deck.pptx", edit)
    assert assert_views_match(path) > 0 or edit is _frames


def test_irregular_values_are_read_by_python_pptx(tmp_path: Path) -> None:
    def odd(deck: Any) -> None:
        _fonts(deck)
        frame = deck.slides[0].shapes[0].text_frame
        frame.paragraphs[1].runs[0].font._element.set("u", "wavyHeavy")
        frame.paragraphs[2].runs[0].font._element.set("sz", "+1800")

    path = build(tmp_path / "odd.pptx", odd)
    assert assert_views_match(path) > 0
    run = Presentation(path).slides[0].shapes[0].text_frame.paragraphs[1].runs[0]
    assert RunView(run._r).underline == MSO_UNDERLINE.WAVY_HEAVY_LINE


def test_a_deck_compares_equal_to_itself_and_a_change_is_found(tmp_path: Path) -> None:
    def deck(colour: RGBColor) -> Any:
        def edit(presentation: Any) -> None:
            _fonts(presentation)
            _placeholders(presentation)
            _frames(presentation)
            run = presentation.slides[0].shapes[0].text_frame.paragraphs[7].runs[0]
            run.font.color.rgb = colour

        return edit

    same = build(tmp_path / "a.pptx", deck(RGBColor(1, 2, 3)))
    other = build(tmp_path / "b.pptx", deck(RGBColor(3, 2, 1)))
    assert slides.compare_pptx_files(same, same).value == 1.0
    score = slides.compare_pptx_files(other, same)
    assert score.value == 0.0
    assert (
        "slide 1 shape 1 ('TextBox 1') paragraph 8 run 1 ('run 6'): colour 030201 vs 010203" in score.reason
    )
