"""OmniACT's official scoring: the semantics of the ``eval.py`` released with the dataset.

Every published OmniACT number comes from that script, which works on script TEXT, line
by line, not on parsed actions. This module re-implements its semantics (our own code):

1. **Lines.** The gold script is the task file's text, stripped, split on ``"\\n"``,
   without its first line (``Task: ...``); the prediction is the model's script text,
   stripped as a whole and split the same way (so only its first line loses its
   indentation). Both keep the lines that, lowercased and stripped, start with
   ``pyautogui``; the kept lines are lowercased but not stripped.
2. **Weight.** A sample weighs ``gold lines - 0.9``.
3. **Sequence flag.** 1 when there are as many predicted lines as gold lines and, at every
   position, the predicted line starts with ``pyautogui.`` and the name between
   ``pyautogui.`` and the first ``(`` equals the gold's; else 0.
4. **click** (only the gold name ``click``; ``rightclick``, ``doubleclick``, ``moveto``,
   ``dragto`` get no position penalty): the gold point's box is the first box whose
   centre equals it exactly; ``d`` is the distance from the predicted point to that box
   (0 inside); the penalty is ``(1 - diag / (diag + d)) / gold lines``.
5. **press**: the gold key is the text between the gold line's first two double quotes,
   the predicted key the text after the line's first quote of either kind up to the next
   one; different after stripping spaces: ``1 / gold lines``.
6. **hotkey**: the text after the first ``(`` up to the next ``)``, split on commas;
   pieces longer than two characters lose their first and last character, shorter ones
   are dropped; different sets: ``1 / gold lines``.
7. **write**: ``(1 - BLEU) / gold lines``, BLEU being NLTK's ``sentence_bleu`` of the
   predicted text (cut as for press) against the gold text (between double quotes), given
   as strings, so over characters, with weights ``(0.5, 0.5)`` and no smoothing.
8. A sample's action score is ``max(flag - click - press - write, 0)``. With flag 0 the
   official script adds the full penalty of every gold line (click, press/hotkey, write)
   to the sample, but these never reach the dataset's penalty totals.
9. Where the official script would raise on a prediction (click coordinates that are not
   two plain numbers, a press or write line without quotes, a hotkey without ``(``), we
   give the full penalty of that kind instead. A gold script it could not read (no gold
   line, a gold click at no box centre, a press or write without double quotes) is a
   :class:`GoldScriptError` when the gold is prepared (:func:`prepare_gold`).

Dataset figures over these per-sample scores are :mod:`pytest_osworld.omniact.figures`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_osworld.errors import OSWorldError
from pytest_osworld.omniact.figures import SampleFigures
from pytest_osworld.omniact.official_text import (
    CALL_PREFIX,
    Corners,
    between,
    box_distance,
    box_miss,
    call_name,
    char_bleu,
    hotkey_keys,
    kept_lines,
    point,
    quoted,
)

#: A sample's weight is its number of gold lines minus this.
WEIGHT_OFFSET = 0.9

#: Message templates of the gold script's errors (tests match them).
NO_GOLD_LINES = "the task file has no gold script (no line after the first starts with 'pyautogui')"
NOT_A_CALL = "gold line {index} has no 'pyautogui.': {line!r}"
GOLD_POINT_UNREADABLE = "gold line {index} (click): the coordinates are not two plain numbers: {line!r}"
GOLD_CLICK_OFF_BOX = (
    "gold line {index} (click) at ({x:g}, {y:g}) is at no box's centre; the official scorer finds "
    "a gold click's box by its exact centre: fix the box file or the task file"
)
GOLD_CLICK_NO_BOX = "gold line {index} (click) has no box: {line!r}"
GOLD_NOT_QUOTED = (
    "gold line {index} ({name}): the official scorer reads its text between double quotes: {line!r}"
)
GOLD_NO_PARENTHESIS = "gold line {index} (hotkey) has no '(': {line!r}"

#: Message templates of a sample's reasons (tests match them).
SEQ_LENGTH = "the prediction has {got} pyautogui line(s), the gold {expected}"
SEQ_NOT_CALL = "predicted line {index} does not start with 'pyautogui.' (indented?): {line!r}"
SEQ_NAME = "predicted line {index} calls {got!r} where the gold calls {expected!r}"
PERFECT = "every line matches"
FULL_PENALTY = "line {index} ({name}): the full penalty, as the sequence differs"
CLICK_OUTSIDE = "line {index} (click) is {distance:.1f} px outside its box {box!r}"
KEY_DIFFERS = "line {index} (press): key {got!r}, expected {expected!r}"
HOTKEY_DIFFERS = "line {index} (hotkey): keys {got}, expected {expected}"
TEXT_DIFFERS = "line {index} (write): typed {got!r}, expected {expected!r} (BLEU {bleu:.3f})"
UNREADABLE = "line {index} ({name}): {what}; the official scorer stops here, scored as a miss: {line!r}"
POINT_NOT_NUMBERS = "the coordinates are not two plain numbers"
NO_QUOTES = "no quoted text"
NO_PARENTHESIS = "no '('"


class GoldScriptError(OSWorldError):
    """A gold script the official scorer could not read; names the gold line and the problem."""

    def __init__(self, message: str, index: int | None = None) -> None:
        #: The 1-based position of the gold line at fault (None: the script as a whole).
        self.index = index
        super().__init__(message)


class GoldClickOffBox(GoldScriptError):
    """A gold click at no box's centre: the official scorer would stop on it."""


