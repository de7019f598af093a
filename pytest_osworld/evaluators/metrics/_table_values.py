"""Cell values of an xlsx workbook for ``compare_table``: the fast reader and its reference.

Owns the two readers of cached cell values. :func:`openpyxl_grid` is the reference: openpyxl
in read-only, data-only mode, as the metric always read values. :class:`FastBook` reads the
same grid with python-calamine (Rust) and corrects it, from the raw sheet XML, to exactly
what openpyxl gives. Where a correction is not possible it raises :class:`Declined` with
the reason, and the caller reads that workbook or sheet with openpyxl instead.

What calamine reads differently, and what this module does about it:

- numbers: calamine gives every number as a float; openpyxl gives an int unless the XML
  text has a ``.`` or an exponent. Integral floats become ints again, except the cells
  whose XML text is written as a float (found in the XML). Integers of 16 digits or more
  (a float cannot hold them exactly) decline the sheet.
- dates: openpyxl's date styles (from openpyxl's own stylesheet reader) and epoch decide;
  the cells with such a style are converted from their XML serial with openpyxl's own
  ``from_excel``. A date or time that calamine finds anywhere else, or an ISO date cell
  (``t="d"``), declines the sheet.
- errors (``t="e"``): openpyxl gives the error text (``"#DIV/0!"``); it is taken from the XML.
- strings: calamine trims the blanks around a ``<t>`` without ``xml:space="preserve"`` and
  decodes ``_xHHHH_`` escapes; openpyxl does neither. Either one present declines.
- the ``<dimension>`` element: openpyxl reads nothing outside it; the grid is cut to it.
- rows or cells without an ``r`` attribute, rows out of order, a namespace prefix on the
  sheet's elements, a DTD, a chartsheet: declined.
- a file openpyxl does not accept (by extension), or any error while reading: declined, so
  that openpyxl raises its own error, with its own message, as before.
"""

from __future__ import annotations

import datetime
import itertools
import os
import re
import zipfile
from typing import Any

#: The file extensions openpyxl opens; calamine is only used for these.
OPENPYXL_EXTENSIONS = (".xlsx", ".xlsm", ".xltx", ".xltm")

_TEMPORAL = (datetime.date, datetime.datetime, datetime.time, datetime.timedelta)
_DIMENSION = re.compile(rb'<dimension\s+ref="([^"]*)"')
_PREFIXED_ROOT = re.compile(rb"<\w+:worksheet\b")
_ROW_NUMBER = re.compile(rb'<row r="(\d+)"')
# The number texts where calamine's float differs from openpyxl's value: integral floats
# ("7.0", "1E3": openpyxl keeps a float), integers a float cannot hold, and words such as
# "inf" or "nan" (openpyxl cannot read them).
_NUMBER_TEXT = re.compile(
    rb"<v>([-+]?(?:\d{16,}|\d+\.0*|(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+|[iInN][A-Za-z]*))</v>"
)
_NUMBER_WORD = re.compile(rb"<v>[-+]?(?:inf|nan)", re.IGNORECASE)
_PLAIN_INTEGER = re.compile(rb"[-+]?\d+")
_ERROR_TYPE = re.compile(rb' t="e"')
_ESCAPE = re.compile(rb"_x[0-9A-Fa-f]{4}_")
_UNPRESERVED_BLANKS = re.compile(rb"<t>(?:\s|[^<]*\s</t>)")
_ATTRIBUTE = re.compile(rb'(\w+)="([^"]*)"')
_VALUE = re.compile(rb"<v>([^<]*)</v>")


class Declined(Exception):
    """The fast reader cannot guarantee openpyxl's values here; the message says why."""


def empty_to_none(value: Any) -> Any:
    """An empty string is an empty cell (both readers give one for some empty cells)."""
    return None if value == "" else value


def _used_width(row: list[Any]) -> int:
    width = len(row)
    while width and row[width - 1] is None:
        width -= 1
    return width


def trim_grid(rows: list[list[Any]]) -> list[list[Any]]:
    """``rows`` without trailing empty rows and columns, every row padded to one width."""
    while rows and all(v is None for v in rows[-1]):
        rows.pop()
    width = max(map(_used_width, rows), default=0)
    return [r if len(r) == width else r[:width] + [None] * (width - len(r)) for r in rows]


def openpyxl_grid(workbook: Any, sheet: str) -> list[list[Any]]:
    """The trimmed grid of ``sheet`` from an openpyxl read-only, data-only workbook."""
    rows = [[empty_to_none(v) for v in row] for row in workbook[sheet].iter_rows(values_only=True)]
    return trim_grid(rows)


def _cell_position(reference: bytes) -> tuple[int, int]:
    from openpyxl.utils.cell import coordinate_to_tuple

    row, column = coordinate_to_tuple(reference.decode())
    return int(row), int(column)


