"""compare_table with every rule type, compare_csv and the conference-city check."""

from __future__ import annotations

import datetime
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import openpyxl
import pytest
from metric_files import check
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.formatting.rule import CellIsRule
from openpyxl.styles import Font, PatternFill
from openpyxl.worksheet.datavalidation import DataValidation

from pytest_osworld.evaluators.metrics import table as t

ROWS = [["Name", "Score", "Date"], ["Ann", 1.23456, datetime.date(2024, 1, 2)], ["Bob", 7, None]]


def book(path: Path, sheets: dict[str, list[list[Any]]], edit: Callable[[Any], None] | None = None) -> str:
    """Write an xlsx with the given sheets (rows of values); ``edit`` may change the workbook."""
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    if edit is not None:
        edit(workbook)
    workbook.save(path)
    return str(path)


@pytest.fixture
def gold(tmp_path: Path) -> str:
    return book(tmp_path / "gold.xlsx", {"Sheet1": ROWS, "Sheet2": [["x"]]})


def rules(*items: dict[str, Any]) -> dict[str, Any]:
    return {"rules": list(items)}


DATA = {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}


@pytest.mark.parametrize(
    ("rows", "rule", "value", "reason"),
    [
        (ROWS, DATA, 1, "3 rows equal"),
        ([*ROWS, [None, None, None], ["", None, None]], DATA, 1, "3 rows equal"),
        (
            [
                ["Name", "Score", "Date"],
                ["Ann", 1.234561, datetime.date(2024, 1, 2)],
                ["Bob", 7.0, ""],
            ],
            DATA,
            1,
            "rows equal",
        ),
        (
            [["Name", "Score", "Date"], ["Ann", 1.2347, datetime.date(2024, 1, 2)], ["Bob", 7]],
            DATA,
            0,
            "B2: got 1.2347, expected 1.23456",
        ),
        (
            [["Name", "Score", "Date"], ["Ann", 1.2347, datetime.date(2024, 1, 2)], ["Bob", 7]],
            {**DATA, "precision": 2},
            1,
            "rows equal",
        ),
        ([["name", "Score", "Date"], *ROWS[1:]], DATA, 0, "A1: got 'name', expected 'Name'"),
        ([["name", "Score", "Date"], *ROWS[1:]], {**DATA, "ignore_case": True}, 1, "rows equal"),
        (ROWS[:2], DATA, 0, "data is 2x3, expected 3x3"),
        (
            ROWS,
            {"type": "sheet_data", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"},
            1,
            "rows equal",
        ),
        (
            ROWS,
            {"type": "sheet_data", "sheet_idx0": "RI0", "sheet_idx1": "EI1"},
            0,
            "data is 3x3, expected 1x1",
        ),
        (
            ROWS,
            {"type": "sheet_data", "sheet_idx0": "RI5", "sheet_idx1": "EI0"},
            0,
            "has no sheet number 5",
        ),
        (
            ROWS,
            {"type": "sheet_data", "sheet_idx0": "RNNope", "sheet_idx1": "EI0"},
            0,
            "has no sheet 'Nope'",
        ),
        (
            ROWS,
            {"type": "sheet_data", "sheet_idx0": "XX0", "sheet_idx1": "EI0"},
            0,
            "unrecognised sheet index 'XX0'",
        ),
        (ROWS, {"type": "sheet_colour"}, 0, "unknown rule type 'sheet_colour'"),
    ],
)
def test_sheet_data(
    tmp_path: Path,
    gold: str,
    rows: list[list[Any]],
    rule: dict[str, Any],
    value: float,
    reason: str,
) -> None:
    result = book(tmp_path / "result.xlsx", {"Sheet1": rows})
    check(t.compare_table(result, gold, **rules(rule)), value, reason)


def test_inputs(tmp_path: Path, gold: str) -> None:
    check(t.compare_table(None, gold, **rules(DATA)), 0, "no result")
    check(t.compare_table(str(tmp_path / "none.xlsx"), gold, **rules(DATA)), 0, "does not exist")
    broken = tmp_path / "broken.xlsx"
    broken.write_text("not a zip")
    check(t.compare_table(str(broken), gold, **rules(DATA)), 0, "cannot open")
    check(t.compare_table(gold, None, **rules(DATA)), 0, "needs an expected workbook")
    check(t.compare_table([gold, "x.csv"], [gold], **rules(DATA)), 1, "all 1 rules pass")


def test_sheet_name(tmp_path: Path, gold: str) -> None:
    same = book(tmp_path / "same.xlsx", {"Sheet1": [], "Sheet2": []})
    other = book(tmp_path / "other.xlsx", {"Sheet2": [], "Sheet1": []})
    check(
        t.compare_table(same, gold, **rules({"type": "sheet_name"})),
        1,
        "sheet names ['Sheet1', 'Sheet2']",
    )
    check(
        t.compare_table(other, gold, **rules({"type": "sheet_name"})),
        0,
        "expected ['Sheet1', 'Sheet2']",
    )


def test_sheet_print(tmp_path: Path) -> None:
    result = book(tmp_path / "r.xlsx", {"Sheet1": ROWS})
    expected = book(tmp_path / "e.xlsx", {"Sheet1": ROWS})
    (tmp_path / "r-Sheet1.csv").write_text("Name,Score\nAnn,1.23\n\n\n")
    (tmp_path / "e-Sheet1.csv").write_text("name,Score\nAnn,1.23\n")
    rule = {"type": "sheet_print", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"}
    check(t.compare_table(result, expected, **rules(rule)), 0, "printed line 1: got 'Name,Score'")
    check(
        t.compare_table(result, expected, **rules({**rule, "ignore_case": True})),
        1,
        "prints the same 2 lines",
    )
    (tmp_path / "e-Sheet1.csv").write_text("Name,Score\nAnn,1.23\nBob,7\n")
    check(t.compare_table(result, expected, **rules(rule)), 0, "prints 2 lines, expected 3")
    lonely = book(tmp_path / "lonely.xlsx", {"Sheet1": ROWS})
    check(t.compare_table(lonely, expected, **rules(rule)), 0, "no CSV print of sheet 'Sheet1'")
    # the CSV may come as the second item of a multi-file result, under another folder
    elsewhere = tmp_path / "fetched"
    elsewhere.mkdir()
    shutil.copy(tmp_path / "e-Sheet1.csv", elsewhere / "lonely-Sheet1.csv")
    check(
        t.compare_table([lonely, str(elsewhere / "lonely-Sheet1.csv")], expected, **rules(rule)),
        1,
        "prints the same 3 lines",
    )


def test_sheet_fuzzy(tmp_path: Path) -> None:
    result = book(
        tmp_path / "r.xlsx",
        {"Sheet1": [["Name", "Street"], ["  Ann ", "12 Main Rd"], ["Bob", "(555) 123-4567"]]},
    )
    expected = book(
        tmp_path / "e.xlsx",
        {"Sheet1": [["name", "Street"], ["Ann", "12 Main Road"], ["Bob", "5551234567"]]},
    )
    good = {
        "type": "sheet_fuzzy",
        "sheet_idx0": "RNSheet1",
        "sheet_idx1": "ENSheet1",
        "rules": [
            {"range": ["A1:A1"], "type": "includes", "ignore_case": True},
            {
                "range": ["A2:A3"],
                "type": "exact_match",
                "trim_leadings": " ",
                "trim_trailings": " ",
            },
            {
                "range": ["B2"],
                "type": "fuzzy_match",
                "threshold": 85,
                "normalization": [["Rd", "Road"]],
            },
            {"range": ["B3"], "type": "included_by", "ignore_chars": " ()-"},
        ],
    }
    check(t.compare_table(result, expected, **rules(good)), 1, "5 cells match fuzzily")
    bad = {**good, "rules": [{"range": ["A1:B1"], "type": "exact_match"}]}
    check(
        t.compare_table(result, expected, **rules(bad)),
        0,
        "A1: got 'Name', expected 'name' (exact_match)",
    )


def _bar_chart(title: str, direction: str = "col") -> Callable[[Any], None]:
    def edit(workbook: Any) -> None:
        sheet = workbook["Sheet1"]
        chart = BarChart()
        chart.type = direction
        chart.title = title
        chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=3), titles_from_data=True)
        chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=3))
        sheet.add_chart(chart, "E2")

    return edit


