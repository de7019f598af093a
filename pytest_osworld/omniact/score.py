"""OmniACT's scoring: the sequence score and the action score of a PyAutoGUI script.

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

import ast
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_osworld.errors import OSWorldError

#: The paper's weights of the first action and of every later one.
BETA1 = 0.1
BETA2 = 1.0
#: BLEU: the highest n-gram order, and the count given to an order with no match
#: (smoothing "method 1" of Chen and Cherry, 2014).
BLEU_MAX_N = 4
BLEU_EPSILON = 0.1

#: Action types that act at a screen position: the click penalty applies to them.
POINTER_KINDS = frozenset(
    {
        "click",
        "doubleClick",
        "rightClick",
        "middleClick",
        "tripleClick",
        "moveTo",
        "dragTo",
        "mouseDown",
        "mouseUp",
    }
)
#: Action types whose argument is keys: the key penalty applies.
KEY_KINDS = frozenset({"press", "hotkey", "keyDown", "keyUp"})
#: Action types whose argument is text: the write penalty applies.
WRITE_KINDS = frozenset({"write"})
#: Function names normalised to one action type.
ALIASES: Mapping[str, str] = {"typewrite": "write", "vscroll": "scroll", "move": "moveRel", "drag": "dragRel"}
#: pyautogui functions that are not actions (queries, pauses): left out of the sequence.
NOT_ACTIONS = frozenset(
    {
        "size",
        "position",
        "onScreen",
        "sleep",
        "countdown",
        "isValidKey",
        "getPointOnLine",
        "easeInQuad",
        "linear",
    }
)
#: Key names normalised before keys are compared as sets.
KEY_ALIASES: Mapping[str, str] = {
    "return": "enter",
    "esc": "escape",
    "control": "ctrl",
    "ctrlleft": "ctrl",
    "ctrlright": "ctrl",
    "shiftleft": "shift",
    "shiftright": "shift",
    "altleft": "alt",
    "altright": "alt",
    "option": "alt",
    "cmd": "command",
    "super": "win",
    "winleft": "win",
    "winright": "win",
    "del": "delete",
    "pgdn": "pagedown",
    "pgup": "pageup",
    "spacebar": "space",
}

#: Message templates (tests match them).
SEQUENCE_DIFFERS = "action sequence differs: expected {expected}; got {got}"
NO_ACTIONS = "the script has no pyautogui actions (expected {expected})"
NOT_PYTHON = "the script is not valid Python: {error}"
CLICK_OUTSIDE = "action {index} ({kind}) is {distance:.0f} px outside its box {box!r}"
CLICK_NO_POINT = "action {index} ({kind}) has no literal coordinates to compare with its box {box!r}"
KEYS_DIFFER = "action {index} ({kind}) keys {got} differ from {expected}"
TEXT_DIFFERS = "action {index} (write) typed {got!r}, expected {expected!r} (BLEU {bleu:.2f})"
PERFECT = "every action matches"

_BOX_COMMENT = re.compile(r"#\s*box:\s*(\S+)")
_TOKEN = re.compile(r"\w+|[^\w\s]")


class ScriptError(OSWorldError):
    """A script cannot be read into actions (it is not valid Python)."""


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
class ScriptAction:
    """One pyautogui call of a script, reduced to what scoring compares."""

    #: Normalised action type (``click``, ``doubleClick``, ``write``, ``hotkey``...).
    kind: str
    #: 1-based line of the call in the script.
    line: int
    #: Where a pointer action acts (explicit, or the cursor left by an earlier action);
    #: None when unknown or not written as literal numbers.
    point: tuple[float, float] | None = None
    #: The keys of a key action, normalised (None for other kinds or non-literal keys).
    keys: frozenset[str] | None = None
    #: The text of a ``write`` action (None when not a literal string).
    text: str | None = None
    #: The box named by a ``# box: NAME`` comment on the call's line.
    box_label: str | None = None

    @property
    def box_key(self) -> str:
        """The key of this action's box in the task's ``boxes``: its label, else its line."""
        return self.box_label if self.box_label is not None else str(self.line)


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


# -- parsing --------------------------------------------------------------------------------


def normalise_key(key: str) -> str:
    """A key name as compared by the key penalty: lower case, common aliases merged."""
    if key == " ":
        return "space"
    name = key if len(key) == 1 else key.strip().lower()
    return KEY_ALIASES.get(name, name)


def sequence_weight(length: int) -> float:
    """``beta1 + beta2 * (length - 1)``; 0 for an empty sequence."""
    return 0.0 if length <= 0 else BETA1 + BETA2 * (length - 1)


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


_NOT_LITERAL = object()


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _call_name(call: ast.Call) -> str | None:
    """``pyautogui.click`` -> ``click``; other calls -> None."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "pyautogui":
        return func.attr
    return None


