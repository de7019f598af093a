"""Collection: a task JSON file becomes one :class:`TaskItem`, and ``run_task`` runs it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import (
    ExceptionInfo,
    TerminalRepr,
)

from pytest_osworld import __version__
from pytest_osworld.agent.contract import Agent, DesktopAgent
from pytest_osworld.episode.loop import (
    Budget,
    EndReason,
)
from pytest_osworld.episode.result import TaskResult
from pytest_osworld.errors import (
    AgentFailure,
    OSWorldError,
    TaskFileError,
    UnknownNameError,
)
from pytest_osworld.evaluators.getters import GETTERS
from pytest_osworld.evaluators.metrics import METRICS
from pytest_osworld.live.pause import pause_if_asked
from pytest_osworld.live.session import LiveView
from pytest_osworld.plugin.budget_runs import score_item_budgets
from pytest_osworld.plugin.ran_on import host_name, worker_name
from pytest_osworld.plugin.task_runs import started_timings, task_run
from pytest_osworld.providers.base import Environment, Provider
from pytest_osworld.report.failure import failure_text, plain_failure, trajectory_text
from pytest_osworld.report.junit import budget_properties
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.setup_steps import SETUP_STEPS
from pytest_osworld.task.catalog import needs_gdrive, needs_network
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Task, load_task, looks_like_task, normalise_app
from pytest_osworld.task.settings import SETTINGS_KEY, Settings
from pytest_osworld.task.solutions import SOLUTIONS_KEY, record_solution, with_solution
from pytest_osworld.task.timings import TaskTimings

TASK_MARKER_RE = re.compile(r'"(evaluator|instruction)"\s*:')


def is_task_file(path: Path, explicit: bool) -> bool:
    """Whether a ``.json`` file should be collected as a task.

    A file is a task if it parses to an object with an ``instruction`` or ``evaluator``;
    a file that does not parse is still collected (to report the error) when it was named
    on the command line or its text mentions those keys.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return explicit
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return explicit or bool(TASK_MARKER_RE.search(text))
    return looks_like_task(data) or (explicit and not isinstance(data, dict | list))


def unknown_names(task: Task) -> list[TaskFileError]:
    """Every step, getter or metric name of ``task`` that is not registered, in file order,
    each with its registry's suggestion."""
    found: list[TaskFileError] = []

    def check(registry_check: Any, name: str, where: str) -> None:
        try:
            registry_check(name)
        except UnknownNameError as exc:
            found.append(TaskFileError(str(task.path), where, str(exc)))

    for step in task.config + task.evaluator.postconfig:
        check(SETUP_STEPS.check, step.type, f"{step.json_path}.type")
    for metric in task.evaluator.metrics:
        check(METRICS.check, metric.func, metric.json_path)
    for getter in task.evaluator.getters():
        check(GETTERS.check, getter.type, f"{getter.json_path}.type")
    return found


def check_names(task: Task) -> None:
    """Raise :class:`TaskFileError` for the first step, getter or metric name not registered
    (:func:`unknown_names` lists them all)."""
    found = unknown_names(task)
    if found:
        raise found[0]


class TaskFile(pytest.File):
    """One task JSON file; yields a single :class:`TaskItem`."""

    def collect(self) -> list[TaskItem]:
        """Load, validate and name-check the task; errors become a collection error."""
        try:
            task = with_solution(load_task(self.path), self.config.stash.get(SOLUTIONS_KEY, {}))
            check_names(task)
        except TaskFileError as exc:
            raise self.CollectError(f"invalid OSWorld task file {exc}") from exc
        repeats = self.config.stash[SETTINGS_KEY].repeat if SETTINGS_KEY in self.config.stash else 1
        if repeats == 1:
            return [TaskItem.from_parent(self, name=task.nodename, callobj=run_task, task=task)]
        return [
            TaskItem.from_parent(self, name=f"{task.nodename}[{k}]", callobj=run_task, task=task, repeat=k)
            for k in range(1, repeats + 1)
        ]


