"""The episode loop: a pure function of (task, guest, agent, budget) returning an Episode.

Only the pytest layer decides pass, fail or error. The loop observes, asks the agent,
executes its actions inside the environment, and stops on DONE, FAIL, the step budget,
the time budget or an agent error. Every step is handed to ``on_step`` as it happens,
so a crash later loses nothing already recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pytest_osworld.agent.actions import Action, ActionParseError
from pytest_osworld.agent.contract import Agent, AgentStep, Observation, Usage
from pytest_osworld.episode.desktop_load import DemandProbe
from pytest_osworld.episode.settle import settle
from pytest_osworld.errors import AgentFailure, GuestError, GuestUnreachable
from pytest_osworld.guest_client.api import Guest
from pytest_osworld.providers.base import Provider
from pytest_osworld.task.model import Task
from pytest_osworld.task.timings import TaskTimings


class EndReason(StrEnum):
    """Why an episode ended."""

    DONE = "done"
    FAIL = "fail"
    MAX_STEPS = "max_steps"
    TIMEOUT = "timeout"
    AGENT_ERROR = "agent_error"


#: The longest wait for the screen to settle after an answer that asks for it (seconds).
STEP_SETTLE_TIMEOUT = 10.0


@dataclass(frozen=True)
class Budget:
    """How much an episode may spend: agent calls and wall-clock seconds."""

    max_steps: int = 15
    seconds: float = 3600.0
    sleep_after_action: float = 0.0


@dataclass
class StepRecord:
    """One agent call and what came of it."""

    index: int
    started: float
    duration: float
    response: str
    thought: str
    actions: list[Action]
    action_errors: list[str]
    parse_error: str | None
    usage: Usage
    screenshot: bytes | None

    def to_json(self) -> dict[str, Any]:
        """The step as one ``traj.jsonl`` line (the screenshot is written beside it)."""
        return {
            "step_num": self.index,
            "action_timestamp": time.strftime("%Y%m%d@%H%M%S", time.gmtime(self.started)),
            "actions": [a.to_json() for a in self.actions],
            "response": self.response,
            "thought": self.thought,
            "parse_error": self.parse_error,
            "action_errors": self.action_errors,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "cost_usd": self.usage.cost_usd,
            },
            "duration_s": round(self.duration, 3),
        }


@dataclass
class Episode:
    """The result of one episode: steps, end reason and the action history."""

    steps: list[StepRecord] = field(default_factory=list)
    end_reason: EndReason = EndReason.MAX_STEPS
    error: str | None = None
    started: float = 0.0
    duration: float = 0.0
    usage: Usage = field(default_factory=Usage)
    final_screenshot: bytes | None = None

    @property
    def actions(self) -> list[Action]:
        """Every action the agent asked for, in order."""
        return [action for step in self.steps for action in step.actions]

    @property
    def last_action(self) -> Action | None:
        """The last action taken, the one that decides infeasible tasks."""
        actions = self.actions
        return actions[-1] if actions else None

    @property
    def last_acted_at(self) -> float | None:
        """When (``time.time()``) the last step that acted on the desktop ended, or None."""
        acting = [step for step in self.steps if any(not a.is_terminal for a in step.actions)]
        return acting[-1].started + acting[-1].duration if acting else None

    def describe(self, max_steps: int) -> str:
        """One line such as ``agent said DONE after 7/15 steps (4m12s)``."""
        took = _format_duration(self.duration)
        n = len(self.steps)
        reasons = {
            EndReason.DONE: f"agent said DONE after {n}/{max_steps} steps ({took})",
            EndReason.FAIL: f"agent said FAIL after {n}/{max_steps} steps ({took})",
            EndReason.MAX_STEPS: f"ran out of steps ({n}/{max_steps}) without DONE ({took})",
            EndReason.TIMEOUT: f"ran out of time after {n}/{max_steps} steps ({took})",
            EndReason.AGENT_ERROR: (f"agent error after {n}/{max_steps} steps ({took}): {self.error}"),
        }
        return reasons[self.end_reason]


def observe(guest: Guest, instruction: str, observation_type: str, terminal: bool = False) -> Observation:
    """Take the observation an agent of ``observation_type`` needs.

    ``terminal`` adds the desktop's terminal output (OSWorld's ``require_terminal``).
    """
    wants_tree = observation_type in ("a11y_tree", "screenshot_a11y_tree", "som")
    screenshot = guest.screenshot()
    tree = guest.accessibility_tree() if wants_tree else None
    return Observation(
        instruction=instruction,
        screenshot=screenshot,
        accessibility_tree=tree,
        terminal=guest.terminal_output() if terminal else None,
    )


def execute_action(guest: Guest, action: Action, execute_structured: Callable[[Action], str]) -> str | None:
    """Run one non-special action inside the environment; return an error text or None."""
    if action.kind == "code":
        result = guest.run_python(action.code)
        if result.returncode != 0:
            return (result.error or result.output).strip()[-2000:] or f"exit code {result.returncode}"
        return None
    if action.kind == "computer_13":
        code = execute_structured(action)
        result = guest.run_python(code)
        if result.returncode != 0:
            return (result.error or result.output).strip()[-2000:] or f"exit code {result.returncode}"
    return None


def run_action(
    guest: Guest,
    action: Action,
    structured: Callable[[Action], str],
    pause: float = 0.0,
    sleep: Callable[[float], None] = time.sleep,
    min_wait: float = 1.0,
) -> str | None:
    """Take one action of an episode; return its error text (a wasted step) or None.

    The one place actions are taken, for the pytest items and both environments. DONE
    and FAIL do nothing here (they end the episode). WAIT sleeps ``pause``, at least
    ``min_wait`` seconds (OSWorld's ``DesktopEnv`` passes 0: its WAIT is the pause alone).
    Any other action runs inside the desktop and is followed by ``pause``
    seconds; an invalid computer_13 action is an error text, not a raise.
    ``GuestError`` (the desktop broke) propagates.
    """
    if action.is_terminal:
        return None
    if action.kind == "WAIT":
        sleep(max(pause, min_wait))
        return None
    try:
        error = execute_action(guest, action, structured)
    except ActionParseError as exc:
        error = f"invalid action: {exc}"
    if pause > 0:
        sleep(pause)
    return error


def environment_gone(guest: Guest) -> GuestUnreachable | None:
    """Whether the desktop stopped answering: the unreachable error, or None if it answers.

    Asked after a step or evaluation error, to tell the agent's failure (the desktop is
    alive, the error stands) from a desktop that died under it. A guest that answers with
    an error (an OSWorld VM has no ``/health``) is alive.
    """
    try:
        guest.health()
    except GuestUnreachable as exc:
        return exc
    except GuestError:
        return None
    return None


def provider_note(provider: Provider) -> str:
    """What ``provider`` knows about its desktop after a failure, or ''; never raises."""
    try:
        return provider.diagnose()
    except Exception as exc:  # a diagnosis must never hide the failure it explains
        return f"(could not ask provider {provider.name!r} what happened: {type(exc).__name__}: {exc})"


def run_episode(
    task: Task,
    guest: Guest,
    agent: Agent,
    budget: Budget,
    observation_type: str = "screenshot",
    on_step: Callable[[StepRecord], None] | None = None,
    translate_structured: Callable[[Action], str] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    timings: TaskTimings | None = None,
) -> Episode:
    """Run the agent on ``task`` in ``guest`` until it ends; return the :class:`Episode`.

    ``GuestError`` (the environment broke) propagates: it is the caller's ERROR. An
    agent that raises ends the episode with ``EndReason.AGENT_ERROR``.

    With ``timings``, the seconds of every observation, agent call (``reset`` too),
    action execution and ``on_step`` call go to the ``observe``, ``agent``, ``actions``
    and ``record`` phases, and each step gets an entry in ``timings.step_times``: the
    observation it was given, its agent call, its actions and its ``on_step`` call.
    """
    from pytest_osworld.agent.computer13 import to_pyautogui

    structured = translate_structured or to_pyautogui
    clocked = timings if timings is not None else TaskTimings()
    episode = Episode(started=time.time())
    start = clock()
    try:
        with clocked.phase("agent"):
            agent.reset(task)
    except Exception as exc:
        episode.end_reason = EndReason.AGENT_ERROR
        episode.error = f"{type(exc).__name__}: {exc}"
        episode.duration = clock() - start
        return episode
    seen: dict[str, Any] = {}
    with clocked.phase("observe", into=seen):
        observation = observe(guest, task.instruction, observation_type)
    for index in range(1, budget.max_steps + 1):
        if clock() - start > budget.seconds:
            episode.end_reason = EndReason.TIMEOUT
            break
        step_time: dict[str, Any] = {"index": index, "observe": seen.get("observe", 0.0)}
        clocked.step_times.append(step_time)
        step_start = clock()
        wall_start = time.time()
        try:
            with clocked.phase("agent", into=step_time):
                answer = agent.act(task.instruction, observation)
        except (GuestError, AgentFailure) as exc:
            if isinstance(exc, GuestError):
                raise
            episode.end_reason = EndReason.AGENT_ERROR
            episode.error = str(exc)
            break
        except Exception as exc:
            episode.end_reason = EndReason.AGENT_ERROR
            episode.error = f"{type(exc).__name__}: {exc}"
            break
        # The programs there were before the actions: the settle wait that follows waits
        # for those the actions started.
        before_actions = DemandProbe(guest).processes() if answer.settle else None
        with clocked.phase("actions", into=step_time):
            record = _run_answer(
                guest, answer, index, (step_start, wall_start), structured, budget, sleep, clock
            )
        episode.usage.add(answer.usage)
        ended = next((a for a in record.actions if a.is_terminal), None)
        if before_actions is not None and ended is None:
            with clocked.phase("settle", into=step_time):
                settle(
                    guest,
                    None,
                    expect_new_window=False,
                    timeout=STEP_SETTLE_TIMEOUT,
                    clock=clock,
                    sleep=sleep,
                    before_processes=before_actions,
                )
        seen = {}
        # After the last step no agent reads the tree: the screenshot (the step's record) is
        # enough, and an accessibility tree can take longer than the screenshot.
        last = ended is not None or index == budget.max_steps
        with clocked.phase("observe", into=seen):
            observation = observe(guest, task.instruction, "screenshot" if last else observation_type)
        if record.action_errors:
            # The next answer can take them into account (the native agents tell their model).
            observation = replace(observation, extra={"action_errors": list(record.action_errors)})
        record.screenshot = observation.screenshot
        episode.steps.append(record)
        if on_step is not None:
            with clocked.phase("record", into=step_time):
                on_step(record)
        if ended is not None:
            episode.end_reason = EndReason.DONE if ended.kind == "DONE" else EndReason.FAIL
            break
    else:
        episode.end_reason = EndReason.MAX_STEPS
    episode.final_screenshot = observation.screenshot
    episode.duration = clock() - start
    return episode


def _run_answer(
    guest: Guest,
    answer: AgentStep,
    index: int,
    starts: tuple[float, float],
    structured: Callable[[Action], str],
    budget: Budget,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> StepRecord:
    """Execute the actions of one answer, stopping at the first DONE or FAIL."""
    taken: list[Action] = []
    errors: list[str] = []
    for action in answer.actions:
        taken.append(action)
        if action.is_terminal:
            break
        if answer.performed:
            continue
        error = run_action(guest, action, structured, budget.sleep_after_action, sleep)
        if error:
            errors.append(error)
    return StepRecord(
        index=index,
        started=starts[1],
        duration=clock() - starts[0],
        response=answer.response,
        thought=answer.thought,
        actions=taken,
        action_errors=errors,
        parse_error=answer.parse_error,
        usage=answer.usage,
        screenshot=None,
    )


def _format_duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"
