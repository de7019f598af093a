"""``compare_table`` rules about cell contents: sheet names, data, CSV prints, fuzzy cells, one cell.

Owns the rule kinds ``sheet_name``, ``sheet_data``, ``sheet_print``, ``sheet_fuzzy`` and
``check_cell``. Each is ``(pair, rule) -> (ok, reason)``; values come from
:meth:`._table_books._Book.grid` (the fast reader, or openpyxl where it declines).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pytest_osworld.evaluators.metrics._table_books import (
    RuleFailure,
    RuleResult,
    _Book,
    _cell_name,
    _label,
    _Pair,
)
from pytest_osworld.evaluators.metrics._table_model import read_cell_style
from pytest_osworld.evaluators.metrics._utils import fuzz_ratio, match_rule, read_text, short


def _normalise_cell(value: Any, precision: int, ignore_case: bool) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return round(float(value), precision)
    if isinstance(value, str) and ignore_case:
        return value.lower()
    return value


def _rule_sheet_name(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    if pair.expected is None:
        raise RuleFailure("sheet_name needs an expected workbook")
    got, want = pair.result.names(), pair.expected.names()
    return got == want, f"sheet names {got}" + ("" if got == want else f", expected {want}")


def _rule_sheet_data(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    book1, sheet1 = pair.resolve(rule["sheet_idx0"])
    book2, sheet2 = pair.resolve(rule["sheet_idx1"])
    precision = int(rule.get("precision", 4))
    ignore_case = bool(rule.get("ignore_case", False))
    grid1, grid2 = book1.grid(sheet1), book2.grid(sheet2)
    where = f"{_label(book1, sheet1)} vs {_label(book2, sheet2)}"
    if len(grid1) != len(grid2) or (grid1 and len(grid1[0]) != len(grid2[0])):
        shape1 = (len(grid1), len(grid1[0]) if grid1 else 0)
        shape2 = (len(grid2), len(grid2[0]) if grid2 else 0)
        return False, f"{where}: data is {shape1[0]}x{shape1[1]}, expected {shape2[0]}x{shape2[1]}"
    for r, (row1, row2) in enumerate(zip(grid1, grid2, strict=True), start=1):
        if row1 == row2:
            continue  # equal cells normalise equally: only unequal rows need the cell rules
        for c, (v1, v2) in enumerate(zip(row1, row2, strict=True), start=1):
            if _normalise_cell(v1, precision, ignore_case) != _normalise_cell(v2, precision, ignore_case):
                return (
                    False,
                    f"sheet {sheet1!r} {_cell_name(r, c)}: got {short(v1)}, expected {short(v2)}",
                )
    return True, f"{where}: {len(grid1)} rows equal"


def _printed_lines(book: _Book, sheet: str, extra: Sequence[str]) -> list[str]:
    stem = os.path.splitext(book.path)[0]
    candidates = [f"{stem}-{sheet}.csv"] + [p for p in extra if p.endswith(f"-{sheet}.csv")]
    path = next((p for p in candidates if os.path.isfile(p)), None)
    if path is None:
        raise RuleFailure(f"no CSV print of sheet {sheet!r} ({os.path.basename(candidates[0])})")
    lines = [line.strip() for line in read_text(path).splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _make_sheet_print(extra: Sequence[str]) -> Callable[[_Pair, Mapping[str, Any]], RuleResult]:
    def rule_sheet_print(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
        book1, sheet1 = pair.resolve(rule["sheet_idx0"])
        book2, sheet2 = pair.resolve(rule["sheet_idx1"])
        lines1, lines2 = _printed_lines(book1, sheet1, extra), _printed_lines(book2, sheet2, extra)
        if rule.get("ignore_case", False):
            lines1, lines2 = [x.lower() for x in lines1], [x.lower() for x in lines2]
        for number, (a, b) in enumerate(zip(lines1, lines2, strict=False), start=1):
            if a != b:
                return (
                    False,
                    f"sheet {sheet1!r} printed line {number}: got {short(a)}, expected {short(b)}",
                )
        if len(lines1) != len(lines2):
            return False, f"sheet {sheet1!r} prints {len(lines1)} lines, expected {len(lines2)}"
        return True, f"sheet {sheet1!r} prints the same {len(lines1)} lines"

    return rule_sheet_print


def _fuzzy_prepare(value: str, spec: Mapping[str, Any]) -> str:
    for old, new in spec.get("normalization", []):
        value = value.replace(old, new)
    if "trim_leadings" in spec:
        value = value.lstrip(spec["trim_leadings"])
    if "trim_trailings" in spec:
        value = value.rstrip(spec["trim_trailings"])
    if "ignore_chars" in spec:
        value = "".join(ch for ch in value if ch not in set(spec["ignore_chars"]))
    return value.lower() if spec.get("ignore_case", False) else value


def _fuzzy_cell_ok(kind: str, got: str, want: str, spec: Mapping[str, Any]) -> bool:
    if kind == "includes":
        return want in got
    if kind == "included_by":
        return got in want
    if kind == "fuzzy_match":
        return fuzz_ratio(got, want) >= float(spec.get("threshold", 85.0))
    if kind == "exact_match":
        return got == want
    raise RuleFailure(f"unknown sheet_fuzzy type {kind!r}")


def _cells_of(ranges: str | Sequence[str]) -> Iterable[str]:
    from openpyxl.worksheet.cell_range import MultiCellRange

    text = ranges if isinstance(ranges, str) else " ".join(ranges)
    for cell_range in MultiCellRange(text):
        for row, col in cell_range.cells:
            yield _cell_name(row, col)


def _rule_sheet_fuzzy(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    book1, sheet1 = pair.resolve(rule["sheet_idx0"])
    book2, sheet2 = pair.resolve(rule["sheet_idx1"])
    checked = 0
    for spec in rule.get("rules", []):
        for coordinate in _cells_of(spec["range"]):
            got = _fuzzy_prepare(str(book1.cell(sheet1, coordinate)), spec)
            want = _fuzzy_prepare(str(book2.cell(sheet2, coordinate)), spec)
            if not _fuzzy_cell_ok(spec["type"], got, want, spec):
                return (
                    False,
                    f"sheet {sheet1!r} {coordinate}: got {short(got)}, "
                    f"expected {short(want)} ({spec['type']})",
                )
            checked += 1
    return True, f"sheet {sheet1!r}: {checked} cells match fuzzily"


def _rule_check_cell(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    book, sheet = pair.resolve(rule["sheet_idx"])
    coordinate = rule["coordinate"]
    for prop, matcher in rule.get("props", {}).items():
        if prop == "value":
            value = book.cell(sheet, coordinate)
        else:
            value = read_cell_style(prop, book.sheet(sheet)[coordinate])
        if not match_rule(value, matcher):
            return (
                False,
                f"sheet {sheet!r} {coordinate} {prop}: got {short(value)}, "
                f"expected {matcher['method']} {short(matcher.get('ref'))}",
            )
    return True, f"sheet {sheet!r} {coordinate}: {sorted(rule.get('props', {}))} as expected"
