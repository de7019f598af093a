"""Impress metrics over .pptx files (python-pptx) and LibreOffice's registry settings.

``compare_pptx_files`` walks both decks in order and reports the first difference,
for example ``"slide 2 shape 3 ('Title 1') paragraph 1 run 1: font size 28.0 vs 24.0"``.
The OSWorld position checks (``examine_title_bottom_position`` and its siblings) were
written for one deck each, with a slide number and a title text hard-coded. Here they are
general: they apply to every title, table or picture of every slide. The thresholds are
OSWorld's, given in EMU.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    missing,
    passed,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score

_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_OOR = "{http://openoffice.org/2001/registry}"

#: A moved title or table must start below this (EMU), about the middle of a 16:9 slide.
LOWER_HALF_EMU = 3600000
#: A picture moved right must start right of this (EMU).
RIGHT_PART_EMU = 4320000
#: A picture moved up must start above this (EMU).
TOP_PART_EMU = 1980000

_PICTURE, _TABLE, _FREEFORM, _GROUP = 13, 19, 5, 6


@dataclass(frozen=True)
class PptxOptions:
    """The ``examine_*`` switches of :func:`compare_pptx_files` and their defaults."""

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


class _Mismatch(Exception):
    """The first difference found; its message is the metric's reason."""


def _close(a: float | None, b: float | None, tolerance: float) -> bool:
    if a == b:
        return True
    if a is None or b is None or a == 0 or b == 0:
        return False
    return abs(a - b) / max(abs(a), abs(b)) <= tolerance


def _shape_kind(shape: Any) -> int | None:
    try:
        return int(shape.shape_type) if shape.shape_type is not None else None
    except (NotImplementedError, ValueError):
        return None


def _has_text(shape: Any) -> bool:
    return bool(getattr(shape, "has_text_frame", False))


def _geometry(shape: Any) -> tuple[Any, Any, Any, Any]:
    return shape.left, shape.top, shape.width, shape.height


def _same_geometry(s1: Any, s2: Any, o: PptxOptions, skip_height: bool = False) -> bool:
    g1, g2 = _geometry(s1), _geometry(s2)
    parts = range(3) if skip_height else range(4)
    return all(_close(g1[i], g2[i], o.tolerance) for i in parts)


def _background_rgb(slide: Any) -> Any:
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


def _check_positions(s1: Any, s2: Any, o: PptxOptions, where: str) -> None:
    kind1, kind2 = _shape_kind(s1), _shape_kind(s2)
    is_title = (
        _has_text(s1)
        and _has_text(s2)
        and s1.is_placeholder
        and "title" in str(s1.placeholder_format.type).lower()
    )
    if o.title_bottom_position:
        if is_title and s1.text_frame.text == s2.text_frame.text:
            if s1.top <= s2.top or s1.top < LOWER_HALF_EMU:
                raise _Mismatch(f"{where}: the title was not moved to the bottom (top {s1.top} vs {s2.top})")
        elif not _same_geometry(s1, s2, o):
            raise _Mismatch(f"{where}: geometry {_geometry(s1)} vs {_geometry(s2)}")
    if o.table_bottom_position:
        if kind1 == kind2 == _TABLE:
            if s1.top <= s2.top or s1.top < LOWER_HALF_EMU:
                raise _Mismatch(f"{where}: the table was not moved to the bottom (top {s1.top} vs {s2.top})")
        elif not _same_geometry(s1, s2, o):
            raise _Mismatch(f"{where}: geometry {_geometry(s1)} vs {_geometry(s2)}")
    if o.right_position and kind1 == kind2 == _PICTURE and (s1.left <= s2.left or s1.left < RIGHT_PART_EMU):
        raise _Mismatch(f"{where}: the picture was not moved right (left {s1.left} vs {s2.left})")
    if o.top_position and kind1 == kind2 == _PICTURE and (s1.top >= s2.top or s1.top > TOP_PART_EMU):
        raise _Mismatch(f"{where}: the picture was not moved up (top {s1.top} vs {s2.top})")
    same_text = _has_text(s1) and _has_text(s2) and s1.text_frame.text == s2.text_frame.text
    if o.shape_for_shift_size and not same_text and not _same_geometry(s1, s2, o):
        raise _Mismatch(f"{where}: geometry {_geometry(s1)} vs {_geometry(s2)}")
    if o.shape and not _same_geometry(s1, s2, o, skip_height=o.shape_lenient_height and _has_text(s1)):
        raise _Mismatch(f"{where}: geometry (left, top, width, height) {_geometry(s1)} vs {_geometry(s2)}")
    if o.image_size:
        if kind1 == kind2 == _PICTURE:
            if not (_close(s1.width, s2.width, o.tolerance) and _close(s1.height, s2.height, o.tolerance)):
                raise _Mismatch(f"{where}: picture size {(s1.width, s1.height)} vs {(s2.width, s2.height)}")
        elif not _same_geometry(s1, s2, o):
            raise _Mismatch(f"{where}: geometry {_geometry(s1)} vs {_geometry(s2)}")
    if o.modify_height:
        if (not _has_text(s1) and not _has_text(s2)) or kind1 == kind2 == _FREEFORM:
            if not _close(s1.height, s2.height, o.tolerance):
                raise _Mismatch(f"{where}: height {s1.height} vs {s2.height}")
        elif not _same_geometry(s1, s2, o):
            raise _Mismatch(f"{where}: geometry {_geometry(s1)} vs {_geometry(s2)}")