@dataclass(frozen=True)
class OfficialGold:
    """A gold script prepared for the official scoring: its kept lines and its clicks' boxes."""

    #: The kept gold lines, lowercased and stripped (the official strips each gold line it reads).
    lines: tuple[str, ...]
    #: Each line's call name (``click``, ``write``, ``rightclick``...).
    names: tuple[str, ...]
    #: For each ``click`` line, its box: (name, corners).
    click_boxes: Mapping[int, tuple[str, Corners]] = field(default_factory=dict)

    @property
    def weight(self) -> float:
        """The sample's weight: gold lines - 0.9."""
        return len(self.lines) - WEIGHT_OFFSET


def prepare_gold(
    task_text: str,
    boxes: Mapping[str, Corners],
    boxes_of_clicks: Mapping[int, tuple[str, Corners]] | None = None,
) -> OfficialGold:
    """Read a task file's text and its boxes as the official scorer does, or raise.

    Raises :class:`GoldScriptError` for a gold script the official scorer could not read
    when a prediction matches it (no gold line, a line without ``pyautogui.``, a click
    whose coordinates are not numbers, a press or write without double quotes, a hotkey
    without ``(``) and :class:`GoldClickOffBox` for a gold click at no box's centre.

    ``boxes_of_clicks`` (0-based gold line -> (name, corners)) gives each gold click its box
    directly, for a sample that names its boxes (our JSON samples' ``# box:`` labels)
    instead of finding them by their centre; a gold click it leaves out is then a
    :class:`GoldScriptError`.
    """
    lines = tuple(line.strip() for line in kept_lines(task_text, gold=True))
    if not lines:
        raise GoldScriptError(NO_GOLD_LINES)
    names: list[str] = []
    click_boxes: dict[int, tuple[str, Corners]] = {}
    for index, line in enumerate(lines, start=1):
        name = call_name(line)
        if name is None:
            raise GoldScriptError(NOT_A_CALL.format(index=index, line=line), index)
        names.append(name)
        if name == "click":
            found = point(line)
            if found is None:
                raise GoldScriptError(GOLD_POINT_UNREADABLE.format(index=index, line=line), index)
            if boxes_of_clicks is not None:
                box = boxes_of_clicks.get(index - 1)
                if box is None:
                    raise GoldScriptError(GOLD_CLICK_NO_BOX.format(index=index, line=line), index)
            else:
                box = _box_at_centre(boxes, *found)
            if box is None:
                raise GoldClickOffBox(GOLD_CLICK_OFF_BOX.format(index=index, x=found[0], y=found[1]), index)
            click_boxes[index - 1] = box
        elif name in ("press", "write") and between(line, '"') is None:
            raise GoldScriptError(GOLD_NOT_QUOTED.format(index=index, name=name, line=line), index)
        elif name == "hotkey" and between(line, "(") is None:
            raise GoldScriptError(GOLD_NO_PARENTHESIS.format(index=index, line=line), index)
    return OfficialGold(lines, tuple(names), click_boxes)


