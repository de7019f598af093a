"""The exchange every native computer-use agent runs, whatever its vendor's wire format.

A native agent (``claude-cu``, ``openai-cu``, ``gemini-cu``, ``ui-tars``, ``qwen-vl``,
``opencua``) sends its model the screenshot resized to the protocol's
:class:`~pytest_osworld.agents.native.geometry.Frame`, reads the model's turn into
:class:`ToolCall`\\ s, and maps each call to desktop actions (:class:`Outcome`). One step
is one model call: a turn's calls run in order as one step (a batch), so ``max_steps``
counts model calls, as OSWorld's runners do.

The next turn carries each call's result back the protocol's way: the new screenshot,
and for a call that could not be used, or whose action failed in the desktop, the reason
(an unknown key, a point off the screen, malformed arguments). A call after a failed one
in the same turn is not run, and the model is told so. A turn without any call ends the
episode: FAIL when its text holds :data:`INFEASIBLE`, else DONE (a protocol with its own
ending, such as ``finished()`` or ``terminate(status)``, maps that instead).

``--agent-arg parse=osworld`` maps as OSWorld's agent for the protocol does, quirks
included, and asks the model again for a turn OSWorld's agent cannot use, as often as it
does, before its ending (docs/parity.md lists the differences; the ``protocols`` parity
level checks the mappings against OSWorld's code); ``parse=ours`` is the default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from pytest_osworld.agent.actions import Action, ActionParseError
from pytest_osworld.agent.contract import AgentConfig, AgentStep, Observation, Usage
from pytest_osworld.agent.observe import png_size
from pytest_osworld.errors import AgentFailure
from pytest_osworld.task.model import Task

from ..llm import AgentConfigError, PromptAgent, read_answer
from .geometry import Frame, cropped_png, parse_size, resized_png

#: Written by the model in a turn without tool calls when the task cannot be done.
INFEASIBLE = "[INFEASIBLE]"
#: What a call's result says when it went well.
DONE_TEXT = "done"
#: What a call's result says when an earlier call of its turn failed.
SKIPPED = "not run: an earlier action of this turn could not be used"

Point = tuple[int, int]


def native_prompt(password: str, notes: str = "") -> str:
    """The system prompt of the native agents that take one: the desktop, and how to end."""
    text = (
        "You operate an Ubuntu desktop (GNOME) through the computer tool, on behalf of a user "
        "who is not watching. The user's home is /home/user; the sudo password is "
        f"'{password}'. Do the task completely without asking for confirmation. When it is "
        "done, answer with a short text and no tool call. If the task cannot be done on this "
        f"computer, answer with a text that contains {INFEASIBLE} and no tool call."
    )
    return text + ("\n" + notes if notes else "")


@dataclass(frozen=True)
class ToolCall:
    """One action the model asked for, as its protocol names it."""

    id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def shown(self) -> str:
        """``name(arg=value, ...)``, for the trajectory."""
        args = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in self.args.items() if not k.startswith("_")
        )
        return f"{self.name}({args})"


@dataclass(frozen=True)
class Reply:
    """A model turn, read from the vendor's response."""

    calls: tuple[ToolCall, ...] = ()
    text: str = ""
    thought: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    #: Safety checks the turn raised, acknowledged in the next request (recorded).
    safety: tuple[str, ...] = ()
    #: Why the turn could not be read into calls (a text protocol's garbage): a step error.
    error: str | None = None
    #: The turn's own ending (``finished()``, ``terminate``), when the protocol has one.
    ending: Action | None = None


@dataclass
class Outcome:
    """What became of one tool call: its desktop actions and what its result tells the model."""

    call: ToolCall
    actions: list[Action] = field(default_factory=list)
    error: str | None = None
    #: Text the result carries (a cursor position), beside the screenshot.
    note: str = ""
    #: A screen region (left, top, right, bottom) returned as an image (Claude's zoom).
    zoom: tuple[int, int, int, int] | None = None


@dataclass
class Context:
    """What a mapping needs: the frame, the pointer as the agent's actions left it, the mode."""

    frame: Frame
    mode: str = "ours"
    pointer: Point | None = None

    def point(self, x: float, y: float) -> Point:
        """The screen point of the model's ``(x, y)``; the pointer moves there."""
        self.pointer = self.frame.to_screen(x, y)
        return self.pointer