def _line_chart(workbook: Any) -> None:
    sheet = workbook["Sheet1"]
    chart = LineChart()
    chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=3))
    sheet.add_chart(chart, "E2")


def test_chart(tmp_path: Path) -> None:
    data = {"Sheet1": [["k", "v"], ["a", 1], ["b", 2]]}
    expected = book(tmp_path / "e.xlsx", data, _bar_chart("Sales"))
    same = book(tmp_path / "same.xlsx", data, _bar_chart("Sales"))
    retitled = book(tmp_path / "t.xlsx", data, _bar_chart("Costs"))
    line = book(tmp_path / "l.xlsx", data, _line_chart)
    horizontal = book(tmp_path / "h.xlsx", data, _bar_chart("Sales", "bar"))
    rule = {"type": "chart", "sheet_idx0": 0, "sheet_idx1": "EI0", "chart_props": ["type", "title"]}
    check(t.compare_table(same, expected, **rules(rule)), 1, "1 chart(s) match on ['title', 'type']")
    check(t.compare_table(retitled, expected, **rules(rule)), 0, "'title': 'Costs'")
    check(t.compare_table(line, expected, **rules({**rule, "chart_props": ["type"]})), 0, "lineChart")
    check(
        t.compare_table(horizontal, expected, **rules({**rule, "chart_props": ["type", "direction"]})),
        0,
        "'direction': 'bar'",
    )
    check(
        t.compare_table(same, expected, **rules({**rule, "chart_props": ["colour"]})),
        0,
        "unknown chart property",
    )