def _box_at_centre(boxes: Mapping[str, Corners], x: float, y: float) -> tuple[str, Corners] | None:
    """The first box (in the box file's order) whose centre is exactly ``(x, y)``."""
    for name, corners in boxes.items():
        (left, top), (right, bottom) = corners
        if (left + right) / 2 == x and (top + bottom) / 2 == y:
            return name, corners
    return None


@dataclass(frozen=True)
class LinePenalty:
    """One non-zero penalty of a sample, on one gold line."""

    #: 1-based position of the line in the gold script.
    index: int
    name: str
    #: ``click``, ``press`` (press and hotkey) or ``write``.
    category: str
    #: Already divided by the number of gold lines.
    value: float
    reason: str
    #: True where the official scorer would have stopped (rule 9).
    unreadable: bool = False

    def to_json(self) -> dict[str, object]:
        """Plain data for reports."""
        return {
            "index": self.index,
            "name": self.name,
            "category": self.category,
            "value": self.value,
            "reason": self.reason,
            "unreadable": self.unreadable,
        }


@dataclass(frozen=True)
class OfficialScore:
    """One prediction's official scores against one gold script."""

    weight: float
    #: 1 when the sequences match (rule 3), else 0.
    sequence_flag: int
    #: The sample's penalties, each already divided by the number of gold lines.
    click_penalty: float
    press_penalty: float
    write_penalty: float
    penalties: tuple[LinePenalty, ...] = ()
    #: Why the flag is 0, when it is.
    sequence_reason: str | None = None

    @property
    def sequence_score(self) -> float:
        """The sample's sequence score: its flag."""
        return float(self.sequence_flag)

    @property
    def action_score(self) -> float:
        """``max(flag - click - press - write, 0)``."""
        return max(self.sequence_flag - self.click_penalty - self.press_penalty - self.write_penalty, 0.0)

    def reason(self) -> str:
        """The main reason the action score is below 1: the sequence, else the largest penalty."""
        if self.sequence_reason is not None:
            return self.sequence_reason
        if not self.penalties:
            return PERFECT
        return max(self.penalties, key=lambda p: p.value).reason

    def figures(self, key: str, domain: str) -> SampleFigures:
        """The sample's plain figures, for dataset sums and reports."""
        return SampleFigures(
            key=key,
            domain=domain,
            weight=self.weight,
            sequence_score=self.sequence_score,
            action_score=self.action_score,
            click_penalty=self.click_penalty,
            press_penalty=self.press_penalty,
            write_penalty=self.write_penalty,
        )

    def to_json(self) -> dict[str, object]:
        """Plain data for reports and the xdist controller."""
        return {
            "sequence_score": self.sequence_score,
            "action_score": self.action_score,
            "weight": self.weight,
            "click_penalty": self.click_penalty,
            "press_penalty": self.press_penalty,
            "write_penalty": self.write_penalty,
            "penalties": [p.to_json() for p in self.penalties],
            "reason": self.reason(),
        }


_CATEGORY = {"click": "click", "press": "press", "hotkey": "press", "write": "write"}