class TaskItem(pytest.Function):
    """A task as a pytest test: real fixtures, an OSWorld outcome."""

    def __init__(self, *, task: Task, repeat: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task = task
        #: Which run of the task this is, with ``--repeat N`` (1-based).
        self.repeat = repeat
        self.extra_keyword_matches.update({"osworld", task.domain, task.id})
        if task.domain == "vs_code":
            self.extra_keyword_matches.add("vscode")
        self.add_marker(pytest.mark.osworld)
        self.add_marker(getattr(pytest.mark, task.domain))
        for app in sorted({normalise_app(a) for a in task.related_apps if a.strip()}):
            self.add_marker(pytest.mark.app(name=app))
        if task.snapshot:
            self.add_marker(pytest.mark.snapshot(name=task.snapshot))
        if task.infeasible:
            self.add_marker(pytest.mark.infeasible)
        if task.proxy:
            self.add_marker(pytest.mark.proxy)
        if needs_network(task):
            self.add_marker(pytest.mark.network)
        if needs_gdrive(task):
            self.add_marker(pytest.mark.gdrive)
        #: Filled in by ``run_task``: the result as plain data.
        self.osworld_result: dict[str, Any] | None = None
        #: Set by the ``osworld_recorder`` fixture: this task's results folder writer (kept
        #: on the item so an interrupted run can still write the task's result).
        self.osworld_recorder: TaskRecorder | None = None
        #: Set by :class:`~pytest_osworld.plugin.fixtures.TaskOrder`: whether another task runs
        #: after this one in this process (so its restore may start a warm spare).
        self.osworld_task_follows = True

    def reportinfo(self) -> tuple[Path, int, str]:
        """The task file, not ``run_task``, as the location of failures."""
        return self.path, 0, f"osworld {self.task.nodename}"

    def repr_failure(self, excinfo: ExceptionInfo[BaseException]) -> str | TerminalRepr:  # type: ignore[override]
        """Our errors carry their whole explanation: show it, without a traceback."""
        if isinstance(excinfo.value, TaskFailed | OSWorldError):
            return plain_failure(str(excinfo.value), str(self.path))
        return super().repr_failure(excinfo)


class TaskFailed(Exception):
    """Raised by ``run_task`` when the score is below the pass threshold."""


def _start_recording(guest: Any, item: pytest.Item) -> bool:
    """Start the screen recording; a failure is a warning, never the task's outcome."""
    try:
        guest.start_recording()
    except OSWorldError as exc:
        item.warn(pytest.PytestWarning(f"osworld: could not start the screen recording: {exc}"))
        return False
    return True


def _save_recording(guest: Any, recorder: TaskRecorder, item: pytest.Item) -> None:
    """Stop the recording and keep it as recording.mp4 beside the trajectory."""
    try:
        video = guest.end_recording()
    except OSWorldError as exc:
        item.warn(pytest.PytestWarning(f"osworld: could not save the screen recording: {exc}"))
        return
    if video:
        (recorder.dir / "recording.mp4").write_bytes(video)


def provenance(task: Task, settings: Settings, provider: str, image: str | None = None) -> dict[str, Any]:
    """Where a result came from: the task file, the plugin, the provider and its image, host
    and worker, the agent, and with ``--shard`` the shard and its run's task fingerprint.
    ``image`` is None when no environment came up."""
    data: dict[str, Any] = {
        "task_file": str(task.path),
        "task_sha256": task.sha256,
        "plugin_version": __version__,
        "provider": provider,
        "image": image or None,
        "host": host_name(),
        "worker": worker_name(),
        "agent": settings.agent,
        "model": settings.model,
        "max_steps": settings.max_steps,
        "budgets": list(settings.budgets),
        "observation_type": settings.observation_type,
        "action_space": settings.action_space,
        "solutions": str(settings.solutions) if settings.solutions else None,
    }
    return data | settings.shard_provenance()


def error_result(item: TaskItem, settings: Settings, reason: str, steps: int = 0) -> TaskResult:
    """The result of a task that broke (environment, setup step, agent): an ERROR, no score.

    ``steps`` is how many agent steps were recorded before it broke. When the task's clock
    had started (its restore began), the result carries the timings of the phases that ran,
    its duration is their total, and the item's JUnit properties gain the phase totals.
    """
    result = task_error_result(item.task, item.nodeid, item.repeat, settings, reason, steps)
    timings = started_timings(item)
    if timings is not None:
        # The task ended where its last phase did, not when pytest had reported the error.
        _attach_timings(item, result, timings, at_last_phase=True)
    return result


def _attach_timings(
    item: pytest.Item, result: TaskResult, timings: TaskTimings, at_last_phase: bool = False
) -> None:
    """Stop the task's clock; put its timings in ``result`` and its totals in the JUnit properties."""
    result.duration_s = round(timings.stop(at_last_phase), 3)
    result.timings = timings.to_json()
    item.user_properties.extend(timings.properties())


def task_error_result(
    task: Task, nodeid: str, repeat: int, settings: Settings, reason: str, steps: int = 0
) -> TaskResult:
    """:func:`error_result` without the item (the xdist controller has none of a crashed task)."""
    return TaskResult(
        task_id=task.id,
        domain=task.domain,
        nodeid=nodeid,
        outcome="error",
        score=None,
        threshold=settings.pass_threshold,
        end_reason=None,
        steps=steps,
        max_steps=settings.max_steps,
        duration_s=0.0,
        infeasible=task.infeasible,
        reason=reason,
        provenance=provenance(task, settings, settings.provider),
        instruction=task.instruction,
        conj=task.evaluator.conj,
        repeat=repeat,
    )


def run_task(
    request: pytest.FixtureRequest,
    osworld_settings: Settings,
    osworld_recorder: TaskRecorder,
    osworld_provider: Provider,
    osworld_env: Environment,
    osworld_context: TaskContext,
    osworld_agent: Agent,
    osworld_live: LiveView | None,
) -> None:
    """Run one task: the episode, then the evaluation; fail below the pass threshold.

    The path itself is the item's :class:`~pytest_osworld.episode.task_run.TaskRun` (begun by the
    ``osworld_env`` and ``osworld_context`` fixtures); this adds what belongs to pytest: the
    step hook, the screen recording, the trajectory section, the JUnit properties and the
    outcome. With ``--budgets``, the scores at the smaller step budgets follow the evaluation
    (:mod:`~pytest_osworld.plugin.budget_runs`). With ``--pause-on-fail`` a task that fails,
    or whose agent broke, holds the run first (:func:`~pytest_osworld.live.pause.pause_if_asked`)."""
    item = request.node
    if not isinstance(item, TaskItem):
        raise TypeError("run_task runs only for OSWorld task items")
    task, settings, recorder = item.task, osworld_settings, osworld_recorder
    run = task_run(item, task, osworld_provider, osworld_context.assets)
    run.context, run.recorder = osworld_context, recorder
    timings = run.timings
    budget = Budget(max_steps=settings.max_steps, seconds=settings.task_timeout)
    hook = item.config.hook

    def on_step(record: Any) -> None:
        recorder.step(record)
        hook.pytest_osworld_step(item=item, step=record.to_json())

    if isinstance(osworld_agent, DesktopAgent):
        osworld_agent.attach_desktop(osworld_context.guest, osworld_live)
    with timings.phase("record"):
        recording = settings.record and _start_recording(osworld_context.guest, item)
    try:
        # The trajectory's error line and result.json of a broken desktop are written from
        # the report (plugin._record_unscored), once.
        episode = run.run_episode(osworld_agent, budget, settings.observation_type, on_step=on_step)
    finally:
        if recording:
            with timings.phase("record"):
                _save_recording(osworld_context.guest, recorder, item)
    item.add_report_section("call", "osworld trajectory", trajectory_text(episode))
    if settings.record_solutions is not None and isinstance(osworld_agent, DesktopAgent):
        record_solution(settings.record_solutions, task, osworld_agent.solution())
    if episode.end_reason is EndReason.AGENT_ERROR:
        failure = f"the agent failed: {episode.error} (after {len(episode.steps)} steps)"
        pause_if_asked(item, osworld_context, episode.last_action, failure, osworld_live)
        raise AgentFailure(failure)
    evaluation = run.evaluate(episode.last_action)
    scores_at = score_item_budgets(item, run, episode, evaluation, settings, recorder)
    timings.stop()
    result = run.result(
        evaluation,
        nodeid=item.nodeid,
        threshold=settings.pass_threshold,
        end_reason=episode.end_reason.value,
        steps=len(episode.steps),
        max_steps=settings.max_steps,
        provenance=provenance(task, settings, osworld_env.description, osworld_env.image),
        usage=episode.usage,
        repeat=item.repeat,
    )
    result.scores_at = scores_at
    item.user_properties.extend(timings.properties())
    if osworld_live is not None and osworld_live.taken_over:
        result.provenance["person_took_over"] = True
    run.finish(result)
    item.osworld_result = result.to_json()
    for name, value in (
        ("score", f"{evaluation.score:.4f}"),
        ("outcome", result.outcome),
        ("end_reason", episode.end_reason.value),
        ("steps", len(episode.steps)),
        ("duration", f"{result.duration_s:.3f}"),
        ("input_tokens", episode.usage.input_tokens),
        ("output_tokens", episode.usage.output_tokens),
        *budget_properties(scores_at),
    ):
        item.user_properties.append((name, value))
    hook.pytest_osworld_task_result(item=item, result=result.to_json())
    if result.outcome != "passed":
        text = failure_text(result, task, episode, evaluation, recorder, settings)
        pause_if_asked(item, osworld_context, episode.last_action, text, osworld_live)
        raise TaskFailed(text)
