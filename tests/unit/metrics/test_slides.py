"""Impress metrics over .pptx files made with python-pptx."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from metric_files import check, gradient
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.text import PP_ALIGN
from pptx.util import Emu, Inches, Pt

from pytest_osworld.evaluators.metrics import slides as s

Edit = Callable[[Any], None]


def deck(path: Path, edit: Edit | None = None, slides: int = 1) -> str:
    """A deck whose slides have a title and a text box; ``edit`` may change it."""
    presentation = Presentation()
    for number in range(slides):
        slide = presentation.slides.add_slide(presentation.slide_layouts[5])
        slide.shapes.title.text = f"Title {number}"
        box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1))
        box.text_frame.text = "Body text"
        box.text_frame.paragraphs[0].runs[0].font.size = Pt(18)
    if edit is not None:
        edit(presentation)
    presentation.save(str(path))
    return str(path)


@pytest.fixture
def make(tmp_path: Path) -> Callable[..., str]:
    counter = iter(range(1000))

    def build(edit: Edit | None = None, slides: int = 1) -> str:
        return deck(tmp_path / f"deck{next(counter)}.pptx", edit, slides)

    return build


def body(presentation: Any, index: int = 0) -> Any:
    return presentation.slides[index].shapes[1]


def run(presentation: Any) -> Any:
    return body(presentation).text_frame.paragraphs[0].runs[0]


def _set(action: Callable[[Any], None]) -> Edit:
    return action


EDITS: dict[str, tuple[Edit, str, str]] = {
    # name: (edit, option that would ignore it, reason fragment)
    "moved": (_set(lambda p: setattr(body(p), "left", Inches(3))), "examine_shape", "geometry"),
    "text": (
        _set(lambda p: setattr(body(p).text_frame.paragraphs[0].runs[0], "text", "Other text")),
        "examine_text",
        "text 'Other text' vs 'Body text'",
    ),
    "font name": (
        _set(lambda p: setattr(run(p).font, "name", "Arial")),
        "examine_font_name",
        "font name Arial vs None",
    ),
    "font size": (
        _set(lambda p: setattr(run(p).font, "size", Pt(24))),
        "examine_font_size",
        "font size 24.0 vs 18.0",
    ),
    "bold": (
        _set(lambda p: setattr(run(p).font, "bold", True)),
        "examine_font_bold",
        "bold True vs None",
    ),
    "italic": (
        _set(lambda p: setattr(run(p).font, "italic", True)),
        "examine_font_italic",
        "italic True vs None",
    ),
    "underline": (
        _set(lambda p: setattr(run(p).font, "underline", True)),
        "examine_font_underline",
        "underline True vs None",
    ),
    "alignment": (
        _set(lambda p: setattr(body(p).text_frame.paragraphs[0], "alignment", PP_ALIGN.CENTER)),
        "examine_alignment",
        "alignment CENTER",
    ),
    "level": (
        _set(lambda p: setattr(body(p).text_frame.paragraphs[0], "level", 1)),
        "examine_indent",
        "level 1 vs 0",
    ),
    "strike": (
        _set(lambda p: run(p).font._element.set("strike", "sngStrike")),
        "examine_strike_through",
        "strike sngStrike vs noStrike",
    ),
    "notes": (
        _set(lambda p: setattr(p.slides[0].notes_slide.notes_text_frame, "text", "note")),
        "examine_note",
        "notes 'note' vs ''",
    ),
    "runs": (
        _set(lambda p: body(p).text_frame.paragraphs[0].add_run()),
        "examine_run_count",
        "2 runs vs 1",
    ),
}


def _colour(presentation: Any) -> None:
    run(presentation).font.color.rgb = RGBColor(255, 0, 0)


def _background(presentation: Any) -> None:
    fill = presentation.slides[0].background.fill
    fill.solid()
    fill.fore_color.rgb = RGBColor(0, 0, 255)


@pytest.mark.parametrize("name", sorted(EDITS))
def test_each_examined_property(make: Callable[..., str], name: str) -> None:
    edit, switch, reason = EDITS[name]
    gold, changed = make(), make(edit)
    check(s.compare_pptx_files(make(), gold), 1, "1 slides match")
    check(s.compare_pptx_files(changed, gold), 0, reason)
    if switch != "examine_text":
        # a paragraph's level is part of its bullet too
        extra = {"examine_bullets": False} if switch == "examine_indent" else {}
        check(s.compare_pptx_files(changed, gold, **{switch: False}, **extra), 1, "1 slides match")


def test_colour_background_and_slide_count(make: Callable[..., str]) -> None:
    gold = make()
    check(s.compare_pptx_files(make(_colour), make(_colour)), 1, "match")
    check(s.compare_pptx_files(make(_background), gold), 0, "background 0000FF vs None")
    check(s.compare_pptx_files(make(_background), gold, examine_background_color=False), 1, "match")
    check(s.compare_pptx_files(make(slides=2), gold), 0, "2 slides vs 1")
    check(
        s.compare_pptx_files(make(slides=2), gold, examine_number_of_slides=False),
        1,
        "1 slides match",
    )


def test_tolerance_and_lenient_height(make: Callable[..., str]) -> None:
    gold = make()
    nudged = make(lambda p: setattr(body(p), "left", Emu(Inches(1) + 1000)))
    check(s.compare_pptx_files(nudged, gold), 1, "match")
    check(s.compare_pptx_files(nudged, gold, approximately_tolerance=0.0001), 0, "geometry")
    taller = make(lambda p: setattr(body(p), "height", Inches(3)))
    check(s.compare_pptx_files(taller, gold), 0, "geometry")
    check(s.compare_pptx_files(taller, gold, examine_shape_lenient_height=True), 1, "match")


def _picture(left: float, top: float, width: float = 2, height: float = 2) -> Edit:
    def edit(presentation: Any) -> None:
        stream = io.BytesIO()
        gradient((32, 32)).save(stream, format="PNG")
        stream.seek(0)
        presentation.slides[0].shapes.add_picture(
            stream, Inches(left), Inches(top), Inches(width), Inches(height)
        )

    return edit


def test_position_checks(make: Callable[..., str]) -> None:
    original = make(_picture(1, 4))
    right = make(_picture(6, 4))
    up = make(_picture(1, 1))
    check(
        s.compare_pptx_files(right, original, examine_shape=False, examine_right_position=True),
        1,
        "match",
    )
    check(
        s.compare_pptx_files(original, original, examine_shape=False, examine_right_position=True),
        0,
        "not moved right",
    )
    check(
        s.compare_pptx_files(up, original, examine_shape=False, examine_top_position=True),
        1,
        "match",
    )
    check(
        s.compare_pptx_files(original, original, examine_shape=False, examine_top_position=True),
        0,
        "not moved up",
    )
    bigger = make(_picture(1, 4, 3, 3))
    check(
        s.compare_pptx_files(bigger, original, examine_shape=False, examine_image_size=True),
        0,
        "picture size",
    )
    check(
        s.compare_pptx_files(original, original, examine_shape=False, examine_image_size=True),
        1,
        "match",
    )
    check(
        s.compare_pptx_files(bigger, original, examine_shape=False, examine_modify_height=True),
        0,
        "height",
    )


def test_shape_for_shift_size(make: Callable[..., str]) -> None:
    gold = make()
    resized_text = make(lambda p: setattr(body(p), "width", Inches(6)))
    moved_picture = make(lambda p: (_picture(1, 4)(p), setattr(p.slides[0].shapes[2], "left", Inches(3))))
    picture = make(_picture(1, 4))
    options = {"examine_shape": False, "examine_shape_for_shift_size": True}
    check(s.compare_pptx_files(resized_text, gold, **options), 1, "match")
    check(s.compare_pptx_files(moved_picture, picture, **options), 0, "geometry")


def _title_top(top: float) -> Edit:
    return lambda p: setattr(p.slides[0].shapes.title, "top", Inches(top))


def test_title_bottom_position(make: Callable[..., str]) -> None:
    original = make()
    check(
        s.compare_pptx_files(
            make(_title_top(6)), original, examine_shape=False, examine_title_bottom_position=True
        ),
        1,
        "match",
    )
    check(
        s.compare_pptx_files(original, original, examine_shape=False, examine_title_bottom_position=True),
        0,
        "title was not moved",
    )


def _table(text: str, bold: bool = False) -> Edit:
    def edit(presentation: Any) -> None:
        shape = presentation.slides[0].shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1))
        cell = shape.table.cell(1, 1)
        cell.text = text
        cell.text_frame.paragraphs[0].runs[0].font.bold = bold

    return edit


def test_tables(make: Callable[..., str]) -> None:
    gold = make(_table("42"))
    check(s.compare_pptx_files(make(_table("42")), gold), 1, "match")
    check(s.compare_pptx_files(make(_table("43")), gold), 0, "cell (1,1): text '43'")
    check(
        s.compare_pptx_files(make(_table("42", bold=True)), gold),
        0,
        "cell (1,1) paragraph 1 run 1 ('42'): bold True",
    )
    lower = make(lambda p: (_table("42")(p), setattr(p.slides[0].shapes[2], "top", Inches(6))))
    check(
        s.compare_pptx_files(lower, gold, examine_shape=False, examine_table_bottom_position=True),
        1,
        "match",
    )
    check(
        s.compare_pptx_files(gold, gold, examine_shape=False, examine_table_bottom_position=True),
        0,
        "table was not moved",
    )


def test_bullets(make: Callable[..., str]) -> None:
    from pptx.oxml.ns import qn

    def bullet(char: str) -> Edit:
        def edit(presentation: Any) -> None:
            ppr = body(presentation).text_frame.paragraphs[0]._p.get_or_add_pPr()
            element = ppr.makeelement(qn("a:buChar"), {"char": char})
            ppr.append(element)

        return edit

    gold = make(bullet("•"))
    check(s.compare_pptx_files(make(bullet("•")), gold), 1, "match")
    check(s.compare_pptx_files(make(bullet("-")), gold), 0, "bullet ('0', '-') vs ('0', '•')")
    check(s.compare_pptx_files(make(bullet("-")), gold, examine_bullets=False), 1, "match")


def test_bad_inputs(make: Callable[..., str], tmp_path: Path) -> None:
    gold = make()
    check(s.compare_pptx_files(None, gold), 0, "no result")
    broken = tmp_path / "broken.pptx"
    broken.write_text("nope")
    check(s.compare_pptx_files(str(broken), gold), 0, "cannot read the decks")


XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry">
<item oor:path="/org.openoffice.Office.Impress/Misc/Start"><prop oor:name="EnablePresenterScreen" oor:op="fuse"><value>{presenter}</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/AutoSave"><prop oor:name="TimeIntervall" oor:op="fuse"><value>{minutes}</value></prop></item>
</oor:items>"""


