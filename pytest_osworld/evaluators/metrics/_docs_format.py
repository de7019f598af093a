"""Writer metrics about formatting and images: tab stops, fonts, highlights, colours, breaks.

Owns the metrics that read runs' and paragraphs' formatting (tab stops, subscripts, page
numbers, font names, centring, highlights, strike-through, coloured words, italics, page
breaks, the default font) and the ones that compare embedded images. ``docs`` re-exports
them under their registered names.
"""

from __future__ import annotations

import re
import zipfile
from typing import Any

from pytest_osworld.evaluators.metrics._docs_text import (
    _ODF_FO,
    _ODF_STYLE,
    _ODF_TEXT,
    _W,
    YELLOW,
    _document,
    _load_pair,
    _odt_root,
    compare_docx_files,
)
from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    load_module,
    passed,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score


def _docx_image_pixels(path: str) -> list[bytes]:
    import io

    from PIL import Image

    images = []
    for rel in _document(path).part.rels.values():
        if "image" in rel.reltype and not rel.is_external:
            with Image.open(io.BytesIO(rel.target_part.blob)) as image:
                images.append(image.convert("RGBA").tobytes())
    return sorted(images)


def compare_docx_images(result: Any, expected: Any = None, **options: Any) -> Score:
    """Both documents embed the same images (same count, identical decoded pixels)."""
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    got, want = _docx_image_pixels(path), _docx_image_pixels(gold)
    if len(got) != len(want):
        return failed(f"{len(got)} images, expected {len(want)}")
    return verdict(got == want, f"{len(got)} images identical", "the images' pixels differ")


def compare_contains_image(result: Any, expected: Any = None, **options: Any) -> Score:
    """Paragraph by paragraph, both documents have (or lack) an inline image at the same places."""
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem

    def marks(file: str) -> list[bool]:
        return ["graphicData" in p._p.xml for p in _document(file).paragraphs]

    got, want = marks(path), marks(gold)
    return verdict(got == want, "images at the same paragraphs", "images are at different paragraphs")


def _tab_positions(paragraph: Any) -> list[tuple[Any, float]]:
    return [(stop.alignment, float(stop.position)) for stop in paragraph.paragraph_format.tab_stops]


def check_tabstops(result: Any, expected: Any = None, **options: Any) -> Score:
    """Non-empty paragraphs use the same tab stops as the gold. Fractional.

    The paragraph texts must be equal; with ``word_number_split_by_tabstop`` the part
    ``index`` of each tab-split paragraph must have that many words. The tab-stop
    alignments must be equal; the score is 1 minus the mean relative distance of the
    tab-stop positions.
    """
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    paras1 = [p for p in _document(path).paragraphs if p.text.strip()]
    paras2 = [p for p in _document(gold).paragraphs if p.text.strip()]
    if [p.text for p in paras1] != [p.text for p in paras2]:
        return failed(f"paragraph texts differ ({len(paras1)} vs {len(paras2)} non-empty paragraphs)")
    words = options.get("word_number_split_by_tabstop")
    index = int(options.get("index", 0))
    distances = []
    for number, (a, b) in enumerate(zip(paras1, paras2, strict=True), start=1):
        if words is not None:
            parts = a.text.split("\t")
            if len(parts) <= index or len(parts[index].split()) != int(words):
                return failed(
                    f"paragraph {number}: part {index} before a tab is not {words} words: {short(a.text)}"
                )
        stops1, stops2 = _tab_positions(a), _tab_positions(b)
        if [s[0] for s in stops1] != [s[0] for s in stops2]:
            return failed(f"paragraph {number}: tab stops {stops1}, expected {stops2}")
        for (_, p1), (_, p2) in zip(stops1, stops2, strict=True):
            distances.append(abs(p1 - p2) / max(abs(p1), abs(p2), 1.0))
    value = 1 - (sum(distances) / len(distances) if distances else 0.0)
    return Score(value, f"tab stops match, position score {value:.3f}")


def compare_subscript_contains(result: Any, expected: Any = None, **options: Any) -> Score:
    """Some aligned pair of runs is subscript in both documents."""
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    for p1, p2 in zip(_document(path).paragraphs, _document(gold).paragraphs, strict=False):
        for r1, r2 in zip(p1.runs, p2.runs, strict=False):
            if r1.font.subscript and r2.font.subscript:
                return passed(f"subscript run {r1.text!r} as in the gold")
    return failed("no run is subscript where the gold has one")