def test_pivot_table_without_pivots(tmp_path: Path, gold: str) -> None:
    rule = {
        "type": "pivot_table",
        "sheet_idx0": "RNSheet1",
        "sheet_idx1": "ENSheet1",
        "pivot_props": ["col_fields"],
    }
    check(t.compare_table(gold, gold, **rules(rule)), 1, "0 pivot table(s) match")


def _pivot(row_fields: list[int], source: str = "A1:D9") -> Any:
    field = SimpleNamespace
    return SimpleNamespace(
        pivotFields=[
            field(items=[]),
            field(items=[field(h=None, x=0), field(h=None, x=1)]),
            field(items=[field(h=True, x=0)]),
        ],
        cache=SimpleNamespace(
            cacheSource=SimpleNamespace(
                type="worksheet", worksheetSource=SimpleNamespace(ref=source, sheet="Sheet1")
            )
        ),
        rowFields=[field(x=x) for x in row_fields],
        colFields=[],
        dataFields=[field(fld=2, name="Sum", subtotal="sum", showDataAs=None)],
        pageFields=[field(fld=1)],
        name="P1",
    )


def test_pivot_info_trims_empty_fields_and_shifts_indices() -> None:
    key, info = t._pivot_info(_pivot([1]), {"row_fields", "data_fields", "filter"})
    # one empty field on the left is dropped: the source starts one column later
    assert key == "worksheet;(1, 2):(9, 4);Sheet1"
    assert info["row_fields"] == [0]
    assert info["data_fields"] == ["1;;sum;None"]
    assert info["filter_fields"] == {1}
    assert info["selection"] == [{(None, 0), (None, 1)}, {(True, 0)}]
    assert t._pivot_info(_pivot([2]), {"row_fields"})[1] != info


def test_style(tmp_path: Path) -> None:
    def colour(rgb: str) -> Callable[[Any], None]:
        def edit(workbook: Any) -> None:
            workbook["Sheet1"]["B2"].font = Font(color=rgb)
            workbook["Sheet1"]["A3"].fill = PatternFill("solid", fgColor="FFFF0000")

        return edit

    expected = book(tmp_path / "e.xlsx", {"Sheet1": ROWS}, colour("FF00FF00"))
    same = book(tmp_path / "s.xlsx", {"Sheet1": ROWS}, colour("FF00FF00"))
    other = book(tmp_path / "o.xlsx", {"Sheet1": ROWS}, colour("FF0000FF"))
    rule = {
        "type": "style",
        "sheet_idx0": 0,
        "sheet_idx1": "EI0",
        "props": ["font_color", "bgcolor"],
    }
    check(t.compare_table(same, expected, **rules(rule)), 1, "equal on 3x3 cells")
    check(
        t.compare_table(other, expected, **rules(rule)),
        0,
        "B2 ['font_color', 'bgcolor']: got ['FF0000FF'",
    )


