"""Spreadsheet metrics: ``compare_table`` and its rules, ``compare_csv``, conference cities.

``compare_table(result, expected, rules=[...])`` applies the rules in order and stops at
the first one that fails; its reason names the rule, the sheet and the first difference.
Sheet indices are an int (a result sheet by position) or a string: ``RI<n>`` / ``EI<n>``
(result / expected sheet by position) and ``RN<name>`` / ``EN<name>`` (by name).

Workbooks are opened lazily: cell values through a read-only, cached-values load (what
LibreOffice last computed), and the full openpyxl model only for rules that need charts,
pivots, styles, merges or views.
"""

from __future__ import annotations

import itertools
import os
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    first_path,
    fuzz_ratio,
    load_module,
    match_rule,
    missing,
    passed,
    path_list,
    read_text,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score


class RuleFailure(Exception):
    """A rule cannot be applied (bad sheet index, missing workbook): the table scores 0."""


@dataclass
class _Book:
    """One workbook, loaded on demand."""

    path: str
    _values: Any = None
    _full: Any = None
    _grids: dict[str, list[list[Any]]] = field(default_factory=dict)

    def values(self) -> Any:
        if self._values is None:
            import openpyxl

            self._values = openpyxl.load_workbook(self.path, read_only=True, data_only=True)
        return self._values

    def full(self) -> Any:
        if self._full is None:
            import openpyxl

            self._full = openpyxl.load_workbook(self.path)
        return self._full

    def names(self) -> list[str]:
        return list(self.values().sheetnames)

    def grid(self, sheet: str) -> list[list[Any]]:
        """The cached cell values of ``sheet``, trailing empty rows and columns removed."""
        if sheet not in self._grids:
            if sheet not in self.names():
                raise RuleFailure(f"{os.path.basename(self.path)} has no sheet {sheet!r}")
            rows = [
                [_empty_to_none(v) for v in row] for row in self.values()[sheet].iter_rows(values_only=True)
            ]
            self._grids[sheet] = _trim(rows)
        return self._grids[sheet]

    def cell(self, sheet: str, coordinate: str) -> Any:
        """The cached value of one cell (None when empty or outside the data)."""
        from openpyxl.utils.cell import coordinate_to_tuple

        row, col = coordinate_to_tuple(coordinate)
        grid = self.grid(sheet)
        if row > len(grid) or col > len(grid[row - 1]):
            return None
        return grid[row - 1][col - 1]

    def sheet(self, name: str) -> Any:
        """The full openpyxl worksheet ``name``."""
        workbook = self.full()
        if name not in workbook.sheetnames:
            raise RuleFailure(f"{os.path.basename(self.path)} has no sheet {name!r}")
        return workbook[name]

    def close(self) -> None:
        if self._values is not None:
            self._values.close()


def _empty_to_none(value: Any) -> Any:
    return None if value == "" else value


def _trim(rows: list[list[Any]]) -> list[list[Any]]:
    while rows and all(v is None for v in rows[-1]):
        rows.pop()
    width = max((max((i + 1 for i, v in enumerate(r) if v is not None), default=0) for r in rows), default=0)
    return [r[:width] + [None] * (width - len(r)) for r in rows]


@dataclass
class _Pair:
    """The result and (optional) expected workbooks of one ``compare_table`` call."""

    result: _Book
    expected: _Book | None

    def resolve(self, index: int | str) -> tuple[_Book, str]:
        """The workbook and sheet name that a sheet index designates."""
        if isinstance(index, int):
            book, spec, by_name = self.result, str(index), False
        elif index[:2] in ("RI", "RN", "EI", "EN"):
            side, mode, spec = index[0], index[1], index[2:]
            chosen = self.result if side == "R" else self.expected
            if chosen is None:
                raise RuleFailure(f"sheet index {index!r} needs an expected workbook")
            book, by_name = chosen, mode == "N"
        else:
            raise RuleFailure(f"unrecognised sheet index {index!r}")
        if by_name:
            return book, spec
        names = book.names()
        try:
            position = int(spec)
            return book, names[position]
        except (ValueError, IndexError):
            raise RuleFailure(
                f"{os.path.basename(book.path)} has no sheet number {spec} ({len(names)} sheets)"
            ) from None


