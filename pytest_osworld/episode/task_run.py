"""One task's path, composed once: begin (restore, setup, settle), steps, finish (evaluate, record).

Every front door runs a task through a :class:`TaskRun`: the pytest items (the
``osworld_env`` and ``osworld_context`` fixtures call :meth:`TaskRun.restore` and
:meth:`TaskRun.set_up`, ``run_task`` calls :meth:`TaskRun.run_episode`, :meth:`TaskRun.evaluate`
and :meth:`TaskRun.finish`), and ``DesktopEnv`` and the Gymnasium env, through
:class:`pytest_osworld.env.engine.EpisodeEngine`, which calls :meth:`TaskRun.begin`, then
:meth:`TaskRun.observe`, :meth:`TaskRun.act` and :meth:`TaskRun.record_step` one call at a
time. A new phase of a task is added here, once, and every front door has it.

The run keeps the task's clock (:class:`~pytest_osworld.task.timings.TaskTimings`, from the
start of the restore) and writes through a :class:`Recorder` it is given (the results
folder, :class:`pytest_osworld.report.results.TaskRecorder`, which stands above this layer).
What the front doors do with the outcome (a pytest pass or fail, a reward) is theirs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.computer13 import to_pyautogui
from pytest_osworld.agent.contract import Agent, Observation, Usage
from pytest_osworld.episode.loop import (
    Budget,
    Episode,
    StepRecord,
    environment_gone,
    observe,
    provider_note,
    run_action,
    run_episode,
)
from pytest_osworld.episode.result import TaskResult
from pytest_osworld.episode.settle import run_and_settle
from pytest_osworld.errors import EnvironmentFailure, GuestUnreachable
from pytest_osworld.evaluators.evaluate import Evaluation, evaluate
from pytest_osworld.guest_client.api import Guest
from pytest_osworld.providers.base import Environment, Provider
from pytest_osworld.setup_steps import run_steps
from pytest_osworld.task.assets import AssetCache, check_assets_available
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Task
from pytest_osworld.task.timings import TaskTimings

#: The message of an evaluation error whose desktop stopped answering.
EVALUATION_GONE = "{note}; the evaluation could not run: {error}"
#: The note of a desktop that stopped answering when its provider has nothing to add.
STOPPED_ANSWERING = "the environment stopped answering ({cause})"
#: ``set_up`` before ``restore`` with no environment given.
NOT_RESTORED = "task {task}: set_up() needs an environment: call restore() first, or pass one"
#: ``run_episode`` or ``evaluate`` before ``set_up``.
NOT_SET_UP = "task {task}: the task has not been set up: call set_up() (or begin()) first"
#: ``observe`` or ``act`` before ``restore``.
NOT_RESTORED_YET = "no desktop has been restored: call restore() (or begin()) first"
#: ``set_up``, ``evaluate`` or ``result`` of a run restored to a bare snapshot.
NO_TASK = "this run has no task (a bare snapshot): it cannot be set up or evaluated"
#: ``set_up`` with neither a work folder nor a recorder to give one.
NO_WORK_DIR = "task {task}: set_up() needs a work_dir or a recorder"


class Recorder(Protocol):
    """Where a run writes what happens (the results folder): its steps as they come, then its result."""

    def work_dir(self) -> Path:
        """Where getters put the files they fetch."""

    def initial_screenshot(self, png: bytes | None) -> None:
        """Keep the screen as the agent first sees it."""

    def step(self, record: StepRecord) -> None:
        """Write one step, at once."""

    def finish(self, result: TaskResult) -> None:
        """Write the result."""


class RunOrderError(RuntimeError):
    """A :class:`TaskRun` method called out of order (a bug of the caller)."""


class DesktopGone(EnvironmentFailure):
    """An evaluation failed because the desktop stopped answering: an ERROR, not a FAIL.

    ``cause`` is the unreachable guest's error, ``error`` the evaluation's own reason.
    """

    def __init__(self, message: str, cause: GuestUnreachable, error: str) -> None:
        super().__init__(message)
        self.cause = cause
        self.error = error


class TaskRun:
    """One task on one provider's desktop, from its restore to its result.

    ``task`` is None for a desktop restored to a bare snapshot (an interactive env reset
    without a task): it can be restored, observed and acted on, not set up or evaluated.
    """

    def __init__(
        self,
        task: Task | None,
        provider: Provider,
        assets: AssetCache,
        timings: TaskTimings | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        self.task = task
        self.provider = provider
        self.assets = assets
        #: The task's clock; it starts when the run is made (the start of the restore).
        self.timings = timings if timings is not None else TaskTimings()
        self.recorder = recorder
        self.environment: Environment | None = None
        self.context: TaskContext | None = None
        #: The seconds of the latest :meth:`observe`, for the next step's ``step_times`` entry.
        self._seen: dict[str, Any] = {}
        #: The actions :meth:`act` took, in order.
        self.actions: list[Action] = []

    # -- begin ---------------------------------------------------------------------------

    def restore(self, snapshot: str | None = None, more_restores: bool = True) -> Environment:
        """Check the task's assets (offline runs), then restore the desktop to its snapshot.

        ``more_restores`` tells the provider whether another restore follows (so it may
        prepare a warm spare). :class:`~pytest_osworld.errors.AssetMissing` when offline and an
        asset is not cached; the provider's errors as they are.
        """
        if self.task is not None:
            with self.timings.phase("setup"):
                check_assets_available(self.task, self.assets)
        self.provider.more_restores = more_restores
        name = snapshot or (self.task.snapshot if self.task is not None else "") or "init_state"
        with self.timings.phase("restore"):
            self.environment = self.provider.restore(name)
        return self.environment

    def set_up(
        self,
        environment: Environment | None = None,
        work_dir: Path | None = None,
        network: bool | None = None,
    ) -> TaskContext:
        """Run the task's ``config`` steps on the restored desktop, wait for what they started to
        settle, and keep the screen the agent will first see.

        ``environment`` defaults to the one :meth:`restore` gave; ``work_dir`` (where getters
        put files) to the recorder's; ``network`` to the provider's ``live_network``.
        """
        task = self._task()
        env = environment if environment is not None else self.environment
        if env is None:
            raise RunOrderError(NOT_RESTORED.format(task=task.nodename))
        self.environment = env
        folder = work_dir if work_dir is not None else (self.recorder.work_dir() if self.recorder else None)
        if folder is None:
            raise RunOrderError(NO_WORK_DIR.format(task=task.nodename))
        live = self.provider.live_network if network is None else network
        ctx = TaskContext.for_environment(task, env, self.assets, folder, network=live)
        run_and_settle(
            ctx.guest,
            [step.type for step in task.config],
            lambda sleep: run_steps(ctx, task.config, timings=self.timings, sleep_until_settled=sleep),
            self.timings,
        )
        if self.recorder is not None:
            with self.timings.phase("record"):
                self.recorder.initial_screenshot(ctx.guest.screenshot())
        self.context = ctx
        return ctx

    def begin(self, snapshot: str | None = None, work_dir: Path | None = None) -> TaskContext:
        """:meth:`restore`, then :meth:`set_up`: the whole beginning of a task."""
        self.restore(snapshot)
        return self.set_up(work_dir=work_dir)

    # -- steps ---------------------------------------------------------------------------

    def _task(self) -> Task:
        if self.task is None:
            raise RunOrderError(NO_TASK)
        return self.task

    def _context(self) -> TaskContext:
        if self.context is None:
            raise RunOrderError(NOT_SET_UP.format(task=self._task().nodename))
        return self.context

    def _guest(self) -> Guest:
        if self.environment is None:
            raise RunOrderError(NOT_RESTORED_YET)
        return self.environment.guest

    def run_episode(
        self,
        agent: Agent,
        budget: Budget,
        observation_type: str = "screenshot",
        on_step: Callable[[StepRecord], None] | None = None,
    ) -> Episode:
        """The whole step loop (:func:`~pytest_osworld.episode.loop.run_episode`) on this desktop.

        A desktop that breaks under it raises :class:`~pytest_osworld.errors.EnvironmentFailure`
        with what the provider knows about it put first.
        """
        ctx = self._context()
        try:
            episode = run_episode(
                ctx.task, ctx.guest, agent, budget, observation_type, on_step=on_step, timings=self.timings
            )
        except EnvironmentFailure as exc:
            note = provider_note(self.provider)
            if note:
                raise EnvironmentFailure(f"{note}: {exc}") from exc
            raise
        if episode.last_acted_at is not None:
            ctx.last_action_at = episode.last_acted_at
        return episode

    def observe(self, observation_type: str = "screenshot", terminal: bool = False) -> Observation:
        """The observation now (one step's first half, for the interactive front doors)."""
        guest = self._guest()
        instruction = self.task.instruction if self.task is not None else ""
        self._seen = {}
        with self.timings.phase("observe", into=self._seen):
            return observe(guest, instruction, observation_type, terminal=terminal)

    def act(
        self,
        action: Action,
        pause: float = 0.0,
        min_wait: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> str | None:
        """Take one action (:func:`~pytest_osworld.episode.loop.run_action`, as the loop does);
        return its error text (a wasted step) or None."""
        guest = self._guest()
        self.actions.append(action)
        step_time: dict[str, Any] = {"index": len(self.actions), "observe": self._seen.get("observe", 0.0)}
        self.timings.step_times.append(step_time)
        with self.timings.phase("actions", into=step_time):
            error = run_action(guest, action, to_pyautogui, pause, sleep, min_wait)
        if self.context is not None and not action.is_terminal:
            self.context.last_action_at = time.time()
        return error

    def record_step(
        self, action: Action, error: str | None, screenshot: bytes | None, response: str = ""
    ) -> None:
        """Write the step :meth:`act` just took to the recorder (when there is one)."""
        if self.recorder is None:
            return
        record = StepRecord(
            index=len(self.actions),
            started=time.time(),
            duration=0.0,
            response=response,
            thought="",
            actions=[action],
            action_errors=[error] if error else [],
            parse_error=None,
            usage=Usage(),
            screenshot=screenshot,
        )
        into = self.timings.step_times[-1] if self.timings.step_times else None
        with self.timings.phase("record", into=into):
            self.recorder.step(record)

    # -- finish --------------------------------------------------------------------------

    def evaluate(self, last_action: Action | None) -> Evaluation:
        """Score the task: postconfig, the FAIL rules, getters and metrics.

        An evaluation error from a desktop that no longer answers raises :class:`DesktopGone`
        (the desktop broke, it is not the agent's failure); one from a desktop that answers
        is the evaluation's (``Evaluation.error``).
        """
        ctx = self._context()
        evaluation = evaluate(ctx, last_action, self.timings)
        if evaluation.error:
            with self.timings.phase("evaluation"):
                cause = environment_gone(ctx.guest)
            if cause is not None:
                note = provider_note(self.provider) or STOPPED_ANSWERING.format(cause=cause)
                message = EVALUATION_GONE.format(note=note, error=evaluation.error)
                raise DesktopGone(message, cause, evaluation.error) from cause
        return evaluation

    def result(
        self,
        evaluation: Evaluation,
        *,
        nodeid: str,
        threshold: float,
        end_reason: str | None,
        steps: int,
        max_steps: int,
        provenance: dict[str, Any],
        usage: Usage | None = None,
        repeat: int = 1,
    ) -> TaskResult:
        """The task's result: passed at ``threshold``, else failed (``eval_error`` when the
        evaluation could not run); the timings as they stand (stop the clock first to freeze them)."""
        task = self._task()
        passed = evaluation.score >= threshold
        outcome = "passed" if passed else ("eval_error" if evaluation.error else "failed")
        spent = usage if usage is not None else Usage()
        timings = self.timings.to_json()
        return TaskResult(
            task_id=task.id,
            domain=task.domain,
            nodeid=nodeid,
            outcome=outcome,
            score=evaluation.score,
            threshold=threshold,
            end_reason=end_reason,
            steps=steps,
            max_steps=max_steps,
            duration_s=timings["total"],
            infeasible=task.infeasible,
            reason=evaluation.first_reason(),
            metrics=[o.to_json() for o in evaluation.outcomes],
            usage={
                "input_tokens": spent.input_tokens,
                "output_tokens": spent.output_tokens,
                "cost_usd": round(spent.cost_usd, 6),
            },
            provenance=provenance,
            evaluator_inputs=evaluation.inputs,
            timings=timings,
            instruction=task.instruction,
            conj=task.evaluator.conj,
            repeat=repeat,
        )

    def finish(self, result: TaskResult) -> TaskResult:
        """Write ``result`` through the recorder (when there is one) and return it."""
        if self.recorder is not None:
            self.recorder.finish(result)
        return result
