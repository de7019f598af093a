"""``compare_table`` rules about the workbook model: charts, pivots, styles, views, filters.

Owns the rule kinds ``chart``, ``pivot_table``, ``style`` (with conditional formats),
``freeze``, ``zoom``, ``data_validation``, ``row_props``, ``col_props``, ``filter`` and
``sparkline``, and :func:`read_cell_style`. They read the full openpyxl model
(:meth:`._table_books._Book.sheet`), or the sheet XML for sparklines.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_osworld.evaluators.metrics._table_books import (
    RuleFailure,
    RuleResult,
    _Book,
    _cell_name,
    _Pair,
)
from pytest_osworld.evaluators.metrics._utils import load_module, match_rule, short


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
