"""Outcomes: each task's pytest reports carry its OSWorld data, and its JUnit identity.

This module owns ``pytest_runtest_makereport`` (a broken environment or agent is an
ERROR, never a FAIL; every report of a task carries plain data the summary reads, on the
xdist controller too; a task that broke or was skipped still gets its result.json) and
``pytest_runtest_setup`` (the task's identity as JUnit properties before anything can fail).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_osworld import __version__
from pytest_osworld.errors import AgentFailure, EnvironmentFailure, OSWorldError
from pytest_osworld.omniact.collect import OmniactItem
from pytest_osworld.plugin.collect import TaskFailed, TaskItem, error_result
from pytest_osworld.plugin.ran_on import host_name, worker_name
from pytest_osworld.report.budget_figures import summary_scores
from pytest_osworld.report.failure import plain_failure
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.report.summary import result_verdict, verdict_of
from pytest_osworld.task.settings import SETTINGS_KEY


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Mark each task's reports with plain OSWorld data; a broken environment is an ERROR."""
    report = yield
    if isinstance(item, OmniactItem):
        return _omniact_report(item, call, report)
    if not isinstance(item, TaskItem):
        return report
    excinfo = call.excinfo
    if excinfo is not None and report.failed and isinstance(excinfo.value, OSWorldError | TaskFailed):
        report.longrepr = plain_failure(str(excinfo.value), str(item.path))
    if (
        call.when == "call"
        and excinfo is not None
        and isinstance(excinfo.value, EnvironmentFailure | AgentFailure)
    ):
        # The episode ran in the call phase, but the environment (or the agent's API)
        # broke: that is an ERROR, never a FAIL. pytest counts failed non-call reports
        # as errors, in the terminal, in JUnit and under xdist alike.
        report.when = "setup"
    if item.osworld_result is None and (report.failed or report.skipped) and call.when != "teardown":
        _record_unscored(item, report, excinfo)
    _keep_verdict(item, verdict_of(report))
    data: dict[str, Any] = {
        "domain": item.task.domain,
        "task_id": item.task.id,
        "infeasible": item.task.infeasible,
    }
    if item.osworld_result is not None:
        data["score"] = item.osworld_result["score"]
        data["outcome"] = item.osworld_result["outcome"]
        if isinstance(item.osworld_result.get("scores_at"), dict):
            data["scores_at"] = summary_scores(item.osworld_result["scores_at"])
    report.osworld = data  # type: ignore[attr-defined]
    return report


def _keep_verdict(item: TaskItem, verdict: str | None) -> None:
    """Add ``pytest_outcome`` to the task's result.json when pytest's verdict is not the one
    its outcome stands for (an xfail, a strict xpass, an error in teardown), so the summary
    made from results folders (``pytest-osworld merge``) counts what the terminal counted."""
    result = item.osworld_result
    if verdict is None or result is None:
        return
    current = result_verdict(result)
    if verdict == current or (verdict == "passed" and "pytest_outcome" in result):
        return  # the same summary rule: a later pass never hides an earlier problem
    result["pytest_outcome"] = verdict
    if item.osworld_recorder is not None:
        item.osworld_recorder.annotate({"pytest_outcome": verdict})


def _omniact_report(
    item: OmniactItem, call: pytest.CallInfo[None], report: pytest.TestReport
) -> pytest.TestReport:
    """OmniACT items: an agent that broke is an ERROR; the summary counts them as domain
    omniact, and reads both scorings' figures and the prediction from ``omniact`` (plain
    data, so that they reach the xdist controller)."""
    excinfo = call.excinfo
    if call.when == "call" and excinfo is not None and isinstance(excinfo.value, AgentFailure):
        report.when = "setup"
    data: dict[str, Any] = {"domain": "omniact", "task_id": item.task.id, "infeasible": False}
    if item.omniact_result is not None:
        data["score"] = item.omniact_result.get("score")
        data["omniact"] = item.omniact_result.get("omniact")
    report.osworld = data  # type: ignore[attr-defined]
    return report


def _record_unscored(item: TaskItem, report: pytest.TestReport, excinfo: Any) -> None:
    """Write result.json for a task that broke or was skipped, so nothing is silently absent."""
    recorder = item.funcargs.get("osworld_recorder") if hasattr(item, "funcargs") else None
    if not isinstance(recorder, TaskRecorder):
        return
    settings = item.config.stash[SETTINGS_KEY]
    if report.skipped:
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else "skipped"
        result = error_result(item, settings, reason)
        result.outcome = "skipped"
    else:
        reason = str(excinfo.value) if excinfo is not None else "error"
        result = error_result(item, settings, reason, steps=recorder.steps_written)
        recorder.error(reason)
    recorder.finish(result)
    item.osworld_result = result.to_json()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Put the task's identity into the JUnit properties before anything can fail."""
    if not isinstance(item, TaskItem):
        return
    settings = item.config.stash[SETTINGS_KEY]
    for name, value in (
        ("benchmark", "osworld"),
        ("domain", item.task.domain),
        ("task_id", item.task.id),
        ("agent", settings.agent or ""),
        ("model", settings.model or ""),
        ("provider", settings.provider),
        ("max_steps", settings.max_steps),
        ("task_sha256", item.task.sha256),
        ("plugin_version", __version__),
        ("host", host_name()),
        ("worker", worker_name()),
        *([("shard", settings.shard_label)] if settings.shard else []),
    ):
        item.user_properties.append((name, value))
