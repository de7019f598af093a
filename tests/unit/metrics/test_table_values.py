"""The calamine reader of compare_table gives exactly openpyxl's values, or declines.

Every workbook here is read twice: by :func:`openpyxl_grid` (the reference, openpyxl's
read-only, data-only load, as compare_table always read values) and by :class:`FastBook`.
The grids must be equal value for value and type for type (``7`` is not ``7.0``, a
``datetime`` is not a ``date``). Where FastBook declines, ``_Book`` must fall back to
openpyxl, say why in ``fallbacks``, and give the reference grid.
"""

from __future__ import annotations

import datetime
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from metric_files import libreoffice_convert
from openpyxl.styles import Alignment

from pytest_osworld.evaluators.metrics import table
from pytest_osworld.evaluators.metrics._table_books import _Book
from pytest_osworld.evaluators.metrics._table_values import Declined, FastBook, openpyxl_grid

pytest.importorskip("python_calamine")

Typed = list[list[tuple[str, Any]]]


def typed(grid: list[list[Any]]) -> Typed:
    """The grid with each value's type name, so that 7 and 7.0 differ."""
    return [[(type(v).__name__, v) for v in row] for row in grid]


def reference(path: str) -> dict[str, Typed]:
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        return {name: typed(openpyxl_grid(workbook, name)) for name in workbook.sheetnames}
    finally:
        workbook.close()


def fast_or_declined(path: str) -> tuple[list[str], dict[str, Typed | str]]:
    """The sheet names and, per sheet, the fast grid or the reason it declined."""
    book = FastBook(path)
    try:
        out: dict[str, Typed | str] = {}
        for name in book.names:
            try:
                out[name] = typed(book.grid(name))
            except Declined as exc:
                out[name] = f"declined: {exc}"
        return list(book.names), out
    finally:
        book.close()


def assert_same(path: str) -> dict[str, str]:
    """FastBook agrees with openpyxl on every sheet it reads; returns the declined ones."""
    want = reference(path)
    names, got = fast_or_declined(path)
    assert names == list(want)
    declined = {name: grid for name, grid in got.items() if isinstance(grid, str)}
    for name, grid in got.items():
        if not isinstance(grid, str):
            assert grid == want[name], name
    # and _Book, with its fallback, always gives the reference
    book = _Book(path)
    try:
        assert book.names() == list(want)
        for name in want:
            assert typed(book.grid(name)) == want[name], name
        assert set(book.fallbacks) == set(declined)
    finally:
        book.close()
    return declined


def write_book(
    path: Path, sheets: dict[str, list[list[Any]]], edit: Callable[[Any], None] | None = None
) -> str:
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


VALUES: list[Any] = [
    0,
    7,
    -3,
    7.0,
    1.5,
    -0.25,
    1e20,
    1e-7,
    123456789012345,
    True,
    False,
    "text",
    "  padded  ",
    "line\nbreak",
    "émoji ✓ 漢字",
    "",
    None,
    datetime.date(2024, 1, 2),
    datetime.datetime(2024, 1, 2, 3, 4, 5),
    datetime.datetime(1900, 1, 1, 12, 0),
    datetime.time(3, 4, 5),
    datetime.timedelta(hours=30, minutes=5),
    "=1+1",
    "=A1*2",
]


def _styles(workbook: Any) -> None:
    sheet = workbook["Data"]
    sheet["B2"].number_format = "0.00%"
    sheet["C3"].number_format = "yyyy-mm-dd"
    sheet["D4"].number_format = "[h]:mm:ss"
    sheet["E5"].number_format = '#,##0.00 "€"'
    sheet.merge_cells("G2:H3")
    sheet["G2"] = "merged"
    sheet["G2"].alignment = Alignment(horizontal="center")


def _shapes() -> dict[str, dict[str, list[list[Any]]]]:
    grid = [VALUES[i : i + 6] for i in range(0, len(VALUES), 6)]
    return {
        "types": {"Data": [[f"h{c}" for c in range(6)], *grid], "Empty": [], "Näme with space": [["x"]]},
        "sparse": {"S": [[None] * 5 + ["far"], [], [], [None, None, 3.25]]},
        "column": {"C": [[value] for value in VALUES]},
        "numbers": {"N": [[r * c + (0.5 if c % 2 else 0) for c in range(8)] for r in range(60)]},
        "trailing": {"T": [["a", None, "", None], ["", "", "", ""], [None, None, None, None]]},
    }


