"""Evaluation of one finished episode: postconfig, the FAIL rules, getters and metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_osworld.agent.actions import Action
from pytest_osworld.errors import EvaluationError, GetterError, NeedsCapability, OSWorldError
from pytest_osworld.evaluators.combine import MetricOutcome, combine
from pytest_osworld.evaluators.getters import GETTERS
from pytest_osworld.evaluators.metrics import METRICS
from pytest_osworld.evaluators.score import as_score
from pytest_osworld.setup_steps import run_steps
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import GetterSpec, MetricSpec
from pytest_osworld.task.timings import TaskTimings


@dataclass
class Evaluation:
    """The score of an episode and how it was reached."""

    score: float
    outcomes: list[MetricOutcome] = field(default_factory=list)
    #: Set when a postconfig step or a getter failed and so decided the score.
    error: str | None = None
    #: The getter values handed to metrics, for ``--rescore`` (plain data or file paths).
    inputs: list[dict[str, Any]] = field(default_factory=list)

    def first_reason(self) -> str:
        """The reason of the first metric that did not score 1 (or the error)."""
        if self.error:
            return self.error
        for outcome in self.outcomes:
            if outcome.status != "not_evaluated" and (outcome.value or 0.0) < 1.0:
                return f"{outcome.func}: {outcome.reason}"
        return self.outcomes[0].reason if self.outcomes else ""


def describe_getter(spec: GetterSpec | None) -> str:
    """A short form such as ``vm_file(/home/user/sales.xlsx)``."""
    if spec is None:
        return ""
    config = spec.config
    arg = config.get("path") or config.get("command") or config.get("dest") or ""
    if spec.type == "rule":
        arg = "rules"
    return f"{spec.type}({arg})" if arg else spec.type


def evaluate(ctx: TaskContext, last_action: Action | None, timings: TaskTimings | None = None) -> Evaluation:
    """Score the episode whose last action is ``last_action`` in the environment of ``ctx``.

    With ``timings``, the postconfig steps go to the ``postconfig`` phase (their ``sleep``
    steps to ``setup_sleep``), the rest to ``evaluation``, with each getter and metric
    call in ``timings.getters`` and ``timings.metrics``.
    """
    spec = ctx.task.evaluator
    try:
        run_steps(ctx, spec.postconfig, phase="postconfig", timings=timings)
    except NeedsCapability:
        raise
    except OSWorldError as exc:
        return Evaluation(0.0, error=f"postconfig failed: {exc}")
    clocked = timings if timings is not None else TaskTimings()
    with clocked.phase("evaluation"):
        return _score(ctx, last_action, clocked)


def _score(ctx: TaskContext, last_action: Action | None, timings: TaskTimings) -> Evaluation:
    """The FAIL rules, then getters and metrics combined by ``conj``."""
    spec = ctx.task.evaluator
    said_fail = last_action is not None and last_action.kind == "FAIL"
    if spec.infeasible:
        return infeasible_evaluation(last_action)
    if said_fail:
        reason = "the agent said FAIL on a feasible task"
        outcomes = [MetricOutcome(m.func, "not_evaluated", None, reason) for m in spec.metrics]
        return Evaluation(0.0, outcomes)
    inputs: list[dict[str, Any]] = []
    getter_errors: list[str] = []

    def run_metric(index: int) -> MetricOutcome:
        metric = spec.metrics[index]
        outcome, recorded = _run_metric(ctx, metric, timings)
        inputs.append(recorded)
        if outcome.status == "error":
            getter_errors.append(outcome.reason)
        return outcome

    score, outcomes = combine(spec.conj, [m.func for m in spec.metrics], run_metric)
    evaluation = Evaluation(score, outcomes, inputs=inputs)
    if getter_errors and score < 1.0:
        evaluation.error = getter_errors[0]
    return evaluation


def infeasible_evaluation(last_action: Action | None) -> Evaluation:
    """The score of an infeasible task, which only the agent's last action decides: 1 for
    FAIL, else 0 (no getter or metric runs)."""
    said_fail = last_action is not None and last_action.kind == "FAIL"
    said = last_action.kind if last_action is not None else "nothing"
    value = 1.0 if said_fail else 0.0
    reason = (
        "the agent said FAIL on an infeasible task"
        if said_fail
        else (f"infeasible task: the agent's last action was {said}, not FAIL")
    )
    return Evaluation(value, [MetricOutcome("infeasible", "evaluated", value, reason)])


def _fetch(ctx: TaskContext, spec: GetterSpec | None, timings: TaskTimings) -> Any:
    if spec is None:
        return None
    getter = GETTERS.get(spec.type)
    started = timings.clock()
    try:
        return getter(ctx, spec.config)
    except (GetterError, NeedsCapability):
        raise
    except KeyError as exc:
        raise GetterError(f"{spec.type}: missing key {exc} at {spec.json_path}") from exc
    except (TypeError, ValueError) as exc:
        # A wrong type in the task's getter object (``"gives": "x"``, ``"dest": 5``, ...).
        raise GetterError(f"{spec.type}: bad value at {spec.json_path}: {type(exc).__name__}: {exc}") from exc
    except (OSWorldError, OSError) as exc:
        raise GetterError(f"{spec.type}: {exc}") from exc
    finally:
        timings.getters.append({"name": spec.type, "seconds": round(timings.clock() - started, 3)})


def _plain(value: Any, work_dir: Path) -> Any:
    """A getter value as plain JSON data (paths relative to the work folder)."""
    if isinstance(value, Path):
        try:
            return {"file": str(value.relative_to(work_dir))}
        except ValueError:
            return {"file": str(value)}
    if isinstance(value, list):
        return [_plain(v, work_dir) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, work_dir) for k, v in value.items()}
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return repr(value)


def _run_metric(
    ctx: TaskContext, metric: MetricSpec, timings: TaskTimings
) -> tuple[MetricOutcome, dict[str, Any]]:
    descs = describe_getter(metric.result), describe_getter(metric.expected)
    recorded: dict[str, Any] = {"func": metric.func, "options": metric.options}
    try:
        result = _fetch(ctx, metric.result, timings)
        expected = _fetch(ctx, metric.expected, timings)
    except GetterError as exc:
        return MetricOutcome(metric.func, "error", 0.0, str(exc), *descs), recorded
    recorded["result"] = _plain(result, ctx.work_dir)
    recorded["expected"] = _plain(expected, ctx.work_dir)
    started = timings.clock()
    outcome = score_metric(
        metric.func,
        result,
        expected,
        metric.options,
        has_expected=metric.expected is not None,
        descs=descs,
    )
    timings.metrics.append({"name": metric.func, "seconds": round(timings.clock() - started, 3)})
    return outcome, recorded


def score_metric(
    func: str,
    result: Any,
    expected: Any,
    options: dict[str, Any],
    has_expected: bool,
    descs: tuple[str, str] = ("", ""),
) -> MetricOutcome:
    """Call metric ``func`` on fetched values and wrap its verdict as an outcome."""
    metric = METRICS.get(func)
    if isinstance(result, Path):
        result = str(result)
    if isinstance(expected, Path):
        expected = str(expected)
    if isinstance(result, list):
        result = [str(r) if isinstance(r, Path) else r for r in result]
    if isinstance(expected, list):
        expected = [str(e) if isinstance(e, Path) else e for e in expected]
    try:
        raw = metric(result, expected, **options) if has_expected else metric(result, **options)
        score = as_score(raw, func)
    except EvaluationError as exc:
        return MetricOutcome(func, "error", 0.0, str(exc), *descs)
    except Exception as exc:
        return MetricOutcome(func, "error", 0.0, f"metric raised {type(exc).__name__}: {exc}", *descs)
    return MetricOutcome(func, "evaluated", score.value, score.reason, *descs)
