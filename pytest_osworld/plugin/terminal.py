"""What the plugin prints: the report header, the live step lines, the summary, ``--rescore``.

This module owns everything written to the terminal: ``pytest_report_header`` (the active
settings), :class:`StepProgress` (one live line per agent step with ``-v``),
:class:`SummaryPlugin` (success rates at the end, where the results are, and the HTML
report it keeps up to date) and the ``--rescore`` command.
"""

from __future__ import annotations

import json
import re
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from _pytest.config import create_terminal_writer

from pytest_osworld import __version__
from pytest_osworld.plugin.collect import TaskItem
from pytest_osworld.report.omniact_figures import blocks_of
from pytest_osworld.report.omniact_predictions import FIGURES_NAME, write_predictions
from pytest_osworld.report.summary import SUMMARY_TITLE, TaskRecord, summary_lines, verdict_of
from pytest_osworld.task.settings import SETTINGS_KEY, Settings


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """``--rescore RESULTS``: re-run only the metrics on saved evaluator inputs, then exit."""
    path = config.getoption("rescore", None) or None
    if not path:
        return None
    from pytest_osworld.report.rescore import rescore

    folder = Path(path)
    if not folder.is_dir():
        raise pytest.UsageError(f"--rescore={path!r}: no such results folder")
    tasks = rescore(folder)
    writer = create_terminal_writer(config, sys.stdout)
    writer.line(f"re-scored {len(tasks)} task(s) in {folder} (originals untouched; see result.rescored.json)")
    for task in tasks:
        if task.changed or task.status != "rescored":
            old = "-" if task.old_score is None else f"{task.old_score:.2f}"
            new = "-" if task.new_score is None else f"{task.new_score:.2f}"
            writer.line(f"  {task.domain}/{task.task_id}: {task.status} {old} -> {new} {task.reason}")
    changed = sum(1 for task in tasks if task.changed)
    writer.line(f"{changed} score(s) changed")
    return 0


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Show the active settings."""
    settings = config.stash[SETTINGS_KEY]
    lines = [f"pytest-osworld {__version__}", *settings.header_lines()]
    if config.option.verbose > 0 and getattr(config.option, "numprocesses", None):
        lines.append(XDIST_STEP_NOTE.format(results=settings.results_dir))
    return lines


#: The live line of one step: number, action kind(s), the step's time, then what it did.
STEP_LINE = "    step {num}/{max_steps} ({kinds}, {seconds}): {actions}"
#: The same line when the actions say no more than their kind (DONE, FAIL, WAIT).
STEP_LINE_SHORT = "    step {num}/{max_steps} ({kinds}, {seconds})"
#: The report header's note under xdist, where workers' live lines cannot reach the terminal.
XDIST_STEP_NOTE = (
    "osworld: -v step lines are not shown under xdist (a worker's output stays on the worker); "
    "each task's steps are written as they happen to traj.jsonl under {results}"
)
_PYAUTOGUI_CALL = re.compile(r"\bpyautogui\.(\w+)\s*\(")


def action_kind(action: object) -> str:
    """A short name for one action as ``traj.jsonl`` writes it: ``click``, ``CLICK``, ``DONE``..."""
    if isinstance(action, dict):
        return str(action.get("action_type", "computer_13"))
    text = str(action).strip()
    if text in ("DONE", "FAIL", "WAIT"):
        return text
    calls = list(dict.fromkeys(_PYAUTOGUI_CALL.findall(text)))
    if not calls:
        return "code"
    return "+".join(calls[:3]) + ("+..." if len(calls) > 3 else "")


def _seconds(value: object) -> str:
    seconds = float(value) if isinstance(value, int | float) else 0.0
    return f"{seconds:.1f}s" if seconds < 100 else f"{seconds:.0f}s"


def step_line(step: dict[str, Any], max_steps: int) -> str:
    """The live line of one ``traj.jsonl`` step (see :data:`STEP_LINE`)."""
    actions = list(step.get("actions", []))
    kinds = list(dict.fromkeys(action_kind(a) for a in actions)) or ["no action"]
    shown = "; ".join(a if isinstance(a, str) else json.dumps(a) for a in actions).replace("\n", " | ")
    values = {
        "num": step.get("step_num", "?"),
        "max_steps": max_steps,
        "kinds": ", ".join(kinds),
        "seconds": _seconds(step.get("duration_s")),
        "actions": shown[:120],
    }
    only_kinds = all(isinstance(a, str) and a.strip() in ("DONE", "FAIL", "WAIT") for a in actions)
    line = (STEP_LINE_SHORT if only_kinds else STEP_LINE).format(**values)
    problem = step.get("parse_error") or "; ".join(step.get("action_errors", []))
    if problem:
        line += f"  [{str(problem)[:80]}]"
    return line


class StepProgress:
    """With ``-v`` (and no xdist), one live line per agent step while a task runs.

    Under xdist a worker's terminal output never reaches the controller's terminal, so
    there are no step lines; the report header says so (:data:`XDIST_STEP_NOTE`).
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_osworld_step(self, item: pytest.Item, step: dict[str, Any]) -> None:
        """Print the step's number, action kind, time, actions and any error."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or not isinstance(item, TaskItem):
            return
        line = step_line(step, item.config.stash[SETTINGS_KEY].max_steps)
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if capture is None:
            reporter.write_line(line)
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)


class SummaryPlugin:
    """Keeps each task's final outcome (on the xdist controller too) and prints the summary."""

    #: The HTML report is refreshed at most this often while tasks finish (seconds).
    REPORT_INTERVAL = 30.0

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.records: dict[str, TaskRecord] = {}
        self.task_ids: dict[str, str] = {}
        self.report_path: Path | None = None
        #: The OmniACT predictions and figures files written at the session's end.
        self.omniact_files: list[Path] = []
        self._last_report = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Record the outcome carried by a task's report."""
        data = getattr(report, "osworld", None)
        outcome = _outcome_of(report)
        if not isinstance(data, dict) or outcome is None:
            return
        previous = self.records.get(report.nodeid)
        if previous is not None and previous.outcome != "passed" and outcome == "passed":
            return
        score = data.get("score")
        omniact = data.get("omniact") if isinstance(data.get("omniact"), dict) else None
        self.task_ids[report.nodeid] = str(data.get("task_id", report.nodeid))
        self.records[report.nodeid] = TaskRecord(
            nodeid=report.nodeid,
            domain=str(data["domain"]),
            outcome=outcome,
            score=float(score) if score is not None else (previous.score if previous else None),
            infeasible=bool(data["infeasible"]),
            task_id=self.task_ids[report.nodeid],
            omniact=omniact if omniact is not None else (previous.omniact if previous else None),
            scores_at=data["scores_at"]
            if isinstance(data.get("scores_at"), dict)
            else (previous.scores_at if previous else None),
        )

        if report.when == "teardown" and time.monotonic() - self._last_report > self.REPORT_INTERVAL:
            self._write_report()

    def _write_report(self) -> None:
        """Write (or refresh) the static HTML report of the results folder."""
        self._last_report = time.monotonic()
        if not self.settings.results_dir.is_dir():
            return
        from pytest_osworld.report.html import write_report

        try:
            self.report_path = write_report(self.settings.results_dir)
        except OSError as exc:
            warnings.warn(f"osworld: could not write the HTML report: {exc}", stacklevel=1)

    def pytest_sessionfinish(self) -> None:
        """Once every task has finished (on the xdist controller, once every worker has): the
        OmniACT items' predictions and figures files, then the final HTML report."""
        if not self.records:
            return
        blocks = blocks_of(record.omniact for record in self.records.values())
        if blocks:
            try:
                self.omniact_files = write_predictions(self.settings.results_dir, blocks)
            except OSError as exc:
                warnings.warn(f"osworld: could not write the OmniACT predictions: {exc}", stacklevel=1)
        self._write_report()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print success rate and mean score overall, per category, domain and feasibility."""
        lines = summary_lines(self.records.values(), self.settings.repeat)
        if not lines:
            return
        terminalreporter.section(SUMMARY_TITLE)
        for line in lines:
            terminalreporter.line(line)
        terminalreporter.line(f"results: {self.settings.results_dir.resolve()}")
        for path in self.omniact_files:
            if path.name != FIGURES_NAME:
                terminalreporter.line(f"OmniACT predictions: {path.resolve()}")
        if self.report_path is not None:
            terminalreporter.line(f"report:  {self.report_path.resolve().as_uri()}")


def _outcome_of(report: pytest.TestReport) -> str | None:
    """The old name of :func:`~pytest_osworld.report.summary.verdict_of`."""
    return verdict_of(report)