@pytest.mark.parametrize("name", list(_shapes()))
def test_openpyxl_written_workbooks_read_the_same(tmp_path: Path, name: str) -> None:
    path = write_book(tmp_path / f"{name}.xlsx", _shapes()[name], _styles if name == "types" else None)
    assert assert_same(path) == {}


@pytest.fixture(scope="module")
def libreoffice_books(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Workbooks written by LibreOffice: from openpyxl files (formulas get cached values),
    from a flat ODS with typed cells and from a CSV."""
    folder = tmp_path_factory.mktemp("lo")
    sources = [
        Path(write_book(folder / f"src_{name}.xlsx", sheets, _styles if name == "types" else None))
        for name, sheets in _shapes().items()
    ]
    (folder / "src_flat.fods").write_text(FLAT_ODS, encoding="utf-8")
    (folder / "src_plain.csv").write_text(
        "name,score,when,flag\nAnn,1.25,2024-01-02,TRUE\nBob,7,2024-02-29 13:45,FALSE\n  Cy ,-3e5,,\n",
        encoding="utf-8",
    )
    out = folder / "out"
    out.mkdir()
    return libreoffice_convert([*sources, folder / "src_flat.fods", folder / "src_plain.csv"], "xlsx", out)


FLAT_ODS = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2"
 office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:body><office:spreadsheet>
<table:table table:name="First">
 <table:table-row>
  <table:table-cell office:value-type="float" office:value="7"><text:p>7</text:p></table:table-cell>
  <table:table-cell office:value-type="float" office:value="2.5"><text:p>2.5</text:p></table:table-cell>
  <table:table-cell office:value-type="string"><text:p> spaced </text:p></table:table-cell>
  <table:table-cell office:value-type="boolean" office:boolean-value="true"><text:p>TRUE</text:p></table:table-cell>
  <table:table-cell office:value-type="date" office:date-value="2024-03-04"><text:p>2024-03-04</text:p></table:table-cell>
  <table:table-cell office:value-type="date" office:date-value="2024-03-04T05:06:07"><text:p>x</text:p></table:table-cell>
  <table:table-cell office:value-type="time" office:time-value="PT13H14M15S"><text:p>13:14:15</text:p></table:table-cell>
 </table:table-row>
 <table:table-row>
  <table:table-cell table:formula="of:=[.A1]*3" office:value-type="float" office:value="21"><text:p>21</text:p></table:table-cell>
  <table:table-cell table:formula="of:=1/0" office:value-type="float" office:value="0"><text:p>#DIV/0!</text:p></table:table-cell>
  <table:table-cell table:formula="of:=&quot;a&quot;&amp;&quot;b&quot;" office:value-type="string" office:string-value="ab"><text:p>ab</text:p></table:table-cell>
  <table:table-cell table:formula="of:=[.B1]/3" office:value-type="float" office:value="0.833333333333333"><text:p>0.83</text:p></table:table-cell>
  <table:table-cell table:number-columns-spanned="2" office:value-type="string"><text:p>span</text:p></table:table-cell>
  <table:covered-table-cell/>
 </table:table-row>
</table:table>
<table:table table:name="Second"><table:table-row><table:table-cell/></table:table-row></table:table>
</office:spreadsheet></office:body></office:document>
"""


def test_libreoffice_written_workbooks_read_the_same(libreoffice_books: list[Path]) -> None:
    declined = {path.name: assert_same(str(path)) for path in libreoffice_books}
    # LibreOffice writes nothing the fast reader has to refuse in these files
    assert declined == {path.name: {} for path in libreoffice_books}


def _edit_sheet(path: str, change: Callable[[str], str], member: str = "xl/worksheets/sheet1.xml") -> str:
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members[member] = change(members[member].decode()).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _row(cells: str) -> Callable[[str], str]:
    return lambda xml: xml.replace("</sheetData>", f'<row r="9">{cells}</row></sheetData>')


CORRECTED: dict[str, Callable[[str], str]] = {
    "float texts": _row(
        '<c r="A9"><v>7.0</v></c><c r="B9"><v>1E3</v></c><c r="C9"><v>-2.</v></c><c r="D9"><v>8</v></c>'
    ),
    "error cells": _row('<c r="A9" t="e"><f>1/0</f><v>#DIV/0!</v></c><c r="B9" t="e"><v>#N/A</v></c>'),
    "formula strings": _row('<c r="A9" t="str"><f>"7.0"</f><v>7.0</v></c><c r="B9" t="b"><v>0</v></c>'),
    "empty formula": _row('<c r="A9"><f>1+1</f><v></v></c><c r="B9"><f>1+1</f></c>'),
    "dimension smaller than the data": lambda xml: re.sub(
        r'<dimension ref="[^"]*"/>', '<dimension ref="A1:B2"/>', xml
    ),
    "no dimension": lambda xml: re.sub(r'<dimension ref="[^"]*"/>', "", xml),
}


@pytest.mark.parametrize("case", list(CORRECTED))
def test_calamine_differences_are_corrected(tmp_path: Path, case: str) -> None:
    path = write_book(tmp_path / "c.xlsx", {"S": [[1, 2.5, "x"], [3, "y", True], [None, 4, 5]]})
    _edit_sheet(path, CORRECTED[case])
    assert assert_same(path) == {}


DECLINED: dict[str, tuple[Callable[[str], str], str]] = {
    "long integer": (_row('<c r="A9"><v>12345678901234567890</v></c>'), "a float cannot hold"),
    "infinity word": (
        _row('<c r="A9"><v>1.5</v></c><c r="B9" t="str"><v>inf</v></c><c r="C9"><v>1e999</v></c>'),
        "",
    ),
    "escape in an inline string": (_row('<c r="A9" t="inlineStr"><is><t>a_x000D_b</t></is></c>'), "_xHHHH_"),
    "blanks without xml:space": (_row('<c r="A9" t="inlineStr"><is><t> lead</t></is></c>'), "blanks"),
    "iso date cell": (_row('<c r="A9" t="d"><v>2024-01-02T00:00:00</v></c>'), "ISO date"),
    "rows out of order": (
        lambda xml: xml.replace("</sheetData>", '<row r="2"><c r="A2"><v>9</v></c></row></sheetData>'),
        "out of order",
    ),
    "cell without a reference": (_row("<c><v>5</v></c>"), "without a reference"),
}


@pytest.mark.parametrize("case", list(DECLINED))
def test_what_calamine_cannot_read_like_openpyxl_falls_back(tmp_path: Path, case: str) -> None:
    change, reason = DECLINED[case]
    path = write_book(tmp_path / "d.xlsx", {"S": [[1, 2.5, "x"], [3, "y", True]]})
    _edit_sheet(path, change)
    if case == "infinity word":
        # no integral float or word in a number cell: nothing to decline, and still the same
        assert assert_same(path) == {}
        return
    declined = assert_same(path)
    assert list(declined) == ["S"]
    assert reason in declined["S"]


def test_shared_strings_calamine_would_change_decline_the_workbook(tmp_path: Path) -> None:
    path = write_book(tmp_path / "s.xlsx", {"S": [["a"]]})
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["xl/sharedStrings.xml"] = (
        b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2">'
        b"<si><t>a_x000D_b</t></si><si><r><t> lead</t></r></si></sst>"
    )
    members["[Content_Types].xml"] = members["[Content_Types].xml"].replace(
        b"</Types>",
        b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
    )
    members["xl/_rels/workbook.xml.rels"] = members["xl/_rels/workbook.xml.rels"].replace(
        b"</Relationships>",
        b'<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
    )
    members["xl/worksheets/sheet1.xml"] = re.sub(
        rb"<sheetData>.*</sheetData>",
        b'<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row></sheetData>',
        members["xl/worksheets/sheet1.xml"],
    )
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(Declined, match="_xHHHH_"):
        FastBook(path)
    book = _Book(path)
    assert typed(book.grid("S")) == reference(path)["S"]
    assert book.grid("S")[0][0] == "a_x000D_b"  # openpyxl keeps the escape as it is
    assert "_xHHHH_" in book.fallbacks["*"]


def test_files_openpyxl_refuses_are_refused_as_before(tmp_path: Path) -> None:
    ods = tmp_path / "book.ods"
    ods.write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(Declined, match="extension"):
        FastBook(str(ods))
    gold = write_book(tmp_path / "g.xlsx", {"S": [[1]]})
    score = table.compare_table(str(ods), gold, rules=[{"type": "sheet_name"}])
    assert score.value == 0.0
    assert "cannot open" in score.reason


def test_the_openpyxl_reader_can_be_forced(tmp_path: Path) -> None:
    path = write_book(tmp_path / "f.xlsx", {"S": [[1, 2.5]]})
    book = _Book(path, reader="openpyxl")
    assert book.grid("S") == [[1, 2.5]]
    assert book.fallbacks == {"*": "openpyxl reader requested"}
    assert book.fast() is None


def test_compare_table_scores_the_same_with_either_reader(tmp_path: Path) -> None:
    from pytest_osworld.evaluators.metrics._table_books import value_reader

    rows = [[1, 2.5, "x", datetime.date(2024, 1, 2)], [3, "y", True, None]]
    expected = write_book(tmp_path / "e.xlsx", {"S": rows, "T": [["t"]]})
    changed = write_book(
        tmp_path / "c.xlsx", {"S": [[1, 2.5, "x", datetime.date(2024, 1, 3)], rows[1]], "T": []}
    )
    rule_sets = [
        [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}],
        [{"type": "sheet_name"}],
        [
            {
                "type": "check_cell",
                "sheet_idx": 0,
                "coordinate": "D1",
                "props": {"value": {"method": "re", "ref": "2024"}},
            }
        ],
        [
            {
                "type": "sheet_fuzzy",
                "sheet_idx0": 0,
                "sheet_idx1": "EI0",
                "rules": [{"range": ["A1:D2"], "type": "exact_match"}],
            }
        ],
    ]
    scores: dict[str, list[Any]] = {}
    for reader in ("auto", "openpyxl"):
        with value_reader(reader):
            scores[reader] = [
                table.compare_table(path, expected, rules=rules)
                for path in (expected, changed)
                for rules in rule_sets
            ]
    assert scores["auto"] == scores["openpyxl"]
    assert {score.value for score in scores["auto"]} == {0.0, 1.0}
    with pytest.raises(ValueError, match="unknown value reader 'pandas'"), value_reader("pandas"):
        pass


