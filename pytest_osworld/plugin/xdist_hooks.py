"""The xdist side of the plugin: one results folder per run, and tasks no worker finished.

This module owns :class:`XdistHooks`, registered when pytest-xdist is present. On the
controller it hands every worker the run's results folder, checks the run once when the
first worker has collected (before any task starts), and after a crash or an interrupt
gives each task a worker never finished an ERROR with its result.json.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.agent.contract import AGENTS
from pytest_osworld.errors import OSWorldError
from pytest_osworld.plugin.collect import task_error_result
from pytest_osworld.plugin.fixtures import NO_AGENT, recorder_for
from pytest_osworld.plugin.preflight import check_run
from pytest_osworld.plugin.prepare import prepare_provider
from pytest_osworld.plugin.reachability import announce_no_network
from pytest_osworld.report.failure import plain_failure
from pytest_osworld.task.model import Task, load_task
from pytest_osworld.task.settings import Settings

#: result.json's reason for a task whose xdist worker died under it.
WORKER_CRASHED = (
    "{xdist}: the worker process died (killed, or out of memory); "
    "the {steps} step(s) it recorded are kept in {traj}"
)
#: result.json's reason for a task running on a worker when the controller was interrupted.
WORKER_INTERRUPTED = "interrupted: {xdist}; the {steps} step(s) it recorded are kept in {traj}"


def with_results_dir(settings: Settings, results_dir: Path) -> Settings:
    """``settings`` writing to ``results_dir`` (a worker takes its controller's folder)."""
    return replace(settings, results_dir=results_dir)


class XdistHooks:
    """Hands the controller's results folder to every worker; on the controller, gives a
    task that a worker never finished (crashed, or the run was interrupted) an ERROR."""

    def __init__(self, settings: Settings, config: pytest.Config) -> None:
        self.settings = settings
        self.config = config
        #: On the controller: tasks a worker started and has not finished reporting.
        self.running: set[str] = set()
        #: True on an xdist controller that has started workers (not on a plain run).
        self.is_controller = False
        #: True once the controller has checked the run (at the first worker's collection).
        self.checked = False

    def pytest_configure_node(self, node: Any) -> None:
        """Give the worker the controller's results folder (one run, one folder)."""
        node.workerinput["osworld_results_dir"] = str(self.settings.results_dir)
        self.is_controller = True

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        """A worker started ``nodeid``."""
        if self.is_controller:
            self.running.add(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """The last report of ``nodeid`` arrived (its teardown, or xdist's crash report)."""
        if self.is_controller and report.when in ("teardown", "???"):
            self.running.discard(report.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """After an interrupt, once xdist has stopped the workers: report the tasks whose
        reports never reached the controller, from the result.json their worker wrote,
        or as ERRORs whose result.json is written here."""
        if not self.is_controller or exitstatus != pytest.ExitCode.INTERRUPTED:
            return
        for nodeid in sorted(self.running):
            what = "the run was interrupted while a worker was running this task"
            data = self._record_lost(nodeid, what, WORKER_INTERRUPTED)
            if data is None:
                continue
            fspath = nodeid.split("::")[0]
            outcome = data["outcome"]
            report = pytest.TestReport(
                nodeid=nodeid,
                location=(fspath, None, fspath),
                keywords={},
                outcome="passed" if outcome == "passed" else "failed",
                longrepr=None if outcome == "passed" else plain_failure(data["reason"], fspath),
                # A failed non-call report is an ERROR for pytest, as for us.
                when="call" if outcome in ("passed", "failed", "eval_error") else "setup",
            )
            report.osworld = data  # type: ignore[attr-defined]
            self.config.hook.pytest_runtest_logreport(report=report)

    def _record_lost(self, nodeid: str, what: str, template: str) -> dict[str, Any] | None:
        """The result of a task whose worker did not report it: the result.json the worker
        wrote, else an ERROR written now; as the report data the summary reads (None for
        an item that is not a task)."""
        path, _, name = nodeid.partition("::")
        if not path.endswith(".json"):
            return None
        try:
            task = load_task(self.config.rootpath / path)
        except (OSWorldError, OSError):
            return None
        match = re.search(r"\[(\d+)\]$", name)
        repeat = int(match.group(1)) if match else 1
        recorder = recorder_for(self.settings, task, repeat=repeat, fresh=False)
        try:
            written = json.loads((recorder.dir / "result.json").read_text())
            outcome, reason, score = str(written["outcome"]), str(written["reason"]), written["score"]
        except (OSError, ValueError, KeyError, TypeError):
            steps = recorder.steps_written
            outcome, score = "error", None
            reason = template.format(xdist=what, steps=steps, traj=recorder.traj)
            result = task_error_result(task, nodeid, repeat, self.settings, reason, steps=steps)
            recorder.error(reason)
            recorder.finish(result)
        return {
            "domain": task.domain,
            "task_id": task.id,
            "infeasible": task.infeasible,
            "score": score,
            "outcome": outcome,
            "reason": reason,
        }

    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """A task whose worker died: write its ERROR result (keeping the steps it recorded)
        and give xdist's crash report the task's data, so the summary counts it."""
        data = self._record_lost(crashitem, str(report.longrepr), WORKER_CRASHED)
        if data is not None:
            report.osworld = data  # type: ignore[attr-defined]

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under xdist only the workers collect: once the first worker has, and before any
        runs a task, the controller checks the run (no agent, a bad agent, a results
        folder that cannot be written) and stops it with one message."""
        if self.checked or self.config.option.collectonly:
            return
        if not any(".json::" in nodeid for nodeid in ids):
            return
        self.checked = True
        if not self.settings.agent:
            pytest.exit(
                NO_AGENT.format(names=", ".join(AGENTS.names())), returncode=pytest.ExitCode.USAGE_ERROR
            )
        check_run(self.config, self.settings, keep_agent=False)
        announce_no_network(self.config, self.settings, self._tasks_of(ids))
        # Scheduling waits for this hook, so no worker starts a desktop before this returns.
        prepare_provider(self.config, self.settings)

    def _tasks_of(self, ids: list[str]) -> list[Task]:
        """The tasks behind a worker's collected node ids (each file once)."""
        tasks = []
        for path in dict.fromkeys(nodeid.split("::")[0] for nodeid in ids if ".json::" in nodeid):
            try:
                tasks.append(load_task(self.config.rootpath / path))
            except (OSWorldError, OSError):
                continue  # a broken file is its own collection error
        return tasks


#: The name this class had inside plugin.py.
_XdistHooks = XdistHooks
