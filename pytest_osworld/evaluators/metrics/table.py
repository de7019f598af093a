"""Spreadsheet metrics: ``compare_table`` and its rules, ``compare_csv``, conference cities.

``compare_table(result, expected, rules=[...])`` applies the rules in order and stops at
the first one that fails; its reason names the rule, the sheet and the first difference.
Sheet indices are an int (a result sheet by position) or a string: ``RI<n>`` / ``EI<n>``
(result / expected sheet by position) and ``RN<name>`` / ``EN<name>`` (by name).

This module owns the metric entry points and the table of rule kinds. The rules live in
``_table_data`` (cell contents) and ``_table_model`` (charts, pivots, styles, views); the
workbooks in ``_table_books``; the readers of cell values in ``_table_values``: cached
values through python-calamine, corrected to exactly what openpyxl's read-only load gives,
with openpyxl as the explicit fallback, and the full openpyxl model only for rules that
need charts, pivots, styles, merges or views.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_osworld.evaluators.metrics._table_books import RuleFailure, RuleResult, _Book, _Pair
from pytest_osworld.evaluators.metrics._table_data import (
    _make_sheet_print,
    _rule_check_cell,
    _rule_sheet_data,
    _rule_sheet_fuzzy,
    _rule_sheet_name,
)
from pytest_osworld.evaluators.metrics._table_model import (
    _make_dims_rule,
    _pivot_info,
    _rule_chart,
    _rule_data_validation,
    _rule_filter,
    _rule_freeze,
    _rule_pivot_table,
    _rule_sparkline,
    _rule_style,
    _rule_zoom,
    load_sparklines,
    read_cell_style,
)
from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    first_path,
    missing,
    passed,
    path_list,
    read_text,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score

__all__ = [
    "TABLE_RULE_TYPES",
    "RuleFailure",
    "compare_conference_city_in_order",
    "compare_csv",
    "compare_table",
    "load_sparklines",
    "read_cell_style",
]

# Re-exported for the tests of the pivot rule.
_pivot_info = _pivot_info


def _rule_table(
    extra: Sequence[str],
) -> dict[str, Callable[[_Pair, Mapping[str, Any]], RuleResult]]:
    return {
        "sheet_name": _rule_sheet_name,
        "sheet_data": _rule_sheet_data,
        "sheet_print": _make_sheet_print(extra),
        "sheet_fuzzy": _rule_sheet_fuzzy,
        "chart": _rule_chart,
        "pivot_table": _rule_pivot_table,
        "style": _rule_style,
        "freeze": _rule_freeze,
        "zoom": _rule_zoom,
        "data_validation": _rule_data_validation,
        "row_props": _make_dims_rule("row"),
        "col_props": _make_dims_rule("column"),
        "filter": _rule_filter,
        "sparkline": _rule_sparkline,
        "check_cell": _rule_check_cell,
    }


#: Every rule type ``compare_table`` understands.
TABLE_RULE_TYPES = tuple(_rule_table(()))


def compare_table(result: Any, expected: Any = None, **options: Any) -> Score:
    """Apply ``options["rules"]`` to the result workbook (and the expected one); all must pass.

    ``result`` and ``expected`` are xlsx paths, or lists whose first item is the xlsx and
    whose other items are CSV prints of its sheets (``<stem>-<Sheet>.csv``).
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    gold = first_path(expected)
    if gold is not None and not os.path.isfile(gold):
        return failed(f"expected file {gold!r} does not exist")
    rules = list(options.get("rules", []))
    extra = path_list(result)[1:] + path_list(expected)[1:]
    table = _rule_table(extra)
    pair = _Pair(_Book(path or ""), _Book(gold) if gold else None)
    reasons = []
    try:
        try:
            pair.result.names()
        except Exception as exc:  # openpyxl raises several types for a corrupt file
            return failed(f"cannot open {path!r} as a workbook: {exc}")
        for number, rule in enumerate(rules):
            kind = rule.get("type")
            if kind not in table:
                raise RuleFailure(f"unknown rule type {kind!r}; known: {', '.join(TABLE_RULE_TYPES)}")
            ok, reason = table[kind](pair, rule)
            if not ok:
                return failed(f"rule {number} ({kind}): {reason}")
            reasons.append(reason)
    except RuleFailure as exc:
        return failed(str(exc))
    except SyntaxError as exc:
        # Sheets are read lazily, by the rules: invalid XML in one (an entity bomb, a
        # truncated file) surfaces here as ElementTree's or lxml's parse error.
        return failed(f"cannot open {path!r} as a workbook: a sheet is not valid XML: {exc}")
    finally:
        pair.result.close()
        if pair.expected is not None:
            pair.expected.close()
    return passed(f"all {len(rules)} rules pass: " + "; ".join(reasons))


def compare_csv(result: Any, expected: Any = None, **options: Any) -> Score:
    """The result CSV's lines equal those of the expected CSV (or of one of several).

    ``strict=False`` strips each line; ``ignore_case`` lowers them.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    golds = [g for g in path_list(expected) if os.path.isfile(g)]
    if not golds:
        return missing("expected CSV")
    strict = bool(options.get("strict", True))
    ignore_case = bool(options.get("ignore_case", False))

    def lines(file: str) -> list[str]:
        out = read_text(file).splitlines()
        out = out if strict else [x.strip() for x in out]
        return [x.lower() for x in out] if ignore_case else out

    got = lines(path or "")
    first_difference = ""
    for gold in golds:
        want = lines(gold)
        if got == want:
            return passed(f"{len(got)} lines equal {os.path.basename(gold)}")
        if not first_difference:
            index = next(
                (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                min(len(got), len(want)),
            )
            a = got[index] if index < len(got) else "<end>"
            b = want[index] if index < len(want) else "<end>"
            first_difference = f"line {index + 1}: got {short(a)}, expected {short(b)}"
    return failed(f"CSV differs from {len(golds)} expected file(s); {first_difference}")


def _city_key(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower().strip()


def compare_conference_city_in_order(result: Any, expected: Any = None, **options: Any) -> Score:
    """Cells C2, C3, ... of the active sheet contain the expected cities in order.

    Each expected item is a city or a list of accepted alternatives; accents and case are
    ignored.
    """
    import openpyxl

    path, problem = existing_file(result)
    if problem:
        return problem
    cities = list(rules_of(expected).get("expected", []))
    workbook = openpyxl.load_workbook(path or "", read_only=True, data_only=True)
    try:
        sheet = workbook.active
        column = [
            row[0]
            for row in sheet.iter_rows(
                min_row=2, max_row=1 + len(cities), min_col=3, max_col=3, values_only=True
            )
        ]
    finally:
        workbook.close()
    for offset, want in enumerate(cities):
        got = column[offset] if offset < len(column) else None
        options_list = want if isinstance(want, list) else [want]
        if got is None or not any(_city_key(str(o)) in _city_key(str(got)) for o in options_list):
            return failed(f"C{offset + 2}: got {short(got)}, expected {short(want)}")
    return verdict(True, f"all {len(cities)} cities in order", "")
