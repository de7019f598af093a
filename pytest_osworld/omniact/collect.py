"""Collection of OmniACT task files, and ``run_omniact``, the test each one runs.

An OmniACT item needs no desktop: the agent sees the task's screenshot once, answers with
a script, and the script is scored offline (:mod:`pytest_osworld.omniact.score`). The item
is a ``pytest.Function`` built with ``callobj=run_omniact``, so it gets the same fixtures
as OSWorld items (``osworld_agent``, ``osworld_settings``) and a conftest can override them.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import ExceptionInfo, TerminalRepr

from pytest_osworld import __version__
from pytest_osworld.agent.contract import Agent, Observation
from pytest_osworld.errors import OSWorldError, TaskFileError
from pytest_osworld.omniact.prompt import one_shot_instruction
from pytest_osworld.omniact.score import TaskScore, score_script
from pytest_osworld.omniact.task import OmniactTask, load_omniact_task, looks_like_omniact
from pytest_osworld.plugin.collect import normalise_app, plain_failure, shard_provenance
from pytest_osworld.plugin.settings import Settings
from pytest_osworld.report.results import TaskRecorder, TaskResult

#: First line of a failure (tests match it).
FAIL_HEAD = "OmniACT action score {score:.2f} < {threshold:.2f}: {reason}"
#: The marker every OmniACT item carries (register it with this line).
MARKER_LINE = "omniact: an OmniACT task (one screenshot, one script, scored offline)"
#: Text of a file that does not parse but is meant to be an OmniACT task.
_OMNIACT_KEYS_RE = re.compile(
    r'"script"\s*:.*"(image|boxes)"\s*:|"(image|boxes)"\s*:.*"script"\s*:', re.DOTALL
)


def omniact_file_for(file_path: Path, parent: pytest.Collector) -> OmniactFile | None:
    """The collector of ``file_path`` if it is an OmniACT task file, else None.

    Call it from ``pytest_collect_file`` before OSWorld's own check (an OmniACT file has
    an ``instruction`` too). A file that is not valid JSON is claimed when its text has
    OmniACT's keys, so that its error is reported rather than lost.
    """
    if file_path.suffix != ".json":
        return None
    try:
        text = file_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
        if not _OMNIACT_KEYS_RE.search(text):
            return None
    else:
        if not looks_like_omniact(data):
            return None
    return OmniactFile.from_parent(parent, path=file_path)


class OmniactFile(pytest.File):
    """One OmniACT task file; yields a single :class:`OmniactItem`."""

    def collect(self) -> list[OmniactItem]:
        """Load and validate the task; errors become a collection error naming the JSON path."""
        try:
            task = load_omniact_task(self.path)
        except TaskFileError as exc:
            raise self.CollectError(f"invalid OmniACT task file {exc}") from exc
        return [OmniactItem.from_parent(self, name=task.nodename, callobj=run_omniact, task=task)]


class OmniactItem(pytest.Function):
    """An OmniACT task as a pytest test: one agent answer, scored offline."""

    def __init__(self, *, task: OmniactTask, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task = task
        self.extra_keyword_matches.update({"omniact", task.id, task.domain})
        self.add_marker(pytest.mark.omniact)
        if task.app:
            app = normalise_app(task.app)
            self.extra_keyword_matches.add(app)
            self.add_marker(pytest.mark.app(name=app))
        #: Filled in by ``run_omniact``: the score as plain data.
        self.omniact_result: dict[str, Any] | None = None

    def reportinfo(self) -> tuple[Path, int, str]:
        """The task file, not ``run_omniact``, as the location of failures."""
        return self.path, 0, f"omniact {self.task.nodename}"

    def repr_failure(self, excinfo: ExceptionInfo[BaseException]) -> str | TerminalRepr:  # type: ignore[override]
        """Our errors carry their whole explanation: show it, without a traceback."""
        if isinstance(excinfo.value, OmniactFailed | OSWorldError):
            return plain_failure(str(excinfo.value), str(self.path))
        return super().repr_failure(excinfo)


class OmniactFailed(Exception):
    """Raised by ``run_omniact`` when the action score is below the pass threshold."""


def answer_script(step_actions: list[Any]) -> str:
    """The agent's code actions joined into one script (WAIT, DONE and FAIL left out)."""
    return "\n".join(a.code.rstrip() for a in step_actions if a.kind == "code")


def rerun_command(task: OmniactTask, settings: Settings) -> str:
    """The command that reruns this task with the same agent."""
    parts = ["pytest", str(task.path)]
    if settings.agent:
        parts.append(f"--agent={settings.agent}")
    if settings.model:
        parts.append(f"--model={settings.model}")
    return " ".join(shlex.quote(p) for p in parts)


