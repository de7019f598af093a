"""Collection: a task JSON file becomes one :class:`TaskItem`, and ``run_task`` runs it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import (
    ExceptionInfo,
    ReprEntryNative,
    ReprExceptionInfo,
    ReprFileLocation,
    ReprTraceback,
    TerminalRepr,
)

from pytest_osworld import __version__
from pytest_osworld.agent.contract import Agent, DesktopAgent
from pytest_osworld.episode.loop import (
    Budget,
    EndReason,
    Episode,
    environment_gone,
    provider_note,
    run_episode,
)
from pytest_osworld.episode.timings import TIMINGS_KEY, TaskTimings, task_timings
from pytest_osworld.errors import (
    AgentFailure,
    EnvironmentFailure,
    OSWorldError,
    TaskFileError,
    UnknownNameError,
)
from pytest_osworld.evaluators.evaluate import Evaluation, describe_getter, evaluate
from pytest_osworld.evaluators.getters import GETTERS
from pytest_osworld.evaluators.metrics import METRICS
from pytest_osworld.live.pause import pause_if_asked
from pytest_osworld.live.session import LiveView
from pytest_osworld.plugin.ran_on import host_name, worker_name
from pytest_osworld.plugin.settings import SETTINGS_KEY, Settings
from pytest_osworld.providers.base import Environment, Provider
from pytest_osworld.report.results import TaskRecorder, TaskResult
from pytest_osworld.setup_steps import SETUP_STEPS
from pytest_osworld.task.catalog import needs_gdrive, needs_network
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Task, load_task, looks_like_task
from pytest_osworld.task.solutions import SOLUTIONS_KEY, record_solution, with_solution

TASK_MARKER_RE = re.compile(r'"(evaluator|instruction)"\s*:')

FAIL_HEAD = "OSWorld score {score:.2f} < {threshold:.2f}: {reason}"
EVAL_ERROR_HEAD = "OSWorld evaluation error: {reason}"


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


def normalise_app(name: str) -> str:
    """``"LibreOffice Calc"`` -> ``"libreoffice_calc"``, for the ``app`` marker."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


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


def plain_failure(text: str, path: str) -> ReprExceptionInfo:
    """A failure report that prints ``text`` as is, and whose first line is the summary line.

    Built from pytest's own report classes so it survives xdist's serialisation.
    """
    first = text.splitlines()[0] if text else ""
    return ReprExceptionInfo(
        reprtraceback=ReprTraceback([ReprEntryNative([text.rstrip("\n") + "\n"])], None, "native"),
        reprcrash=ReprFileLocation(path, 0, first),
    )


class TaskFailed(Exception):
    """Raised by ``run_task`` when the score is below the pass threshold."""


def rerun_command(task: Task, settings: Settings) -> str:
    """The command that reruns this task with the same agent."""
    parts = ["pytest", str(task.path)]
    if settings.agent:
        parts.append(f"--agent={settings.agent}")
    if settings.model:
        parts.append(f"--model={settings.model}")
    if settings.provider != "local":
        parts.append(f"--provider={settings.provider}")
    if settings.solutions:
        parts.append(f"--solutions={settings.solutions}")
    return " ".join(shlex.quote(p) for p in parts)


def failure_text(
    result: TaskResult,
    task: Task,
    episode: Episode,
    evaluation: Evaluation,
    recorder: TaskRecorder,
    settings: Settings,
) -> str:
    """The failure message of ARCHITECTURE.md section 5."""
    if evaluation.error:
        head = EVAL_ERROR_HEAD.format(reason=evaluation.error)
    else:
        head = FAIL_HEAD.format(
            score=result.score or 0.0, threshold=result.threshold, reason=evaluation.first_reason()
        )
    instruction = task.instruction if len(task.instruction) <= 160 else task.instruction[:157] + "..."
    lines = [
        head,
        f"  instruction : {instruction}",
        f"  episode     : {episode.describe(settings.max_steps)}",
    ]
    label = "  evaluator   : "
    for outcome, metric in zip(evaluation.outcomes, task.evaluator.metrics, strict=False):
        value = "not evaluated" if outcome.value is None else f"{outcome.value:.2f}"
        io = f"  result={describe_getter(metric.result)}" if metric.result else ""
        io += f"  expected={describe_getter(metric.expected)}" if metric.expected else ""
        lines.append(f"{label}{outcome.func} = {value}{io}")
        if outcome.reason and outcome.status != "not_evaluated":
            lines.append(f"                {outcome.reason[:300]}")
        label = "                "
    if recorder.last_screenshot is not None:
        lines.append(f"  last screen : {recorder.last_screenshot}")
    lines.append(f"  artifacts   : {recorder.dir}/")
    lines.append(f"  rerun       : {rerun_command(task, settings)}")
    return "\n".join(lines)


def trajectory_text(episode: Episode) -> str:
    """The step-by-step trajectory for the report section."""
    lines = []
    for step in episode.steps:
        actions = (
            "; ".join(
                (a.code.strip().replace("\n", " | ")[:200] if a.kind == "code" else json.dumps(a.to_json()))
                for a in step.actions
            )
            or "(no action)"
        )
        lines.append(f"step {step.index:>2} ({step.duration:.1f}s): {actions}")
        if step.thought:
            lines.append(f"         thought: {step.thought[:300]}")
        if step.parse_error:
            lines.append(f"         parse error: {step.parse_error}")
        for error in step.action_errors:
            lines.append(f"         action error: {error[:300]}")
    lines.append(f"end: {episode.end_reason.value}" + (f" ({episode.error})" if episode.error else ""))
    return "\n".join(lines)


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
        "observation_type": settings.observation_type,
        "action_space": settings.action_space,
        "solutions": str(settings.solutions) if settings.solutions else None,
    }
    return data | shard_provenance(settings)