def _label(book: _Book, sheet: str) -> str:
    return f"{os.path.basename(book.path)}[{sheet!r}]"


def _cell_name(row: int, col: int) -> str:
    from openpyxl.utils import get_column_letter

    return f"{get_column_letter(col)}{row}"


def _normalise_cell(value: Any, precision: int, ignore_case: bool) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return round(float(value), precision)
    if isinstance(value, str) and ignore_case:
        return value.lower()
    return value


# --- rules ------------------------------------------------------------------------------

RuleResult = tuple[bool, str]


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


def _ref_of(data: Any) -> str:
    for source in (getattr(data, "numRef", None), getattr(data, "strRef", None)):
        if source is not None and getattr(source, "f", None):
            return str(source.f)
    return ""


def _rich_title(title: Any) -> str | None:
    try:
        return "".join(run.t for p in title.tx.rich.p for run in (p.r or []))
    except AttributeError:
        return None


def _chart_info(chart: Any, props: set[str]) -> dict[str, Any]:
    extractors: dict[str, Callable[[Any], Any]] = {
        "type": lambda c: c.tagname,
        "title": lambda c: _rich_title(c.title),
        "legend": lambda c: None if c.legend is None else c.legend.position,
        "anchor": lambda c: (
            c.anchor._from.col,
            c.anchor._from.row,
            c.anchor.to.col,
            c.anchor.to.row,
        ),
        "width": lambda c: c.width,
        "height": lambda c: c.height,
        "direction": lambda c: getattr(c, "barDir", None),
        "xtitle": lambda c: _rich_title(c.x_axis.title),
        "ytitle": lambda c: _rich_title(c.y_axis.title),
        "ztitle": lambda c: _rich_title(c.z_axis.title) if getattr(c, "z_axis", None) else None,
    }
    info: dict[str, Any] = {}
    for prop in sorted(props):
        if prop not in extractors:
            raise RuleFailure(f"unknown chart property {prop!r}")
        try:
            info[prop] = extractors[prop](chart)
        except AttributeError:
            info[prop] = None
    return info


def _charts(book: _Book, sheet: str, props: set[str]) -> dict[str, dict[str, Any]]:
    charts = {}
    for chart in book.sheet(sheet)._charts:
        key = ";".join(f"{_ref_of(s.val)},{_ref_of(s.cat)}" for s in chart.series)
        charts[key] = _chart_info(chart, props)
    return charts


