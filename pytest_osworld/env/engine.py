"""The step-wise face of a task's path, shared by ``DesktopEnv`` and the Gymnasium env.

A task's path is :class:`~pytest_osworld.episode.task_run.TaskRun`'s, the same the pytest
items take: the offline asset check and the provider's ``restore``, the setup steps and the
settle wait, each observation and action, the evaluation and the check that a failing
desktop is still alive. :class:`EpisodeEngine` adds what an interactive environment needs
around it and no logic of its own: the provider's lifecycle (start once, close), a fresh
:class:`~pytest_osworld.episode.task_run.TaskRun` at every ``begin``, one call at a time, and
a desktop that stops answering turned into :class:`DesktopCrashed`. A fix in the path fixes
the pytest items and both environments at once.

Each episode keeps per-phase :attr:`EpisodeEngine.timings` (restore, setup, settle, observe,
actions, postconfig, evaluation, record; ``agent`` stays 0: the agent is the caller's), the
same :class:`~pytest_osworld.task.timings.TaskTimings` the pytest items put in ``result.json``;
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
from pytest_osworld.agent.contract import Observation
from pytest_osworld.episode.loop import environment_gone, provider_note
from pytest_osworld.episode.task_run import DesktopGone, TaskRun
from pytest_osworld.errors import EnvironmentFailure, GuestError, GuestUnreachable, OSWorldError
from pytest_osworld.evaluators.evaluate import Evaluation
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.task.assets import AssetCache, default_cache_dir
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Task, load_task, parse_task
from pytest_osworld.task.timings import TaskTimings

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
        #: The current episode's path (None before the first reset).
        self.run: TaskRun | None = None
        self.recorder: TaskRecorder | None = None
        self.episode_started = 0.0
        self.resets = 0

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the provider once (image or template build, first boot)."""
        if not self._started:
            self.provider.start()
            self._started = True

    def begin(self, task: Task | None, snapshot: str | None = None) -> Environment:
        """Restore the desktop for ``task`` (or bare ``snapshot``) and run its setup steps.

        The path is :class:`~pytest_osworld.episode.task_run.TaskRun`'s, the pytest items' own.
        Setup failures raise :class:`~pytest_osworld.errors.SetupStepError`, offline runs
        missing an asset :class:`~pytest_osworld.errors.AssetMissing`: the same errors as
        the pytest items. The desktop is restored even after a crash.
        """
        self.start()
        self.recorder = None
        if task is not None and self.config.results_dir is not None:
            space, obs, model = self.config.results_names
            self.recorder = TaskRecorder(self.config.results_dir, space, obs, model, task.domain, task.id)
        # The episode's clock starts here, as a task's does.
        run = self.run = TaskRun(task, self.provider, self.assets, recorder=self.recorder)
        name = snapshot or (task.snapshot if task is not None else "") or self.config.default_snapshot
        environment = run.restore(name)
        self.resets += 1
        self.episode_started = time.time()
        if task is None:
            return environment
        work = None
        if self.recorder is None:
            work = self.work_dir / "tasks" / f"{task.id}-{self.resets}"
            work.mkdir(parents=True, exist_ok=True)
        self._guarded("the setup steps", lambda: run.set_up(work_dir=work))
        return environment

    def close(self) -> None:
        """Stop the provider (idempotent); the last episode's actions and timings stay readable."""
        self._drop_desktop()
        try:
            if self._started:
                self._started = False
                self.provider.stop()
        finally:
            if self._own_work:
                shutil.rmtree(self.work_dir, ignore_errors=True)

    # -- one step ----------------------------------------------------------------------------

    @property
    def environment(self) -> Environment | None:
        """The desktop of the current episode, or None before the first reset (or after a crash)."""
        return self.run.environment if self.run is not None else None

    @property
    def context(self) -> TaskContext | None:
        """The current task's context after its setup, or None."""
        return self.run.context if self.run is not None else None

    @property
    def task(self) -> Task | None:
        """The current episode's task (None for a bare snapshot)."""
        return self.run.task if self.run is not None else None

    @property
    def actions(self) -> list[Action]:
        """Every action of the current episode, in order (the last decides FAIL rules)."""
        return self.run.actions if self.run is not None else []

    @property
    def timings(self) -> TaskTimings:
        """Where the current episode's time went, phase by phase (fresh at each ``begin``)."""
        return self.run.timings if self.run is not None else TaskTimings()

    def _run(self) -> TaskRun:
        if self.run is None or self.run.environment is None:
            raise EnvError(NO_EPISODE)
        return self.run

    @property
    def guest(self) -> Any:
        """The current desktop's guest client; :class:`EnvError` before the first reset."""
        return self._run()._guest()

    def observe(self, tree: bool, terminal: bool = False) -> Observation:
        """The observation now: screenshot, and the a11y tree / terminal when asked."""
        run = self._run()
        kind = "screenshot_a11y_tree" if tree else "screenshot"
        return self._guarded(
            f"the observation after step {len(run.actions)}",
            lambda: run.observe(kind, terminal=terminal),
        )

    def act(self, action: Action, pause: float = 0.0, min_wait: float = 1.0) -> str | None:
        """Run one action; return its error text (a wasted step) or None.

        The action is taken by :meth:`~pytest_osworld.episode.task_run.TaskRun.act`, as in the
        pytest items: WAIT sleeps ``pause`` (at least ``min_wait``), DONE and FAIL only join
        the history, an invalid computer_13 action is an error text, not a raise.
        """
        run = self._run()
        return self._guarded(
            f"step {len(run.actions) + 1}", lambda: run.act(action, pause, min_wait, self.sleep)
        )

    def record(self, action: Action, error: str | None, screenshot: bytes | None, response: str = "") -> None:
        """Write the step to the results folder (when one was asked for)."""
        self._run().record_step(action, error, screenshot, response)

    # -- the score ---------------------------------------------------------------------------

    def evaluate(self) -> Evaluation:
        """Score the episode as the pytest items do (postconfig, FAIL rules, metrics)."""
        run = self._run()
        if run.context is None or run.task is None:
            raise EnvError(NO_TASK)
        last = run.actions[-1] if run.actions else None
        try:
            evaluation = self._guarded("the evaluation", lambda: run.evaluate(last))
        except DesktopGone as exc:
            self._crashed("the evaluation", exc.cause, exc.error)
        if self.recorder is not None:
            kind = last.kind if last is not None else ""
            result = run.result(
                evaluation,
                nodeid=f"env::{run.task.nodename}",
                threshold=1.0,
                end_reason={"DONE": "done", "FAIL": "fail"}.get(kind, "max_steps"),
                steps=len(run.actions),
                max_steps=len(run.actions),
                provenance={
                    "task_file": str(run.task.path),
                    "task_sha256": run.task.sha256,
                    "plugin_version": __version__,
                    "provider": run.environment.description if run.environment else self.config.provider,
                    "image": run.environment.image if run.environment else None,
                    "front_door": "env",
                },
            )
            with run.timings.phase("record"):
                run.finish(result)
        return evaluation

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

    def _drop_desktop(self) -> None:
        """Forget the current desktop (closed or crashed); the episode's record stays."""
        if self.run is not None:
            self.run.environment = None
            self.run.context = None

    def _crashed(self, where: str, exc: Exception, error: str = "") -> NoReturn:
        note = provider_note(self.provider)
        why = note or f"the guest server stopped answering ({exc})"
        if error:
            why += f" ({error})"
        task = self.task.nodename if self.task is not None else "(none)"
        self._drop_desktop()
        if self.recorder is not None:
            self.recorder.error(CRASHED.format(where=where, task=task, why=why))
        raise DesktopCrashed(CRASHED.format(where=where, task=task, why=why)) from exc
