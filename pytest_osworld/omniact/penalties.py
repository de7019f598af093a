"""OmniACT's penalties: the target boxes, and the click, key and write penalties of a script.

Owns :class:`Box` (a gold element's bounding box), :class:`Penalty` and the per-action
penalties ``M`` (click, by distance to the box), ``K`` (key set) and ``W`` (write,
``1 - BLEU``) with their reason templates; :mod:`pytest_osworld.omniact.score` sums them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_osworld.omniact.bleu import bleu
from pytest_osworld.omniact.script import KEY_KINDS, POINTER_KINDS, WRITE_KINDS, ScriptAction

#: Message templates (tests match them).
CLICK_OUTSIDE = "action {index} ({kind}) is {distance:.0f} px outside its box {box!r}"
CLICK_NO_POINT = "action {index} ({kind}) has no literal coordinates to compare with its box {box!r}"
KEYS_DIFFER = "action {index} ({kind}) keys {got} differ from {expected}"
TEXT_DIFFERS = "action {index} (write) typed {got!r}, expected {expected!r} (BLEU {bleu:.2f})"


@dataclass(frozen=True)
class Box:
    """A target element's bounding box in image pixels: top-left ``(x, y)``, size ``(w, h)``."""

    x: float
    y: float
    w: float
    h: float

    @property
    def diagonal(self) -> float:
        """The length of the box's diagonal."""
        return math.hypot(self.w, self.h)

    def distance(self, px: float, py: float) -> float:
        """Euclidean distance from ``(px, py)`` to the box; 0 on or inside its edges."""
        dx = max(self.x - px, 0.0, px - (self.x + self.w))
        dy = max(self.y - py, 0.0, py - (self.y + self.h))
        return math.hypot(dx, dy)

    def contains(self, px: float, py: float) -> bool:
        """Whether ``(px, py)`` lies in the box (edges included)."""
        return self.distance(px, py) == 0.0

    def to_json(self) -> list[float]:
        """``[x, y, w, h]`` as in the task file."""
        return [self.x, self.y, self.w, self.h]


@dataclass(frozen=True)
class Penalty:
    """One penalty of the action score."""

    #: 1-based position of the action in the script's sequence.
    index: int
    kind: str
    #: ``click``, ``key`` or ``write``.
    category: str
    value: float
    reason: str

    def to_json(self) -> dict[str, object]:
        """Plain data for reports."""
        return {
            "index": self.index,
            "kind": self.kind,
            "category": self.category,
            "value": round(self.value, 6),
            "reason": self.reason,
        }


def click_penalty(point: tuple[float, float] | None, box: Box) -> float:
    """``M = 1 - mu / (mu + L2)`` with ``mu = 1 / diagonal``; 1 when there is no point."""
    if point is None:
        return 1.0
    distance = box.distance(*point)
    if distance == 0.0:
        return 0.0
    mu = 1.0 / box.diagonal if box.diagonal > 0 else 1.0
    return 1.0 - mu / (mu + distance)


def key_penalty(expected: frozenset[str] | None, got: frozenset[str] | None) -> float:
    """``K = 0`` when the key sets are equal, else 1."""
    return 0.0 if got is not None and expected == got else 1.0


def write_penalty(expected: str | None, got: str | None) -> float:
    """``W = 1 - BLEU(expected, got)``; 1 when the typed text is not a literal."""
    if got is None or expected is None:
        return 1.0
    return 1.0 - bleu(expected, got)


def action_penalties(
    gold: Sequence[ScriptAction], predicted: Sequence[ScriptAction], boxes: Mapping[str, Box]
) -> list[Penalty]:
    """The non-zero penalties of ``predicted`` against ``gold`` (same kinds, same order).

    A pointer action is measured against the box of its gold action (``boxes`` by
    :attr:`ScriptAction.box_key`); key and write actions against the gold keys and text.
    """
    found: list[Penalty] = []
    for index, (want, got) in enumerate(zip(gold, predicted, strict=True), start=1):
        if want.kind in POINTER_KINDS and want.point is not None:
            box = boxes[want.box_key]
            value = click_penalty(got.point, box)
            if value > 0.0:
                if got.point is None:
                    reason = CLICK_NO_POINT.format(index=index, kind=got.kind, box=want.box_key)
                else:
                    reason = CLICK_OUTSIDE.format(
                        index=index, kind=got.kind, distance=box.distance(*got.point), box=want.box_key
                    )
                found.append(Penalty(index, got.kind, "click", value, reason))
        elif want.kind in KEY_KINDS:
            value = key_penalty(want.keys, got.keys)
            if value > 0.0:
                shown_got = "+".join(sorted(got.keys)) if got.keys is not None else "(not literal)"
                shown_want = "+".join(sorted(want.keys or ()))
                reason = KEYS_DIFFER.format(index=index, kind=got.kind, got=shown_got, expected=shown_want)
                found.append(Penalty(index, got.kind, "key", value, reason))
        elif want.kind in WRITE_KINDS:
            value = write_penalty(want.text, got.text)
            if value > 0.0:
                reason = TEXT_DIFFERS.format(index=index, got=got.text, expected=want.text, bleu=1.0 - value)
                found.append(Penalty(index, got.kind, "write", value, reason))
    return found