def test_registry_settings(tmp_path: Path) -> None:
    path = tmp_path / "registrymodifications.xcu"
    path.write_text(XCU.format(presenter="false", minutes=3))
    check(s.check_presenter_console_disable(str(path)), 1, "disabled")
    check(s.check_auto_saving_time(str(path), {"minutes": 3}), 1, "every 3 minutes")
    path.write_text(XCU.format(presenter="true", minutes=10))
    check(s.check_presenter_console_disable(str(path)), 0, "['true']")
    check(s.check_auto_saving_time(str(path), {"minutes": 3}), 0, "['10'], expected 3")


def _with_transition(path: str, kind: str) -> str:
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    xml = members["ppt/slides/slide1.xml"]
    members["ppt/slides/slide1.xml"] = xml.replace(
        b"</p:sld>", f"<p:transition><p:{kind}/></p:transition></p:sld>".encode()
    )
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_check_transition(make: Callable[..., str]) -> None:
    rule = {"slide_idx": 0, "transition_type": "dissolve"}
    check(s.check_transition(_with_transition(make(), "dissolve"), rule), 1, "dissolve transition")
    check(s.check_transition(_with_transition(make(), "fade"), rule), 0, "transition is ['fade']")
    check(s.check_transition(make(), rule), 0, "has no transition")
    check(s.check_transition(make(), {"slide_idx": 4, "transition_type": "dissolve"}), 0, "no slide 5")


