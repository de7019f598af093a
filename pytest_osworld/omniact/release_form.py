"""A gold script written as OmniACT's release writes it: one ``pyautogui`` call a line.

OmniACT's task files hold their gold script in one form: one call a line, texts and keys
between double quotes, hotkey keys separated by a comma alone
(``pyautogui.hotkey("ctrl","c")``), clicks at a box's exact centre. The official scoring
(:mod:`~pytest_osworld.omniact.official`) reads scripts in that form only, line by line.

:func:`release_lines` writes the parsed gold actions of one of our JSON samples
(:mod:`~pytest_osworld.omniact.task`) in that form. Our JSON samples are then scored by
the official rules too (their boxes given by their ``# box:`` labels, not found by
centre), and the samples generator (``tasks/tools/make_omniact_samples.py --release``)
writes the release layout from them (:mod:`~pytest_osworld.omniact.release_write`, with
``centre=True``). A gold action the form cannot hold raises :class:`ReleaseFormError`.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_osworld.errors import OSWorldError
from pytest_osworld.omniact.penalties import Box
from pytest_osworld.omniact.script import KEY_KINDS, POINTER_KINDS, ScriptAction

#: Message templates (tests match them).
NO_POINT = "action {index} ({kind}) has no literal position; the release form writes one"
NO_TEXT = "action {index} (write) has no literal text"
TEXT_UNFIT = (
    "action {index} (write): the text {text!r} holds a double quote or a line break, which the "
    "official scorer cannot read"
)
KEYS_UNFIT = (
    "action {index} ({kind}): the keys must be literal strings without '\"', ',' or ')' "
    "(one key for {kind}), got {source!r}"
)
NOT_ONE_LINE = "action {index} ({kind}) spans several lines: {source!r}"
NO_ACTIONS = "the gold script has no pyautogui action"


class ReleaseFormError(OSWorldError):
    """A gold action that the release's one-call-a-line form cannot hold."""


@dataclass(frozen=True)
class ReleaseLine:
    """One gold line in the release's form."""

    text: str
    #: The call's name as the official scoring reads it (``click``, ``rightClick``...).
    name: str
    #: The box key of a pointer action (its ``# box:`` label or line number), else None.
    box: str | None = None


def _number(value: float) -> str:
    """A coordinate as the release writes it: ``125.0``, ``102.5``."""
    return repr(float(value))


def _literal_args(source: str) -> list[object] | None:
    """The positional arguments of a call's source, as literals; None if one is not literal."""
    try:
        call = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or (call.keywords and not call.args):
        return None
    values = []
    for node in call.args:
        try:
            values.append(ast.literal_eval(node))
        except (ValueError, TypeError, SyntaxError):
            return None
    return values


def _quoted_keys(index: int, action: ScriptAction) -> str:
    """The keys of a key action, each between double quotes, comma-separated."""
    args = _literal_args(action.source)
    keys = args if args is not None and action.kind == "hotkey" else (args or [None])[:1]
    unfit = (
        args is None
        or not keys
        or (action.kind != "hotkey" and len(args) != 1)
        or not all(isinstance(k, str) and k and not set(k) & set('"),') for k in keys)
    )
    if unfit:
        raise ReleaseFormError(KEYS_UNFIT.format(index=index, kind=action.kind, source=action.source))
    return ",".join(f'"{key}"' for key in keys)


def release_lines(
    actions: Sequence[ScriptAction], boxes: Mapping[str, Box], *, centre: bool = False
) -> tuple[ReleaseLine, ...]:
    """The gold ``actions`` as release lines, in order; raises :class:`ReleaseFormError`.

    Pointer actions are written at their point, or with ``centre`` at the centre of their
    box when they have one (the release's gold clicks aim at a box's exact centre). Calls
    that carry no penalty (``scroll``, ``moveRel``...) keep their own arguments.
    """
    if not actions:
        raise ReleaseFormError(NO_ACTIONS)
    lines: list[ReleaseLine] = []
    for index, action in enumerate(actions, start=1):
        kind = action.kind
        if kind in POINTER_KINDS:
            box = boxes.get(action.box_key)
            point = action.point
            if centre and box is not None:
                point = (box.x + box.w / 2, box.y + box.h / 2)
            if point is None:
                raise ReleaseFormError(NO_POINT.format(index=index, kind=kind))
            text = f"pyautogui.{kind}({_number(point[0])},{_number(point[1])})"
            lines.append(ReleaseLine(text, kind, action.box_key if box is not None else None))
        elif kind == "write":
            if action.text is None:
                raise ReleaseFormError(NO_TEXT.format(index=index))
            if set(action.text) & {'"', "\n", "\r"}:
                raise ReleaseFormError(TEXT_UNFIT.format(index=index, text=action.text))
            lines.append(ReleaseLine(f'pyautogui.write("{action.text}")', kind))
        elif kind in KEY_KINDS:
            lines.append(ReleaseLine(f"pyautogui.{kind}({_quoted_keys(index, action)})", kind))
        else:
            source = action.source.strip()
            if "\n" in source or "(" not in source:
                raise ReleaseFormError(NOT_ONE_LINE.format(index=index, kind=kind, source=source))
            lines.append(ReleaseLine(f"pyautogui.{kind}{source[source.index('(') :]}", kind))
    return tuple(lines)


def task_text(instruction: str, lines: Sequence[ReleaseLine]) -> str:
    """A release task file's text: ``Task: ...``, ``Output Script:``, the gold lines."""
    first = " ".join(instruction.split())
    return "\n".join([f"Task: {first}", "Output Script:", *(line.text for line in lines)]) + "\n"