def _arg(call: ast.Call, position: int, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return None


def _point_arg(call: ast.Call) -> tuple[float, float] | object | None:
    """The literal ``(x, y)`` of a pointer call; None if absent; ``_NOT_LITERAL`` if not literal."""
    x_node, y_node = _arg(call, 0, "x"), _arg(call, 1, "y")
    if x_node is None and y_node is None:
        return None
    x_value = _literal(x_node)
    if y_node is None and isinstance(x_value, tuple | list) and len(x_value) >= 2:
        x, y = _number(x_value[0]), _number(x_value[1])
    else:
        x, y = _number(x_value), _number(_literal(y_node))
    if x is None or y is None:
        return _NOT_LITERAL
    return (x, y)


def _click_kind(call: ast.Call) -> str:
    """``click`` refined by its ``button`` and ``clicks`` arguments.

    ``pyautogui.click(x, y, clicks, interval, button, ...)``: ``button`` is the fifth
    positional argument.
    """
    button = _literal(_arg(call, 4, "button"))
    clicks = _literal(_arg(call, 2, "clicks"))
    if button in ("right", "secondary"):
        return "rightClick"
    if button == "middle":
        return "middleClick"
    if clicks == 2:
        return "doubleClick"
    if clicks == 3:
        return "tripleClick"
    return "click"


def _keys(call: ast.Call, kind: str) -> frozenset[str] | None:
    values = [_literal(a) for a in call.args] if kind == "hotkey" else [_literal(_arg(call, 0, "keys"))]
    if kind != "hotkey" and values == [None]:
        values = [_literal(_arg(call, 0, "key"))]
    keys: set[str] = set()
    for value in values:
        items = value if isinstance(value, list | tuple) else [value]
        for item in items:
            if not isinstance(item, str):
                return None
            keys.add(normalise_key(item))
    return frozenset(keys)


def parse_script(code: str) -> list[ScriptAction]:
    """Read a PyAutoGUI script into its actions, in source order.

    Every ``pyautogui.<name>(...)`` call is an action, wherever it is (a call in a loop
    counts once); other statements (``import``, ``time.sleep``) and pyautogui queries
    (:data:`NOT_ACTIONS`) are ignored. Arguments are read as literals only. The cursor is
    followed, so a ``click()`` without coordinates acts where the last pointer action
    left it. Raises :class:`ScriptError` if ``code`` is not valid Python.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise ScriptError(NOT_PYTHON.format(error=f"{where}{exc.msg}")) from None
    lines = code.splitlines()
    calls = sorted(
        (node for node in ast.walk(tree) if isinstance(node, ast.Call) and _call_name(node) is not None),
        key=lambda node: (node.lineno, node.col_offset),
    )
    actions: list[ScriptAction] = []
    cursor: tuple[float, float] | None = None
    for call in calls:
        name = _call_name(call)
        if name is None or name in NOT_ACTIONS or name.startswith("_") or name[:1].isupper():
            continue
        kind = ALIASES.get(name, name)
        if kind == "click":
            kind = _click_kind(call)
        end_line = call.end_lineno or call.lineno
        comment = _BOX_COMMENT.search(lines[end_line - 1]) if end_line <= len(lines) else None
        label = comment.group(1) if comment else None
        point: tuple[float, float] | None = None
        keys: frozenset[str] | None = None
        text: str | None = None
        if kind in POINTER_KINDS:
            found = _point_arg(call)
            if isinstance(found, tuple):
                point = found
                cursor = found
            elif found is None:
                point = cursor
            else:
                point, cursor = None, None
        elif kind in KEY_KINDS:
            keys = _keys(call, kind)
        elif kind in WRITE_KINDS:
            value = _literal(_arg(call, 0, "message"))
            text = value if isinstance(value, str) else None
        elif kind in ("moveRel", "dragRel"):
            cursor = None
        actions.append(ScriptAction(kind, call.lineno, point, keys, text, label))
    return actions


# -- BLEU -----------------------------------------------------------------------------------


def tokenize(text: str) -> list[str]:
    """Word and punctuation tokens: ``"=SUM(A1:A3)"`` -> ``= SUM ( A1 : A3 )``."""
    return _TOKEN.findall(text)


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu(reference: str, hypothesis: str) -> float:
    """Sentence-level BLEU of ``hypothesis`` against one ``reference``, in [0, 1].

    Tokens from :func:`tokenize` (case kept). Orders 1 to ``N = min(4, reference
    length)`` with uniform weights, so a one-word reference is scored on unigrams.
    Clipped n-gram precision ``p_n = matches / hypothesis n-grams``; an order with no
    match counts ``epsilon = 0.1`` matches instead (Chen and Cherry's method 1), over at
    least one n-gram. Brevity penalty ``exp(1 - r / c)`` when the hypothesis (``c``
    tokens) is shorter than the reference (``r``). Identical token lists score 1; an
    empty hypothesis scores 0 (1 if the reference is empty too).
    """
    ref, hyp = tokenize(reference), tokenize(hypothesis)
    if ref == hyp:
        return 1.0
    if not ref or not hyp:
        return 0.0
    max_n = min(BLEU_MAX_N, len(ref))
    log_sum = 0.0
    for n in range(1, max_n + 1):
        hyp_grams = _ngrams(hyp, n)
        ref_grams = _ngrams(ref, n)
        total = sum(hyp_grams.values())
        matches = sum(min(count, ref_grams[gram]) for gram, count in hyp_grams.items())
        precision = matches / total if matches else BLEU_EPSILON / max(total, 1)
        log_sum += math.log(precision) / max_n
    brevity = 1.0 if len(hyp) >= len(ref) else math.exp(1.0 - len(ref) / len(hyp))
    return brevity * math.exp(log_sum)


# -- penalties ------------------------------------------------------------------------------


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


def _penalties(
    gold: Sequence[ScriptAction], predicted: Sequence[ScriptAction], boxes: Mapping[str, Box]
) -> list[Penalty]:
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
    penalties = _penalties(gold, predicted, boxes)
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