def _falsy_equal(a: Any, b: Any) -> bool:
    return a == b or (not a and not b)


def _color(font: Any) -> Any:
    try:
        return font.color.rgb if font.color.type is not None else None
    except AttributeError:
        return None


def _strike(font: Any) -> str:
    return str(font._element.attrib.get("strike", "noStrike"))


def _compare_runs(p1: Any, p2: Any, o: PptxOptions, where: str, table_mode: bool = False) -> None:
    runs1, runs2 = p1.runs, p2.runs
    if (o.run_count or table_mode) and len(runs1) != len(runs2):
        raise _Mismatch(f"{where}: {len(runs1)} runs vs {len(runs2)}")
    for index, (r1, r2) in enumerate(zip(runs1, runs2, strict=False), start=1):
        f1, f2 = r1.font, r2.font
        at = f"{where} run {index} ({short(r1.text, 30)})"
        checks: list[tuple[bool, str, Any, Any, bool]] = [
            (o.font_name and not table_mode, "font name", f1.name, f2.name, f1.name == f2.name),
            (
                o.font_size and not table_mode,
                "font size",
                f1.size and f1.size.pt,
                f2.size and f2.size.pt,
                f1.size == f2.size,
            ),
            (o.font_bold, "bold", f1.bold, f2.bold, _falsy_equal(f1.bold, f2.bold)),
            (o.font_italic, "italic", f1.italic, f2.italic, _falsy_equal(f1.italic, f2.italic)),
            (
                o.color_rgb,
                "colour",
                _color(f1),
                _color(f2),
                _color(f1) == _color(f2) or None in (_color(f1), _color(f2)),
            ),
            (
                o.font_underline,
                "underline",
                f1.underline,
                f2.underline,
                _falsy_equal(f1.underline, f2.underline),
            ),
            (
                o.strike_through and not table_mode,
                "strike",
                _strike(f1),
                _strike(f2),
                _strike(f1) == _strike(f2),
            ),
        ]
        for enabled, name, v1, v2, same in checks:
            if enabled and not same:
                raise _Mismatch(f"{at}: {name} {v1} vs {v2}")


def _bullet(paragraph: Any) -> tuple[str, str]:
    ppr = paragraph._p.find(f"{{{_A}}}pPr")
    if ppr is None:
        return "0", ""
    char = ppr.find(f"{{{_A}}}buChar")
    return ppr.get("lvl") or "0", "" if char is None else (char.get("char") or "")


def _compare_text(s1: Any, s2: Any, o: PptxOptions, where: str) -> None:
    from pptx.enum.text import PP_ALIGN

    if o.text and s1.text_frame.text.strip() != s2.text_frame.text.strip():
        raise _Mismatch(
            f"{where}: text {short(s1.text_frame.text.strip())} vs {short(s2.text_frame.text.strip())}"
        )
    paras1, paras2 = s1.text_frame.paragraphs, s2.text_frame.paragraphs
    if len(paras1) != len(paras2):
        raise _Mismatch(f"{where}: {len(paras1)} paragraphs vs {len(paras2)}")
    for index, (p1, p2) in enumerate(zip(paras1, paras2, strict=True), start=1):
        at = f"{where} paragraph {index}"
        if o.alignment and (p1.alignment or PP_ALIGN.LEFT) != (p2.alignment or PP_ALIGN.LEFT):
            raise _Mismatch(f"{at}: alignment {p1.alignment} vs {p2.alignment}")
        if o.text and p1.text != p2.text:
            raise _Mismatch(f"{at}: text {short(p1.text)} vs {short(p2.text)}")
        if o.indent and p1.level != p2.level:
            raise _Mismatch(f"{at}: level {p1.level} vs {p2.level}")
        if o.bullets and p1.text.strip() and _bullet(p1) != _bullet(p2):
            raise _Mismatch(f"{at}: bullet {_bullet(p1)} vs {_bullet(p2)}")
        _compare_runs(p1, p2, o, at)