def failure_text(
    task: OmniactTask, score: TaskScore, script: str, threshold: float, settings: Settings
) -> str:
    """The failure message: the summary line, then the scores, penalties and script."""
    instruction = task.instruction if len(task.instruction) <= 160 else task.instruction[:157] + "..."
    lines = [
        FAIL_HEAD.format(score=score.action_score, threshold=threshold, reason=score.first_reason()),
        f"  instruction : {instruction}",
        f"  scores      : sequence {score.sequence_score:.2f}, action {score.action_score:.2f}"
        f" ({score.action_raw:.2f} of {score.maximum:.2f} after penalties)",
        f"  expected    : {', '.join(score.expected_kinds)}",
        f"  predicted   : {', '.join(score.predicted_kinds) or '(no actions)'}",
    ]
    label = "  penalties   : "
    for penalty in score.penalties:
        lines.append(f"{label}{penalty.category} {penalty.value:.2f}  {penalty.reason}")
        label = "                "
    shown = script.strip().replace("\n", " | ") or "(empty)"
    lines.append(f"  script      : {shown[:400]}{'...' if len(shown) > 400 else ''}")
    lines.append(f"  image       : {task.image}")
    lines.append(f"  rerun       : {rerun_command(task, settings)}")
    return "\n".join(lines)


def run_omniact(
    request: pytest.FixtureRequest,
    osworld_settings: Settings,
    osworld_agent: Agent,
) -> None:
    """Run one OmniACT task: one ``act`` call on the screenshot, then score the script."""
    item = request.node
    if not isinstance(item, OmniactItem):
        raise TypeError("run_omniact runs only for OmniACT task items")
    task, settings = item.task, osworld_settings
    started = time.monotonic()
    osworld_agent.reset(task.agent_task())
    instruction = one_shot_instruction(task.instruction, task.image_size)
    observation = Observation(
        instruction=instruction,
        screenshot=task.screenshot(),
        extra={"benchmark": "omniact", "instruction": task.instruction, "image_size": list(task.image_size)},
    )
    step = osworld_agent.act(instruction, observation)
    script = answer_script(step.actions)
    score = score_script(script, task.actions, task.boxes)
    if step.parse_error and not script.strip():
        score = TaskScore(
            0.0,
            0.0,
            score.maximum,
            score.expected_kinds,
            (),
            (),
            f"the answer could not be parsed: {step.parse_error}",
        )
    item.add_report_section("call", "omniact answer", step.response or script or "(empty answer)")
    passed = score.action_score >= settings.pass_threshold
    item.omniact_result = {
        "task_id": task.id,
        "domain": task.domain,
        "outcome": "passed" if passed else "failed",
    }
    item.omniact_result.update(score.to_json())
    _record(
        item, task, score, script, step.response, settings, passed, time.monotonic() - started, step.usage
    )
    for name, value in (
        ("benchmark", "omniact"),
        ("task_id", task.id),
        ("domain", task.domain),
        ("agent", settings.agent or ""),
        ("sequence_score", f"{score.sequence_score:.4f}"),
        ("action_score", f"{score.action_score:.4f}"),
        ("score", f"{score.action_score:.4f}"),
        ("outcome", "passed" if passed else "failed"),
        ("input_tokens", step.usage.input_tokens),
        ("output_tokens", step.usage.output_tokens),
    ):
        item.user_properties.append((name, value))
    if not passed:
        raise OmniactFailed(failure_text(task, score, script, settings.pass_threshold, settings))


def _record(
    item: OmniactItem,
    task: OmniactTask,
    score: TaskScore,
    script: str,
    response: str,
    settings: Settings,
    passed: bool,
    duration: float,
    usage: Any,
) -> None:
    """Write the task's results folder (``omniact/<id>`` in OSWorld's layout)."""
    recorder = TaskRecorder(
        settings.results_dir,
        settings.action_space,
        settings.observation_type,
        settings.model or settings.agent or "agent",
        "omniact",
        task.id,
    )
    (recorder.dir / "response.txt").write_text(response or script)
    (recorder.dir / "script.py").write_text(script + ("\n" if script else ""))
    recorder.finish(
        TaskResult(
            task_id=task.id,
            domain="omniact",
            nodeid=item.nodeid,
            outcome="passed" if passed else "failed",
            score=round(score.action_score, 6),
            threshold=settings.pass_threshold,
            end_reason="DONE",
            steps=1,
            max_steps=1,
            duration_s=round(duration, 3),
            infeasible=False,
            reason=score.first_reason(),
            metrics=[{"func": "omniact", **score.to_json()}],
            usage={
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cost_usd": round(usage.cost_usd, 6),
            },
            provenance={
                "task_file": str(task.path),
                "task_sha256": task.sha256,
                "plugin_version": __version__,
                "agent": settings.agent,
                "model": settings.model,
                "benchmark": "omniact",
            }
            | shard_provenance(settings),
        )
    )
