"""What a failed task's report says: the failure message of ARCHITECTURE.md section 5, the
trajectory section, the rerun command, and the plain report pytest prints them in.

The heads are module constants: the pytest items raise with them, the JUnit writer and
merge rebuild a failure's first line from ``result.json`` with them, and tests match them.
"""

from __future__ import annotations

import json
import shlex

from _pytest._code.code import ReprEntryNative, ReprExceptionInfo, ReprFileLocation, ReprTraceback

from pytest_osworld.episode.loop import Episode
from pytest_osworld.episode.result import TaskResult
from pytest_osworld.evaluators.evaluate import Evaluation, describe_getter
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.task.model import Task
from pytest_osworld.task.settings import Settings

#: The first line of a task whose score is below the pass threshold.
FAIL_HEAD = "OSWorld score {score:.2f} < {threshold:.2f}: {reason}"
#: The first line of a task whose evaluation could not run (a getter or postconfig failed).
EVAL_ERROR_HEAD = "OSWorld evaluation error: {reason}"


def plain_failure(text: str, path: str) -> ReprExceptionInfo:
    """A failure report that prints ``text`` as is, and whose first line is the summary line.

    Built from pytest's own report classes so it survives xdist's serialisation.
    """
    first = text.splitlines()[0] if text else ""
    return ReprExceptionInfo(
        reprtraceback=ReprTraceback([ReprEntryNative([text.rstrip("\n") + "\n"])], None, "native"),
        reprcrash=ReprFileLocation(path, 0, first),
    )


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
