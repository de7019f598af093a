"""Impress metrics over .pptx files (python-pptx) and LibreOffice's registry settings.

This module owns the metric entry points; the deck comparison behind ``compare_pptx_files``
lives in ``_pptx_compare`` (options, the walk over two decks) and ``_pptx_views`` (shapes,
paragraphs and runs read once from their XML).

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
from typing import Any

from pytest_osworld.evaluators.metrics._pptx_compare import (
    LOWER_HALF_EMU,
    RIGHT_PART_EMU,
    TOP_PART_EMU,
    Mismatch,
    PptxOptions,
    background_rgb,
    compare_decks,
)
from pytest_osworld.evaluators.metrics._pptx_views import PICTURE
from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    missing,
    passed,
    rules_of,
    verdict,
)
from pytest_osworld.evaluators.score import Score

_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_OOR = "{http://openoffice.org/2001/registry}"

__all__ = [
    "LOWER_HALF_EMU",
    "RIGHT_PART_EMU",
    "TOP_PART_EMU",
    "PptxOptions",
    "check_auto_saving_time",
    "check_image_stretch_and_center",
    "check_left_panel",
    "check_page_number_colors",
    "check_presenter_console_disable",
    "check_slide_numbers_color",
    "check_slide_orientation_Portrait",
    "check_strikethrough",
    "check_transition",
    "compare_pptx_files",
    "evaluate_presentation_fill_to_rgb_distance",
]

_PICTURE = PICTURE


def _shape_kind(shape: Any) -> int | None:
    try:
        return int(shape.shape_type) if shape.shape_type is not None else None
    except (NotImplementedError, ValueError):
        return None


def _geometry(shape: Any) -> tuple[Any, Any, Any, Any]:
    return shape.left, shape.top, shape.width, shape.height


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
        count = compare_decks(path or "", gold or "", settings)
    except Mismatch as exc:
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
    rgb = background_rgb(slide)
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
