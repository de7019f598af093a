"""The agent contract, the agents registry and the observation an agent receives.

An agent is any object with ``reset(task)``, ``act(instruction, observation) ->
AgentStep`` and optionally ``close()``. Agents are built by a factory registered in
:data:`AGENTS` (``--agent NAME``) or named as ``module:attr`` on the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pytest_osworld.agent.actions import Action
from pytest_osworld.registry import Registry
from pytest_osworld.task.model import Task


@dataclass(frozen=True)
class Observation:
    """What the agent sees at one step."""

    instruction: str
    screenshot: bytes | None = None
    accessibility_tree: str | None = None
    terminal: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Usage:
    """Tokens and cost of the model calls behind one step (zeros for non-model agents)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Usage) -> None:
        """Accumulate ``other`` into this usage."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd


@dataclass
class AgentStep:
    """An agent's answer: actions to run, and what it said on the way."""

    actions: list[Action]
    response: str = ""
    thought: str = ""
    usage: Usage = field(default_factory=Usage)
    parse_error: str | None = None
    #: The actions already happened in the desktop (a person did them through the live
    #: view): the loop records them and never runs them again.
    performed: bool = False
    #: Wait for the screen to settle (as after setup, at most ``STEP_SETTLE_TIMEOUT``)
    #: before the next observation: the replay of a recorded run asks for it, standing in
    #: for an agent that looked at the screen before each of its actions.
    settle: bool = False


@runtime_checkable
class DesktopAgent(Protocol):
    """An agent that works on the desktop itself (``--agent=human``), not only through
    observations: it is given the task's guest and the worker's live view before each task."""

    def attach_desktop(self, guest: Any, live: Any) -> None:
        """Use ``guest`` and ``live`` (a :class:`~pytest_osworld.live.session.LiveView` or
        None) for the task about to run."""
        ...

    def solution(self) -> list[str]:
        """The last episode as a reference solution (``--record-solutions``)."""
        ...


@dataclass(frozen=True)
class AgentConfig:
    """Everything an agent factory is given."""

    name: str
    model: str | None = None
    args: dict[str, str] = field(default_factory=dict)
    observation_type: str = "screenshot"
    action_space: str = "pyautogui"
    client_password: str = "password"
    screen_size: tuple[int, int] = (1920, 1080)


@runtime_checkable
class Agent(Protocol):
    """The agent contract."""

    def reset(self, task: Task) -> None:
        """Forget the previous episode; ``task`` is the one about to run."""
        ...

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """Answer one observation with the actions to take next."""
        ...


AgentFactory = Callable[[AgentConfig], Agent]

#: Built-in agents by name; third-party plugins add theirs with ``AGENTS.register``.
AGENTS: Registry[AgentFactory] = Registry("agent")
AGENTS.register("noop", "pytest_osworld.agents.basic:NoopAgent")
AGENTS.register("replay", "pytest_osworld.agents.basic:ReplayAgent")
AGENTS.register("human", "pytest_osworld.agents.human:HumanAgent")
AGENTS.register("random", "pytest_osworld.agents.random_agent:RandomAgent")
AGENTS.register("claude3", "pytest_osworld.agents.anthropic_agent:claude3")
AGENTS.register("claude", "pytest_osworld.agents.anthropic_agent:claude")
AGENTS.register("gpt-4v", "pytest_osworld.agents.openai_agent:gpt_4v")
AGENTS.register("gpt-4o", "pytest_osworld.agents.openai_agent:gpt_4o")
AGENTS.register("gemini", "pytest_osworld.agents.gemini_agent:gemini")
AGENTS.register("openai-compatible", "pytest_osworld.agents.openai_agent:openai_compatible")
# Native computer-use protocols (docs/agents.md).
AGENTS.register("claude-cu", "pytest_osworld.agents.native.claude:claude_cu")
AGENTS.register("openai-cu", "pytest_osworld.agents.native.openai_cu:openai_cu")
AGENTS.register("gemini-cu", "pytest_osworld.agents.native.gemini_cu:gemini_cu")
AGENTS.register("ui-tars", "pytest_osworld.agents.native.ui_tars:ui_tars")
AGENTS.register("qwen-vl", "pytest_osworld.agents.native.qwen_vl:qwen_vl")
AGENTS.register("opencua", "pytest_osworld.agents.native.opencua:opencua")
