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
    """Plays a task's reference ``solution``, one action per step.

    With ``--agent-arg settle=1`` (the replay of a recorded run, ``parity/trajectories.py``)
    each step asks the loop to wait for the screen to settle before the next: the agent that
    recorded the run looked at the screen before each action, so its next click met a
    desktop that had drawn what the last one started.
    """

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self._pending: list[Action] = []
        self.settle = _flag(config.args, "settle")

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
        return AgentStep(actions=[action], response=shown, thought="reference solution", settle=self.settle)


def _flag(args: dict[str, str], name: str) -> bool:
    """A yes/no ``--agent-arg``: 1/true/yes or 0/false/no (absent: no)."""
    value = args.get(name, "0").strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise AgentFailure(f"--agent-arg {name}={args[name]!r}: expected 1 or 0 (true/false, yes/no)")