def _backgrounds(colours: list[tuple[int, int, int]]) -> Edit:
    def edit(presentation: Any) -> None:
        for slide, rgb in zip(presentation.slides, colours, strict=True):
            slide.background.fill.solid()
            slide.background.fill.fore_color.rgb = RGBColor(*rgb)

    return edit


def test_evaluate_presentation_fill_to_rgb_distance(make: Callable[..., str]) -> None:
    rules = {"rgb": [0, 0, 255], "original_rgb": [255, 255, 255]}
    check(
        s.evaluate_presentation_fill_to_rgb_distance(
            make(_backgrounds([(0, 0, 255), (0, 0, 255)]), slides=2), rules
        ),
        1,
        "over 2 slides",
    )
    # one slide exact (0), one still at the original colour (1): 1 - 1/2
    check(
        s.evaluate_presentation_fill_to_rgb_distance(
            make(_backgrounds([(0, 0, 255), (255, 255, 255)]), slides=2), rules
        ),
        0.5,
        "0.500",
    )
    # (0, 0, 0) to (0, 0, 255): 255 / (255 * sqrt 3)
    check(
        s.evaluate_presentation_fill_to_rgb_distance(make(_backgrounds([(0, 0, 0)])), rules),
        1 - 1 / 3**0.5,
        "score",
        approx=1e-6,
    )