def _rule_chart(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    props = set(rule.get("chart_props", []))
    book1, sheet1 = pair.resolve(rule["sheet_idx0"])
    book2, sheet2 = pair.resolve(rule["sheet_idx1"])
    got, want = _charts(book1, sheet1, props), _charts(book2, sheet2, props)
    if got == want:
        return True, f"sheet {sheet1!r}: {len(got)} chart(s) match on {sorted(props)}"
    return False, f"sheet {sheet1!r} charts {short(got, 200)}, expected {short(want, 200)}"


def _pivot_info(pivot: Any, props: set[str]) -> tuple[str, dict[str, Any]]:
    from openpyxl.utils.cell import coordinate_to_tuple

    selection_raw = [
        [(item.h, item.x) for item in field.items if item.x is not None] for field in pivot.pivotFields
    ]
    left = len(list(itertools.takewhile(lambda row: not row, selection_raw)))
    right = len(list(itertools.takewhile(lambda row: not row, reversed(selection_raw))))
    selection = selection_raw[left : len(selection_raw) - right]
    source = pivot.cache.cacheSource
    first, last = source.worksheetSource.ref.split(":")
    r1, c1 = coordinate_to_tuple(first)
    r2, c2 = coordinate_to_tuple(last)
    key = f"{source.type};({r1}, {c1 + left}):({r2}, {c2 - right});{source.worksheetSource.sheet}"
    info: dict[str, Any] = {}
    simple: dict[str, Callable[[], Any]] = {
        "name": lambda: pivot.name,
        "show_total": lambda: pivot.visualTotals,
        "show_empty_row": lambda: pivot.showEmptyRow,
        "show_empty_col": lambda: pivot.showEmptyCol,
        "show_headers": lambda: pivot.showHeaders,
        "location": lambda: pivot.location.ref,
        "col_fields": lambda: [f.x - left for f in pivot.colFields],
        "row_fields": lambda: [f.x - left for f in pivot.rowFields],
        "data_fields": lambda: [
            f"{f.fld - left};{f.name if 'data_fields_name' in props else ''};{f.subtotal};{f.showDataAs}"
            for f in pivot.dataFields
        ],
    }
    for prop in sorted(props & set(simple)):
        info[prop] = simple[prop]()
    if "filter" in props or "selection" in props:
        info["selection"] = selection if "ordered" in props else [set(row) for row in selection]
    if "filter" in props:
        info["filter_fields"] = {f.fld for f in pivot.pageFields}
    return key, info


def _rule_pivot_table(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    props = set(rule.get("pivot_props", []))
    book1, sheet1 = pair.resolve(rule["sheet_idx0"])
    book2, sheet2 = pair.resolve(rule["sheet_idx1"])
    got = dict(_pivot_info(p, props) for p in book1.sheet(sheet1)._pivots)
    want = dict(_pivot_info(p, props) for p in book2.sheet(sheet2)._pivots)
    if got == want:
        return True, f"sheet {sheet1!r}: {len(got)} pivot table(s) match"
    return False, f"sheet {sheet1!r} pivots {short(got, 200)}, expected {short(want, 200)}"


def _color_rgb(color: Any) -> Any:
    if color is None:
        return None
    rgb = getattr(color, "rgb", None)
    return rgb if isinstance(rgb, str) else None


def read_cell_style(prop: str, cell: Any) -> Any:
    """One style property of an openpyxl cell, or None for an empty cell.

    Properties: number_format, font_name, font_family, font_color, font_bold, font_italic,
    font_underline, font_size, fill_type, bgcolor/fgcolor, hyperlink, merge.
    """
    from openpyxl.cell.cell import MergedCell

    if prop == "merge":
        return isinstance(cell, MergedCell)
    if prop in ("bgcolor", "fgcolor", "fill_type"):
        fill = cell.fill
        if prop == "fill_type":
            return getattr(fill, "fill_type", None)
        return _color_rgb(getattr(fill, "fgColor", None))
    if cell.value is None:
        return None
    font = cell.font
    readers: dict[str, Callable[[], Any]] = {
        "number_format": lambda: cell.number_format if cell.data_type == "n" else None,
        "font_name": lambda: font.name,
        "font_family": lambda: font.family,
        "font_color": lambda: _color_rgb(font.color),
        "font_bold": lambda: font.bold,
        "font_italic": lambda: font.italic,
        "font_underline": lambda: font.underline,
        "font_size": lambda: font.size,
        "hyperlink": lambda: cell.hyperlink.target if cell.hyperlink else "",
    }
    if prop not in readers:
        raise RuleFailure(f"unknown cell style property {prop!r}")
    return readers[prop]()


def _conditional_formats(
    ws: Any, props: Sequence[str]
) -> list[tuple[str, str, str | None, tuple[str, ...], tuple[Any, ...]]]:
    # Rules are compared by definition: range, type, operator, formulas, and the styles
    # their differential format sets for the requested properties.
    found = []
    for formatting in ws.conditional_formatting:
        for cf in formatting.rules:
            dxf = cf.dxf
            styles: list[Any] = []
            for prop in props:
                if dxf is None:
                    styles.append(None)
                elif prop == "font_color":
                    styles.append(_color_rgb(dxf.font.color) if dxf.font else None)
                elif prop in ("bgcolor", "fgcolor"):
                    fill = dxf.fill
                    styles.append(_color_rgb(fill.bgColor) or _color_rgb(fill.fgColor) if fill else None)
                elif prop == "font_bold":
                    styles.append(dxf.font.bold if dxf.font else None)
                else:
                    styles.append(None)
            formulas = tuple("".join(str(f).split()).replace("$", "").upper() for f in cf.formula)
            found.append((str(formatting.sqref), str(cf.type), cf.operator, formulas, tuple(styles)))
    return sorted(found, key=repr)


def _rule_style(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    props = list(rule.get("props", []))
    book1, sheet1 = pair.resolve(rule["sheet_idx0"])
    book2, sheet2 = pair.resolve(rule["sheet_idx1"])
    ws1, ws2 = book1.sheet(sheet1), book2.sheet(sheet2)
    rows = max(ws1.max_row, ws2.max_row)
    cols = max(ws1.max_column, ws2.max_column)
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            s1 = [read_cell_style(p, ws1.cell(r, c)) for p in props]
            s2 = [read_cell_style(p, ws2.cell(r, c)) for p in props]
            if s1 != s2:
                return (
                    False,
                    f"sheet {sheet1!r} {_cell_name(r, c)} {props}: got {s1}, expected {s2}",
                )
    cf1, cf2 = _conditional_formats(ws1, props), _conditional_formats(ws2, props)
    if cf1 != cf2:
        return (
            False,
            f"sheet {sheet1!r} conditional formats {short(cf1, 200)}, expected {short(cf2, 200)}",
        )
    return True, f"sheet {sheet1!r}: {props} equal on {rows}x{cols} cells"


def _freeze_key(ws: Any) -> tuple[Any, ...]:
    pane = ws.sheet_view.pane
    if pane is None:
        return ("none",)
    state = (pane.state or "").lower()
    xs, ys = int(pane.xSplit or 0), int(pane.ySplit or 0)
    if state in ("frozen", "frozensplit"):
        return ("frozen", xs, ys)
    return ("split", xs, ys, pane.topLeftCell)


def _rule_freeze(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    book1, sheet1 = pair.resolve(rule["sheet_idx0"])
    book2, sheet2 = pair.resolve(rule["sheet_idx1"])
    got, want = _freeze_key(book1.sheet(sheet1)), _freeze_key(book2.sheet(sheet2))
    return got == want, f"sheet {sheet1!r} panes {got}" + ("" if got == want else f", expected {want}")


def _rule_zoom(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    book, sheet = pair.resolve(rule["sheet_idx"])
    zoom = book.sheet(sheet).sheet_view.zoomScale or 100
    ok = match_rule(zoom, rule)
    return (
        ok,
        f"sheet {sheet!r} zoom {zoom} {'satisfies' if ok else 'fails'} {rule['method']} {rule['ref']}",
    )


def _validator_attr(validator: Any, name: str) -> Any:
    readers: dict[str, Callable[[], Any]] = {
        "ranges": lambda: validator.sqref,
        "sqref": lambda: validator.sqref,
        "type": lambda: validator.type,
        "formula1": lambda: validator.formula1,
        "formula2": lambda: validator.formula2,
        "operator": lambda: validator.operator,
        "allow_blank": lambda: validator.allow_blank,
        "showDropDown": lambda: validator.showDropDown,
        "showErrorMessage": lambda: validator.showErrorMessage,
        "showInputMessage": lambda: validator.showInputMessage,
        "error": lambda: validator.error,
        "prompt": lambda: validator.prompt,
    }
    if name not in readers:
        raise RuleFailure(f"unknown data-validation property {name!r}")
    return readers[name]()


def _rule_data_validation(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    book, sheet = pair.resolve(rule["sheet_idx"])
    validators = list(book.sheet(sheet).data_validations.dataValidation)
    wanted = list(rule.get("dv_props", []))
    if len(validators) < len(wanted):
        return False, f"sheet {sheet!r} has {len(validators)} validations, expected {len(wanted)}"
    for validator in validators:
        if not any(
            all(match_rule(_validator_attr(validator, k), m) for k, m in props.items()) for props in wanted
        ):
            return (
                False,
                f"sheet {sheet!r} validation on {validator.sqref} ({validator.type}) matches no expected one",
            )
    return True, f"sheet {sheet!r}: {len(validators)} validations as expected"


def _dimensions(ws: Any, kind: str, props: Sequence[str]) -> dict[Any, dict[str, Any]]:
    holder = ws.row_dimensions if kind == "row" else ws.column_dimensions
    readers: dict[str, Callable[[Any], Any]] = {
        "hidden": lambda d: bool(d.hidden),
        "height": lambda d: d.height,
        "width": lambda d: d.width,
        "outline_level": lambda d: d.outline_level,
        "collapsed": lambda d: bool(d.collapsed),
    }
    unknown = [p for p in props if p not in readers]
    if unknown:
        raise RuleFailure(f"unknown {kind} property {unknown[0]!r}")
    return {key: {p: readers[p](dims) for p in props} for key, dims in holder.items()}


def _make_dims_rule(kind: str) -> Callable[[_Pair, Mapping[str, Any]], RuleResult]:
    def rule_dims(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
        props = list(rule.get("props", []))
        book1, sheet1 = pair.resolve(rule["sheet_idx0"])
        book2, sheet2 = pair.resolve(rule["sheet_idx1"])
        got = _dimensions(book1.sheet(sheet1), kind, props)
        want = _dimensions(book2.sheet(sheet2), kind, props)
        for key in sorted(set(got) | set(want), key=str):
            if got.get(key) != want.get(key):
                return (
                    False,
                    f"sheet {sheet1!r} {kind} {key}: got {got.get(key)}, expected {want.get(key)}",
                )
        return True, f"sheet {sheet1!r}: {kind} {props} equal"

    return rule_dims


def _filters(ws: Any) -> dict[str, Any]:
    auto = ws.auto_filter
    columns = []
    for fc in auto.filterColumn:
        column: dict[str, Any] = {
            "col_id": fc.colId,
            "hidden_button": fc.hiddenButton,
            "show_button": fc.showButton,
        }
        if fc.filters is not None:
            column["filters_blank"] = fc.filters.blank
            column["filters"] = set(fc.filters.filter)
        if fc.customFilters is not None:
            column["custom_filters_op"] = fc.customFilters._and
            column["custom_filters"] = {(f.operator, f.val) for f in fc.customFilters.customFilter}
        columns.append(column)
    info: dict[str, Any] = {
        "ref": auto.ref,
        "filter_column": sorted(columns, key=lambda c: c["col_id"]),
    }
    sort = auto.sortState
    if sort is not None:
        info["sort_state"] = {
            "sort": sort.columnSort,
            "case": sort.caseSensitive,
            "method": sort.sortMethod,
            "ref": sort.ref,
            "condition": [(c.descending, c.sortBy, c.ref, c.customList) for c in sort.sortCondition],
        }
    return info


def _rule_filter(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    book1, sheet1 = pair.resolve(rule["sheet_idx0"])
    book2, sheet2 = pair.resolve(rule["sheet_idx1"])
    got, want = _filters(book1.sheet(sheet1)), _filters(book2.sheet(sheet2))
    return got == want, f"sheet {sheet1!r} filter {short(got, 150)}" + (
        "" if got == want else f", expected {short(want, 150)}"
    )


def load_sparklines(path: str, sheet: str) -> dict[str, str]:
    """Sparkline groups of one sheet as ``{target range: source formula}`` (from the XML)."""
    import zipfile

    etree = load_module("lxml.etree")
    ns = {
        "m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
        "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
        "x14": "http://schemas.microsoft.com/office/spreadsheetml/2009/9/main",
        "xm": "http://schemas.microsoft.com/office/excel/2006/main",
    }
    with zipfile.ZipFile(path) as archive:
        workbook = etree.fromstring(archive.read("xl/workbook.xml"))
        rels = etree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
        rel_id = next(
            (
                s.get(f"{{{ns['r']}}}id")
                for s in workbook.iterfind("m:sheets/m:sheet", ns)
                if s.get("name") == sheet
            ),
            None,
        )
        if rel_id is None:
            raise RuleFailure(f"{os.path.basename(path)} has no sheet {sheet!r}")
        target = next(r.get("Target") for r in rels if r.get("Id") == rel_id)
        member = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        root = etree.fromstring(archive.read(member))
    return {
        (s.findtext("xm:sqref", namespaces=ns) or ""): (s.findtext("xm:f", namespaces=ns) or "")
        for s in root.iterfind(".//x14:sparkline", ns)
    }


def _rule_sparkline(pair: _Pair, rule: Mapping[str, Any]) -> RuleResult:
    book1, sheet1 = pair.resolve(rule["sheet_idx0"])
    book2, sheet2 = pair.resolve(rule["sheet_idx1"])
    got, want = load_sparklines(book1.path, sheet1), load_sparklines(book2.path, sheet2)
    return got == want, f"sheet {sheet1!r} sparklines {got}" + ("" if got == want else f", expected {want}")


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