def test_1904_dates_and_plain_shared_strings_read_the_same(tmp_path: Path) -> None:
    from openpyxl.utils.datetime import CALENDAR_MAC_1904

    def mac(workbook: Any) -> None:
        workbook.epoch = CALENDAR_MAC_1904

    rows = [[datetime.date(2024, 1, 2), datetime.datetime(1999, 12, 31, 23, 59, 59), 3]]
    path = write_book(tmp_path / "mac.xlsx", {"S": rows}, mac)
    assert assert_same(path) == {}
    assert reference(path)["S"][0][0] == ("datetime", datetime.datetime(2024, 1, 2))

    # phonetic runs (left out by both) and blanks kept by xml:space="preserve"
    path = write_book(tmp_path / "sst.xlsx", {"S": [["a"]]})
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["xl/sharedStrings.xml"] = (
        b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2">'
        b'<si><t>kanji</t><rPh sb="0" eb="1"><t>KANA</t></rPh></si>'
        b'<si><r><t xml:space="preserve"> kept </t></r><r><rPr><b/></rPr><t>bold</t></r></si></sst>'
    )
    members["[Content_Types].xml"] = members["[Content_Types].xml"].replace(
        b"</Types>",
        b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
    )
    members["xl/_rels/workbook.xml.rels"] = members["xl/_rels/workbook.xml.rels"].replace(
        b"</Relationships>",
        b'<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>',
    )
    members["xl/worksheets/sheet1.xml"] = re.sub(
        rb"<sheetData>.*</sheetData>",
        b'<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row></sheetData>',
        members["xl/worksheets/sheet1.xml"],
    )
    members["xl/worksheets/sheet1.xml"] = re.sub(
        rb'<dimension ref="[^"]*"/>', b'<dimension ref="A1:B1"/>', members["xl/worksheets/sheet1.xml"]
    )
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    assert assert_same(path) == {}
    assert reference(path)["S"] == [[("str", "kanji"), ("str", " kept bold")]]


def test_a_sheet_with_a_dtd_is_left_to_openpyxl(tmp_path: Path) -> None:
    from pytest_osworld.evaluators.metrics._table_books import value_reader

    gold = write_book(tmp_path / "g.xlsx", {"S": [[1]]})
    with_dtd = write_book(tmp_path / "b.xlsx", {"S": [[1]]})
    dtd = '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
    _edit_sheet(with_dtd, lambda xml: xml.replace("<worksheet", dtd + "<worksheet", 1))
    with pytest.raises(Declined, match="a DTD"):
        FastBook(with_dtd)
    rules = [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]
    with value_reader("openpyxl"):
        alone = table.compare_table(with_dtd, gold, rules=rules)
    assert table.compare_table(with_dtd, gold, rules=rules) == alone