def _compare_table(s1: Any, s2: Any, o: PptxOptions, where: str) -> None:
    t1, t2 = s1.table, s2.table
    if len(t1.rows) != len(t2.rows) or len(t1.columns) != len(t2.columns):
        raise _Mismatch(
            f"{where}: table {len(t1.rows)}x{len(t1.columns)} vs {len(t2.rows)}x{len(t2.columns)}"
        )
    for r in range(len(t1.rows)):
        for c in range(len(t1.columns)):
            c1, c2 = t1.cell(r, c), t2.cell(r, c)
            at = f"{where} cell ({r},{c})"
            if o.text and c1.text.strip() != c2.text.strip():
                raise _Mismatch(f"{at}: text {short(c1.text)} vs {short(c2.text)}")
            paras1, paras2 = c1.text_frame.paragraphs, c2.text_frame.paragraphs
            if len(paras1) != len(paras2):
                raise _Mismatch(f"{at}: {len(paras1)} paragraphs vs {len(paras2)}")
            for i, (p1, p2) in enumerate(zip(paras1, paras2, strict=True), start=1):
                _compare_runs(p1, p2, o, f"{at} paragraph {i}", table_mode=True)


def _compare_shapes(shapes1: Any, shapes2: Any, o: PptxOptions, where: str) -> None:
    list1, list2 = list(shapes1), list(shapes2)
    if len(list1) != len(list2):
        raise _Mismatch(f"{where}: {len(list1)} shapes vs {len(list2)}")
    for index, (s1, s2) in enumerate(zip(list1, list2, strict=True), start=1):
        at = f"{where} shape {index} ({s1.name!r})"
        _check_positions(s1, s2, o, at)
        if _shape_kind(s1) == _TABLE and _shape_kind(s2) == _TABLE:
            _compare_table(s1, s2, o, at)
        if _has_text(s1) and _has_text(s2):
            _compare_text(s1, s2, o, at)
        elif _has_text(s1) != _has_text(s2) and o.text:
            raise _Mismatch(f"{at}: one shape has text, the other not")
        if _shape_kind(s1) == _GROUP and _shape_kind(s2) == _GROUP:
            _compare_shapes(s1.shapes, s2.shapes, o, f"{at} group")


def _compare_decks(path1: str, path2: str, o: PptxOptions) -> int:
    from pptx import Presentation

    deck1, deck2 = Presentation(path1), Presentation(path2)
    slides1, slides2 = list(deck1.slides), list(deck2.slides)
    if o.number_of_slides and len(slides1) != len(slides2):
        raise _Mismatch(f"{len(slides1)} slides vs {len(slides2)}")
    for number, (a, b) in enumerate(zip(slides1, slides2, strict=False), start=1):
        where = f"slide {number}"
        if o.background_color and _background_rgb(a) != _background_rgb(b):
            raise _Mismatch(f"{where}: background {_background_rgb(a)} vs {_background_rgb(b)}")
        if o.note and _notes(a) != _notes(b):
            raise _Mismatch(f"{where}: notes {short(_notes(a))} vs {short(_notes(b))}")
        _compare_shapes(a.shapes, b.shapes, o, where)
    return min(len(slides1), len(slides2))


