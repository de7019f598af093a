"""Desktop (GNOME) metrics over command output: clipboard, time zone, favourites, files."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    failed,
    missing,
    passed,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score


def is_in_vm_clickboard(result: Any, expected: Any = None, **options: Any) -> Score:
    """The expected string (or every one of a list) occurs in the clipboard text.

    OSWorld passes the rules as ``result`` and the clipboard output as ``expected``; both
    orders are accepted.
    """
    rules, clipboard = (result, expected) if isinstance(result, Mapping) else (expected, result)
    if clipboard is None:
        return missing("clipboard output")
    wanted = rules_of(rules).get("expected", [])
    items = wanted if isinstance(wanted, list) else [wanted]
    absent = [item for item in items if str(item) not in str(clipboard)]
    if absent:
        return failed(f"clipboard {short(clipboard)} lacks {short(absent[0])}")
    return passed(f"clipboard holds {short(items)}")


def is_utc_0(result: Any, expected: Any = None, **options: Any) -> Score:
    """``timedatectl`` reports a time zone at offset ``+0000``.

    OSWorld reads the fourth line; this looks for the ``Time zone:`` line wherever it is.
    """
    if result is None:
        return missing("timedatectl output")
    line = next((ln for ln in str(result).splitlines() if "Time zone:" in ln), None)
    if line is None:
        return failed("timedatectl output has no 'Time zone:' line")
    return verdict(line.rstrip().endswith("+0000)"), f"UTC+0: {line.strip()}", f"not UTC+0: {line.strip()}")


def _gsettings_list(text: str) -> list[str] | None:
    # gsettings prints a GVariant string array: ['a', 'b'], or "@as []" when empty.
    text = text.strip()
    if text.startswith("@as"):
        text = text[3:].strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return value


def check_gnome_favorite_apps(result: Any, expected: Any = None, **options: Any) -> Score:
    """The GNOME favourites list equals ``rules["expected"]`` as a set (same length too).

    The gsettings output is parsed as a literal, never evaluated.
    """
    if result is None:
        return missing("gsettings output")
    apps = _gsettings_list(str(result))
    if apps is None:
        return failed(f"not a gsettings string list: {short(result)}")
    want = list(rules_of(expected).get("expected", []))
    ok = len(apps) == len(want) and set(apps) == set(want)
    return verdict(
        ok, f"favourites are {short(apps)}", f"favourites are {short(apps)}, expected {short(want)}"
    )


def check_moved_jpgs(result: Any, expected: Any = None, **options: Any) -> Score:
    """The directory listed by the ``list_directory`` getter holds exactly the expected names."""
    if not isinstance(result, Mapping):
        return missing("directory listing")
    names = {str(child.get("name")) for child in result.get("children", []) if isinstance(child, Mapping)}
    want = set(rules_of(expected).get("expected", []))
    return verdict(
        names == want,
        f"directory holds {sorted(names)}",
        f"directory holds {sorted(names)}, expected {sorted(want)}",
    )


def check_text_enlarged(result: Any, expected: Any = None, **options: Any) -> Score:
    """The GNOME text-scaling factor printed by gsettings is above 1.0."""
    if result is None:
        return missing("scaling factor")
    match = re.search(r"[-+]?\d+(?:\.\d+)?", str(result))
    if match is None:
        return failed(f"no number in {short(result)}")
    factor = float(match.group())
    return verdict(factor > 1.0, f"text scaling {factor}", f"text scaling {factor} is not above 1.0")