@dataclass(frozen=True)
class Screen:
    """The observation as a native agent uses it."""

    png: bytes
    image: bytes
    frame: Frame

    def region(self, box: tuple[int, int, int, int]) -> bytes:
        """The screen region ``box`` at full resolution."""
        return cropped_png(self.png, box)


class NativeAgent(PromptAgent):
    """The base of the native computer-use agents; a subclass speaks one wire format.

    It provides :meth:`frame`, :meth:`_request` (the next request, from the history and
    the previous turn's outcomes), :meth:`_send`, :meth:`_read`, :meth:`_commit` (keep
    the exchange in the history) and :meth:`_map` (one call to an :class:`Outcome`).
    """

    #: Named in the error when a response has the wrong shape.
    wire = "response"
    #: The ``parse`` modes this agent has.
    modes: ClassVar[tuple[str, ...]] = ("ours", "osworld")
    #: ``parse=osworld``: how many times OSWorld's agent asks its model for a turn it cannot
    #: use (an unreadable answer; with :attr:`osworld_retry_calls`, also a call it cannot
    #: map), and the ending it gives when none could be used (None: the turn is a step error).
    osworld_attempts: ClassVar[int] = 1
    osworld_retry_calls: ClassVar[bool] = False
    osworld_given_up: ClassVar[str | None] = None

    def __init__(self, config: AgentConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self.mode = self.args.text("parse")
        if self.mode not in self.modes:
            raise AgentConfigError(
                f"agent {config.name!r}: --agent-arg parse={self.mode} is not one of {', '.join(self.modes)}"
            )
        self._pending: list[Outcome] = []
        self._pointer: Point | None = None

    def _display_arg(self) -> tuple[int, int] | None:
        """``--agent-arg display``: ``WIDTHxHEIGHT``, or None for ``auto``."""
        display = self.args.text("display")
        try:
            return None if display == "auto" else parse_size(display)
        except ValueError as exc:
            raise AgentConfigError(f"agent {self.config.name!r}: --agent-arg display: {exc}") from None

    # -- what subclasses provide -------------------------------------------------------------

    def frame(self, screen: tuple[int, int]) -> Frame:
        """The coordinate frame for a screen of size ``screen``."""
        raise NotImplementedError

    def _request(self, instruction: str, screen: Screen, pending: list[Outcome]) -> dict[str, Any]:
        """The next request's arguments; nothing is kept until :meth:`_commit`."""
        raise NotImplementedError

    def _send(self, request: dict[str, Any]) -> Any:
        """One call to the vendor's API."""
        raise NotImplementedError

    def _read(self, response: Any) -> Reply:
        """The response as a :class:`Reply` (a wrong shape raises; it is retried)."""
        raise NotImplementedError

    def _commit(self, request: dict[str, Any], response: Any, reply: Reply) -> None:
        """Keep the exchange in the conversation."""
        raise NotImplementedError

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        """The desktop actions of one call; :class:`ActionParseError` for a call that cannot be used."""
        raise NotImplementedError

    def _forget(self) -> None:
        """Drop the conversation (a new episode)."""
        raise NotImplementedError

    def _ending(self, reply: Reply) -> Action | None:
        """The action of a turn without calls: FAIL when it declares the task infeasible
        (None: no action, where ``parse=osworld`` reads such a turn so)."""
        return Action(kind="FAIL" if INFEASIBLE.lower() in reply.text.lower() else "DONE")

    # -- the exchange ------------------------------------------------------------------------

    def reset(self, task: Task) -> None:
        """Forget the previous episode."""
        self._pending = []
        self._pointer = None
        self._forget()

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """Send the screen (and the previous calls' results), map the answer to actions."""
        if observation.screenshot is None:
            raise AgentFailure(f"agent {self.config.name!r} needs a screenshot; none was taken")
        try:
            size = png_size(observation.screenshot)
        except ValueError as exc:
            raise AgentFailure(f"cannot read the observation: {exc}") from None
        frame = self.frame(size)
        screen = Screen(observation.screenshot, resized_png(observation.screenshot, frame.image), frame)
        self._note_desktop_errors(observation.extra.get("action_errors") or [])
        request = self._request(instruction, screen, self._pending)
        attempt = 1
        spent = (0, 0)  # tokens of the answers asked again (parse=osworld)
        while True:
            sent = request if attempt == 1 else self._osworld_again(request)
            response = self._retrying(lambda sent=sent: self._send(sent))  # type: ignore[misc]
            reply = read_answer(self.wire, response, self._read)
            reply = replace(
                reply,
                input_tokens=reply.input_tokens + spent[0],
                output_tokens=reply.output_tokens + spent[1],
            )
            outcomes, actions = self._turn(reply, Context(frame, self.mode, self._pointer))
            if self.mode != "osworld" or not self._unusable(reply, outcomes):
                break
            if attempt >= self.osworld_attempts:
                reply, outcomes, actions = self._given_up(reply, outcomes, actions)
                break
            spent = (reply.input_tokens, reply.output_tokens)
            attempt += 1
        self._commit(request, response, reply)
        self._pending = outcomes
        errors = [o.error for o in outcomes if o.error and o.error != SKIPPED]
        return AgentStep(
            actions=actions,
            response=self._shown(reply),
            thought=reply.thought,
            usage=Usage(
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
                cost_usd=(reply.input_tokens * self.prices[0] + reply.output_tokens * self.prices[1])
                / 1_000_000,
            ),
            parse_error="; ".join(errors) or None,
        )

    def _turn(self, reply: Reply, context: Context) -> tuple[list[Outcome], list[Action]]:
        """The outcome of each call of a turn, and the turn's actions with its ending."""
        outcomes = self._outcomes(reply, context)
        actions = [action for outcome in outcomes for action in outcome.actions]
        if reply.ending is not None:
            actions.append(reply.ending)
        elif not reply.calls and reply.error is None:
            ending = self._ending(reply)
            if ending is not None:
                actions.append(ending)
        return outcomes, actions

    def _unusable(self, reply: Reply, outcomes: list[Outcome]) -> bool:
        """``parse=osworld``: whether OSWorld's agent would ask its model again for this turn."""
        if reply.error is not None:
            return True
        return self.osworld_retry_calls and any(o.error and o.error != SKIPPED for o in outcomes)

    def _given_up(
        self, reply: Reply, outcomes: list[Outcome], actions: list[Action]
    ) -> tuple[Reply, list[Outcome], list[Action]]:
        """``parse=osworld``: the turn once OSWorld's agent has asked in vain (its ending)."""
        if self.osworld_given_up is None:
            return reply, outcomes, actions
        ending = Action(kind="FAIL" if self.osworld_given_up == "FAIL" else "DONE")
        return replace(reply, calls=(), error=None, ending=ending), [], [ending]

    def _osworld_again(self, request: dict[str, Any]) -> dict[str, Any]:
        """``parse=osworld``: the request OSWorld's agent sends when it asks again."""
        return request

    def _outcomes(self, reply: Reply, context: Context) -> list[Outcome]:
        if reply.error is not None:
            return [Outcome(ToolCall("", "answer"), error=reply.error)]
        outcomes: list[Outcome] = []
        failed = False
        for call in reply.calls:
            if failed:
                outcomes.append(Outcome(call, error=SKIPPED))
                continue
            try:
                outcome = self._map(call, context)
            except ActionParseError as exc:
                outcome = Outcome(call, error=str(exc))
                failed = True
            outcomes.append(outcome)
        self._pointer = context.pointer
        return outcomes

    def _note_desktop_errors(self, errors: list[str]) -> None:
        """Pin the desktop's action errors on the last call that had actions."""
        ran = [o for o in self._pending if o.actions and not o.error]
        if errors and ran:
            ran[-1].error = "the action failed in the desktop: " + " | ".join(e[-300:] for e in errors)

    def _shown(self, reply: Reply) -> str:
        lines = [reply.text.strip()] if reply.text.strip() else []
        lines += [call.shown() for call in reply.calls]
        lines += [f"safety check acknowledged: {check}" for check in reply.safety]
        if reply.error:
            lines.append(f"(unusable answer: {reply.error})")
        return "\n".join(lines) or "(empty answer)"


def result_text(outcome: Outcome) -> str:
    """What one call's result says: its error, its note, or that it was done."""
    return outcome.error or outcome.note or DONE_TEXT
