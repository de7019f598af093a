"""Reading a model's answer as OSWorld's ``mm_agents`` read it (``--agent-arg parse=osworld``).

Our own parser (:mod:`pytest_osworld.agent.parse`, the ``ours`` mode) is lenient where OSWorld
loses actions and strict where OSWorld passes broken actions on; docs/parity.md lists each
difference. For scores meant to be set beside OSWorld's leaderboard, the ``osworld`` mode
reproduces OSWorld 1.0.2's reading instead, quirks included:

``pyautogui``
    The whole answer is cut at every ``;`` and the stripped pieces are joined with line
    breaks. A bare ``WAIT``, ``DONE`` or ``FAIL`` is that action. Otherwise every fenced
    block is read; a word followed by a blank right after the opening fence is dropped as
    a language tag, whatever the word. A block's last line, when exactly a special code,
    becomes a special action after the block's code. Nothing is checked: broken code runs
    (and fails) in the environment.

Set-of-Marks
    ``tag_N=(x, y)`` lines for every mark on the screen are put before each code action,
    so an unknown ``tag_N`` fails in the environment with a ``NameError``.

``computer_13``
    JSON is read from ```` ```json ```` blocks, else from ```` ``` ```` blocks followed by a
    blank, else from the whole answer; each block is one action, whatever its shape
    (a list stays one action). Nothing is validated.

Where OSWorld ends with no action (an empty list, an error string or an exception) the
parse raises :class:`~pytest_osworld.agent.actions.ActionParseError`. :func:`to_osworld` gives
back the exact value OSWorld's parser returns for each action (the parity check compares
those values).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_osworld.agent.actions import SPECIAL, Action, ActionParseError
from pytest_osworld.agent.observe import Marks, resolve_tags
from pytest_osworld.agent.parse import parse_actions
from pytest_osworld.errors import UnknownNameError

#: Message templates (tests match them).
NO_CODE = "OSWorld's parser finds no action: the answer has no ```code``` block and is not WAIT, DONE or FAIL"
NOT_JSON = "OSWorld's parser finds no action: block {index} is not valid JSON: {error}"
NO_JSON = "OSWorld's parser finds no action: the answer has no JSON block and is not JSON: {error}"

#: The key under which a computer_13 value that is not an object (a list, a number, a
#: string other than a special code) travels in :attr:`Action.params`.
RAW_VALUE = "osworld_value"

# A fenced block, pyautogui style: after the opening fence, a run of word characters
# followed by whitespace is taken for a language tag and skipped (even "import" in
# "```import time"); the body is everything up to the next fence.
_CODE_BLOCK = re.compile(
    r"""
    ```
    (?: \w+ \s+ )?          # a "language tag": any word, then at least one blank
    (?P<body> .*? )         # up to the nearest closing fence
    ```
    """,
    re.DOTALL | re.VERBOSE,
)


def _json_block(opening: str) -> re.Pattern[str]:
    """A JSON block opened by ``opening``: blanks are required on both inner sides."""
    return re.compile(
        rf"""
        {re.escape(opening)} \s+
        (?P<body> .*? )         # the shortest body ...
        \s+ ```                 # ... that blanks then a fence close
        """,
        re.DOTALL | re.VERBOSE,
    )


#: Read first; when none is found, the plain fences are read instead.
_JSON_BLOCKS = (_json_block("```json"), _json_block("```"))


def _as_action(text: str) -> Action:
    """A special action when ``text`` is exactly WAIT, DONE or FAIL, else code."""
    if text in SPECIAL:
        return Action(kind=text)  # type: ignore[arg-type]
    return Action(kind="code", code=text)


def parse_code(text: str) -> list[Action]:
    """Read a ``pyautogui`` answer as OSWorld does; ``ActionParseError`` when it finds none.

    Code strings are returned exactly as OSWorld returns them, empty ones included (the
    environment runs them as no-ops, as OSWorld's does).
    """
    pieces = (piece.strip() for piece in text.split(";"))
    joined = "\n".join(piece for piece in pieces if piece)
    if joined.strip() in SPECIAL:
        return [_as_action(joined.strip())]
    actions: list[Action] = []
    for match in _CODE_BLOCK.finditer(joined):
        body = match.group("body").strip()
        code, newline, last = body.rpartition("\n")
        if last in SPECIAL:
            # Only an unindented last line counts: " DONE" stays in the code.
            if newline:
                actions.append(_as_action(code))
            actions.append(_as_action(last))
        else:
            actions.append(_as_action(body))
    if not actions:
        raise ActionParseError(NO_CODE)
    return actions


def _json_action(value: object) -> Action:
    """One decoded JSON value as an action, passed on unchecked."""
    if isinstance(value, str) and value in SPECIAL:
        return Action(kind=value)  # type: ignore[arg-type]
    if isinstance(value, dict) and set(value) != {RAW_VALUE}:
        # Kept as an object even for {"action_type": "DONE"}: OSWorld's environment runs
        # it as a no-op and does not end the episode, and neither does ours.
        return Action(kind="computer_13", params=dict(value))
    return Action(kind="computer_13", params={RAW_VALUE: value})


def parse_json(text: str) -> list[Action]:
    """Read a ``computer_13`` answer as OSWorld does; ``ActionParseError`` when it finds none."""
    if text.strip() in SPECIAL:
        return [_as_action(text.strip())]
    for pattern in _JSON_BLOCKS:
        bodies = [match.group("body") for match in pattern.finditer(text)]
        if not bodies:
            continue
        actions: list[Action] = []
        for index, body in enumerate(bodies, start=1):
            try:
                actions.append(_json_action(json.loads(body)))
            except json.JSONDecodeError as exc:
                raise ActionParseError(NOT_JSON.format(index=index, error=exc)) from None
        return actions
    try:
        return [_json_action(json.loads(text))]
    except json.JSONDecodeError as exc:
        raise ActionParseError(NO_JSON.format(error=exc)) from None


#: OSWorld's parsers by action space.
OSWORLD_PARSERS: dict[str, Callable[[str], list[Action]]] = {
    "pyautogui": parse_code,
    "computer_13": parse_json,
}


def parse_osworld(text: str, action_space: str) -> list[Action]:
    """Read ``text`` in ``action_space`` as OSWorld does; ``ActionParseError`` if no action.

    An unknown action space raises :class:`~pytest_osworld.errors.UnknownNameError`.
    """
    try:
        parser = OSWORLD_PARSERS[action_space]
    except KeyError:
        raise UnknownNameError("action space", action_space, None, sorted(OSWORLD_PARSERS)) from None
    return parser(text)


def bind_all_tags(code: str, marks: Marks) -> str:
    """``code`` after a ``tag_N=(cx, cy)`` line for every mark, as OSWorld runs SoM code.

    The centres are in screen pixels. Code that is a special code once stripped is left
    alone, as OSWorld leaves it.
    """
    if code.strip() in SPECIAL:
        return code
    centres = (node.centre for node in marks.nodes)
    lines = [f"tag_{index}=({x}, {y})\n" for index, (x, y) in enumerate(centres, start=1)]
    return "".join(lines) + code


def to_osworld(action: Action) -> Any:
    """The value OSWorld's parser returns for ``action``: a string or a decoded JSON value."""
    if action.kind == "code":
        return action.code
    if action.kind == "computer_13":
        params = action.params or {}
        return params[RAW_VALUE] if set(params) == {RAW_VALUE} else params
    return action.kind


@dataclass(frozen=True)
class ParseMode:
    """One way of reading a model's answer: a value of :data:`PARSERS`."""

    #: ``(answer, action space) -> actions``; raises ``ActionParseError``.
    parse: Callable[[str, str], list[Action]]
    #: Binds the ``tag_N`` names of Set-of-Marks code to the marks' centres.
    bind_tags: Callable[[str, Marks], str]
    #: Whether the next turn tells the model why its answer could not be used.
    feedback: bool


#: The parse modes ``--agent-arg parse=NAME`` selects.
PARSERS: dict[str, ParseMode] = {
    # Lenient reading; broken actions are refused with a message to the model.
    "ours": ParseMode(parse_actions, resolve_tags, feedback=True),
    # OSWorld 1.0.2's reading, for scores set beside its leaderboard.
    "osworld": ParseMode(parse_osworld, bind_all_tags, feedback=False),
}
