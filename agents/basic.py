"""Agents that need no model: ``noop`` (DONE at once) and ``replay`` (plays the solution)."""

from __future__ import annotations

from pytest_osworld.agent.actions import Action, action_from_json
from pytest_osworld.agent.contract import AgentConfig, AgentStep, Observation
from pytest_osworld.errors import AgentFailure
from pytest_osworld.task.model import Task


class NoopAgent:
    """Says DONE at the first step: the baseline every evaluator must score 0."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config

    def reset(self, task: Task) -> None:
        """Nothing to forget."""

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """Answer DONE."""
        return AgentStep(actions=[Action(kind="DONE")], response="DONE")


class ReplayAgent:
    """Plays a task's reference ``solution``, one action per step."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self._pending: list[Action] = []

    def reset(self, task: Task) -> None:
        """Load the task's solution; a task without one cannot be replayed."""
        if task.solution is None:
            raise AgentFailure(
                f"task {task.nodename} has no 'solution' to replay; "
                "use another --agent, add a reference solution to the task file, or give one "
                "in a file named by --solutions"
            )
        self._pending = [action_from_json(item) for item in task.solution]

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """The next action of the solution (DONE once it is exhausted)."""
        action = self._pending.pop(0) if self._pending else Action(kind="DONE")
        shown = action.code if action.kind == "code" else str(action.to_json())
        return AgentStep(actions=[action], response=shown, thought="reference solution")
