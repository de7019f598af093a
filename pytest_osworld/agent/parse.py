"""Turning a model's answer into :class:`~pytest_osworld.agent.actions.Action` objects.

Two action spaces are understood:

``pyautogui``
    The answer is one or more fenced code blocks (```` ```python ... ``` ````, the
    language tag is optional), or a bare ``WAIT``, ``DONE`` or ``FAIL``. A block whose
    last line is a special code yields the code before it and then the special action.
    The code is kept exactly as written: it is never split on ``;`` (splitting corrupts
    string literals that contain one). Code that takes a screenshot or looks for images
    on the screen is refused, because the screen it would see is not the model's.

``computer_13``
    The answer is JSON (an action object, or a list of them) in fenced blocks, or the
    whole answer is JSON. Every action is checked by
    :func:`pytest_osworld.agent.computer13.validate`.

Every problem raises :class:`~pytest_osworld.agent.actions.ActionParseError` whose message is
written to be shown to the model and recorded as the step's ``parse_error``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from pytest_osworld.agent.actions import SPECIAL, Action, ActionParseError, action_from_json
from pytest_osworld.agent.computer13 import validate
from pytest_osworld.errors import UnknownNameError

#: Message templates (tests match them).
NO_ACTION = (
    "the answer has no ```code``` block and is not one of WAIT, DONE or FAIL; "
    "answer with a fenced code block or a special code"
)
EMPTY_ANSWER = "the answer is empty"
FORBIDDEN_CALL = (
    "code block {index} calls {call}, which is not allowed: the code runs on the "
    "desktop without a view of the screen; use the coordinates from the observation"
)
SYNTAX_ERROR = "code block {index} is not valid Python: {error}"
BAD_JSON = "block {index} is not valid JSON: {error}"
NOT_AN_ACTION = "block {index}: a computer_13 action must be a JSON object, got {kind}"

_FENCE = re.compile(r"```(.*?)```", re.DOTALL)
#: A first line that is a language tag (``python``, ``py``, ``json``, empty), not code.
_LANG_TAG = re.compile(r"^[A-Za-z][\w+.-]*$|^$")
#: Language tags recognised with code after them on the same line (``` ```python code``` ```).
_LANGUAGES = frozenset({"python", "python3", "py", "json"})
_INLINE_TAG = re.compile(r"([A-Za-z]\w*)[ \t]+(.*)\Z", re.DOTALL)
#: Calls the environment refuses: (pattern, name shown in the message).
_FORBIDDEN: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bscreenshot\s*\("), "screenshot()"),
    (re.compile(r"\blocate(?:All|Center)?OnScreen\s*\("), "locateOnScreen()"),
    (re.compile(r"\blocateOnWindow\s*\("), "locateOnWindow()"),
)


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the fenced blocks in ``text``, language tags removed, in order.

    A language tag is a word right after the fence, alone on the block's first line, or
    one of :data:`_LANGUAGES` followed by a space and code on the same line.
    """
    blocks: list[str] = []
    for match in _FENCE.finditer(text):
        body = match.group(1)
        first, newline, rest = body.partition("\n")
        inline = _INLINE_TAG.match(body)
        if newline and _LANG_TAG.match(first.rstrip()) and first.strip() not in SPECIAL:
            body = rest
        elif inline is not None and inline.group(1).lower() in _LANGUAGES:
            body = inline.group(2)  # "```python pyautogui.click(1, 2)```": code on the tag's line
        blocks.append(body.strip("\n"))
    return blocks


def thought_of(text: str) -> str:
    """The answer without its fenced blocks: the model's reasoning, whitespace-trimmed."""
    return re.sub(r"\n{3,}", "\n\n", _FENCE.sub("", text)).strip()


def parse_pyautogui(text: str) -> list[Action]:
    """Parse an answer in the ``pyautogui`` action space; raise ``ActionParseError``."""
    stripped = text.strip()
    if not stripped:
        raise ActionParseError(EMPTY_ANSWER)
    if stripped in SPECIAL:
        return [Action(kind=stripped)]  # type: ignore[arg-type]
    blocks = fenced_blocks(text)
    if not blocks:
        # A bare special code on the last line of a prose answer ("All set.\nDONE").
        last = stripped.splitlines()[-1].strip()
        if last in SPECIAL:
            return [Action(kind=last)]  # type: ignore[arg-type]
        raise ActionParseError(NO_ACTION)
    actions: list[Action] = []
    for index, block in enumerate(blocks, start=1):
        actions.extend(_block_actions(block, index))
    if not actions:
        raise ActionParseError(NO_ACTION)
    return actions


def _block_actions(block: str, index: int) -> list[Action]:
    """The actions of one pyautogui block: its code, then a trailing special code."""
    body = block.strip()
    if not body:
        return []
    if body in SPECIAL:
        return [Action(kind=body)]  # type: ignore[arg-type]
    lines = body.splitlines()
    special: Action | None = None
    if lines[-1].strip() in SPECIAL:
        special = Action(kind=lines[-1].strip())  # type: ignore[arg-type]
        body = "\n".join(lines[:-1]).rstrip()
    actions: list[Action] = []
    if body.strip():
        check_code(body, index)
        actions.append(Action(kind="code", code=body))
    if special is not None:
        actions.append(special)
    return actions


def check_code(code: str, index: int = 1) -> None:
    """Refuse code that cannot run as an action: forbidden calls and syntax errors."""
    for pattern, name in _FORBIDDEN:
        if pattern.search(code):
            raise ActionParseError(FORBIDDEN_CALL.format(index=index, call=name))
    try:
        compile(code, f"<code block {index}>", "exec")
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise ActionParseError(SYNTAX_ERROR.format(index=index, error=f"{where}{exc.msg}")) from None
    except ValueError as exc:  # a NUL byte in the code
        raise ActionParseError(SYNTAX_ERROR.format(index=index, error=str(exc))) from None


def parse_computer13(text: str) -> list[Action]:
    """Parse an answer in the ``computer_13`` action space; raise ``ActionParseError``."""
    stripped = text.strip()
    if not stripped:
        raise ActionParseError(EMPTY_ANSWER)
    if stripped in SPECIAL:
        return [Action(kind=stripped)]  # type: ignore[arg-type]
    blocks = fenced_blocks(text) or [stripped]
    actions: list[Action] = []
    for index, block in enumerate(blocks, start=1):
        body = block.strip()
        if body in SPECIAL:
            actions.append(Action(kind=body))  # type: ignore[arg-type]
            continue
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ActionParseError(BAD_JSON.format(index=index, error=exc)) from None
        for item in value if isinstance(value, list) else [value]:
            actions.append(_computer13_action(item, index))
    if not actions:
        raise ActionParseError(NO_ACTION)
    return actions


def _computer13_action(item: object, index: int) -> Action:
    if not isinstance(item, dict):
        raise ActionParseError(NOT_AN_ACTION.format(index=index, kind=type(item).__name__))
    if item.get("action_type") in SPECIAL:
        return action_from_json(item)
    validate(item)
    return action_from_json(item)


#: Parsers by action space.
PARSERS: dict[str, Callable[[str], list[Action]]] = {
    "pyautogui": parse_pyautogui,
    "computer_13": parse_computer13,
}


def parse_actions(text: str, action_space: str) -> list[Action]:
    """Parse a model's answer in ``action_space``; raise ``ActionParseError`` if unusable.

    An unknown action space raises :class:`~pytest_osworld.errors.UnknownNameError`.
    """
    try:
        parser = PARSERS[action_space]
    except KeyError:
        raise UnknownNameError("action space", action_space, None, sorted(PARSERS)) from None
    return parser(text)
