"""Helpers shared by the metric modules: verdicts, inputs, the ``{method, ref}`` rule matcher.

Nothing here imports a heavy library at module level.
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_osworld.evaluators.score import Score

#: Encodings tried, in order, when a text file is read.
TEXT_ENCODINGS = ("utf-8-sig", "utf-8", "gbk", "cp1252", "latin-1")

_COMPARATORS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}

_RE_FLAGS: dict[str, re.RegexFlag] = {
    "I": re.IGNORECASE,
    "IGNORECASE": re.IGNORECASE,
    "M": re.MULTILINE,
    "MULTILINE": re.MULTILINE,
    "S": re.DOTALL,
    "DOTALL": re.DOTALL,
    "X": re.VERBOSE,
    "VERBOSE": re.VERBOSE,
    "A": re.ASCII,
    "ASCII": re.ASCII,
}


def passed(reason: str) -> Score:
    """A score of 1 with ``reason`` saying what matched."""
    return Score(1.0, reason)


def failed(reason: str) -> Score:
    """A score of 0 with ``reason`` saying what differed."""
    return Score(0.0, reason)


def verdict(ok: bool, good: str, bad: str) -> Score:
    """1 with ``good`` when ``ok``, else 0 with ``bad``."""
    return passed(good) if ok else failed(bad)


def missing(what: str = "result") -> Score:
    """The score for an input that the getter did not produce."""
    return failed(f"no {what}: the getter produced nothing")


def short(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for reasons."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_path(value: object) -> str | None:
    """The path in ``value``: a str or PathLike, or the first one of a list of them."""
    if isinstance(value, list | tuple):
        value = value[0] if value else None
    if isinstance(value, str | os.PathLike):
        return os.fspath(value)
    return None


def path_list(value: object) -> list[str]:
    """``value`` as a list of paths (a single path becomes a one-item list)."""
    if isinstance(value, list | tuple):
        return [os.fspath(v) for v in value if isinstance(v, str | os.PathLike)]
    single = first_path(value)
    return [] if single is None else [single]


def existing_file(value: object, what: str = "result") -> tuple[str | None, Score | None]:
    """Resolve ``value`` to an existing file, or return the zero score that explains why not."""
    path = first_path(value)
    if path is None:
        return None, missing(what)
    if not os.path.isfile(path):
        return None, failed(f"{what} file {path!r} does not exist")
    return path, None


def read_text(path: str) -> str:
    """The text of ``path``, trying :data:`TEXT_ENCODINGS` in order."""
    with open(path, "rb") as handle:
        data = handle.read()
    for encoding in TEXT_ENCODINGS:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace")  # pragma: no cover - latin-1 never fails


def rules_of(value: object) -> Mapping[str, Any]:
    """``value`` when it is a rules mapping, else an empty mapping."""
    return value if isinstance(value, Mapping) else {}


def _regex_flags(method: str) -> re.RegexFlag:
    flags = re.RegexFlag(0)
    for name in method.split(".")[1:]:
        if name not in _RE_FLAGS:
            raise ValueError(f"unknown regex flag {name!r} in method {method!r}")
        flags |= _RE_FLAGS[name]
    return flags


def _in_range(marks: str, value: Any, ref: Sequence[Any]) -> bool:
    # marks[0] is the lower bound, marks[1] the upper one: "e" inclusive, "t" strict.
    low_ok = ref[0] <= value if marks[0] == "e" else ref[0] < value
    high_ok = value <= ref[1] if marks[1] == "e" else value < ref[1]
    return bool(low_ok and high_ok)


def _range_contains(inner: str, outer: str) -> bool:
    from openpyxl.worksheet.cell_range import MultiCellRange

    outer_ranges = MultiCellRange(outer)
    return all(r in outer_ranges for r in MultiCellRange(inner))


def _spreadsheet_range(value: Any, ref: Sequence[str]) -> bool:
    # The value (a sqref) must cover ref[0] and lie inside ref[1].
    actual = str(value)
    return _range_contains(ref[0], actual) and _range_contains(actual, ref[1])


def _string_collection(value: Any) -> list[str]:
    if isinstance(value, list | tuple | set):
        return [str(v) for v in value]
    return str(value).strip("\"'").split(",")


def _rule_checker(method: str) -> Callable[[Any, Any], bool]:
    """The comparison for ``method``; ``ValueError`` names an unknown or malformed one."""
    if method == "re" or method.startswith("re."):
        flags = _regex_flags(method)
        return lambda value, ref: re.search(str(ref), "" if value is None else str(value), flags) is not None
    if method in _COMPARATORS:
        compare = _COMPARATORS[method]
        return lambda value, ref: bool(compare(value, ref))
    if method.startswith("approx:"):
        tolerance = float(method.split(":", 1)[1])
        return lambda value, ref: value is not None and abs(float(value) - float(ref)) <= tolerance
    if method.startswith("range."):
        marks = method[len("range.") :]
        if len(marks) != 2 or set(marks) - {"e", "t"}:
            raise ValueError(f"range method {method!r}: the two marks must be 'e' or 't'")
        return lambda value, ref: _in_range(marks, value, ref)
    if method == "spreadsheet_range":
        return _spreadsheet_range
    if method == "str_list_eq":
        return lambda value, ref: _string_collection(value) == [str(r) for r in ref]
    if method == "str_set_eq":
        return lambda value, ref: set(_string_collection(value)) == {str(r) for r in ref}
    raise ValueError(f"unknown rule method {method!r}")


def match_rule(value: Any, rule: Mapping[str, Any]) -> bool:
    """Whether ``value`` satisfies ``rule = {"method": ..., "ref": ...}``.

    Methods: ``re`` / ``re.I.S...`` (regex search in ``str(value)``), ``eq ne lt le gt ge``,
    ``approx:<tolerance>``, ``range.xy`` (``x``/``y`` = ``e`` inclusive or ``t`` strict
    bound, ref ``[low, high]``), ``spreadsheet_range`` (ref ``[inner, outer]``: the value
    covers ``inner`` and lies inside ``outer``), ``str_list_eq`` and ``str_set_eq`` (a
    comma-separated string or a list against a list). An unknown method raises
    ``ValueError``; a type mismatch inside a comparison is a non-match.
    """
    check = _rule_checker(str(rule.get("method", "")))
    try:
        return check(value, rule.get("ref"))
    except (TypeError, ValueError, IndexError):
        return False


def match_record(pattern: Mapping[str, Any], item: Mapping[str, Any]) -> bool:
    """Every key of ``pattern`` is in ``item`` with an equal value."""
    return all(key in item and item[key] == value for key, value in pattern.items())


def fuzz_ratio(a: str, b: str) -> float:
    """The rapidfuzz ``ratio`` of two strings, in [0, 100]."""
    from rapidfuzz import fuzz

    return float(fuzz.ratio(a, b))


def open_image(path: str, mode: str | None = None) -> Any:
    """Open an image with Pillow (fully loaded), optionally converted to ``mode``."""
    from PIL import Image

    with Image.open(path) as image:
        image.load()
        return image.convert(mode) if mode else image.copy()


def ssim(a: Any, b: Any, **kwargs: Any) -> float:
    """Structural similarity of two equally sized arrays (scikit-image), 1.0 for identical ones."""
    import numpy as np

    x, y = np.asarray(a), np.asarray(b)
    if x.shape != y.shape:
        raise ValueError(f"SSIM needs equal shapes, got {x.shape} and {y.shape}")
    if np.array_equal(x, y):
        return 1.0
    if "data_range" not in kwargs and x.dtype == np.uint8:
        kwargs["data_range"] = 255
    side = min(x.shape[0], x.shape[1])
    if "win_size" not in kwargs and side < 7:
        kwargs["win_size"] = side if side % 2 else side - 1
    return float(load_module("skimage.metrics").structural_similarity(x, y, **kwargs))


def load_module(name: str) -> Any:
    """Import ``name`` on first use, typed ``Any`` (for libraries without type information)."""
    import importlib

    return importlib.import_module(name)
