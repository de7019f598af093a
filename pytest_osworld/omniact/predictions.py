"""A predictions file for an OmniACT split: one script text per sample, as the model wrote it.

Two forms are read (``omniact_predictions.json`` of a pytest run is the first):

* a JSON object from sample key to script text, ``{"0": "pyautogui.click(10, 20)", ...}``;
  it may hold some of the split's keys only (a run over part of a split), never others;
* a JSON list of script texts in the split's order, one per sample of the split, as the
  official scorer reads them.

Every error is a :class:`PredictionsError` naming the file and what to change.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pytest_osworld.errors import OSWorldError

#: Message templates (tests match them).
PRED_UNREADABLE = "{path}: cannot read the predictions: {error}"
PRED_NOT_JSON = "{path}: the predictions are not JSON ({error})"
PRED_WRONG_TYPE = (
    "{path}: expected an object from sample key to script text, or a list of script texts in "
    "the split's order; got {got}"
)
PRED_NOT_TEXT = "{path}: the prediction for {where} is {got}, not a script text (a string)"
PRED_UNKNOWN_KEYS = (
    "{path}: {count} key(s) are not samples of {split}: {shown}; are these the predictions of another split?"
)
PRED_LENGTH = (
    "{path}: a list of {got} predictions for the {expected} samples of {split}; a list holds one "
    "script text per sample in the split's order (or give an object from key to script text)"
)
#: How many unknown keys a message shows.
SHOWN_KEYS = 5


class PredictionsError(OSWorldError):
    """A predictions file that cannot be read or does not fit its split."""


def read_predictions(path: Path, keys: Sequence[str], split: str = "the split") -> dict[str, str]:
    """Read a predictions file for a split whose keys are ``keys`` (in the split's order).

    Returns key -> script text, in the split's order, for the keys the file predicts.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionsError(PRED_UNREADABLE.format(path=path, error=exc)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PredictionsError(PRED_NOT_JSON.format(path=path, error=exc)) from None
    return parse_predictions(data, keys, str(path), split)


def parse_predictions(data: object, keys: Sequence[str], source: str, split: str) -> dict[str, str]:
    """Check parsed predictions against a split's keys; see :func:`read_predictions`."""
    if isinstance(data, list):
        if len(data) != len(keys):
            raise PredictionsError(
                PRED_LENGTH.format(path=source, got=len(data), expected=len(keys), split=split)
            )
        pairs = list(zip(keys, data, strict=True))
        for index, (_, value) in enumerate(pairs):
            _check_text(value, f"item {index}", source)
        return {key: value for key, value in pairs}
    if not isinstance(data, dict):
        raise PredictionsError(PRED_WRONG_TYPE.format(path=source, got=_kind(data)))
    known = set(keys)
    unknown = [key for key in data if key not in known]
    if unknown:
        shown = ", ".join(repr(k) for k in unknown[:SHOWN_KEYS]) + (
            ", ..." if len(unknown) > SHOWN_KEYS else ""
        )
        raise PredictionsError(
            PRED_UNKNOWN_KEYS.format(path=source, count=len(unknown), split=split, shown=shown)
        )
    for key, value in data.items():
        _check_text(value, f"key {key!r}", source)
    return {key: data[key] for key in keys if key in data}


def _check_text(value: object, where: str, source: str) -> None:
    if not isinstance(value, str):
        raise PredictionsError(PRED_NOT_TEXT.format(path=source, where=where, got=_kind(value)))


def _kind(value: object) -> str:
    """A JSON value's kind, for messages."""
    if value is None:
        return "null"
    return {bool: "true or false", int: "a number", float: "a number", str: "a string"}.get(
        type(value), "a list" if isinstance(value, list) else "an object"
    )