def test_check_image_stretch_and_center(make: Callable[..., str]) -> None:
    original = make(_picture(1, 1))
    stretched = make(_picture(0, 0, 10, 7.5))
    check(s.check_image_stretch_and_center(stretched, original), 1, "fills the slide")
    check(s.check_image_stretch_and_center(original, original), 0, "image at")
    check(s.check_image_stretch_and_center(make(), original), 0, "no longer on the first slide")


def _number_colour(rgb: tuple[int, int, int]) -> Edit:
    def edit(presentation: Any) -> None:
        for shape in presentation.slide_master.placeholders:
            if "Slide Number" in shape.name:
                shape.text_frame.paragraphs[0].font.color.rgb = RGBColor(*rgb)

    return edit


def test_page_number_colours(make: Callable[..., str]) -> None:
    check(
        s.check_page_number_colors(make(_number_colour((230, 20, 20))), {"color": "red"}),
        1,
        "slide numbers are red",
    )
    check(
        s.check_page_number_colors(make(_number_colour((20, 20, 230))), {"color": "red"}),
        0,
        "(blue), expected red",
    )
    check(s.check_page_number_colors(make(), {"color": "red"}), 0, "no explicit colour")
    check(s.check_slide_numbers_color(make(_number_colour((230, 20, 20)))), 1, "red")
    check(s.check_slide_numbers_color(make(_number_colour((20, 20, 230)))), 0, "(blue), expected red")
    check(s.check_slide_numbers_color(make()), 0, "no explicit colour")


def test_orientation(make: Callable[..., str]) -> None:
    def portrait(presentation: Any) -> None:
        presentation.slide_width, presentation.slide_height = Inches(7.5), Inches(10)

    check(s.check_slide_orientation_Portrait(make(portrait)), 1, "portrait")
    check(s.check_slide_orientation_Portrait(make()), 0, "not portrait")


def test_check_left_panel() -> None:
    check(s.check_left_panel('<root><document-frame name="Slides View"/></root>'), 1, "open")
    check(s.check_left_panel('<root><document-frame name="Outline"/></root>'), 0, "closed")
    check(s.check_left_panel(None), 0, "no accessibility tree")


def test_check_strikethrough(make: Callable[..., str]) -> None:
    rules = {"slide_index_s": [0], "shape_index_s": [1], "paragraph_index_s": [0]}
    check(s.check_strikethrough(make(EDITS["strike"][0]), rules), 1, "struck through")
    check(s.check_strikethrough(make(), rules), 0, "is not struck through")
