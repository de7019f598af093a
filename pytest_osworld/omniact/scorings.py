"""The two scorings of a release sample: ``official`` (OmniACT's eval.py) and ``paper`` (ours).

* ``official`` (:mod:`pytest_osworld.omniact.official`) reads the prediction's script text
  line by line, as the released scorer does; every published OmniACT number uses it.
* ``paper`` (:mod:`pytest_osworld.omniact.score`) parses both scripts into actions and
  scores them by the paper's text with our documented choices. The release gives no box
  per action, so a gold pointer action's box is the box whose centre is its point (the
  first in the box file), else the smallest box holding it, else a box of no size at the
  point itself.

Both reduce to :class:`~pytest_osworld.omniact.figures.SampleFigures` for the dataset
figures (:func:`sample_figures`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_osworld.omniact.figures import SampleFigures
from pytest_osworld.omniact.official import OfficialScore, score
from pytest_osworld.omniact.penalties import Box
from pytest_osworld.omniact.release import ReleaseBox, ReleaseSample
from pytest_osworld.omniact.score import (
    POINTER_KINDS,
    ScriptAction,
    ScriptError,
    TaskScore,
    parse_script,
    score_script,
    sequence_weight,
)

#: The scorings, the default first.
SCORINGS = ("official", "paper")
DEFAULT_SCORING = SCORINGS[0]
#: Message templates (tests match them).
UNKNOWN_SCORING = "unknown scoring {name!r}; use one of: {known}"
GOLD_NOT_PYTHON = "the gold script is not valid Python, the paper scoring cannot read it: {error}"
#: The paper scoring's penalty categories, as the official figures name them.
_PAPER_CATEGORY = {"click": "click", "key": "press", "write": "write"}


@dataclass(frozen=True)
class PaperGold:
    """A release sample's gold script as the paper scoring takes it: actions and their boxes."""

    actions: tuple[ScriptAction, ...]
    #: Boxes keyed as :attr:`ScriptAction.box_key` (the gold line number).
    boxes: Mapping[str, Box]
    #: Why the gold cannot be scored, when it cannot (not valid Python).
    problem: str | None = None


def paper_gold(sample: ReleaseSample) -> PaperGold:
    """The gold actions of ``sample`` and, for each pointer action, its box (see module doc)."""
    try:
        actions = tuple(parse_script(sample.gold_script))
    except ScriptError as exc:
        return PaperGold((), {}, GOLD_NOT_PYTHON.format(error=exc))
    boxes: dict[str, Box] = {}
    for action in actions:
        if action.kind in POINTER_KINDS and action.point is not None:
            boxes[action.box_key] = pointer_box(sample.boxes, *action.point)
    return PaperGold(actions, boxes)


def pointer_box(boxes: Mapping[str, ReleaseBox], x: float, y: float) -> Box:
    """The box of a gold pointer action at ``(x, y)``: centred there, else the smallest holding it."""
    holding: list[ReleaseBox] = []
    for box in boxes.values():
        if box.centre == (x, y):
            return box.to_box()
        if box.to_box().contains(x, y):
            holding.append(box)
    if holding:
        return min(holding, key=lambda b: b.to_box().w * b.to_box().h).to_box()
    return Box(x, y, 0.0, 0.0)


def score_paper(sample: ReleaseSample, prediction: str, gold: PaperGold | None = None) -> TaskScore:
    """The paper scoring of a prediction's script text against a release sample."""
    gold = paper_gold(sample) if gold is None else gold
    if gold.problem is not None:
        weight = sequence_weight(len(sample.official.lines))
        return TaskScore(0.0, 0.0, weight, (), (), (), gold.problem)
    return score_script(prediction, gold.actions, gold.boxes)


def score_official(sample: ReleaseSample, prediction: str) -> OfficialScore:
    """The official scoring of a prediction's script text against a release sample."""
    return score(sample.official, prediction)


def paper_figures(result: TaskScore, key: str, domain: str) -> SampleFigures:
    """A paper score as figures: its penalties summed by category, divided by the weight."""
    sums = {"click": 0.0, "press": 0.0, "write": 0.0}
    for penalty in result.penalties:
        sums[_PAPER_CATEGORY[penalty.category]] += penalty.value
    weight = result.maximum
    return SampleFigures(
        key=key,
        domain=domain,
        weight=weight,
        sequence_score=result.sequence_score,
        action_score=result.action_score,
        click_penalty=sums["click"] / weight if weight else 0.0,
        press_penalty=sums["press"] / weight if weight else 0.0,
        write_penalty=sums["write"] / weight if weight else 0.0,
    )


def check_scoring(name: str) -> str:
    """``name`` if it is a scoring, else ValueError naming the scorings."""
    if name not in SCORINGS:
        raise ValueError(UNKNOWN_SCORING.format(name=name, known=", ".join(SCORINGS)))
    return name


def sample_figures(sample: ReleaseSample, prediction: str, scoring: str) -> SampleFigures:
    """One sample's figures under ``scoring`` (``official`` or ``paper``)."""
    if check_scoring(scoring) == "official":
        return score_official(sample, prediction).figures(sample.key, sample.domain)
    return paper_figures(score_paper(sample, prediction), sample.key, sample.domain)