def compare_pptx_files(result: Any, expected: Any = None, **options: Any) -> Score:
    """The result deck matches the expected one on every enabled ``examine_*`` check.

    On by default: ``number_of_slides``, ``shape`` (geometry within the relative
    ``approximately_tolerance``, default 0.005), ``text``, ``indent``, ``font_name``,
    ``font_size``, ``font_bold``, ``font_italic``, ``color_rgb``, ``font_underline``,
    ``strike_through``, ``alignment``, ``bullets``, ``background_color``, ``note`` and
    ``run_count``. Off by default: ``title_bottom_position``, ``table_bottom_position``,
    ``right_position``, ``top_position``, ``shape_for_shift_size``, ``image_size``,
    ``modify_height`` and ``shape_lenient_height`` (text shapes' heights may differ).
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    settings = PptxOptions.from_options(options)
    try:
        count = _compare_decks(path or "", gold or "", settings)
    except _Mismatch as exc:
        return failed(str(exc))
    except Exception as exc:  # python-pptx raises several types on a corrupt deck
        return failed(f"cannot read the decks: {exc}")
    return passed(f"{count} slides match on every enabled check")


def _registry_values(path: str, item_path: str, prop: str) -> list[str]:
    return [
        (node.findtext("value") or "")
        for item in ET.parse(path).getroot().iter("item")
        if item.get(f"{_OOR}path") == item_path
        for node in item.iter("prop")
        if node.get(f"{_OOR}name") == prop
    ]


def check_presenter_console_disable(result: Any, expected: Any = None, **options: Any) -> Score:
    """Impress's ``EnablePresenterScreen`` is false in ``registrymodifications.xcu``."""
    path, problem = existing_file(result)
    if problem:
        return problem
    values = _registry_values(
        path or "", "/org.openoffice.Office.Impress/Misc/Start", "EnablePresenterScreen"
    )
    ok = bool(values) and values[-1].strip().lower() == "false"
    return verdict(ok, "the presenter console is disabled", f"EnablePresenterScreen is {values or 'unset'}")


def check_auto_saving_time(result: Any, expected: Any = None, **options: Any) -> Score:
    """LibreOffice's auto-save interval is ``rules["minutes"]``."""
    path, problem = existing_file(result)
    if problem:
        return problem
    want = int(rules_of(expected).get("minutes", -1))
    values = _registry_values(path or "", "/org.openoffice.Office.Recovery/AutoSave", "TimeIntervall")
    values += _registry_values(
        path or "", "/org.openoffice.Office.Common/Save/Document", "AutoSaveTimeIntervall"
    )
    ok = any(v.strip() == str(want) for v in values)
    return verdict(
        ok,
        f"auto-save every {want} minutes",
        f"auto-save interval {values or 'unset'}, expected {want}",
    )


def check_transition(result: Any, expected: Any = None, **options: Any) -> Score:
    """Slide ``slide_idx`` has a transition containing a ``transition_type`` element."""
    path, problem = existing_file(result)
    if problem:
        return problem
    rules = rules_of(expected)
    index, kind = int(rules.get("slide_idx", 0)), str(rules.get("transition_type", ""))
    name = f"ppt/slides/slide{index + 1}.xml"
    with zipfile.ZipFile(path or "") as archive:
        if name not in archive.namelist():
            return failed(f"the deck has no slide {index + 1}")
        root = ET.fromstring(archive.read(name))
    transition = root.find(f".//{{{_P}}}transition")
    if transition is None:
        return failed(f"slide {index + 1} has no transition")
    found = transition.find(f".//{{{_P}}}{kind}") is not None
    children = [child.tag.rsplit("}", 1)[-1] for child in transition]
    return verdict(
        found,
        f"slide {index + 1} has a {kind} transition",
        f"slide {index + 1} transition is {children}, expected {kind}",
    )


def _fill_distance(slide: Any, target: tuple[int, int, int], original: tuple[int, int, int] | None) -> float:
    rgb = _background_rgb(slide)
    if rgb is None or (original is not None and tuple(rgb) == tuple(original)):
        return 1.0
    return math.dist(tuple(rgb), target) / math.dist((0, 0, 0), (255, 255, 255))


def evaluate_presentation_fill_to_rgb_distance(result: Any, expected: Any = None, **options: Any) -> Score:
    """1 minus the mean distance of each slide's background colour to ``rules["rgb"]``. Fractional.

    Distances are RGB Euclidean over the cube's diagonal; a slide still at
    ``original_rgb``, or without a solid fill, counts as the maximal distance.
    """
    from pptx import Presentation

    path, problem = existing_file(result)
    if problem:
        return problem
    rules = rules_of(expected)
    target = tuple(rules.get("rgb", (0, 0, 0)))
    original = tuple(rules["original_rgb"]) if rules.get("original_rgb") is not None else None
    slides = list(Presentation(path or "").slides)
    if not slides:
        return failed("the deck has no slides")
    distances = [_fill_distance(s, target, original) for s in slides]
    value = 1 - sum(distances) / len(distances)
    return Score(value, f"background colour score {value:.3f} over {len(slides)} slides")


