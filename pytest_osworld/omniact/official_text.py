"""How OmniACT's official scorer cuts a script's TEXT: its lines, call names, points, keys, texts.

The official scorer (``eval.py`` of the OmniACT release) reads no Python: it cuts each line
at quotes, parentheses and commas. These functions cut as it does (our own code), and
:func:`box_miss` and :func:`char_bleu` measure a click and a typed text as it does. The
scoring built on them is :mod:`pytest_osworld.omniact.official`.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from functools import cache

from pytest_osworld.errors import OSWorldError

#: The n-gram weights the official scorer gives NLTK's sentence BLEU (unigrams and bigrams).
BLEU_WEIGHTS = (0.5, 0.5)
#: What a kept line starts with, and what a predicted line must start with.
LINE_PREFIX = "pyautogui"
CALL_PREFIX = "pyautogui."

#: Message template (tests match it).
NEEDS_NLTK = "the official OmniACT scoring needs NLTK ({error}): pip install 'pytest-osworld[omniact]'"

_QUOTE = re.compile("[\"']")
#: (top-left, bottom-right) corners of a box, in screenshot pixels.
Corners = tuple[tuple[float, float], tuple[float, float]]


def kept_lines(text: str, *, gold: bool) -> tuple[str, ...]:
    """The lines the official scorer keeps from a script text (rule 1), lowercased, not stripped.

    ``gold=True`` drops the first line (the task file's ``Task:`` line). The text is taken
    as given: read a task file in text mode (``\\r\\n`` becomes ``\\n``) as Python's
    ``open().read()`` does; a prediction's text is split as it is.
    """
    rows = text.strip().split("\n")
    if gold:
        rows = rows[1:]
    kept = []
    for row in rows:
        lowered = row.lower()
        if lowered.strip().startswith(LINE_PREFIX):
            kept.append(lowered)
    return tuple(kept)


def between(text: str, separator: str) -> str | None:
    """The text after the first ``separator`` up to the next one (or the end); None without one."""
    pieces = text.split(separator, 2)
    return pieces[1] if len(pieces) > 1 else None


def quoted(line: str) -> str | None:
    """The text after the line's first quote of either kind up to the next quote; None without one."""
    pieces = _QUOTE.split(line, maxsplit=2)
    return pieces[1] if len(pieces) > 1 else None


def call_name(line: str) -> str | None:
    """The name between the first ``pyautogui.`` and the next ``(``; None without ``pyautogui.``."""
    after = between(line, CALL_PREFIX)
    return None if after is None else after.split("(", 1)[0]


def point(line: str) -> tuple[float, float] | None:
    """The ``(x, y)`` of a click line as the official scorer cuts it; None if not two plain numbers.

    ``x`` is the text after ``pyautogui.`` and its first ``(`` up to the first comma, ``y``
    the text after that comma up to the next comma or ``)``; each must be what ``float``
    reads, and finite.
    """
    after = between(line, CALL_PREFIX)
    arguments = None if after is None else between(after, "(")
    if arguments is None:
        return None
    pieces = arguments.split(",", 2)
    if len(pieces) < 2:
        return None
    try:
        x, y = float(pieces[0]), float(pieces[1].split(")", 1)[0])
    except ValueError:
        return None
    return (x, y) if math.isfinite(x) and math.isfinite(y) else None


def hotkey_keys(line: str) -> frozenset[str] | None:
    """A hotkey line's keys as the official scorer cuts them (rule 6); None without ``(``."""
    arguments = between(line, "(")
    if arguments is None:
        return None
    pieces = arguments.split(")", 1)[0].split(",")
    return frozenset(piece[1:-1] for piece in pieces if len(piece) > 2)


def box_distance(corners: Corners, x: float, y: float) -> float:
    """The distance from ``(x, y)`` to a box, measured from its centre; 0 inside or on its edge."""
    (left, top), (right, bottom) = corners
    dx = max(abs((left + right) / 2 - x) - (right - left) * 0.5, 0.0)
    dy = max(abs((top + bottom) / 2 - y) - (bottom - top) * 0.5, 0.0)
    return math.sqrt(dx**2 + dy**2)


def box_miss(corners: Corners, x: float, y: float) -> float:
    """``1 - diag / (diag + d)``: the click penalty of ``(x, y)`` against a box, before dividing.

    ``d`` is :func:`box_distance`, ``diag`` the box's diagonal. A point exactly on a box of
    no size costs 0 (the official script would divide 0 by 0 there).
    """
    (left, top), (right, bottom) = corners
    distance = box_distance(corners, x, y)
    diagonal = math.sqrt((right - left) ** 2 + (bottom - top) ** 2)
    if distance + diagonal == 0:
        return 0.0
    return 1 - diagonal / (distance + diagonal)


class NltkMissing(OSWorldError):
    """NLTK, whose BLEU the official scoring uses, is not installed."""


@cache
def _nltk_bleu() -> Callable[..., float]:
    """NLTK's ``sentence_bleu``, imported on first use (NLTK takes about a second to import)."""
    try:
        from nltk.translate.bleu_score import sentence_bleu  # type: ignore[import-untyped]
    except ImportError as exc:
        raise NltkMissing(NEEDS_NLTK.format(error=exc)) from None
    return sentence_bleu  # type: ignore[no-any-return]


def char_bleu(reference: str, candidate: str) -> float:
    """NLTK's ``sentence_bleu([reference], candidate, weights=(0.5, 0.5))`` over characters.

    No smoothing, as the official scorer: a candidate sharing no character bigram with the
    reference scores (practically) 0. NLTK's warnings about zero counts are silenced.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(_nltk_bleu()([reference], candidate, weights=BLEU_WEIGHTS))