def _cell_tag(raw: bytes, inside: int) -> tuple[dict[bytes, bytes], int] | None:
    """The attributes of the ``<c>`` tag around or before offset ``inside``, and its end."""
    start = raw.rfind(b"<c ", 0, inside)
    if start < 0:
        return None
    end = raw.find(b">", start)
    return dict(_ATTRIBUTE.findall(raw, start, end)), end


class FastBook:
    """One workbook's cell values through calamine, as openpyxl would give them.

    Opening reads openpyxl's view of the package (manifest, workbook, styles: small
    parts) and opens calamine; it raises :class:`Declined` when that is not possible.
    """

    def __init__(self, path: str) -> None:
        if not path.lower().endswith(OPENPYXL_EXTENSIONS):
            raise Declined(f"not an extension openpyxl opens: {os.path.splitext(path)[1]!r}")
        try:
            from python_calamine import CalamineWorkbook
        except ImportError:
            raise Declined("python-calamine is not installed") from None
        try:
            self._metadata(path)
            self._calamine = CalamineWorkbook.from_path(path)
        except Declined:
            raise
        except Exception as exc:  # openpyxl or calamine refused the file: openpyxl will say why
            raise Declined(f"cannot open the package quickly: {type(exc).__name__}: {exc}") from None
        missing = [name for name in self.names if name not in self._calamine.sheet_names]
        if missing:
            raise Declined(f"calamine does not see the sheets {missing}")

    def _metadata(self, path: str) -> None:
        from openpyxl.reader.excel import ExcelReader
        from openpyxl.styles.stylesheet import apply_stylesheet
        from openpyxl.xml.constants import SHARED_STRINGS

        reader = ExcelReader(path, read_only=True, data_only=True)
        self._archive: zipfile.ZipFile = reader.archive
        reader.read_manifest()
        reader.read_workbook()
        reader.read_properties()
        reader.read_custom()
        reader.read_theme()
        apply_stylesheet(reader.archive, reader.wb)
        self.names: list[str] = []
        self._targets: dict[str, str] = {}
        for sheet, rel in reader.parser.find_sheets():
            if rel.target not in reader.valid_files:
                continue
            if "chartsheet" in rel.Type:
                raise Declined(f"chartsheet {sheet.name!r}")
            self.names.append(sheet.name)
            self._targets[sheet.name] = rel.target
            # openpyxl's read-only load parses each sheet's head (for its dimension): a DTD
            # there makes the load itself fail, so it must fail here too, with openpyxl's error.
            with self._archive.open(rel.target) as member:
                head = member.read(8192)
            if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
                raise Declined(f"sheet {sheet.name!r}: a DTD")
        self._epoch = reader.wb.epoch
        self._date_styles: set[int] = set(reader.wb._date_formats)
        self._duration_styles: set[int] = set(reader.wb._timedelta_formats)
        if 0 in self._date_styles:
            raise Declined("the default cell style is a date format")
        strings = reader.package.find(SHARED_STRINGS)
        if strings is not None:
            self._check_text(self._archive.read(strings.PartName[1:]), "shared strings")

    @staticmethod
    def _check_text(raw: bytes, where: str) -> None:
        head = raw[:4096]
        if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
            raise Declined(f"{where}: a DTD")
        if _ESCAPE.search(raw):
            raise Declined(f"{where}: an _xHHHH_ escape (openpyxl keeps it, calamine decodes it)")
        if _UNPRESERVED_BLANKS.search(raw):
            raise Declined(f"{where}: blanks around a text without xml:space (calamine trims them)")

    def close(self) -> None:
        """Release the archive and calamine's workbook."""
        self._archive.close()
        self._calamine.close()

    def grid(self, sheet: str) -> list[list[Any]]:
        """The trimmed grid of ``sheet``, equal (values and types) to :func:`openpyxl_grid`."""
        raw = self._archive.read(self._targets[sheet])
        data_at = raw.find(b"<sheetData")
        head = raw[: data_at if data_at >= 0 else 4096]
        if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
            raise Declined(f"sheet {sheet!r}: a DTD")
        if _PREFIXED_ROOT.search(head):
            raise Declined(f"sheet {sheet!r}: a namespace prefix on its elements")
        self._check_structure(raw, sheet)
        if b"inlineStr" in raw:
            self._check_text(raw, f"sheet {sheet!r}")
        if b' t="d"' in raw:
            raise Declined(f'sheet {sheet!r}: an ISO date cell (t="d")')
        rows = self._calamine.get_sheet_by_name(sheet).to_python(skip_empty_area=False)
        rows = self._crop(rows, head, sheet)
        grid = [
            [
                (int(v) if v.is_integer() else v) if v.__class__ is float else (None if v == "" else v)
                for v in row
            ]
            for row in rows
        ]
        kinds: set[type] = set()
        for row in grid:
            kinds.update(map(type, row))
        fixes: dict[tuple[int, int], Any] = {}
        # Ints come from integral floats: their XML text decides (and the words below are
        # non-integral floats in calamine that openpyxl cannot read at all).
        if int in kinds or (float in kinds and _NUMBER_WORD.search(raw)):
            fixes.update(self._number_cells(raw, sheet))
        if b' t="e"' in raw:
            fixes.update(self._error_cells(raw))
        fixes.update(self._date_cells(raw))
        if not _TEMPORAL_CLASSES.isdisjoint(kinds):
            for r, row in enumerate(grid):
                for c, value in enumerate(row):
                    if isinstance(value, _TEMPORAL) and (r + 1, c + 1) not in fixes:
                        raise Declined(f"sheet {sheet!r}: calamine reads a date openpyxl does not")
        for (r, c), fix in fixes.items():
            if r <= len(grid) and c <= len(grid[r - 1]):
                value = fix(grid[r - 1][c - 1])
                grid[r - 1][c - 1] = empty_to_none(value)
        return trim_grid(grid)

    @staticmethod
    def _check_structure(raw: bytes, sheet: str) -> None:
        numbers = [int(n) for n in _ROW_NUMBER.findall(raw)]
        if b"<row>" in raw or b"<row/>" in raw or b"<c>" in raw or b"<c/>" in raw:
            raise Declined(f"sheet {sheet!r}: rows or cells without a reference")
        rows = raw.count(b"<row ")
        if len(numbers) != rows or any(a >= b for a, b in itertools.pairwise(numbers)):
            raise Declined(f"sheet {sheet!r}: rows without numbers or out of order")
        if raw.count(b"<c ") != raw.count(b'<c r="'):
            raise Declined(f"sheet {sheet!r}: cells without a reference")

    @staticmethod
    def _crop(rows: list[list[Any]], head: bytes, sheet: str) -> list[list[Any]]:
        # openpyxl's read-only sheet reads nothing right of or below its <dimension>.
        from openpyxl.utils.cell import range_boundaries

        found = _DIMENSION.search(head)
        if found is None:
            return rows
        try:
            _, _, max_col, max_row = range_boundaries(found.group(1).decode())
        except (ValueError, TypeError):
            raise Declined(f"sheet {sheet!r}: a dimension openpyxl cannot read") from None
        if max_row is not None:
            rows = rows[:max_row]
        if max_col is not None:
            rows = [row[:max_col] for row in rows]
        return rows

    @staticmethod
    def _number_cells(raw: bytes, sheet: str) -> dict[tuple[int, int], Any]:
        fixes: dict[tuple[int, int], Any] = {}
        for match in _NUMBER_TEXT.finditer(raw):
            tag = _cell_tag(raw, match.start())
            if tag is None or tag[0].get(b"t", b"n") != b"n":
                continue
            text = match.group(1)
            if _PLAIN_INTEGER.fullmatch(text) or text[-1:].isalpha():
                raise Declined(f"sheet {sheet!r}: a number a float cannot hold exactly ({text.decode()})")
            fixes[_cell_position(tag[0][b"r"])] = lambda v: float(v) if v.__class__ is int else v
        return fixes

    @staticmethod
    def _error_cells(raw: bytes) -> dict[tuple[int, int], Any]:
        fixes: dict[tuple[int, int], Any] = {}
        for match in _ERROR_TYPE.finditer(raw):
            tag = _cell_tag(raw, match.start())
            if tag is None or tag[0].get(b"t") != b"e":
                continue
            attributes, end = tag
            text = None
            if raw[end - 1 : end] != b"/":
                value = _VALUE.search(raw, end, raw.find(b"</c>", end))
                text = value.group(1).decode() if value is not None else None
            fixes[_cell_position(attributes[b"r"])] = lambda v, text=text: text or None
        return fixes

    def _date_cells(self, raw: bytes) -> dict[tuple[int, int], Any]:
        from openpyxl.utils.datetime import from_excel

        fixes: dict[tuple[int, int], Any] = {}
        if not self._date_styles:
            return fixes
        ids = b"|".join(str(i).encode() for i in sorted(self._date_styles))
        for match in re.finditer(rb'\ss="(' + ids + rb')"', raw):
            if raw.rfind(b"<", 0, match.start()) != raw.rfind(b"<c ", 0, match.start()):
                continue  # a row's style, not a cell's
            tag = _cell_tag(raw, match.start())
            if tag is None or tag[0].get(b"t", b"n") != b"n":
                continue
            attributes, end = tag
            value: Any = None
            if raw[end - 1 : end] != b"/":
                text = _VALUE.search(raw, end, raw.find(b"</c>", end))
                if text is not None and text.group(1):
                    serial = _cast_number(text.group(1).decode())
                    style = int(match.group(1))
                    try:
                        value = from_excel(serial, self._epoch, timedelta=style in self._duration_styles)
                    except (OverflowError, ValueError):
                        value = "#VALUE!"
            fixes[_cell_position(attributes[b"r"])] = lambda v, value=value: value
        return fixes


_TEMPORAL_CLASSES = frozenset({datetime.date, datetime.datetime, datetime.time, datetime.timedelta})


def _cast_number(text: str) -> int | float:
    # openpyxl's rule: a float when the text has a point or an exponent, else an int.
    return float(text) if ("." in text or "e" in text or "E" in text) else int(text)
