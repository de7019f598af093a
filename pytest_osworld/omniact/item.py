"""An OmniACT item, and ``run_omniact``, the test each one runs.

An OmniACT item needs no desktop: the agent sees the sample's screenshot once, answers
with a script, and the script is scored offline by both scorings
(:func:`~pytest_osworld.omniact.sample.score_both`); ``--omniact-scoring`` (the run's
``Settings.omniact_scoring``) says which one decides pass or fail. The item is a
``pytest.Function`` built with ``callobj=run_omniact``, so it gets the same fixtures as
OSWorld items (``osworld_agent``, ``osworld_settings``) and a conftest can override them.

Both scorings read one text, the model's script as it wrote it
(:func:`prediction_text`): the fenced code blocks of its answer, joined, else the answer
itself, else (an agent that gave actions and no text) its code actions joined.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Any

import pytest
from _pytest._code.code import ExceptionInfo, TerminalRepr

from pytest_osworld.agent.contract import Agent, AgentStep, Observation
from pytest_osworld.agent.parse import fenced_blocks
from pytest_osworld.errors import OSWorldError
from pytest_osworld.omniact.prompt import one_shot_instruction
from pytest_osworld.omniact.record import write_result
from pytest_osworld.omniact.sample import BothScores, Sample, score_both
from pytest_osworld.omniact.score import TaskScore
from pytest_osworld.report.failure import plain_failure
from pytest_osworld.report.junit import omniact_properties
from pytest_osworld.task.model import normalise_app
from pytest_osworld.task.settings import Settings

#: First line of a failure (tests match it).
FAIL_HEAD = "OmniACT action score {score:.2f} < {threshold:.2f} ({scoring} scoring): {reason}"
#: The failure's line for a sample the official scoring cannot read.
NO_OFFICIAL_LINE = "  official    : not scored: {problem}"
#: The marker every OmniACT item carries (register it with this line).
MARKER_LINE = "omniact: an OmniACT task (one screenshot, one script, scored offline)"


class OmniactItem(pytest.Function):
    """An OmniACT sample as a pytest test: one agent answer, scored offline."""

    def __init__(self, *, sample: Sample, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: The sample (``task`` is the same object, the name the plugin's hooks use).
        self.sample = sample
        self.task = sample
        keywords = {"omniact", sample.domain}
        keywords.add(sample.key if sample.split is None else sample.split)
        self.extra_keyword_matches.update(keywords)
        self.add_marker(pytest.mark.omniact)
        if sample.app:
            app = normalise_app(sample.app)
            self.extra_keyword_matches.add(app)
            self.add_marker(pytest.mark.app(name=app))
        #: Filled in by ``run_omniact``: the ``result.json`` data (plain).
        self.omniact_result: dict[str, Any] | None = None

    def reportinfo(self) -> tuple[Path, int, str]:
        """The task or split file, not ``run_omniact``, as the location of failures."""
        return self.path, 0, f"omniact {self.sample.nodename}"

    def repr_failure(self, excinfo: ExceptionInfo[BaseException]) -> str | TerminalRepr:  # type: ignore[override]
        """Our errors carry their whole explanation: show it, without a traceback."""
        if isinstance(excinfo.value, OmniactFailed | OSWorldError):
            return plain_failure(str(excinfo.value), str(self.path))
        return super().repr_failure(excinfo)


class OmniactFailed(Exception):
    """Raised by ``run_omniact`` when the deciding action score is below the pass threshold."""


def prediction_text(step: AgentStep) -> str:
    """The model's script text as it wrote it: its fenced blocks joined, else its answer,
    else its code actions joined (WAIT, DONE and FAIL left out)."""
    blocks = fenced_blocks(step.response or "")
    if blocks:
        return "\n".join(blocks)
    if step.response.strip():
        return step.response
    return "\n".join(a.code.rstrip() for a in step.actions if a.kind == "code")


def answer_script(step_actions: list[Any]) -> str:
    """The agent's code actions joined into one script (WAIT, DONE and FAIL left out)."""
    return "\n".join(a.code.rstrip() for a in step_actions if a.kind == "code")


