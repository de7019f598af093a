"""Writer metrics that compare text, and the readers every Writer metric shares.

Owns ``compare_docx_files`` (and its variants for lines, tables and line spacing), which the
formatting metrics of ``_docs_format`` call first, and the shared readers: opening a .docx
(python-docx), reading an .odt's paragraphs from its ``content.xml``, resolving a result and
an expected path, collapsing paragraphs into one comparable string. ``docs`` re-exports the
metrics under their registered names.
"""

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
    passed,
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
