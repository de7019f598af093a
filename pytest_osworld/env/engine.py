"""The step-wise face of the episode engine, shared by ``DesktopEnv`` and the Gymnasium env.

The pytest item runs a whole episode with :func:`pytest_osworld.episode.loop.run_episode`; an
interactive environment needs the same pieces one call at a time. :class:`EpisodeEngine`
composes them and adds no logic of its own: the offline asset check
(:func:`pytest_osworld.task.assets.check_assets_available`), the provider's ``restore``, the
task's setup steps (:func:`pytest_osworld.setup_steps.run_steps`) and the wait for what they
started to settle (:func:`pytest_osworld.episode.settle.run_and_settle`), the observation
(:func:`pytest_osworld.episode.loop.observe`), the action (:func:`pytest_osworld.episode.loop.run_action`,
the very function the pytest episode loop takes each action with), the evaluation
(:func:`pytest_osworld.evaluators.evaluate.evaluate`) and the check that a failing desktop
is still alive (:func:`pytest_osworld.episode.loop.environment_gone`). A fix in any of them
fixes the pytest items and both environments at once.

Each episode keeps per-phase :attr:`EpisodeEngine.timings` (restore, setup, settle, observe,
actions, postconfig, evaluation, record; ``agent`` stays 0: the agent is the caller's), the
same :class:`~pytest_osworld.episode.timings.TaskTimings` the pytest items put in ``result.json``;
a results folder's ``result.json`` carries them here too.

A desktop that dies under an episode raises :class:`DesktopCrashed` with the provider's
explanation; the next :meth:`EpisodeEngine.begin` restores a fresh desktop.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from pytest_osworld import __version__
from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.computer13 import to_pyautogui
from pytest_osworld.agent.contract import Observation, Usage
from pytest_osworld.episode.loop import StepRecord, environment_gone, observe, provider_note, run_action
from pytest_osworld.episode.settle import run_and_settle
from pytest_osworld.episode.timings import TaskTimings
from pytest_osworld.errors import EnvironmentFailure, GuestError, GuestUnreachable, OSWorldError
from pytest_osworld.evaluators.evaluate import Evaluation, evaluate
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig
from pytest_osworld.report.results import TaskRecorder, TaskResult
from pytest_osworld.setup_steps import run_steps
from pytest_osworld.task.assets import AssetCache, check_assets_available, default_cache_dir
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Task, load_task, parse_task

T = TypeVar("T")

#: The message of a step (or evaluation) whose desktop stopped answering.
CRASHED = (
    "the desktop stopped answering during {where} of task {task}: {why}; "
    "the episode is lost, and the next reset() restores a fresh desktop"
)
#: The message of ``step``/``evaluate`` called with no episode under way.
NO_EPISODE = "no episode is under way: call reset(task_config=...) first"
#: ``network=True`` for a provider that would ignore it (``Provider.network_modes``).
NETWORK_IGNORED = "network=True: the {provider!r} provider would ignore it; {instead}"
#: The message of ``evaluate`` on an environment reset without a task.
NO_TASK = "this episode has no task to evaluate (reset() was called without task_config)"


class EnvError(OSWorldError):
    """The environment was used out of order (``step`` before ``reset`` and the like)."""


class DesktopCrashed(EnvironmentFailure):
    """The desktop died or stopped answering mid-episode; the next reset starts afresh."""


@dataclass
class EngineConfig:
    """What the engine needs: the provider and its options, screen, caches and results."""

    provider: str = "local"
    provider_options: dict[str, str] = field(default_factory=dict)
    worker_id: str = "env"
    screen_size: tuple[int, int] = (1920, 1080)
    network: bool = False
    work_dir: Path | None = None
    asset_cache: Path | None = None
    offline: bool = False
    #: Where results go in OSWorld's layout (``None``: nothing is written).
    results_dir: Path | None = None
    #: The names of the results layout: action space, observation type, model.
    results_names: tuple[str, str, str] = ("pyautogui", "screenshot", "env")
    default_snapshot: str = "init_state"


def load_task_config(source: Task | Mapping[str, Any] | str | Path, task_dir: Path | None = None) -> Task:
    """A :class:`Task` from a task, a parsed task JSON object or a task file's path.

    A JSON object has no file: its relative asset paths resolve against ``task_dir``
    (default: the current folder), and its domain is its ``domain`` key, else its
    ``snapshot`` (OSWorld names snapshots after domains), else ``osworld``.
    """
    if isinstance(source, Task):
        return source
    if isinstance(source, str | Path):
        return load_task(Path(source))
    if not isinstance(source, Mapping):
        raise EnvError(f"task_config must be a task JSON object or a path, got {type(source).__name__}")
    data = dict(source)
    text = json.dumps(data, sort_keys=True, default=str)
    sha = hashlib.sha256(text.encode()).hexdigest()
    domain = str(data.get("domain") or data.get("snapshot") or "osworld")
    base = task_dir if task_dir is not None else Path.cwd()
    return parse_task(data, base / f"{data.get('id', 'task')}.json", sha, domain)


class EpisodeEngine:
    """One provider, one desktop, one task at a time, driven a call at a time."""

    def __init__(self, config: EngineConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.sleep = sleep
        #: Whether the work folder is ours to remove on close (not when one was given).
        self._own_work = config.work_dir is None
        work = config.work_dir or Path(tempfile.mkdtemp(prefix="osworld-env-"))
        self.work_dir = work
        self.assets = AssetCache(config.asset_cache or default_cache_dir(), offline=config.offline)
        try:
            factory = PROVIDERS.get(config.provider)
            if config.network and "shared" not in factory.network_modes:
                instead = factory.network_instead or "it honours no network=shared"
                raise EnvError(NETWORK_IGNORED.format(provider=config.provider, instead=instead))
            self.provider: Provider = factory(
                ProviderConfig(
                    worker_id=config.worker_id,
                    screen_size=config.screen_size,
                    options=dict(config.provider_options),
                    work_dir=str(work / "provider"),
                    network=config.network,
                )
            )
        except BaseException:
            if self._own_work:  # no engine to close: its folder goes now
                shutil.rmtree(work, ignore_errors=True)
            raise
        self._started = False
        self.environment: Environment | None = None
        self.context: TaskContext | None = None
        self.task: Task | None = None
        #: Every action of the current episode, in order (the last decides FAIL rules).
        self.actions: list[Action] = []
        self.recorder: TaskRecorder | None = None
        self.episode_started = 0.0
        self.resets = 0
        #: Where the current episode's time went, phase by phase (fresh at each ``begin``).
        self.timings = TaskTimings()
        #: The seconds of the latest observation, given to the next step's ``step_times`` entry.
        self._seen: dict[str, Any] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the provider once (image or template build, first boot)."""
        if not self._started:
            self.provider.start()
            self._started = True

    def begin(self, task: Task | None, snapshot: str | None = None) -> Environment:
        """Restore the desktop for ``task`` (or bare ``snapshot``) and run its setup steps.

        Setup failures raise :class:`~pytest_osworld.errors.SetupStepError`, offline runs
        missing an asset :class:`~pytest_osworld.errors.AssetMissing`: the same errors as
        the pytest items. The desktop is restored even after a crash.
        """
        self.start()
        self.context = None
        self.task = task
        self.actions = []
        self.recorder = None
        timings = self.timings = TaskTimings()  # the episode's clock starts here, as a task's does
        self._seen = {}
        if task is not None:
            with timings.phase("setup"):
                check_assets_available(task, self.assets)
        name = snapshot or (task.snapshot if task is not None else "") or self.config.default_snapshot
        with timings.phase("restore"):
            self.environment = self.provider.restore(name)
        self.resets += 1
        self.episode_started = time.time()
        if task is None:
            return self.environment
        env = self.environment
        task_work = self.work_dir / "tasks" / f"{task.id}-{self.resets}"
        task_work.mkdir(parents=True, exist_ok=True)
        if self.config.results_dir is not None:
            space, obs, model = self.config.results_names
            self.recorder = TaskRecorder(self.config.results_dir, space, obs, model, task.domain, task.id)
            task_work = self.recorder.work_dir()
        ctx = TaskContext.for_environment(
            task, env, self.assets, task_work, network=self.provider.live_network
        )
        self._guarded(
            "the setup steps",
            lambda: run_and_settle(
                ctx.guest,
                [step.type for step in task.config],
                lambda: run_steps(ctx, task.config, timings=timings),
                timings,
            ),
        )
        self.context = ctx
        return env

    def close(self) -> None:
        """Stop the provider (idempotent)."""
        self.context = None
        self.environment = None
        try:
            if self._started:
                self._started = False
                self.provider.stop()
        finally:
            if self._own_work:
                shutil.rmtree(self.work_dir, ignore_errors=True)

    # -- one step ----------------------------------------------------------------------------

    @property
    def guest(self) -> Any:
        """The current desktop's guest client; :class:`EnvError` before the first reset."""
        if self.environment is None:
            raise EnvError(NO_EPISODE)
        return self.environment.guest

    def observe(self, tree: bool, terminal: bool = False) -> Observation:
        """The observation now: screenshot, and the a11y tree / terminal when asked."""
        instruction = self.task.instruction if self.task is not None else ""
        kind = "screenshot_a11y_tree" if tree else "screenshot"
        self._seen = {}
        with self.timings.phase("observe", into=self._seen):
            return self._guarded(
                f"the observation after step {len(self.actions)}",
                lambda: observe(self.guest, instruction, kind, terminal=terminal),
            )

    def act(self, action: Action, pause: float = 0.0, min_wait: float = 1.0) -> str | None:
        """Run one action; return its error text (a wasted step) or None.

        The action is taken by :func:`pytest_osworld.episode.loop.run_action`, as in the pytest
        items: WAIT sleeps ``pause`` (at least ``min_wait``), DONE and FAIL only join the
        history, an invalid computer_13 action is an error text, not a raise.
        """
        if self.environment is None:
            raise EnvError(NO_EPISODE)
        self.actions.append(action)
        step_time: dict[str, Any] = {"index": len(self.actions), "observe": self._seen.get("observe", 0.0)}
        self.timings.step_times.append(step_time)
        with self.timings.phase("actions", into=step_time):
            return self._guarded(
                f"step {len(self.actions)}",
                lambda: run_action(self.guest, action, to_pyautogui, pause, self.sleep, min_wait),
            )

    def record(self, action: Action, error: str | None, screenshot: bytes | None, response: str = "") -> None:
        """Write the step to the results folder (when one was asked for)."""
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

    # -- the score ---------------------------------------------------------------------------

    def evaluate(self) -> Evaluation:
        """Score the episode as the pytest items do (postconfig, FAIL rules, metrics)."""
        if self.environment is None:
            raise EnvError(NO_EPISODE)
        if self.context is None or self.task is None:
            raise EnvError(NO_TASK)
        ctx, last = self.context, (self.actions[-1] if self.actions else None)
        evaluation = self._guarded("the evaluation", lambda: evaluate(ctx, last, self.timings))
        if evaluation.error:
            with self.timings.phase("evaluation"):
                self._check_alive("the evaluation", evaluation.error)
        if self.recorder is not None:
            with self.timings.phase("record"):
                self.recorder.finish(self._result(evaluation))
        return evaluation

    def _result(self, evaluation: Evaluation) -> TaskResult:
        task = self.task
        if task is None:
            raise EnvError(NO_TASK)
        last = self.actions[-1].kind if self.actions else None
        # One reading of the clock: the episode is still running, so two would differ.
        timings = self.timings.to_json()
        return TaskResult(
            task_id=task.id,
            domain=task.domain,
            nodeid=f"env::{task.nodename}",
            outcome="passed" if evaluation.score >= 1.0 else "failed",
            score=evaluation.score,
            threshold=1.0,
            end_reason={"DONE": "done", "FAIL": "fail"}.get(last or "", "max_steps"),
            steps=len(self.actions),
            max_steps=len(self.actions),
            duration_s=timings["total"],
            infeasible=task.infeasible,
            reason=evaluation.first_reason(),
            metrics=[o.to_json() for o in evaluation.outcomes],
            provenance={
                "task_file": str(task.path),
                "task_sha256": task.sha256,
                "plugin_version": __version__,
                "provider": self.environment.description if self.environment else self.config.provider,
                "image": self.environment.image if self.environment else None,
                "front_door": "env",
            },
            evaluator_inputs=evaluation.inputs,
            timings=timings,
            instruction=task.instruction,
            conj=task.evaluator.conj,
        )

    # -- faults ------------------------------------------------------------------------------

    def _guarded(self, where: str, call: Callable[[], T]) -> T:
        """Run ``call``; a guest that stopped answering becomes :class:`DesktopCrashed`."""
        try:
            return call()
        except GuestUnreachable as exc:
            self._crashed(where, exc)
        except GuestError as exc:
            self._check_alive(where, str(exc))
            raise

    def _check_alive(self, where: str, error: str) -> None:
        """Raise :class:`DesktopCrashed` if the desktop is gone; return if it still answers.

        The same check as the pytest items' (:func:`pytest_osworld.episode.loop.environment_gone`).
        """
        gone = environment_gone(self.guest)
        if gone is not None:
            self._crashed(where, gone, error)

    def _crashed(self, where: str, exc: Exception, error: str = "") -> NoReturn:
        note = provider_note(self.provider)
        why = note or f"the guest server stopped answering ({exc})"
        if error:
            why += f" ({error})"
        task = self.task.nodename if self.task is not None else "(none)"
        self.context = None
        self.environment = None
        if self.recorder is not None:
            self.recorder.error(CRASHED.format(where=where, task=task, why=why))
        raise DesktopCrashed(CRASHED.format(where=where, task=task, why=why)) from exc
