"""Small text helpers shared by the report's pages: links, cut text, times, scores, JSON."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

#: Longest text shown of one response, thought or value (the rest is cut, with a note).
MAX_TEXT = 20_000


def href(relative: str) -> str:
    """A relative link to a file, each path part percent-encoded (the template escapes the rest)."""
    return "/".join(quote(part) for part in relative.split("/"))


def clip(text: object, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, with a note of how much was left out."""
    text = str(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)"


def duration(seconds: float) -> str:
    """Seconds as ``12.5s``, ``3m04s`` or ``1h02m``; ``-`` for none."""
    if seconds <= 0:
        return "-"
    minutes, secs = divmod(round(seconds), 60)
    if minutes >= 60:
        hours, minutes = divmod(minutes, 60)
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"


def score_text(value: float | None) -> str:
    """A score with two decimals, ``-`` for none."""
    return "-" if value is None else f"{value:.2f}"


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal, ``-`` for none."""
    return "-" if value is None else f"{100 * value:.1f}%"


def dicts(value: Any) -> list[dict[str, Any]]:
    """The objects of a list read from JSON (anything else in it, or a non-list, is left out)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def json_text(value: Any) -> str:
    """A value as readable text: strings as they are, the rest as indented JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)
