"""Writer metrics over .docx (python-docx) and .odt (the XML inside the zip) documents.

This module is the one the metric registry names. It owns the train-record, image-text and
reference metrics; document, line, table and line-spacing comparisons (and the shared
readers) live in ``_docs_text``, formatting and image checks in ``_docs_format``; both are
re-exported here under their registered names.
"""

from __future__ import annotations

import os
from typing import Any

from pytest_osworld.evaluators.metrics._docs_format import (
    check_highlighted_words,
    check_italic_font_size_14,
    check_tabstops,
    compare_contains_image,
    compare_docx_images,
    compare_font_names,
    compare_highlighted_text,
    compare_subscript_contains,
    contains_page_break,
    evaluate_colored_words_in_tables,
    evaluate_strike_through_last_paragraph,
    find_default_font,
    has_page_numbers_in_footers,
    is_first_line_centered,
)
from pytest_osworld.evaluators.metrics._docs_text import (
    YELLOW,
    _load_pair,
    _paragraph_texts,
    compare_docx_files,
    compare_docx_files_and_ignore_new_lines,
    compare_docx_lines,
    compare_docx_tables,
    compare_line_spacing,
)
from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    fuzz_ratio,
    load_module,
    missing,
    path_list,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score

__all__ = [
    "YELLOW",
    "check_highlighted_words",
    "check_italic_font_size_14",
    "check_tabstops",
    "compare_contains_image",
    "compare_docx_files",
    "compare_docx_files_and_ignore_new_lines",
    "compare_docx_images",
    "compare_docx_lines",
    "compare_docx_tables",
    "compare_font_names",
    "compare_highlighted_text",
    "compare_image_text",
    "compare_line_spacing",
    "compare_references",
    "compare_subscript_contains",
    "compare_unique_train_records",
    "contains_page_break",
    "evaluate_colored_words_in_tables",
    "evaluate_strike_through_last_paragraph",
    "find_default_font",
    "has_page_numbers_in_footers",
    "is_first_line_centered",
]


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
