"""PDF metrics (pypdf)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from pytest_osworld.evaluators.metrics._utils import existing_file, failed, rules_of, verdict
from pytest_osworld.evaluators.score import Score

_RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


def check_pdf_pages(result: Any, expected: Any = None, **options: Any) -> Score:
    """The page count compares to ``rules["ref_value"]`` by ``rules["relation"]`` (eq, lt, ...)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    path, problem = existing_file(result)
    if problem:
        return problem
    rules = rules_of(expected)
    relation = str(rules.get("relation", "eq"))
    if relation not in _RELATIONS:
        return failed(f"unknown relation {relation!r}; known: {sorted(_RELATIONS)}")
    try:
        pages = len(PdfReader(path or "").pages)
    except (PdfReadError, OSError) as exc:
        return failed(f"cannot read the PDF: {exc}")
    ref = rules.get("ref_value")
    ok = bool(_RELATIONS[relation](pages, ref))
    return verdict(ok, f"{pages} pages ({relation} {ref})", f"{pages} pages, not {relation} {ref}")