def rerun_command(item: pytest.Item, settings: Settings) -> str:
    """The command that reruns this sample with the same agent (a release sample by node id)."""
    sample = getattr(item, "sample", None)
    target = str(item.path) if sample is None or sample.layout == "json" else f"{item.path}::{item.name}"
    parts = ["pytest", target]
    if settings.agent:
        parts.append(f"--agent={settings.agent}")
    if settings.model:
        parts.append(f"--model={settings.model}")
    if settings.omniact_scoring != "official":
        parts.append(f"--omniact-scoring={settings.omniact_scoring}")
    return " ".join(shlex.quote(p) for p in parts)


def failure_text(
    item: pytest.Item, sample: Sample, scores: BothScores, script: str, settings: Settings
) -> str:
    """The failure message: the summary line, then both scorings, the penalties and the script."""
    scoring = scores.deciding(settings.omniact_scoring)
    instruction = sample.instruction if len(sample.instruction) <= 160 else sample.instruction[:157] + "..."
    paper = scores.paper
    lines = [
        FAIL_HEAD.format(
            score=scores.action_score(scoring),
            threshold=settings.pass_threshold,
            scoring=scoring,
            reason=scores.reason(scoring),
        ),
        f"  instruction : {instruction}",
    ]
    if scores.official is not None:
        official = scores.official
        lines.append(
            f"  official    : sequence {official.sequence_score:.2f}, action {official.action_score:.2f}"
            f" (weight {official.weight:.2f})"
        )
    else:
        lines.append(NO_OFFICIAL_LINE.format(problem=scores.official_problem))
    lines += [
        f"  paper       : sequence {paper.sequence_score:.2f}, action {paper.action_score:.2f}"
        f" ({paper.action_raw:.2f} of {paper.maximum:.2f} after penalties)",
        f"  expected    : {', '.join(paper.expected_kinds)}",
        f"  predicted   : {', '.join(paper.predicted_kinds) or '(no actions)'}",
    ]
    label = "  penalties   : "
    if scoring == "official" and scores.official is not None:
        found = [(p.category, p.value, p.reason) for p in scores.official.penalties]
        found = found if scores.official.sequence_flag else []
    else:
        found = [(p.category, p.value, p.reason) for p in paper.penalties]
    for category, value, reason in found:
        lines.append(f"{label}{category} {value:.2f}  {reason}")
        label = "                "
    shown = script.strip().replace("\n", " | ") or "(empty)"
    lines.append(f"  script      : {shown[:400]}{'...' if len(shown) > 400 else ''}")
    lines.append(f"  image       : {sample.image}")
    lines.append(f"  rerun       : {rerun_command(item, settings)}")
    return "\n".join(lines)


def run_omniact(
    request: pytest.FixtureRequest,
    osworld_settings: Settings,
    osworld_agent: Agent,
) -> None:
    """Run one OmniACT sample: one ``act`` call on the screenshot, then both scorings."""
    item = request.node
    if not isinstance(item, OmniactItem):
        raise TypeError("run_omniact runs only for OmniACT items")
    sample, settings = item.sample, osworld_settings
    started = time.monotonic()
    osworld_agent.reset(sample.agent_task())
    instruction = one_shot_instruction(sample.instruction, sample.image_size)
    observation = Observation(
        instruction=instruction,
        screenshot=sample.screenshot(),
        extra={
            "benchmark": "omniact",
            "instruction": sample.instruction,
            "image_size": list(sample.image_size),
        },
    )
    step = osworld_agent.act(instruction, observation)
    text = prediction_text(step)
    scores = score_both(sample, text)
    if step.parse_error and not text.strip():
        paper = scores.paper
        reason = f"the answer could not be parsed: {step.parse_error}"
        scores = BothScores(
            scores.official,
            TaskScore(0.0, 0.0, paper.maximum, paper.expected_kinds, (), (), reason),
            scores.official_problem,
        )
    item.add_report_section("call", "omniact answer", step.response or text or "(empty answer)")
    passed = scores.action_score(settings.omniact_scoring) >= settings.pass_threshold
    item.omniact_result = write_result(
        nodeid=item.nodeid,
        sample=sample,
        scores=scores,
        settings=settings,
        prediction=text,
        response=step.response,
        passed=passed,
        duration=time.monotonic() - started,
        usage=step.usage,
    )
    item.user_properties.extend(omniact_properties(item.omniact_result))
    if not passed:
        raise OmniactFailed(failure_text(item, sample, scores, text, settings))
