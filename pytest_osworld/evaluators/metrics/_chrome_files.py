"""Document comparisons of the Chrome domain: PDF text, PDF images and HTML trees.

Owns ``compare_pdfs``, ``compare_pdf_images`` and ``compare_htmls`` (pypdf, Pillow,
imagehash, BeautifulSoup, each imported on first use). ``chrome`` re-exports them under
their registered names, and its archive comparison uses ``compare_pdfs``.
"""

from __future__ import annotations

import os
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    fuzz_ratio,
    missing,
    passed,
    path_list,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score


def _pdf_text(path: str) -> str:
    from pypdf import PdfReader

    return "".join(page.extract_text() or "" for page in PdfReader(path).pages).strip()


def compare_pdfs(result: Any, expected: Any = None, **options: Any) -> Score:
    """Mean rapidfuzz ratio of the extracted text of each result/expected PDF pair. Fractional."""
    results, golds = path_list(result), path_list(expected)
    if not results:
        return missing()
    if not golds:
        return missing("expected")
    total = 0.0
    notes = []
    for got, want in zip(results, golds, strict=False):
        try:
            ratio = fuzz_ratio(_pdf_text(got), _pdf_text(want)) / 100
        except Exception as exc:  # an unreadable pdf scores 0 for its pair
            notes.append(f"{os.path.basename(got)}: {exc}")
            ratio = 0.0
        total += ratio
    value = total / len(golds)
    detail = f"; unreadable: {'; '.join(notes)}" if notes else ""
    return Score(value, f"mean text similarity {value:.3f} over {len(golds)} PDF(s){detail}")


def _pdf_images(path: str) -> list[Any]:
    import io

    from PIL import Image
    from pypdf import PdfReader

    images = []
    for page in PdfReader(path).pages:
        for image in page.images:
            images.append(Image.open(io.BytesIO(image.data)).convert("RGB"))
    return images


def compare_pdf_images(result: Any, expected: Any = None, **options: Any) -> Score:
    """Fraction of embedded images whose perceptual hashes differ by at most 5. Fractional.

    The PDFs must hold the same number of images; two PDFs without images score 1.
    """
    import imagehash

    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    got, want = _pdf_images(path or ""), _pdf_images(gold or "")
    if len(got) != len(want):
        return failed(f"{len(got)} images, expected {len(want)}")
    if not want:
        return passed("neither PDF has images")
    close = sum(1 for a, b in zip(got, want, strict=True) if imagehash.phash(a) - imagehash.phash(b) <= 5)
    value = close / len(want)
    return Score(value, f"{close}/{len(want)} images match by perceptual hash")


def _html_mismatch(a: Any, b: Any, ignore_sdnum: bool) -> str | None:
    from bs4 import Tag

    if a.name != b.name:
        return f"tag <{a.name}> vs <{b.name}>"
    if a.get_text(strip=True) != b.get_text(strip=True):
        return f"<{a.name}> text {short(a.get_text(strip=True))} vs {short(b.get_text(strip=True))}"
    attrs_a, attrs_b = dict(a.attrs), dict(b.attrs)
    if ignore_sdnum:
        attrs_a.pop("sdnum", None)
        attrs_b.pop("sdnum", None)
    if attrs_a != attrs_b:
        return f"<{a.name}> attributes {short(attrs_a)} vs {short(attrs_b)}"
    kids_a = [c for c in a.children if isinstance(c, Tag)]
    kids_b = [c for c in b.children if isinstance(c, Tag)]
    if len(kids_a) != len(kids_b):
        return f"<{a.name}> has {len(kids_a)} child tags vs {len(kids_b)}"
    for x, y in zip(kids_a, kids_b, strict=True):
        problem = _html_mismatch(x, y, ignore_sdnum)
        if problem:
            return problem
    return None


def compare_htmls(result: Any, expected: Any = None, **options: Any) -> Score:
    """Two HTML files have the same tag tree, stripped texts and attributes (``ignore_sdnum``)."""
    from bs4 import BeautifulSoup

    from pytest_osworld.evaluators.metrics._utils import read_text

    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    soup_a = BeautifulSoup(read_text(path or ""), "lxml")
    soup_b = BeautifulSoup(read_text(gold or ""), "lxml")
    mismatch = _html_mismatch(soup_a, soup_b, bool(options.get("ignore_sdnum", False)))
    return verdict(mismatch is None, "the HTML trees are equal", f"HTML differs: {mismatch}")


#: Limits on what ``compare_archive`` unpacks: the sum of the members' sizes and their
#: number. Real task archives are a few MB with dozens of files; a zip bomb is refused
#: before anything is written.