def test_style_conditional_formats(tmp_path: Path) -> None:
    def rule_with(colour: str) -> Callable[[Any], None]:
        def edit(workbook: Any) -> None:
            fill = PatternFill(start_color=colour, end_color=colour, fill_type="solid")
            workbook["Sheet1"].conditional_formatting.add(
                "B2:B3", CellIsRule(operator="greaterThan", formula=["5"], fill=fill)
            )

        return edit

    expected = book(tmp_path / "e.xlsx", {"Sheet1": ROWS}, rule_with("FFFF0000"))
    same = book(tmp_path / "s.xlsx", {"Sheet1": ROWS}, rule_with("FFFF0000"))
    other = book(tmp_path / "o.xlsx", {"Sheet1": ROWS}, rule_with("FF00FF00"))
    rule = {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["bgcolor"]}
    check(t.compare_table(same, expected, **rules(rule)), 1, "equal")
    check(t.compare_table(other, expected, **rules(rule)), 0, "conditional formats")


def test_freeze_and_zoom(tmp_path: Path) -> None:
    def view(freeze: str | None, zoom: int) -> Callable[[Any], None]:
        def edit(workbook: Any) -> None:
            workbook["Sheet1"].freeze_panes = freeze
            workbook["Sheet1"].sheet_view.zoomScale = zoom

        return edit

    expected = book(tmp_path / "e.xlsx", {"Sheet1": ROWS}, view("B2", 100))
    frozen = book(tmp_path / "f.xlsx", {"Sheet1": ROWS}, view("B2", 200))
    loose = book(tmp_path / "l.xlsx", {"Sheet1": ROWS}, view(None, 300))
    freeze = {"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}
    check(t.compare_table(frozen, expected, **rules(freeze)), 1, "panes ('frozen', 1, 1)")
    check(
        t.compare_table(loose, expected, **rules(freeze)),
        0,
        "panes ('none',), expected ('frozen', 1, 1)",
    )
    zoom = {"type": "zoom", "sheet_idx": 0, "method": "lt", "ref": 260}
    check(t.compare_table(frozen, None, **rules(zoom)), 1, "zoom 200 satisfies lt 260")
    check(t.compare_table(loose, None, **rules(zoom)), 0, "zoom 300 fails lt 260")


def test_data_validation(tmp_path: Path) -> None:
    def validation(formula: str, sqref: str) -> Callable[[Any], None]:
        def edit(workbook: Any) -> None:
            dv = DataValidation(type="list", formula1=formula)
            dv.add(sqref)
            workbook["Sheet1"].add_data_validation(dv)

        return edit

    rule = {
        "type": "data_validation",
        "sheet_idx": 0,
        "dv_props": [
            {
                "ranges": {"method": "spreadsheet_range", "ref": ["D2:D29", "D1:D1048576"]},
                "type": {"method": "eq", "ref": "list"},
                "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
            }
        ],
    }
    good = book(tmp_path / "g.xlsx", {"Sheet1": ROWS}, validation('"Pass,Fail,Held"', "D2:D40"))
    short_range = book(tmp_path / "s.xlsx", {"Sheet1": ROWS}, validation('"Pass,Fail,Held"', "D2:D10"))
    none = book(tmp_path / "n.xlsx", {"Sheet1": ROWS})
    check(t.compare_table(good, None, **rules(rule)), 1, "1 validations as expected")
    check(
        t.compare_table(short_range, None, **rules(rule)),
        0,
        "validation on D2:D10 (list) matches no expected one",
    )
    check(t.compare_table(none, None, **rules(rule)), 0, "has 0 validations, expected 1")


def test_row_and_col_props(tmp_path: Path) -> None:
    def dims(hidden_row: int, width: float) -> Callable[[Any], None]:
        def edit(workbook: Any) -> None:
            workbook["Sheet1"].row_dimensions[hidden_row].hidden = True
            workbook["Sheet1"].column_dimensions["B"].width = width

        return edit

    expected = book(tmp_path / "e.xlsx", {"Sheet1": ROWS}, dims(3, 20))
    same = book(tmp_path / "s.xlsx", {"Sheet1": ROWS}, dims(3, 20))
    other = book(tmp_path / "o.xlsx", {"Sheet1": ROWS}, dims(2, 30))
    rows_rule = {"type": "row_props", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["hidden"]}
    cols_rule = {"type": "col_props", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["width"]}
    check(t.compare_table(same, expected, **rules(rows_rule, cols_rule)), 1, "row ['hidden'] equal")
    check(
        t.compare_table(other, expected, **rules(rows_rule)),
        0,
        "row 2: got {'hidden': True}, expected None",
    )
    check(t.compare_table(other, expected, **rules(cols_rule)), 0, "column B: got {'width': 30")


def test_filter(tmp_path: Path) -> None:
    def auto(ref: str, values: list[str]) -> Callable[[Any], None]:
        def edit(workbook: Any) -> None:
            workbook["Sheet1"].auto_filter.ref = ref
            workbook["Sheet1"].auto_filter.add_filter_column(0, values)

        return edit

    expected = book(tmp_path / "e.xlsx", {"Sheet1": ROWS}, auto("A1:C3", ["Ann"]))
    same = book(tmp_path / "s.xlsx", {"Sheet1": ROWS}, auto("A1:C3", ["Ann"]))
    other = book(tmp_path / "o.xlsx", {"Sheet1": ROWS}, auto("A1:C3", ["Bob"]))
    rule = {"type": "filter", "sheet_idx0": 0, "sheet_idx1": "EI0"}
    check(t.compare_table(same, expected, **rules(rule)), 1, "'ref': 'A1:C3'")
    check(t.compare_table(other, expected, **rules(rule)), 0, "expected")


def _add_sparkline(path: str, source: str) -> str:
    ext = (
        '<extLst><ext uri="{05C60535-1F16-4fd2-B633-F4F36F0B64E0}" '
        'xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main">'
        '<x14:sparklineGroups xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main">'
        f"<x14:sparklineGroup><x14:sparklines><x14:sparkline><xm:f>{source}</xm:f>"
        "<xm:sqref>D1</xm:sqref></x14:sparkline></x14:sparklines></x14:sparklineGroup>"
        "</x14:sparklineGroups></ext></extLst></worksheet>"
    )
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["xl/worksheets/sheet1.xml"] = members["xl/worksheets/sheet1.xml"].replace(
        b"</worksheet>", ext.encode()
    )
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_sparkline(tmp_path: Path) -> None:
    expected = _add_sparkline(book(tmp_path / "e.xlsx", {"Sheet1": ROWS}), "Sheet1!A1:C1")
    same = _add_sparkline(book(tmp_path / "s.xlsx", {"Sheet1": ROWS}), "Sheet1!A1:C1")
    other = _add_sparkline(book(tmp_path / "o.xlsx", {"Sheet1": ROWS}), "Sheet1!A2:C2")
    rule = {"type": "sparkline", "sheet_idx0": 0, "sheet_idx1": "EI0"}
    check(t.compare_table(same, expected, **rules(rule)), 1, "{'D1': 'Sheet1!A1:C1'}")
    check(t.compare_table(other, expected, **rules(rule)), 0, "expected {'D1': 'Sheet1!A1:C1'}")


def test_check_cell(tmp_path: Path) -> None:
    def styled(workbook: Any) -> None:
        sheet = workbook["Sheet2"]
        sheet.merge_cells("A1:C1")
        sheet["A1"].font = Font(bold=True, color="FFFFFFFF")
        sheet["A1"].fill = PatternFill("solid", fgColor="FF0000FF")

    result = book(
        tmp_path / "r.xlsx",
        {"Sheet1": [[1, 191.66668]], "Sheet2": [["Investment Summary"]]},
        styled,
    )
    good = [
        {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": "B1",
            "props": {"value": {"method": "approx:0.001", "ref": 191.6667}},
        },
        {
            "type": "check_cell",
            "sheet_idx": "RNSheet2",
            "coordinate": "A1",
            "props": {
                "value": {"method": "eq", "ref": "Investment Summary"},
                "font_bold": {"method": "eq", "ref": True},
                "font_color": {"method": "eq", "ref": "FFFFFFFF"},
                "bgcolor": {"method": "eq", "ref": "FF0000FF"},
            },
        },
        {
            "type": "check_cell",
            "sheet_idx": "RNSheet2",
            "coordinate": "B1",
            "props": {"merge": {"method": "eq", "ref": True}},
        },
        {
            "type": "check_cell",
            "sheet_idx": "RNSheet2",
            "coordinate": "D1",
            "props": {"merge": {"method": "eq", "ref": False}},
        },
    ]
    check(t.compare_table(result, None, rules=good), 1, "all 4 rules pass")
    bad = {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": "B1",
        "props": {"value": {"method": "approx:0.00001", "ref": 191.6667}},
    }
    check(
        t.compare_table(result, None, **rules(bad)),
        0,
        "rule 0 (check_cell): sheet 'Sheet1' B1 value: got 191.66668",
    )
    empty = {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": "Z9",
        "props": {"value": {"method": "eq", "ref": 1}},
    }
    check(t.compare_table(result, None, **rules(empty)), 0, "Z9 value: got None")


def test_rules_stop_at_the_first_failure(tmp_path: Path, gold: str) -> None:
    result = book(tmp_path / "r.xlsx", {"Sheet1": ROWS, "Other": []})
    check(
        t.compare_table(result, gold, **rules(DATA, {"type": "sheet_name"}, {"type": "sheet_colour"})),
        0,
        "rule 1 (sheet_name)",
    )


@pytest.mark.parametrize(
    ("result", "expected", "options", "value", "reason"),
    [
        ("a,b\n1,2\n", ["a,b\n1,2\n"], {}, 1, "2 lines equal"),
        ("a,b\n1,2\n", ["x\n", "a,b\n1,2\n"], {}, 1, "2 lines equal e1.csv"),
        ("a,b\n1,3\n", ["a,b\n1,2\n"], {}, 0, "line 2: got '1,3', expected '1,2'"),
        ("A,B \n", ["a,b\n"], {"strict": False, "ignore_case": True}, 1, "1 lines equal"),
        ("a,b\n", ["a,b\n1,2\n"], {}, 0, "line 2: got '<end>'"),
    ],
)
def test_compare_csv(
    tmp_path: Path,
    result: str,
    expected: list[str],
    options: dict[str, Any],
    value: float,
    reason: str,
) -> None:
    (tmp_path / "r.csv").write_text(result, encoding="utf-8")
    golds = []
    for index, text in enumerate(expected):
        (tmp_path / f"e{index}.csv").write_text(text, encoding="utf-8")
        golds.append(str(tmp_path / f"e{index}.csv"))
    check(
        t.compare_csv(str(tmp_path / "r.csv"), golds if len(golds) > 1 else golds[0], **options),
        value,
        reason,
    )


def test_compare_csv_reads_legacy_encodings(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_bytes("café\n".encode("cp1252"))
    (tmp_path / "e.csv").write_text("café\n", encoding="utf-8-sig")
    check(t.compare_csv(str(tmp_path / "r.csv"), str(tmp_path / "e.csv")), 1, "1 lines equal")


def test_compare_conference_city_in_order(tmp_path: Path) -> None:
    cities = {"expected": ["Scottsdale", ["Montreal", "Montréal"], ["New York", "NYC"]]}
    good = book(
        tmp_path / "g.xlsx",
        {
            "S": [
                ["Conf", "Year", "City"],
                ["A", 1, "Scottsdale, AZ"],
                ["B", 2, "MONTREAL"],
                ["C", 3, "NYC"],
            ]
        },
    )
    bad = book(
        tmp_path / "b.xlsx",
        {"S": [["Conf", "Year", "City"], ["A", 1, "Scottsdale"], ["B", 2, "Quebec"]]},
    )
    check(t.compare_conference_city_in_order(good, cities), 1, "all 3 cities")
    check(t.compare_conference_city_in_order(bad, cities), 0, "C3: got 'Quebec'")