def score(gold: OfficialGold, prediction: str) -> OfficialScore:
    """Score a prediction's script text against a prepared gold script (rules 1-9)."""
    predicted = kept_lines(prediction, gold=False)
    count = len(gold.lines)
    reason = _sequence_reason(gold, predicted)
    if reason is not None:
        # Rule 8: the full penalty of every gold line; it never reaches the dataset totals.
        full = [
            LinePenalty(i, n, _CATEGORY[n], 1 / count, FULL_PENALTY.format(index=i, name=n))
            for i, n in _scored_lines(gold)
        ]
        return _total(gold, 0, full, reason)
    found: list[LinePenalty] = []
    for index, name in _scored_lines(gold):
        line, got = gold.lines[index - 1], predicted[index - 1]
        penalty = _line_penalty(gold, index, name, line, got)
        if penalty is not None:
            found.append(penalty)
    return _total(gold, 1, found, None)


def _scored_lines(gold: OfficialGold) -> list[tuple[int, str]]:
    """The 1-based positions and names of the gold lines that carry a penalty."""
    return [(i, name) for i, name in enumerate(gold.names, start=1) if name in _CATEGORY]


def _sequence_reason(gold: OfficialGold, predicted: tuple[str, ...]) -> str | None:
    """Why the sequences do not match (rule 3), or None when they do."""
    if len(predicted) != len(gold.lines):
        return SEQ_LENGTH.format(got=len(predicted), expected=len(gold.lines))
    for index, (want, got) in enumerate(zip(gold.names, predicted, strict=True), start=1):
        if not got.startswith(CALL_PREFIX):
            return SEQ_NOT_CALL.format(index=index, line=got)
        name = call_name(got)
        if name != want:
            return SEQ_NAME.format(index=index, got=name, expected=want)
    return None


def _line_penalty(gold: OfficialGold, index: int, name: str, line: str, got: str) -> LinePenalty | None:
    """The penalty of one predicted line against its gold line, None when it is 0."""
    share = 1 / len(gold.lines)
    category = _CATEGORY[name]

    def unreadable(what: str) -> LinePenalty:
        text = UNREADABLE.format(index=index, name=name, what=what, line=got)
        return LinePenalty(index, name, category, share, text, unreadable=True)

    if name == "click":
        box_name, corners = gold.click_boxes[index - 1]
        where = point(got)
        if where is None:
            return unreadable(POINT_NOT_NUMBERS)
        miss = box_miss(corners, *where)
        if miss == 0:
            return None
        text = CLICK_OUTSIDE.format(index=index, distance=box_distance(corners, *where), box=box_name)
        return LinePenalty(index, name, category, (1.0 / len(gold.lines)) * miss, text)
    if name == "press":
        expected, typed = between(line, '"') or "", quoted(got)
        if typed is None:
            return unreadable(NO_QUOTES)
        if expected.strip() == typed.strip():
            return None
        text = KEY_DIFFERS.format(index=index, got=typed.strip(), expected=expected.strip())
        return LinePenalty(index, name, category, share, text)
    if name == "hotkey":
        want_keys, got_keys = hotkey_keys(line) or frozenset(), hotkey_keys(got)
        if got_keys is None:
            return unreadable(NO_PARENTHESIS)
        if want_keys == got_keys:
            return None
        text = HOTKEY_DIFFERS.format(index=index, got=sorted(got_keys), expected=sorted(want_keys))
        return LinePenalty(index, name, category, share, text)
    expected, typed = between(line, '"') or "", quoted(got)
    if typed is None:
        return unreadable(NO_QUOTES)
    bleu = char_bleu(expected, typed)
    if bleu == 1:
        return None
    text = TEXT_DIFFERS.format(index=index, got=typed, expected=expected, bleu=bleu)
    return LinePenalty(index, name, category, (1 - bleu) / len(gold.lines), text)


def _total(gold: OfficialGold, flag: int, penalties: list[LinePenalty], reason: str | None) -> OfficialScore:
    """Sum a sample's line penalties by category, in line order."""
    sums = {"click": 0.0, "press": 0.0, "write": 0.0}
    for penalty in penalties:
        sums[penalty.category] += penalty.value
    return OfficialScore(
        weight=gold.weight,
        sequence_flag=flag,
        click_penalty=sums["click"],
        press_penalty=sums["press"],
        write_penalty=sums["write"],
        penalties=tuple(penalties),
        sequence_reason=reason,
    )
