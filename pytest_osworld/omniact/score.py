"""OmniACT's scoring: the sequence score, the action score and their aggregation over tasks.

This module owns the sequence score, the per-task and dataset results (:class:`TaskScore`,
:class:`DatasetScore`) and :func:`aggregate`. The script parser is
:mod:`~pytest_osworld.omniact.script`, the penalties :mod:`~pytest_osworld.omniact.penalties`,
BLEU :mod:`~pytest_osworld.omniact.bleu`; their public names are re-exported here.

Kapoor et al. 2024, section 4 ("Evaluation Metrics"). A script is read into a sequence of
actions (:func:`parse_script`). For one task ``i`` whose gold script has ``s`` actions:

* **Sequence score.** ``SeqScore_i = beta1 + beta2 * (s - 1)`` when the predicted action
  types equal the gold types position by position (same length, same order), else 0,
  with ``beta1 = 0.1`` and ``beta2 = 1``. Later actions weigh more than the first one.
* **Action score.** For a script whose sequence matches, penalties are taken off:
  ``max(SeqScore_i - sum_j (M_ij + K_ij + W_ij), 0)``, where

  - ``M_ij`` (click penalty, pointer actions): ``1 - mu / (mu + L2)``, ``L2`` the
    Euclidean distance in pixels from the predicted point to the gold box (0 inside it)
    and ``mu`` the Dirichlet smoothing coefficient, ``1 / diagonal`` of the box;
  - ``K_ij`` (key penalty, ``press``/``hotkey``/``keyDown``/``keyUp``): 0 when the
    predicted keys, as a set, equal the gold keys, else 1;
  - ``W_ij`` (write penalty, ``write``/``typewrite``): ``1 - BLEU(gold text, typed text)``
    (our sentence-level BLEU, :func:`bleu`).

Both are reported per task normalised by the gold maximum ``beta1 + beta2 * (s - 1)``, so
a perfect script scores 1.0 on both; the dataset scores (:func:`aggregate`) are the sums
of the per-task numerators over the sum of the gold maxima, as in the paper's tables.
Every choice the paper leaves open is listed in ``docs/omniact.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_osworld.omniact.bleu import BLEU_EPSILON, BLEU_MAX_N, bleu, tokenize
from pytest_osworld.omniact.penalties import (
    CLICK_NO_POINT,
    CLICK_OUTSIDE,
    KEYS_DIFFER,
    TEXT_DIFFERS,
    Box,
    Penalty,
    action_penalties,
    click_penalty,
    key_penalty,
    write_penalty,
)
from pytest_osworld.omniact.script import (
    ALIASES,
    KEY_ALIASES,
    KEY_KINDS,
    NOT_ACTIONS,
    NOT_PYTHON,
    POINTER_KINDS,
    WRITE_KINDS,
    ScriptAction,
    ScriptError,
    normalise_key,
    parse_script,
)

__all__ = [
    "ALIASES",
    "BETA1",
    "BETA2",
    "BLEU_EPSILON",
    "BLEU_MAX_N",
    "CLICK_NO_POINT",
    "CLICK_OUTSIDE",
    "KEYS_DIFFER",
    "KEY_ALIASES",
    "KEY_KINDS",
    "NOT_ACTIONS",
    "NOT_PYTHON",
    "NO_ACTIONS",
    "PERFECT",
    "POINTER_KINDS",
    "SEQUENCE_DIFFERS",
    "TEXT_DIFFERS",
    "WRITE_KINDS",
    "Box",
    "DatasetScore",
    "Penalty",
    "ScriptAction",
    "ScriptError",
    "TaskScore",
    "action_penalties",
    "aggregate",
    "bleu",
    "click_penalty",
    "key_penalty",
    "normalise_key",
    "parse_script",
    "score_actions",
    "score_script",
    "sequence_weight",
    "tokenize",
    "write_penalty",
]

#: The paper's weights of the first action and of every later one.
BETA1 = 0.1
BETA2 = 1.0

#: Message templates (tests match them).
SEQUENCE_DIFFERS = "action sequence differs: expected {expected}; got {got}"
NO_ACTIONS = "the script has no pyautogui actions (expected {expected})"
PERFECT = "every action matches"


@dataclass(frozen=True)
class TaskScore:
    """The scores of one predicted script against one task."""

    #: ``SeqScore_i``: ``beta1 + beta2 * (s - 1)`` when the sequence matches, else 0.
    sequence_raw: float
    #: ``max(SeqScore_i - sum of penalties, 0)``.
    action_raw: float
    #: The gold maximum ``beta1 + beta2 * (s - 1)`` for the gold length ``s``.
    maximum: float
    expected_kinds: tuple[str, ...]
    predicted_kinds: tuple[str, ...]
    penalties: tuple[Penalty, ...] = ()
    #: Why the sequence score is 0, when it is.
    sequence_reason: str | None = None

    @property
    def sequence_score(self) -> float:
        """The sequence score normalised to [0, 1] (1 when the sequence matches)."""
        return self.sequence_raw / self.maximum if self.maximum else 0.0

    @property
    def action_score(self) -> float:
        """The action score normalised to [0, 1]."""
        return self.action_raw / self.maximum if self.maximum else 0.0

    def first_reason(self) -> str:
        """The main reason the action score is below 1: sequence, else the largest penalty."""
        if self.sequence_reason is not None:
            return self.sequence_reason
        if not self.penalties:
            return PERFECT
        worst = max(self.penalties, key=lambda p: p.value)
        return worst.reason

    def to_json(self) -> dict[str, object]:
        """Plain data for reports and the xdist controller."""
        return {
            "sequence_score": round(self.sequence_score, 6),
            "action_score": round(self.action_score, 6),
            "sequence_raw": round(self.sequence_raw, 6),
            "action_raw": round(self.action_raw, 6),
            "maximum": round(self.maximum, 6),
            "expected": list(self.expected_kinds),
            "predicted": list(self.predicted_kinds),
            "penalties": [p.to_json() for p in self.penalties],
            "reason": self.first_reason(),
        }


@dataclass(frozen=True)
class DatasetScore:
    """Scores over many tasks."""

    tasks: int
    #: The paper's dataset scores: sum of per-task numerators / sum of gold maxima.
    sequence_score: float
    action_score: float
    #: Plain means of the per-task normalised scores (every task weighs the same).
    mean_sequence_score: float
    mean_action_score: float
    per_task: tuple[TaskScore, ...] = field(default=(), repr=False)


def sequence_weight(length: int) -> float:
    """``beta1 + beta2 * (length - 1)``; 0 for an empty sequence."""
    return 0.0 if length <= 0 else BETA1 + BETA2 * (length - 1)


def score_actions(
    gold: Sequence[ScriptAction], predicted: Sequence[ScriptAction], boxes: Mapping[str, Box]
) -> TaskScore:
    """Score parsed predicted actions against the gold actions and their boxes."""
    expected = tuple(a.kind for a in gold)
    got = tuple(a.kind for a in predicted)
    maximum = sequence_weight(len(gold))
    if expected != got:
        shown_expected = ", ".join(expected) or "(nothing)"
        reason = (
            NO_ACTIONS.format(expected=shown_expected)
            if not got
            else SEQUENCE_DIFFERS.format(expected=shown_expected, got=", ".join(got))
        )
        return TaskScore(0.0, 0.0, maximum, expected, got, (), reason)
    penalties = action_penalties(gold, predicted, boxes)
    raw = maximum
    action = max(raw - sum(p.value for p in penalties), 0.0)
    return TaskScore(raw, action, maximum, expected, got, tuple(penalties))


def score_script(predicted: str, gold: Sequence[ScriptAction], boxes: Mapping[str, Box]) -> TaskScore:
    """Score a predicted script (text) against a task's gold actions and boxes.

    A script that is not valid Python scores 0 with the syntax error as the reason.
    """
    expected = tuple(a.kind for a in gold)
    try:
        actions = parse_script(predicted)
    except ScriptError as exc:
        return TaskScore(0.0, 0.0, sequence_weight(len(gold)), expected, (), (), str(exc))
    return score_actions(gold, actions, boxes)


def aggregate(scores: Iterable[TaskScore]) -> DatasetScore:
    """Dataset scores: the paper's ratio of sums, and the plain per-task means.

    The paper divides the summed ``SeqScore_i`` (and the summed penalised scores) by the
    summed gold maxima, so long scripts weigh more; the means weigh every task the same.
    An empty input scores 0.
    """
    items = tuple(scores)
    total = sum(s.maximum for s in items)
    if not items or total == 0:
        return DatasetScore(len(items), 0.0, 0.0, 0.0, 0.0, items)
    return DatasetScore(
        tasks=len(items),
        sequence_score=sum(s.sequence_raw for s in items) / total,
        action_score=sum(s.action_raw for s in items) / total,
        mean_sequence_score=sum(s.sequence_score for s in items) / len(items),
        mean_action_score=sum(s.action_score for s in items) / len(items),
        per_task=items,
    )
