"""A deterministic agent for the tests of ``--budgets``: ``--agent budget_agent:BudgetAgent``.

It plays the task's reference ``solution`` with a harmless action after each of its actions
(Python that only waits half a second, run in the desktop like any action: quicker than any
model answers, and slow enough that the desktop has drawn the action before the next), pads
with harmless steps until step :data:`FINISH_AFTER`, and ends with the solution's DONE or FAIL
after it. So its episode always goes past step 8, and a budget cuts the solution somewhere
inside it: at 5 steps the first three of the solution's actions have run, at 10 a short
solution has ended. The same task always gives the same steps, which is what makes a run cut at k
comparable with a separate run of k steps.

``--agent-arg calls=FILE`` appends one line per agent call to FILE (``<task id> <step>``),
for the tests that count the agent's calls.
"""

from __future__ import annotations

from pathlib import Path

from pytest_osworld.agent import Action, AgentConfig, AgentStep, Observation
from pytest_osworld.agent.actions import action_from_json
from pytest_osworld.errors import AgentFailure
from pytest_osworld.task.model import Task

#: The solution's ending comes at the step after this one, or later for long solutions.
FINISH_AFTER = 8
#: The harmless step: Python run in the desktop that changes nothing there. At 0.01 s the
#: agent outran VLC's fullscreen drawing: the run's screens never showed the video
#: fullscreen, and a replay, which looks at its screen after each step, did.
HARMLESS = "import time\ntime.sleep(0.5)"


def plan(solution: list[Action]) -> list[Action]:
    """The agent's steps for a solution: each action followed by a harmless one, harmless
    steps up to :data:`FINISH_AFTER`, then the solution's ending (DONE when it has none)."""
    ending = solution[-1] if solution and solution[-1].is_terminal else Action(kind="DONE")
    work = [action for action in solution if not action.is_terminal]
    steps: list[Action] = []
    for action in work:
        steps += [action, Action(kind="code", code=HARMLESS)]
    while len(steps) < FINISH_AFTER:
        steps.append(Action(kind="code", code=HARMLESS))
    return [*steps, ending]


class BudgetAgent:
    """Plays :func:`plan` of the task's solution, one action per step."""

    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        calls = config.args.get("calls")
        self.calls = Path(calls) if calls else None
        self.task_id = ""
        self.pending: list[Action] = []
        self.step = 0

    def reset(self, task: Task) -> None:
        """Plan the task's steps; a task without a solution cannot be played."""
        if task.solution is None:
            raise AgentFailure(f"task {task.nodename} has no solution for the budget agent to play")
        self.task_id = task.id
        self.pending = plan([action_from_json(item) for item in task.solution])
        self.step = 0

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """The next planned step (DONE once the plan is spent)."""
        self.step += 1
        if self.calls is not None:
            with self.calls.open("a", encoding="utf-8") as handle:
                handle.write(f"{self.task_id} {self.step}\n")
        action = self.pending.pop(0) if self.pending else Action(kind="DONE")
        return AgentStep(actions=[action], response=action.code or action.kind, thought="budget agent")
