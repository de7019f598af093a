"""Writer metrics over .docx (python-docx) and .odt (the XML inside the zip) documents."""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterable
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    fuzz_ratio,
    load_module,
    missing,
    passed,
    path_list,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score

_ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_ODF_STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
_ODF_FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#: The highlight colour ``check_highlighted_words`` looks for.
YELLOW = "#ffff00"


def _document(path: str) -> Any:
    from docx import Document

    return Document(path)


def _odt_root(path: str) -> Any:
    etree = load_module("lxml.etree")
    with zipfile.ZipFile(path) as archive:
        return etree.fromstring(archive.read("content.xml"))


def _odt_paragraphs(path: str) -> list[str]:
    root = _odt_root(path)
    return ["".join(el.itertext()) for el in root.iter(f"{{{_ODF_TEXT}}}p", f"{{{_ODF_TEXT}}}h")]


def _paragraph_texts(path: str) -> list[str]:
    if path.lower().endswith(".odt"):
        return _odt_paragraphs(path)
    return [p.text for p in _document(path).paragraphs]


def _load_pair(result: Any, expected: Any) -> tuple[str, str, Score | None]:
    path, problem = existing_file(result)
    if problem:
        return "", "", problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return "", "", gold_problem
    return path or "", gold or "", None


def _collapse(texts: Iterable[str], ignore_case: bool) -> str:
    text = re.sub(r"\s+", " ", "\n".join(texts)).strip()
    return text.lower() if ignore_case else text


def compare_docx_files(result: Any, expected: Any = None, **options: Any) -> Score:
    """Two documents (.docx or .odt, of the same kind) have the same text.

    Options: ``ignore_blanks`` (default true: compare the whole text with whitespace
    collapsed), ``ignore_case``, ``ignore_order`` (sort the paragraphs),
    ``delete_empty_lines``, ``content_only`` (score = fuzzy ratio of the whole texts) and
    ``fuzzy_match`` (fuzzy ratio instead of equality). Without ``ignore_blanks`` the
    paragraphs are compared one by one.
    """
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    if os.path.splitext(path)[1].lower() != os.path.splitext(gold)[1].lower():
        return failed(f"{os.path.basename(path)} and {os.path.basename(gold)} are different document types")
    try:
        got, want = _paragraph_texts(path), _paragraph_texts(gold)
    except Exception as exc:  # python-docx and zipfile raise several types for a bad file
        return failed(f"cannot read the documents: {exc}")
    ignore_case = bool(options.get("ignore_case", False))
    if options.get("delete_empty_lines", False):
        got, want = [p for p in got if p.strip()], [p for p in want if p.strip()]
    if options.get("ignore_order", False):
        got, want = sorted(p.strip() for p in got), sorted(p.strip() for p in want)
    if options.get("content_only", False):
        ratio = fuzz_ratio(_collapse(got, ignore_case), _collapse(want, ignore_case)) / 100
        return Score(ratio, f"content similarity {ratio:.3f}")
    if options.get("ignore_blanks", True):
        text1, text2 = _collapse(got, ignore_case), _collapse(want, ignore_case)
        if options.get("fuzzy_match", False):
            ratio = fuzz_ratio(text1, text2) / 100
            return Score(ratio, f"text similarity {ratio:.3f}")
        if text1 != text2:
            index = next(
                (i for i, (a, b) in enumerate(zip(text1, text2, strict=False)) if a != b),
                min(len(text1), len(text2)),
            )
            return failed(
                f"text differs at character {index}: got {short(text1[index : index + 40])}, "
                f"expected {short(text2[index : index + 40])}"
            )
        return passed(f"the text is the same ({len(text1)} characters, blanks collapsed)")
    if len(got) != len(want):
        return failed(f"{len(got)} paragraphs, expected {len(want)}")
    scores = []
    for number, (a, b) in enumerate(zip(got, want, strict=True), start=1):
        a2, b2 = (a.lower(), b.lower()) if ignore_case else (a, b)
        if options.get("fuzzy_match", False):
            scores.append(fuzz_ratio(a2, b2) / 100)
        elif a2 != b2:
            return failed(f"paragraph {number}: got {short(a)}, expected {short(b)}")
    if scores:
        value = sum(scores) / len(scores)
        return Score(value, f"mean paragraph similarity {value:.3f}")
    return passed(f"all {len(got)} paragraphs are the same")


def compare_docx_files_and_ignore_new_lines(result: Any, expected: Any = None, **options: Any) -> Score:
    """Two .docx texts are equal once empty paragraphs are dropped and whitespace collapsed."""
    options = {**options, "delete_empty_lines": True, "ignore_blanks": True}
    return compare_docx_files(result, expected, **options)


def compare_docx_lines(result: Any, expected: Any = None, **options: Any) -> Score:
    """The non-empty stripped paragraphs of two .docx files are equal as sets."""
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    got = {p.strip() for p in _paragraph_texts(path) if p.strip()}
    want = {p.strip() for p in _paragraph_texts(gold) if p.strip()}
    return verdict(
        got == want,
        f"{len(got)} lines equal",
        f"lines differ: missing {short(sorted(want - got))}, extra {short(sorted(got - want))}",
    )