def shard_provenance(settings: Settings) -> dict[str, Any]:
    """``shard`` ("K/N") and ``shard_tasks_sha256`` with ``--shard``; empty without it."""
    if settings.shard is None:
        return {}
    return {"shard": settings.shard_label, "shard_tasks_sha256": settings.shard_tasks_sha256}


def error_result(item: TaskItem, settings: Settings, reason: str, steps: int = 0) -> TaskResult:
    """The result of a task that broke (environment, setup step, agent): an ERROR, no score.

    ``steps`` is how many agent steps were recorded before it broke. When the task's clock
    had started (its restore began), the result carries the timings of the phases that ran,
    its duration is their total, and the item's JUnit properties gain the phase totals.
    """
    result = task_error_result(item.task, item.nodeid, item.repeat, settings, reason, steps)
    timings = item.stash.get(TIMINGS_KEY, None)
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


def _provider_note(item: pytest.Item) -> str:
    """What this worker's provider knows about its environment after a failure, or ''."""
    provider = getattr(item, "funcargs", {}).get("osworld_provider")
    return provider_note(provider) if isinstance(provider, Provider) else ""


def _raise_if_environment_died(item: pytest.Item, ctx: TaskContext, error: str) -> None:
    """An evaluation error from a desktop that stopped answering is an ERROR, not a FAIL.

    A getter or postconfig step that fails because the file is missing is the agent's
    failure (``eval_error``); one that fails because the environment died under it is not.
    The check is :func:`~pytest_osworld.episode.loop.environment_gone`, shared with the envs.
    """
    gone = environment_gone(ctx.guest)
    if gone is not None:
        note = _provider_note(item) or f"the environment stopped answering ({gone})"
        raise EnvironmentFailure(f"{note}; the evaluation could not run: {error}") from gone


def run_task(
    request: pytest.FixtureRequest,
    osworld_settings: Settings,
    osworld_recorder: TaskRecorder,
    osworld_env: Environment,
    osworld_context: TaskContext,
    osworld_agent: Agent,
    osworld_live: LiveView | None,
) -> None:
    """Run one task: the episode, then the evaluation; fail below the pass threshold.

    With ``--pause-on-fail`` a task that fails, or whose agent broke, holds the run first
    (:func:`~pytest_osworld.live.pause.pause_if_asked`)."""
    item = request.node
    if not isinstance(item, TaskItem):
        raise TypeError("run_task runs only for OSWorld task items")
    task, settings, recorder = item.task, osworld_settings, osworld_recorder
    budget = Budget(max_steps=settings.max_steps, seconds=settings.task_timeout)
    hook = item.config.hook

    def on_step(record: Any) -> None:
        recorder.step(record)
        hook.pytest_osworld_step(item=item, step=record.to_json())

    timings = task_timings(item)
    if isinstance(osworld_agent, DesktopAgent):
        osworld_agent.attach_desktop(osworld_context.guest, osworld_live)
    with timings.phase("record"):
        recording = settings.record and _start_recording(osworld_context.guest, item)
    try:
        episode = run_episode(
            task,
            osworld_context.guest,
            osworld_agent,
            budget,
            observation_type=settings.observation_type,
            on_step=on_step,
            timings=timings,
        )
    except EnvironmentFailure as exc:
        # The trajectory's error line and result.json are written from the report
        # (plugin._record_unscored), once; here the reason only gains what the provider
        # knows, such as a desktop that died under the episode.
        note = _provider_note(item)
        if note:
            raise EnvironmentFailure(f"{note}: {exc}") from exc
        raise
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
    evaluation = evaluate(osworld_context, episode.last_action, timings)
    if evaluation.error:
        with timings.phase("evaluation"):
            _raise_if_environment_died(item, osworld_context, evaluation.error)
    passed = evaluation.score >= settings.pass_threshold
    outcome = "passed" if passed else ("eval_error" if evaluation.error else "failed")
    result = TaskResult(
        task_id=task.id,
        domain=task.domain,
        nodeid=item.nodeid,
        outcome=outcome,
        score=evaluation.score,
        threshold=settings.pass_threshold,
        end_reason=episode.end_reason.value,
        steps=len(episode.steps),
        max_steps=settings.max_steps,
        duration_s=0.0,  # the total of the timings, set below
        infeasible=task.infeasible,
        reason=evaluation.first_reason(),
        metrics=[o.to_json() for o in evaluation.outcomes],
        usage={
            "input_tokens": episode.usage.input_tokens,
            "output_tokens": episode.usage.output_tokens,
            "cost_usd": round(episode.usage.cost_usd, 6),
        },
        provenance=provenance(task, settings, osworld_env.description, osworld_env.image),
        evaluator_inputs=evaluation.inputs,
        instruction=task.instruction,
        conj=task.evaluator.conj,
        repeat=item.repeat,
    )
    _attach_timings(item, result, timings)
    if osworld_live is not None and osworld_live.taken_over:
        result.provenance["person_took_over"] = True
    recorder.finish(result)
    item.osworld_result = result.to_json()
    for name, value in (
        ("score", f"{evaluation.score:.4f}"),
        ("outcome", outcome),
        ("end_reason", episode.end_reason.value),
        ("steps", len(episode.steps)),
        ("duration", f"{result.duration_s:.3f}"),
        ("input_tokens", episode.usage.input_tokens),
        ("output_tokens", episode.usage.output_tokens),
    ):
        item.user_properties.append((name, value))
    hook.pytest_osworld_task_result(item=item, result=result.to_json())
    if not passed:
        text = failure_text(result, task, episode, evaluation, recorder, settings)
        pause_if_asked(item, osworld_context, episode.last_action, text, osworld_live)
        raise TaskFailed(text)
