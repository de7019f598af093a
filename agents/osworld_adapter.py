"""Run an OSWorld-style agent object under pytest-osworld.

OSWorld's agents have ``reset(...)`` and ``predict(instruction, obs) -> (response,
actions)``, where ``obs`` is a dict with ``screenshot`` (PNG bytes),
``accessibility_tree`` (XML or None), ``terminal`` and ``instruction``, and ``actions``
is a list of pyautogui strings, computer_13 dicts or ``WAIT``/``DONE``/``FAIL``, or None
when the agent could not parse its model's answer. :class:`OSWorldAdapter` wraps such
an object into our :class:`~pytest_osworld.agent.Agent` protocol; a None is a wasted
step with a ``parse_error``, not a crash.

A factory for ``--agent mypackage.mymodule:make_agent``::

    def make_agent(config: AgentConfig) -> OSWorldAdapter:
        inner = MyOSWorldAgent(model=config.model, action_space=config.action_space,
                               observation_type=config.observation_type)
        return OSWorldAdapter(inner)
"""

from __future__ import annotations

from typing import Any, Protocol

from pytest_osworld.actions import Action, ActionParseError, action_from_json
from pytest_osworld.agent import AgentStep, Observation
from pytest_osworld.computer13 import validate
from pytest_osworld.task import Task

#: The parse_error of a step whose inner agent returned no action list.
NO_ACTIONS = "the agent returned no actions (it could not parse its model's answer)"


class OSWorldStyleAgent(Protocol):
    """What the adapter needs from the wrapped object."""

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """Forget the previous episode."""
        ...

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[Any, Any]:
        """Answer one observation with ``(response, actions)``."""
        ...


class OSWorldAdapter:
    """Our agent protocol over an OSWorld-style ``predict``/``reset`` object."""

    def __init__(self, inner: OSWorldStyleAgent) -> None:
        self.inner = inner

    def reset(self, task: Task) -> None:
        """Reset the inner agent (OSWorld agents take optional logger and VM arguments)."""
        self.inner.reset()

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """Call ``predict`` with OSWorld's observation dict and convert its actions."""
        obs = {
            "screenshot": observation.screenshot,
            "accessibility_tree": observation.accessibility_tree,
            "terminal": observation.terminal,
            "instruction": instruction,
        }
        response, raw_actions = self.inner.predict(instruction, obs)
        text = response if isinstance(response, str) else ("" if response is None else str(response))
        if raw_actions is None:
            return AgentStep([], response=text, parse_error=NO_ACTIONS)
        if not isinstance(raw_actions, list | tuple):
            raw_actions = [raw_actions]
        try:
            actions = [_convert(item) for item in raw_actions]
        except ActionParseError as exc:
            return AgentStep([], response=text, parse_error=str(exc))
        if not actions:
            return AgentStep([], response=text, parse_error=NO_ACTIONS)
        return AgentStep(actions, response=text)


def _convert(item: object) -> Action:
    action = action_from_json(item)
    if action.kind == "computer_13" and action.params is not None:
        validate(action.params)
    return action
