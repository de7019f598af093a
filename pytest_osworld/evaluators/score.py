"""What a metric returns: a value in [0, 1] (or any number for raw metrics) and a reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Score:
    """A metric's verdict: ``value`` and a human-readable ``reason``.

    The reason says what was compared and, when the value is below 1, the first
    difference found, e.g. ``"sheet 'Sheet1' B3: got 120, expected 125"``.
    """

    value: float
    reason: str = ""

    def __float__(self) -> float:
        return float(self.value)


def as_score(raw: object, func: str) -> Score:
    """Normalise a metric's return value (``Score``, float, int or bool) into a ``Score``."""
    if isinstance(raw, Score):
        return raw
    if isinstance(raw, bool):
        return Score(1.0 if raw else 0.0, f"{func} returned {raw}")
    if isinstance(raw, int | float):
        return Score(float(raw), f"{func} = {float(raw):.2f}")
    raise TypeError(f"metric {func!r} returned {type(raw).__name__}, expected a Score or a number")