def compare_docx_tables(result: Any, expected: Any = None, **options: Any) -> Score:
    """Same number and shape of tables, and equal stripped cell texts."""
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    tables1, tables2 = _document(path).tables, _document(gold).tables
    if len(tables1) != len(tables2):
        return failed(f"{len(tables1)} tables, expected {len(tables2)}")
    for t, (a, b) in enumerate(zip(tables1, tables2, strict=True)):
        if len(a.rows) != len(b.rows) or len(a.columns) != len(b.columns):
            return failed(
                f"table {t} is {len(a.rows)}x{len(a.columns)}, expected {len(b.rows)}x{len(b.columns)}"
            )
        for r, (row1, row2) in enumerate(zip(a.rows, b.rows, strict=True)):
            for c, (cell1, cell2) in enumerate(zip(row1.cells, row2.cells, strict=True)):
                if cell1.text.strip() != cell2.text.strip():
                    return failed(
                        f"table {t} cell ({r},{c}): got {short(cell1.text.strip())}, expected "
                        f"{short(cell2.text.strip())}"
                    )
    return passed(f"{len(tables1)} tables equal")


def compare_line_spacing(result: Any, expected: Any = None, **options: Any) -> Score:
    """The texts are equal (``compare_docx_files``) and each paragraph's line spacing too."""
    text = compare_docx_files(result, expected)
    if text.value < 1:
        return text
    path, gold, _ = _load_pair(result, expected)
    paras1, paras2 = _document(path).paragraphs, _document(gold).paragraphs
    for number, (a, b) in enumerate(zip(paras1, paras2, strict=False), start=1):
        s1, s2 = a.paragraph_format.line_spacing, b.paragraph_format.line_spacing
        if s1 != s2:
            return failed(f"paragraph {number} line spacing {s1}, expected {s2}")
    return passed(f"text and line spacing of {len(paras1)} paragraphs equal")


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


def compare_highlighted_text(result: Any, expected: Any = None, **options: Any) -> Score:
    """Both .odt files have the same yellow-highlighted spans."""
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    got, want = _highlighted_spans(path), _highlighted_spans(gold)
    return verdict(
        got == want,
        f"{len(got)} highlighted spans as expected",
        f"highlighted {short(got)}, expected {short(want)}",
    )


def _lines(path: str) -> list[str]:
    return [p.strip() for p in _paragraph_texts(path) if p.strip()]


def compare_unique_train_records(result: Any, expected: Any = None, **options: Any) -> Score:
    """Duplicate train ids removed: ``expected`` is ``[gold, original]``.

    The result's lines come from the original, their train ids (second field) are unique
    and equal to the gold's, and there are as many lines as in the gold.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    files = path_list(expected)
    if len(files) < 2 or not all(os.path.isfile(f) for f in files[:2]):
        return missing("gold and original documents")
    got, gold, original = _lines(path or ""), _lines(files[0]), set(_lines(files[1]))
    foreign = [line for line in got if line not in original]
    if foreign:
        return failed(f"line {short(foreign[0])} is not in the original")

    def ids(lines: list[str]) -> list[str]:
        return [line.split(",")[1].strip() for line in lines if line.count(",") >= 1]

    got_ids = ids(got)
    if len(got_ids) != len(set(got_ids)):
        return failed("train ids are not unique")
    if set(got_ids) != set(ids(gold)):
        return failed(f"{len(set(got_ids))} train ids, expected {len(set(ids(gold)))} (sets differ)")
    return verdict(
        len(got) == len(gold),
        f"{len(got)} unique train records",
        f"{len(got)} lines, expected {len(gold)}",
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


def compare_image_text(result: Any, expected: Any = None, **options: Any) -> Score:
    """OCR (Tesseract) of the image contains ``rules["text"]``."""
    pytesseract = load_module("pytesseract")
    path, problem = existing_file(result)
    if problem:
        return problem
    from pytest_osworld.evaluators.metrics._utils import open_image

    want = str(rules_of(expected).get("text", ""))
    try:
        text = pytesseract.image_to_string(open_image(path or "", "RGB"))
    except pytesseract.TesseractNotFoundError:
        return failed("tesseract is not installed (apt-get install tesseract-ocr)")
    return verdict(want in text, f"OCR found {want!r}", f"OCR text {short(text)} lacks {want!r}")


def compare_references(result: Any, expected: Any = None, **options: Any) -> Score:
    """Paragraphs after the ``reference_indicator`` heading match the gold's. Fractional.

    Same count required; the mean fuzzy ratio is rescaled above ``reference_base_result``
    (default 0.5): ``(mean - base) / (1 - base)``, 0 below the base.
    """
    path, gold, problem = _load_pair(result, expected)
    if problem:
        return problem
    indicator = str(options.get("reference_indicator", "References"))
    base = float(options.get("reference_base_result", 0.5))

    def references(file: str) -> list[str]:
        paragraphs = _paragraph_texts(file)
        start = next((i for i in range(len(paragraphs) - 1, -1, -1) if indicator in paragraphs[i]), None)
        return [] if start is None else [p for p in paragraphs[start + 1 :] if p.strip()]

    got, want = references(path), references(gold)
    if len(got) != len(want):
        return failed(f"{len(got)} references, expected {len(want)}")
    if not want:
        return failed(f"no {indicator!r} section in the gold")
    mean = sum(fuzz_ratio(a, b) / 100 for a, b in zip(got, want, strict=True)) / len(want)
    if mean < base:
        return failed(f"reference similarity {mean:.3f} is below the base {base}")
    value = (mean - base) / (1 - base)
    return Score(value, f"reference similarity {mean:.3f}, {value:.3f} above the base {base}")
