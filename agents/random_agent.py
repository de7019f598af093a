"""The ``random`` agent: random but harmless clicks, typing and keys, for smoke tests.

It exercises the whole loop (observation, action, execution, evaluation) without a
model. It stays harmless on purpose: it only clicks, moves, scrolls, types lowercase
letters and spaces, and presses navigation keys. It never presses Enter (so typed text
is never submitted, in a terminal or anywhere else), never a system shortcut such as
ctrl+alt+del or alt+f4, and never types a command.

Options: ``--agent-arg seed=N`` makes runs repeatable; ``done_after=N`` answers DONE at
step N (default: never, the step budget ends the episode).
"""

from __future__ import annotations

import contextlib
import random
import string

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.computer13 import to_pyautogui
from pytest_osworld.agent.contract import AgentConfig, AgentStep, Observation
from pytest_osworld.agent.observe import png_size
from pytest_osworld.task.model import Task

from .llm import AgentConfigError

#: Keys the agent may press: navigation only, nothing that submits or closes.
SAFE_KEYS = (
    "tab",
    "esc",
    "up",
    "down",
    "left",
    "right",
    "home",
    "end",
    "pageup",
    "pagedown",
    "backspace",
    "space",
)
#: The kinds of action it draws from, each equally likely.
KINDS = ("click", "double_click", "right_click", "move", "scroll", "type", "press")
ARGS = ("seed", "done_after")


class RandomAgent:
    """Random harmless actions inside the screen, seeded for repeatability."""

    def __init__(self, config: AgentConfig) -> None:
        unknown = sorted(set(config.args) - set(ARGS))
        if unknown:
            raise AgentConfigError(
                f"agent {config.name!r} does not know --agent-arg {', '.join(unknown)}; "
                f"it accepts: {', '.join(ARGS)}"
            )
        self.config = config
        self.seed = _int_arg(config, "seed")
        self.done_after = _int_arg(config, "done_after")
        self._rng = random.Random(self.seed)
        self._step = 0

    def reset(self, task: Task) -> None:
        """Start the episode from the seed again, so each task's run is repeatable."""
        self._rng = random.Random(self.seed)
        self._step = 0

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """One random action (or DONE at step ``done_after``)."""
        self._step += 1
        if self.done_after is not None and self._step >= self.done_after:
            return AgentStep([Action("DONE")], response="DONE", thought="random: done")
        width, height = self.config.screen_size
        if observation.screenshot is not None:
            with contextlib.suppress(ValueError):  # not a PNG: keep the configured size
                width, height = png_size(observation.screenshot)
        kind = self._rng.choice(KINDS)
        params = self._params(kind, width, height)
        if self.config.action_space == "computer_13":
            action = Action("computer_13", params=params)
            shown = str(params)
        else:
            action = Action("code", code=_code(params))
            shown = action.code
        return AgentStep([action], response=shown, thought=f"random: {kind}")

    def _params(self, kind: str, width: int, height: int) -> dict[str, object]:
        rng = self._rng
        x, y = rng.randrange(max(width, 1)), rng.randrange(max(height, 1))
        if kind == "click":
            return {"action_type": "CLICK", "parameters": {"x": x, "y": y}}
        if kind == "double_click":
            return {"action_type": "DOUBLE_CLICK", "parameters": {"x": x, "y": y}}
        if kind == "right_click":
            return {"action_type": "RIGHT_CLICK", "parameters": {"x": x, "y": y}}
        if kind == "move":
            return {"action_type": "MOVE_TO", "parameters": {"x": x, "y": y}}
        if kind == "scroll":
            return {"action_type": "SCROLL", "parameters": {"dy": rng.choice((-3, -1, 1, 3))}}
        if kind == "type":
            letters = string.ascii_lowercase + " "
            text = "".join(rng.choice(letters) for _ in range(rng.randint(1, 12)))
            return {"action_type": "TYPING", "parameters": {"text": text}}
        return {"action_type": "PRESS", "parameters": {"key": rng.choice(SAFE_KEYS)}}


def _code(params: dict[str, object]) -> str:
    """The pyautogui line of a random action (same action as the computer_13 form)."""
    return to_pyautogui(Action("computer_13", params=params))


def _int_arg(config: AgentConfig, name: str) -> int | None:
    raw = config.args.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise AgentConfigError(
            f"agent {config.name!r}: --agent-arg {name}={raw!r} is not an integer"
        ) from None