def has_page_numbers_in_footers(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every section's footer shows a page number (a PAGE field or a digit)."""
    path, problem = existing_file(result)
    if problem:
        return problem
    sections = _document(path or "").sections
    for number, section in enumerate(sections, start=1):
        xml = section.footer._element.xml
        texts = "".join(section.footer._element.itertext())
        if not (re.search(r"\bPAGE\b", xml) or re.search(r"\d", texts)):
            return failed(f"section {number}'s footer has no page number")
    return passed(f"all {len(sections)} footers have page numbers")


def _run_font_name(run: Any, paragraph: Any, default: str | None) -> str | None:
    return run.font.name or (paragraph.style.font.name if paragraph.style is not None else None) or default


def compare_font_names(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every run's font (its own, else its paragraph style's, else Normal's) is ``font_name``."""
    path, problem = existing_file(result)
    if problem:
        return problem
    want = str(rules_of(expected).get("font_name", ""))
    document = _document(path or "")
    default = document.styles["Normal"].font.name
    for paragraph in document.paragraphs:
        for run in paragraph.runs:
            name = _run_font_name(run, paragraph, default)
            if run.text.strip() and name != want:
                return failed(f"run {short(run.text)} uses {name!r}, expected {want!r}")
    return passed(f"every run uses {want!r}")


def is_first_line_centered(result: Any, expected: Any = None, **options: Any) -> Score:
    """The first paragraph is centred."""
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    path, problem = existing_file(result)
    if problem:
        return problem
    paragraphs = _document(path or "").paragraphs
    if not paragraphs:
        return failed("the document has no paragraph")
    alignment = paragraphs[0].alignment
    return verdict(
        alignment == WD_ALIGN_PARAGRAPH.CENTER,
        "the first line is centred",
        f"the first line's alignment is {alignment}",
    )


def _highlighted_spans(path: str) -> list[str]:
    root = _odt_root(path)
    yellow_styles = {
        style.get(f"{{{_ODF_STYLE}}}name")
        for style in root.iter(f"{{{_ODF_STYLE}}}style")
        for props in style.iter(f"{{{_ODF_STYLE}}}text-properties")
        if (props.get(f"{{{_ODF_FO}}}background-color") or "").lower() == YELLOW
    }
    return [
        "".join(span.itertext())
        for span in root.iter(f"{{{_ODF_TEXT}}}span")
        if span.get(f"{{{_ODF_TEXT}}}style-name") in yellow_styles
    ]


def check_highlighted_words(result: Any, expected: Any = None, **options: Any) -> Score:
    """The .odt text equals the gold and no span is highlighted yellow."""
    text = compare_docx_files(result, expected)
    if text.value < 1:
        return text
    path, _, _ = _load_pair(result, expected)
    spans = _highlighted_spans(path)
    return verdict(not spans, "text equal and nothing highlighted", f"still highlighted: {short(spans)}")


def _docx_highlighted_runs(path: str) -> set[str | None] | None:
    """The first text of each run of a .docx's body that carries a highlight other than
    ``none`` (what OSWorld compares), or None when the file is not a readable .docx."""
    etree = load_module("lxml.etree")
    try:
        with zipfile.ZipFile(path) as archive:
            root = etree.fromstring(archive.read("word/document.xml"))
    except (zipfile.BadZipFile, KeyError, OSError, etree.XMLSyntaxError):
        return None
    found: set[str | None] = set()
    for run in root.iter(f"{{{_W}}}r"):
        mark = next(run.iter(f"{{{_W}}}highlight"), None)
        if mark is not None and mark.get(f"{{{_W}}}val") != "none":
            text = next(run.iter(f"{{{_W}}}t"), None)
            if text is not None:
                found.add(text.text)
    return found


def compare_highlighted_text(result: Any, expected: Any = None, **options: Any) -> Score:
    """Both documents have the same highlighted text: for .docx, the same set of highlighted
    runs' texts (as OSWorld reads them); for .odt, the same yellow-highlighted spans."""
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    if not path.lower().endswith(".odt"):
        runs, gold_runs = _docx_highlighted_runs(path), _docx_highlighted_runs(gold)
        if runs is None or gold_runs is None:
            return failed(f"cannot read the highlights of {path if runs is None else gold} as a .docx")
        return verdict(
            runs == gold_runs,
            f"{len(runs)} highlighted runs as expected",
            f"highlighted {short(sorted(map(str, runs)))}, expected {short(sorted(map(str, gold_runs)))}",
        )
    got, want = _highlighted_spans(path), _highlighted_spans(gold)
    return verdict(
        got == want,
        f"{len(got)} highlighted spans as expected",
        f"highlighted {short(got)}, expected {short(want)}",
    )


def evaluate_strike_through_last_paragraph(result: Any, expected: Any = None, **options: Any) -> Score:
    """The text equals the gold and every run of the last non-empty paragraph is struck through."""
    text = compare_docx_files(result, expected)
    if text.value < 1:
        return text
    path, _, _ = _load_pair(result, expected)
    paragraphs = [p for p in _document(path).paragraphs if p.text.strip()]
    if not paragraphs:
        return failed("the document has no text")
    plain = [r.text for r in paragraphs[-1].runs if r.text.strip() and not r.font.strike]
    return verdict(not plain, "the last paragraph is struck through", f"not struck through: {short(plain)}")


def _rgb_to_lab(rgb: tuple[int, int, int]) -> Any:
    import numpy as np

    return load_module("skimage.color").rgb2lab(np.array([[rgb]], dtype=float) / 255.0)[0, 0]


def _delta_e(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    return float(load_module("skimage.color").deltaE_ciede2000(_rgb_to_lab(a), _rgb_to_lab(b)))


def evaluate_colored_words_in_tables(result: Any, expected: Any = None, **options: Any) -> Score:
    """Text equal to the gold; table words starting with a vowel red, others blue (ΔE <= 3.5)."""
    text = compare_docx_files(result, expected)
    if text.value < 1:
        return text
    path, _, _ = _load_pair(result, expected)
    red, blue = (255, 0, 0), (0, 0, 255)
    for table in _document(path).tables:
        for row in table.rows:
            for cell in row.cells:
                for paragraph in cell.paragraphs:
                    for run in paragraph.runs:
                        word = run.text.strip()
                        if not word:
                            continue
                        color = run.font.color.rgb if run.font.color and run.font.color.type else None
                        if color is None:
                            return failed(f"word {word!r} has no colour")
                        target = red if word[0].lower() in "aeiou" else blue
                        if _delta_e(tuple(color), target) > 3.5:
                            return failed(
                                f"word {word!r} is #{color}, expected {'red' if target == red else 'blue'}"
                            )
    return passed("table words are coloured by their first letter")


def check_italic_font_size_14(result: Any, expected: Any = None, **options: Any) -> Score:
    """Text equal to the gold and every italic run is 14 pt."""
    text = compare_docx_files(result, expected)
    if text.value < 1:
        return text
    path, _, _ = _load_pair(result, expected)
    for paragraph in _document(path).paragraphs:
        for run in paragraph.runs:
            if run.font.italic and run.text.strip() and (run.font.size is None or run.font.size.pt != 14):
                size = None if run.font.size is None else run.font.size.pt
                return failed(f"italic run {short(run.text)} is {size} pt, expected 14")
    return passed("every italic run is 14 pt")


def contains_page_break(result: Any, expected: Any = None, **options: Any) -> Score:
    """The document has page breaks: as many as ``rules["page_break_count"]`` when given."""
    path, problem = existing_file(result)
    if problem:
        return problem
    body = _document(path or "").element.body
    count = len(body.findall(f".//{{{_W}}}br[@{{{_W}}}type='page']"))
    count += len(body.findall(f".//{{{_W}}}pageBreakBefore"))
    want = rules_of(expected).get("page_break_count")
    if count == 0:
        return failed("no page break")
    if want is not None and count != int(want):
        return failed(f"{count} page breaks, expected {want}")
    return passed(f"{count} page break(s)")


def find_default_font(result: Any, expected: Any = None, **options: Any) -> Score:
    """LibreOffice's Writer default font (registrymodifications.xcu) is ``rules["font_name"]``."""
    import xml.etree.ElementTree as ET

    path, problem = existing_file(result)
    if problem:
        return problem
    want = str(rules_of(expected).get("font_name", ""))
    oor = "{http://openoffice.org/2001/registry}"
    fonts = [
        (item.findtext("prop/value") or "")
        for item in ET.parse(path or "").getroot().iter("item")
        if "org.openoffice.Office.Writer/DefaultFont" in (item.get(f"{oor}path") or "")
        for prop in item.iter("prop")
        if prop.get(f"{oor}name") == "Standard"
    ]
    return verdict(
        want in fonts,
        f"default font {want!r}",
        f"default font {fonts or 'unset'}, expected {want!r}",
    )
