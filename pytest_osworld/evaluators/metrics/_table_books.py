"""The workbooks of one ``compare_table`` call: lazy loading, sheet indices, cell naming.

Owns :class:`_Book` (one workbook: sheet names and cached values through the fast reader
of :mod:`._table_values`, with openpyxl as the explicit fallback, and the full openpyxl
model for rules about charts, pivots, styles and views), :class:`_Pair` (the result and
expected books, and the ``RI0`` / ``ENSheet1`` sheet indices) and :class:`RuleFailure`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pytest_osworld.evaluators.metrics._table_values import Declined, FastBook, openpyxl_grid

#: What a rule returns: whether it passed, and the reason.
RuleResult = tuple[bool, str]

#: The readers of cell values ``_Book`` may use: ``"auto"`` (calamine, falling back to
#: openpyxl where :class:`FastBook` declines) or ``"openpyxl"`` only.
VALUE_READERS = ("auto", "openpyxl")
_default_reader = ["auto"]


@contextlib.contextmanager
def value_reader(name: str) -> Iterator[None]:
    """Within the block, workbooks read their cell values with ``name`` (one of VALUE_READERS)."""
    if name not in VALUE_READERS:
        raise ValueError(f"unknown value reader {name!r}; known: {', '.join(VALUE_READERS)}")
    previous = _default_reader[0]
    _default_reader[0] = name
    try:
        yield
    finally:
        _default_reader[0] = previous


class RuleFailure(Exception):
    """A rule cannot be applied (bad sheet index, missing workbook): the table scores 0."""


@dataclass
class _Book:
    """One workbook, loaded on demand.

    ``fallbacks`` records, per sheet (``"*"`` for the whole workbook), why the fast reader
    declined and openpyxl read the values instead.
    """

    path: str
    reader: str = ""  # one of VALUE_READERS; empty: the one value_reader() set ("auto")
    fallbacks: dict[str, str] = field(default_factory=dict)
    _fast: FastBook | None = None
    _fast_tried: bool = False
    _values: Any = None
    _full: Any = None
    _grids: dict[str, list[list[Any]]] = field(default_factory=dict)

    def fast(self) -> FastBook | None:
        """The calamine reader of this workbook, or None when it declined (see ``fallbacks``)."""
        if not self._fast_tried:
            self._fast_tried = True
            if (self.reader or _default_reader[0]) == "openpyxl":
                self.fallbacks["*"] = "openpyxl reader requested"
            else:
                try:
                    self._fast = FastBook(self.path)
                except Declined as exc:
                    self.fallbacks["*"] = str(exc)
        return self._fast

    def values(self) -> Any:
        """The openpyxl read-only, data-only workbook (the reference reader of values)."""
        if self._values is None:
            import openpyxl

            self._values = openpyxl.load_workbook(self.path, read_only=True, data_only=True)
        return self._values

    def full(self) -> Any:
        """The full openpyxl model (styles, charts, pivots, views)."""
        if self._full is None:
            import openpyxl

            self._full = openpyxl.load_workbook(self.path)
        return self._full

    def names(self) -> list[str]:
        """The sheet names, in workbook order."""
        fast = self.fast()
        if fast is not None:
            return list(fast.names)
        return list(self.values().sheetnames)

    def grid(self, sheet: str) -> list[list[Any]]:
        """The cached cell values of ``sheet``, trailing empty rows and columns removed."""
        if sheet not in self._grids:
            if sheet not in self.names():
                raise RuleFailure(f"{os.path.basename(self.path)} has no sheet {sheet!r}")
            fast = self.fast()
            grid = None
            if fast is not None:
                try:
                    grid = fast.grid(sheet)
                except Declined as exc:
                    self.fallbacks[sheet] = str(exc)
            self._grids[sheet] = grid if grid is not None else openpyxl_grid(self.values(), sheet)
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
        """Release the open readers."""
        if self._values is not None:
            self._values.close()
        if self._fast is not None:
            self._fast.close()


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
