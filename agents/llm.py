"""The shared base of the model-driven agents: prompting, history, retries, usage, cost.

A :class:`PromptAgent` turns each observation into a user turn (screenshot, linearised
accessibility tree, or Set-of-Marks image and table, by the observation type), sends it
after the system prompt and the last few steps, parses the answer into actions, and
records the tokens and an estimated cost. A subclass implements one provider's call
(:meth:`PromptAgent._complete`) and says which of its errors are worth retrying
(:meth:`PromptAgent._describe_error`).

Options come from ``--agent-arg NAME=VALUE`` (:attr:`AgentConfig.args`); see
:data:`COMMON_ARGS`. ``parse`` picks how answers are read: ``ours`` (the default) or
``osworld``, OSWorld's own reading, for comparable scores
(:data:`~pytest_osworld.agent.parse_osworld.PARSERS`). API keys come from environment variables
only. They are never logged nor recorded, and every error message is scrubbed of them
before it leaves.

The API-level types (turns, answers, failures, prices) live in
:mod:`~pytest_osworld.agents.llm_api` and are re-exported here.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, TypeVar

from pytest_osworld.agent.actions import Action, ActionParseError
from pytest_osworld.agent.contract import AgentConfig, AgentStep, Observation, Usage
from pytest_osworld.agent.observe import (
    DEFAULT_TREE_TOKENS,
    Marks,
    downscale,
    png_size,
    scale_code,
    scale_params,
)
from pytest_osworld.agent.observe_osworld import DEFAULT_TREE_FORMAT, TREE_FORMATS, linearize_as, marks_as
from pytest_osworld.agent.parse import thought_of
from pytest_osworld.agent.parse_osworld import PARSERS
from pytest_osworld.errors import AgentFailure
from pytest_osworld.task.model import Task

from .llm_api import (
    PRICES,
    ApiFailure,
    Completion,
    MalformedAnswer,
    Sampling,
    Turn,
    http_failure,
    png_base64,
    price_for,
    read_answer,
    transport_failure,
)
from .prompts import system_prompt

__all__ = [
    "COMMON_ARGS",
    "NO_VALID_ACTION",
    "PARSE_FEEDBACK",
    "PRICES",
    "REDACTED",
    "AgentConfigError",
    "ApiFailure",
    "Completion",
    "MalformedAnswer",
    "PromptAgent",
    "Sampling",
    "Turn",
    "http_failure",
    "png_base64",
    "price_for",
    "read_answer",
    "transport_failure",
    "with_default_model",
]

log = logging.getLogger("pytest_osworld.agents")
_T = TypeVar("_T")

#: Recorded as the previous answer when a step produced no usable action.
NO_VALID_ACTION = "(no valid action)"
#: Shown to the model after an answer that could not be used.
PARSE_FEEDBACK = "Your previous answer could not be used: {error}"
REDACTED = "[redacted]"

#: Options every model agent accepts, with their defaults (``none`` omits a sampling
#: parameter from the request, for models that reject it).
COMMON_ARGS: dict[str, str] = {
    "temperature": "1.0",
    "top_p": "0.9",
    "max_tokens": "1500",
    "history": "3",
    "base_url": "",
    "api_key_env": "",
    "timeout": "120",
    "max_attempts": "6",
    "backoff": "2",
    "max_backoff": "60",
    "retry_budget": "600",
    "a11y_max_tokens": str(DEFAULT_TREE_TOKENS),
    "a11y_format": DEFAULT_TREE_FORMAT,
    "max_side": "0",
    "price_in": "",
    "price_out": "",
    "parse": "ours",
}


class AgentConfigError(AgentFailure):
    """An ``--agent-arg`` value, model or key is missing or malformed."""


def with_default_model(config: AgentConfig, model: str) -> AgentConfig:
    """``config`` with ``model`` filled in unless ``--model`` named one."""
    return config if config.model else replace(config, model=model)


class _Args:
    """Typed access to ``--agent-arg`` values; errors name the argument."""

    def __init__(self, agent: str, args: Mapping[str, str], defaults: Mapping[str, str]) -> None:
        unknown = sorted(set(args) - set(defaults))
        if unknown:
            raise AgentConfigError(
                f"agent {agent!r} does not know --agent-arg {', '.join(unknown)}; "
                f"it accepts: {', '.join(sorted(defaults))}"
            )
        self.agent = agent
        self.values = {**defaults, **args}

    def _bad(self, name: str, expected: str) -> AgentConfigError:
        return AgentConfigError(
            f"agent {self.agent!r}: --agent-arg {name}={self.values[name]!r} is not {expected}"
        )

    def text(self, name: str) -> str:
        return self.values[name].strip()

    def number(self, name: str, *, optional: bool = False) -> float | None:
        raw = self.text(name)
        if optional and raw.lower() in ("", "none"):
            return None
        try:
            return float(raw)
        except ValueError:
            raise self._bad(name, "a number" + (" or 'none'" if optional else "")) from None

    def choice(self, name: str, choices: Mapping[str, object]) -> str:
        raw = self.text(name)
        if raw not in choices:
            raise self._bad(name, f"one of: {', '.join(sorted(choices))}")
        return raw

    def real(self, name: str) -> float:
        try:
            return float(self.text(name))
        except ValueError:
            raise self._bad(name, "a number") from None

    def integer(self, name: str, minimum: int = 0) -> int:
        raw = self.text(name)
        try:
            value = int(raw)
        except ValueError:
            raise self._bad(name, f"an integer >= {minimum}") from None
        if value < minimum:
            raise self._bad(name, f"an integer >= {minimum}")
        return value


class PromptAgent:
    """An agent that asks a chat model for the next step, with OSWorld's prompting.

    Subclasses set :attr:`provider`, :attr:`default_model` and :attr:`key_env`, build
    their SDK client in :meth:`_connect`, and implement :meth:`_complete` and
    :meth:`_describe_error`.
    """

    #: Shown in errors and logs ("anthropic", "openai", "gemini").
    provider = "model"
    #: The model used when ``--model`` is not given.
    default_model = ""
    #: Environment variables searched for the API key, in order.
    key_env: tuple[str, ...] = ()
    #: Whether running without any API key is allowed (local OpenAI-compatible servers).
    key_optional = False
    #: Options this agent accepts beyond :data:`COMMON_ARGS`, with defaults.
    extra_args: ClassVar[Mapping[str, str]] = {}

    def __init__(
        self,
        config: AgentConfig,
        *,
        defaults: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.model = config.model or self.default_model
        if not self.model:
            raise AgentConfigError(f"agent {config.name!r} needs a model: pass --model")
        args = _Args(config.name, config.args, {**COMMON_ARGS, **self.extra_args, **(defaults or {})})
        self.args = args
        self.sampling = Sampling(
            temperature=args.number("temperature", optional=True),
            top_p=args.number("top_p", optional=True),
            max_tokens=args.integer("max_tokens", minimum=1),
        )
        self.history_length = args.integer("history")
        self.timeout = args.real("timeout")
        self.max_attempts = args.integer("max_attempts", minimum=1)
        self.backoff = args.real("backoff")
        self.max_backoff = args.real("max_backoff")
        self.retry_budget = args.real("retry_budget")
        self.tree_tokens = args.integer("a11y_max_tokens", minimum=1)
        self.tree_format = args.text("a11y_format")
        if self.tree_format not in TREE_FORMATS:
            raise AgentConfigError(
                f"--agent-arg a11y_format must be one of {', '.join(sorted(TREE_FORMATS))}"
            )
        self.max_side = args.integer("max_side")
        self.parse_mode = PARSERS[args.choice("parse", PARSERS)]
        self.base_url = args.text("base_url") or None
        listed = price_for(self.model)
        price_in = args.number("price_in", optional=True)
        price_out = args.number("price_out", optional=True)
        self.prices = (
            price_in if price_in is not None else (listed[0] if listed else 0.0),
            price_out if price_out is not None else (listed[1] if listed else 0.0),
        )
        if (config.observation_type, config.action_space) == ("som", "computer_13"):
            raise AgentConfigError("the som observation type works with the pyautogui action space only")
        # An unknown observation type or action space fails here, not at the first step.
        system_prompt(config.observation_type, config.action_space, password="", screen_size=(1, 1))
        self._sleep = sleep
        self._clock = clock
        self._api_key = self._find_key()
        self._history: deque[tuple[Turn, Turn]] = deque(maxlen=self.history_length or None)
        self._feedback: str | None = None
        self.client: Any = self._connect(self._api_key)

    # -- what subclasses provide ---------------------------------------------------------------

    def _connect(self, api_key: str | None) -> Any:
        """Build the SDK client (retries off: the agent retries itself)."""
        raise NotImplementedError

    def _complete(self, system: str, turns: list[Turn], sampling: Sampling) -> Completion:
        """One call to the model."""
        raise NotImplementedError

    def _describe_error(self, exc: Exception) -> ApiFailure | None:
        """The provider error as an :class:`ApiFailure`; None if it is not an API error."""
        raise NotImplementedError

    # -- the protocol --------------------------------------------------------------------------

    def reset(self, task: Task) -> None:
        """Forget the previous episode's history."""
        self._history.clear()
        self._feedback = None

    def close(self) -> None:
        """Release the SDK client's connections (subclasses that hold any)."""

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """Ask the model for the next step; a malformed answer is a step with parse_error."""
        view = self._view(observation)
        system = system_prompt(
            self.config.observation_type,
            self.config.action_space,
            password=self.config.client_password,
            screen_size=view.screen_size,
            instruction=instruction,
        )
        turns = [turn for pair in self._history for turn in pair] + [view.turn]
        completion = self._call(system, turns)
        usage = Usage(
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            cost_usd=(completion.input_tokens * self.prices[0] + completion.output_tokens * self.prices[1])
            / 1_000_000,
        )
        text = completion.text
        try:
            actions = self._finish(self.parse_mode.parse(text, self.config.action_space), view)
            parse_error: str | None = None
        except ActionParseError as exc:
            actions, parse_error = [], str(exc)
        # OSWorld's agent does not tell the model why an answer gave no action.
        self._feedback = parse_error if self.parse_mode.feedback else None
        answer = text.strip() or NO_VALID_ACTION
        if self.history_length:
            self._history.append((view.turn, Turn("assistant", answer)))
        return AgentStep(
            actions=actions,
            response=text,
            thought=thought_of(text),
            usage=usage,
            parse_error=parse_error,
        )

    # -- observation ---------------------------------------------------------------------------

    def _view(self, observation: Observation) -> _View:
        kind = self.config.observation_type
        width, height = self.config.screen_size
        parts: list[str] = []
        if self._feedback:
            parts.append(PARSE_FEEDBACK.format(error=self._feedback))
        images: list[bytes] = []
        factor = 1.0
        marks: Marks | None = None
        if kind in ("screenshot", "screenshot_a11y_tree", "som"):
            if observation.screenshot is None:
                raise AgentFailure(f"observation type {kind!r} needs a screenshot; none was taken")
            shot = observation.screenshot
            try:
                width, height = png_size(shot)
            except ValueError as exc:
                raise AgentFailure(f"cannot read the observation: {exc}") from None
            if kind == "som":
                marks = marks_as(self.tree_format, shot, self._tree(observation), self.tree_tokens)
                shot = marks.image
            image, factor = downscale(shot, self.max_side)
            images.append(image)
            parts.append("The screen now, as a screenshot:")
        if kind in ("a11y_tree", "screenshot_a11y_tree"):
            table = linearize_as(self.tree_format, self._tree(observation), self.tree_tokens, factor)
            parts.append("The screen's accessibility tree now:\n" + table)
        if marks is not None:
            parts.append("The numbered boxes on the screenshot:\n" + marks.table)
        parts.append("What is the next step?")
        size = (round(width / factor), round(height / factor))
        return _View(Turn("user", "\n\n".join(parts), tuple(images)), factor, marks, size)

    def _tree(self, observation: Observation) -> str:
        if observation.accessibility_tree is None:
            raise AgentFailure(
                f"observation type {self.config.observation_type!r} needs the accessibility "
                "tree; none was taken"
            )
        return observation.accessibility_tree

    def _finish(self, actions: list[Action], view: _View) -> list[Action]:
        """Map coordinates back to the screen and bind ``tag_N`` names (as the parse mode does)."""
        done: list[Action] = []
        for action in actions:
            if action.kind == "code":
                code = scale_code(action.code, view.factor)
                if view.marks is not None:
                    code = self.parse_mode.bind_tags(code, view.marks)
                done.append(Action(kind="code", code=code))
            elif action.kind == "computer_13" and action.params is not None:
                done.append(Action(kind="computer_13", params=scale_params(action.params, view.factor)))
            else:
                done.append(action)
        return done

    # -- the call, retried -----------------------------------------------------------------

    def _call(self, system: str, turns: list[Turn]) -> Completion:
        return self._retrying(lambda: self._complete(system, turns, self.sampling))

    def _retrying(self, call: Callable[[], _T]) -> _T:
        """``call()``, retried with backoff while it fails with a retryable API error."""
        start = self._clock()
        attempt = 0
        while True:
            attempt += 1
            failure: ApiFailure | None
            try:
                return call()
            except MalformedAnswer as exc:
                failure = ApiFailure(True, str(exc))
            except Exception as exc:  # classified below, outside the handler
                failure = self._describe_error(exc)
                if failure is None:
                    failure = ApiFailure(False, f"{type(exc).__name__}: {exc}")
            delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
            delay = max(delay, min(failure.retry_after or 0.0, self.max_backoff))
            delay *= 1.0 + random.uniform(0.0, 0.1)  # a little jitter for parallel workers
            elapsed = self._clock() - start
            summary = self.scrub(failure.summary)
            if not failure.retryable:
                raise AgentFailure(f"{self.provider} API error ({self.model}): {summary}")
            if attempt >= self.max_attempts or elapsed + delay > self.retry_budget:
                raise AgentFailure(
                    f"{self.provider} API ({self.model}) still failing after {attempt} "
                    f"attempts over {elapsed:.1f}s: {summary}"
                )
            log.warning(
                "%s API (%s): %s; attempt %d/%d, retrying in %.1fs",
                self.provider,
                self.model,
                summary,
                attempt,
                self.max_attempts,
                delay,
            )
            self._sleep(delay)

    # -- keys ------------------------------------------------------------------------------

    def _find_key(self) -> str | None:
        custom = self.args.text("api_key_env")
        names = (custom,) if custom else self.key_env
        for name in names:
            value = os.environ.get(name, "").strip()
            if value:
                return value
        if self.key_optional:
            return None
        raise AgentConfigError(
            f"agent {self.config.name!r} needs an API key: set {' or '.join(names)} "
            "(or name another variable with --agent-arg api_key_env=NAME)"
        )

    def scrub(self, text: str) -> str:
        """``text`` with the API key replaced by ``[redacted]``."""
        if self._api_key:
            text = text.replace(self._api_key, REDACTED)
        return text


@dataclass(frozen=True)
class _View:
    """One observation as the model sees it."""

    turn: Turn
    factor: float
    marks: Marks | None
    screen_size: tuple[int, int]