def check_image_stretch_and_center(result: Any, expected: Any = None, **options: Any) -> Score:
    """The original's first-slide image fills the slide and is centred (within 0.5 in)."""
    from pptx import Presentation
    from pptx.util import Inches

    path, problem = existing_file(result)
    if problem:
        return problem
    original, original_problem = existing_file(expected, "original")
    if original_problem:
        return original_problem
    modified_deck, original_deck = Presentation(path or ""), Presentation(original or "")
    originals = [s for s in original_deck.slides[0].shapes if _shape_kind(s) == _PICTURE]
    if not originals:
        return failed("the original's first slide has no image")
    blob = originals[0].image.blob
    image = next(
        (s for s in modified_deck.slides[0].shapes if _shape_kind(s) == _PICTURE and s.image.blob == blob),
        None,
    )
    if image is None:
        return failed("the image is no longer on the first slide")
    width, height, margin = original_deck.slide_width, original_deck.slide_height, Inches(0.5)
    ok = (
        abs(image.width - width) <= margin
        and abs(image.height - height) <= margin
        and abs(image.left - (width - image.width) / 2) <= margin
        and abs(image.top - (height - image.height) / 2) <= margin
    )
    return verdict(
        ok,
        "the image fills the slide, centred",
        f"image at {_geometry(image)}, slide {width}x{height}",
    )


def _classify(rgb: str, threshold: int = 50) -> str:
    r, g, b = int(rgb[0:2], 16), int(rgb[2:4], 16), int(rgb[4:6], 16)
    if r > g + threshold and r > b + threshold:
        return "red"
    if b > g + threshold and b > r + threshold:
        return "blue"
    if g > r + threshold and g > b + threshold:
        return "green"
    if max(r, g, b) < threshold:
        return "black"
    return "other"


def _slide_number_colour(path: str) -> str | None:
    with zipfile.ZipFile(path) as archive:
        root = ET.fromstring(archive.read("ppt/slideMasters/slideMaster1.xml"))
    for shape in root.iter(f"{{{_P}}}sp"):
        placeholder = shape.find(f".//{{{_P}}}ph")
        if placeholder is not None and placeholder.get("type") == "sldNum":
            colours = [c.get("val") for c in shape.iter(f"{{{_A}}}srgbClr") if c.get("val")]
            if colours:
                return colours[-1]
    return None


def check_page_number_colors(result: Any, expected: Any = None, **options: Any) -> Score:
    """The master's slide-number placeholder is ``rules["color"]`` (red, blue, green, black)."""
    path, problem = existing_file(result)
    if problem:
        return problem
    want = str(rules_of(expected).get("color", ""))
    colour = _slide_number_colour(path or "")
    if colour is None:
        return failed("the slide-number placeholder has no explicit colour")
    got = _classify(colour)
    return verdict(
        got == want,
        f"slide numbers are {want} (#{colour})",
        f"slide numbers are #{colour} ({got}), expected {want}",
    )


def check_slide_numbers_color(result: Any, expected: Any = None, **options: Any) -> Score:
    """The master's slide-number colour is red (the unused OSWorld variant of the check)."""
    return check_page_number_colors(result, {"color": "red"})


def check_slide_orientation_Portrait(result: Any, expected: Any = None, **options: Any) -> Score:
    """The slides are portrait (narrower than tall)."""
    from pptx import Presentation

    path, problem = existing_file(result)
    if problem:
        return problem
    deck = Presentation(path or "")
    width, height = deck.slide_width, deck.slide_height
    return verdict(width < height, f"portrait {width}x{height}", f"not portrait: {width}x{height}")


def check_left_panel(result: Any, expected: Any = None, **options: Any) -> Score:
    """The accessibility tree has the ``Slides View`` document frame (the left panel is open)."""
    if result is None:
        return missing("accessibility tree")
    try:
        root = ET.fromstring(str(result))
    except ET.ParseError as exc:
        return failed(f"accessibility tree is not XML: {exc}")
    found = any(node.get("name") == "Slides View" for node in root.iter("document-frame"))
    return verdict(found, "the slide panel is open", "no 'Slides View' frame: the slide panel is closed")


def check_strikethrough(result: Any, expected: Any = None, **options: Any) -> Score:
    """The first run of the given slides/shapes/paragraphs is struck through."""
    from pptx import Presentation

    path, problem = existing_file(result)
    if problem:
        return problem
    rules = rules_of(expected)
    deck = Presentation(path or "")
    try:
        for s in rules.get("slide_index_s", []):
            for sh in rules.get("shape_index_s", []):
                paragraphs = deck.slides[s].shapes[sh].text_frame.paragraphs
                for p in rules.get("paragraph_index_s", []):
                    if "strike" not in paragraphs[p].runs[0].font._element.attrib:
                        return failed(f"slide {s} shape {sh} paragraph {p} is not struck through")
    except (IndexError, AttributeError) as exc:
        return failed(f"cannot find the text to check: {exc}")
    return passed("the text is struck through")
