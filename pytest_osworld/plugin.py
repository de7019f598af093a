"""The pytest plugin: options, collection, outcomes, JUnit properties and the summary."""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
import time
import warnings
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from _pytest.config import create_terminal_writer

from pytest_osworld import __version__, hookspecs
from pytest_osworld.agent import AGENTS
from pytest_osworld.collect import (
    TaskFailed,
    TaskFile,
    TaskItem,
    error_result,
    is_task_file,
    plain_failure,
    task_error_result,
)
from pytest_osworld.errors import AgentFailure, EnvironmentFailure, OSWorldError
from pytest_osworld.fixtures import (  # noqa: F401  (fixtures are found by name)
    NO_AGENT,
    osworld_agent,
    osworld_assets,
    osworld_context,
    osworld_env,
    osworld_provider,
    osworld_recorder,
    osworld_settings,
    osworld_task,
    recorder_for,
)
from pytest_osworld.host import host_name, worker_name
from pytest_osworld.omniact.collect import MARKER_LINE as OMNIACT_MARKER
from pytest_osworld.omniact.collect import OmniactFile, OmniactItem, omniact_file_for
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.report.summary import TaskRecord, summarize
from pytest_osworld.settings import SETTINGS_KEY, Settings, add_options, resolve
from pytest_osworld.task import load_task

DOMAINS = (
    "chrome",
    "gimp",
    "libreoffice_calc",
    "libreoffice_impress",
    "libreoffice_writer",
    "multi_apps",
    "os",
    "thunderbird",
    "vlc",
    "vs_code",
)
KNOWN_BROKEN_KEY = pytest.StashKey[dict[str, str]]()
#: The SIGTERM handler that was in place before ours (restored at unconfigure).
SIGTERM_KEY = pytest.StashKey[Any]()

#: result.json's reason for a task cut short by Ctrl-C or SIGTERM.
INTERRUPTED = "interrupted by {signal} after {steps}/{max_steps} steps; the steps so far are kept in {traj}"
#: result.json's reason for a task whose xdist worker died under it.
WORKER_CRASHED = (
    "{xdist}: the worker process died (killed, or out of memory); "
    "the {steps} step(s) it recorded are kept in {traj}"
)


#: result.json's reason for a task running on a worker when the controller was interrupted.
WORKER_INTERRUPTED = "interrupted: {xdist}; the {steps} step(s) it recorded are kept in {traj}"


class Terminated(KeyboardInterrupt):
    """pytest received SIGTERM: handled as Ctrl-C is, so the running task becomes an ERROR
    with its reason, fixtures are torn down (desktops stopped) and the summary is printed."""

    def __init__(self, signum: int) -> None:
        self.signal_name = signal.Signals(signum).name
        super().__init__(f"pytest received {self.signal_name}")


def _on_sigterm(signum: int, frame: Any) -> None:
    """Turn the first SIGTERM into :class:`Terminated`; a second one ends the process at once."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise Terminated(signum)


def _install_sigterm(config: pytest.Config) -> None:
    """Handle SIGTERM like Ctrl-C, unless someone else already handles it (or we cannot)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    config.stash[SIGTERM_KEY] = signal.signal(signal.SIGTERM, _on_sigterm)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put back the SIGTERM handler we replaced, if ours is still the one in place."""
    previous = config.stash.get(SIGTERM_KEY, None)
    if previous is None or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        signal.signal(signal.SIGTERM, previous)
    del config.stash[SIGTERM_KEY]


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Declare ``pytest_osworld_step`` and ``pytest_osworld_task_result``."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``osworld`` option group and its ini twins."""
    add_options(parser)


def load_known_broken(path: Path | None) -> dict[str, str]:
    """``<task id>: reason`` lines (``#`` comments allowed) -> {task id: reason}."""
    if path is None:
        return {}
    broken: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        task_id, sep, reason = text.partition(":")
        if not sep or not reason.strip():
            raise pytest.UsageError(f"{path}:{number}: expected '<task id>: reason', got {line!r}")
        broken[task_id.strip()] = reason.strip()
    return broken


def pytest_configure(config: pytest.Config) -> None:
    """Resolve the settings, register markers, and keep going past broken task files."""
    settings = resolve(config)
    workerinput = getattr(config, "workerinput", None)
    if workerinput and "osworld_results_dir" in workerinput:
        settings = _with_results_dir(settings, Path(workerinput["osworld_results_dir"]))
    config.stash[SETTINGS_KEY] = settings
    config.stash[KNOWN_BROKEN_KEY] = load_known_broken(settings.known_broken)
    if settings.agent and ":" not in settings.agent and settings.agent not in AGENTS:
        suggestion = AGENTS.suggest(settings.agent)
        hint = f"did you mean {suggestion!r}? " if suggestion else ""
        raise pytest.UsageError(
            f"--agent={settings.agent!r} ({settings.sources['agent']}): unknown agent; {hint}"
            f"available: {', '.join(AGENTS.names())}, or module:attr"
        )
    if settings.provider not in PROVIDERS:
        suggestion = PROVIDERS.suggest(settings.provider)
        hint = f"did you mean {suggestion!r}? " if suggestion else ""
        raise pytest.UsageError(
            f"--provider={settings.provider!r} ({settings.sources['provider']}): unknown provider; "
            f"{hint}available: {', '.join(PROVIDERS.names())}"
        )
    try:
        options = dict(settings.provider_args)
        options.pop("network", None)
        PROVIDERS.get(settings.provider).check_options(options)
    except ValueError as exc:
        raise pytest.UsageError(f"--provider-arg ({settings.sources['provider_args']}): {exc}") from None
    # A broken task file is a collection error for that file only: the run goes on.
    config.option.continue_on_collection_errors = True
    _install_sigterm(config)
    for line in (
        "osworld: an OSWorld task",
        "app(name): the task uses this app (from related_apps)",
        "snapshot(name): the task's snapshot label",
        "infeasible: the correct answer is FAIL",
        "proxy: the task asks for a proxy",
        OMNIACT_MARKER,
        "network: the task needs the live web (deselect with -m 'not network')",
        "gdrive: the task needs a Google Drive account",
        *(f"{domain}: OSWorld domain {domain}" for domain in DOMAINS),
    ):
        config.addinivalue_line("markers", line)
    if getattr(config, "workerinput", None) is None:
        config.pluginmanager.register(SummaryPlugin(settings), "osworld-summary")
        if config.option.verbose > 0 and not getattr(config.option, "numprocesses", None):
            config.pluginmanager.register(StepProgress(config), "osworld-progress")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(settings, config), "osworld-xdist")


def _with_results_dir(settings: Settings, results_dir: Path) -> Settings:
    from dataclasses import replace

    return replace(settings, results_dir=results_dir)


class _XdistHooks:
    """Hands the controller's results folder to every worker; on the controller, gives a
    task that a worker never finished (crashed, or the run was interrupted) an ERROR."""

    def __init__(self, settings: Settings, config: pytest.Config) -> None:
        self.settings = settings
        self.config = config
        #: On the controller: tasks a worker started and has not finished reporting.
        self.running: set[str] = set()
        #: True on an xdist controller that has started workers (not on a plain run).
        self.is_controller = False

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
        """Under xdist only the workers collect: the controller stops a run of tasks with no agent."""
        if self.settings.agent or self.config.option.collectonly:
            return
        if any(".json::" in nodeid for nodeid in ids):
            pytest.exit(
                NO_AGENT.format(names=", ".join(AGENTS.names())), returncode=pytest.ExitCode.USAGE_ERROR
            )


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
    return [f"pytest-osworld {__version__}", *settings.header_lines()]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Never collect inside the results folder."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if (
        settings is not None
        and collection_path == settings.results_dir.parent
        and collection_path.name == "results"
    ):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> TaskFile | OmniactFile | None:
    """Collect OSWorld (and OmniACT) task JSON files; other JSON files are left alone."""
    if file_path.suffix != ".json":
        return None
    omniact = omniact_file_for(file_path, parent)
    if omniact is not None:
        return omniact
    if not is_task_file(file_path, explicit=parent.session.isinitpath(file_path)):
        return None
    return TaskFile.from_parent(parent, path=file_path)


def _load_manifest(path: Path) -> set[tuple[str, str]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise pytest.UsageError(f"--manifest {path}: cannot read it: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise pytest.UsageError(f"--manifest {path}: expected an object of domain -> list of task ids")
    return {(str(domain), str(task_id)) for domain, ids in data.items() for task_id in ids}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Apply ``--manifest``, ``--skip-done`` and ``--known-broken``; demand an agent to run tasks."""
    settings = config.stash[SETTINGS_KEY]
    if settings.manifest is not None:
        wanted = _load_manifest(settings.manifest)
        keep, drop = [], []
        for item in items:
            if isinstance(item, TaskItem) and (item.task.domain, item.task.id) not in wanted:
                drop.append(item)
            else:
                keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    if settings.skip_done and settings.results_dir.is_dir():
        from pytest_osworld.report.resume import completed_tasks

        done = completed_tasks(
            settings.results_dir,
            action_space=settings.action_space,
            observation_type=settings.observation_type,
            model=settings.model,
        )
        finished = [i for i in items if isinstance(i, TaskItem) and (i.task.domain, i.task.id) in done]
        if finished:
            config.hook.pytest_deselected(items=finished)
            items[:] = [i for i in items if i not in finished]
    broken = config.stash[KNOWN_BROKEN_KEY]
    for item in items:
        if isinstance(item, TaskItem) and item.task.id in broken:
            item.add_marker(pytest.mark.xfail(reason=f"known broken: {broken[item.task.id]}", strict=True))
    tasks = [item for item in items if isinstance(item, TaskItem)]
    is_worker = getattr(config, "workerinput", None) is not None
    if tasks and not settings.agent and not config.option.collectonly and not is_worker:
        raise pytest.UsageError(NO_AGENT.format(names=", ".join(AGENTS.names())))


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
    data: dict[str, Any] = {
        "domain": item.task.domain,
        "task_id": item.task.id,
        "infeasible": item.task.infeasible,
    }
    if item.osworld_result is not None:
        data["score"] = item.osworld_result["score"]
        data["outcome"] = item.osworld_result["outcome"]
    report.osworld = data  # type: ignore[attr-defined]
    return report


def _omniact_report(
    item: OmniactItem, call: pytest.CallInfo[None], report: pytest.TestReport
) -> pytest.TestReport:
    """OmniACT items: an agent that broke is an ERROR; the summary counts them as domain omniact."""
    excinfo = call.excinfo
    if call.when == "call" and excinfo is not None and isinstance(excinfo.value, AgentFailure):
        report.when = "setup"
    data: dict[str, Any] = {"domain": "omniact", "task_id": item.task.id, "infeasible": False}
    if item.omniact_result is not None:
        data["score"] = item.omniact_result.get("action_score")
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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """A task cut short by Ctrl-C or SIGTERM is an ERROR with its reason, never absent.

    pytest reports nothing for the test it was running when interrupted; for a task we
    write its result.json and log an error report, so the terminal, JUnit and the
    summary count it.
    """
    try:
        return (yield)
    except KeyboardInterrupt as exc:
        if isinstance(item, TaskItem) and item.osworld_result is None:
            _report_interrupted(item, exc)
        raise


def _report_interrupted(item: TaskItem, exc: KeyboardInterrupt) -> None:
    """Write the ERROR result of an interrupted task and log its report."""
    settings = item.config.stash[SETTINGS_KEY]
    if isinstance(exc, Terminated):
        name = exc.signal_name
    elif getattr(item.config, "workerinput", None) is not None:
        name = "SIGINT (Ctrl-C, or the xdist controller stopping its workers)"
    else:
        name = "SIGINT (Ctrl-C)"
    recorder = item.osworld_recorder  # item.funcargs is gone by now
    steps = recorder.steps_written if recorder is not None else 0
    traj = recorder.traj if recorder is not None else "(the task had not started)"
    reason = INTERRUPTED.format(signal=name, steps=steps, max_steps=settings.max_steps, traj=traj)
    if recorder is not None:
        result = error_result(item, settings, reason, steps=steps)
        recorder.error(reason)
        recorder.finish(result)
        item.osworld_result = result.to_json()
    report = pytest.TestReport(
        nodeid=item.nodeid,
        location=item.location,
        keywords=dict.fromkeys(item.keywords, 1),
        outcome="failed",
        longrepr=plain_failure(reason, str(item.path)),
        when="setup",
        user_properties=list(item.user_properties),
    )
    report.osworld = {  # type: ignore[attr-defined]
        "domain": item.task.domain,
        "task_id": item.task.id,
        "infeasible": item.task.infeasible,
        "score": None,
        "outcome": "error",
    }
    item.ihook.pytest_runtest_logreport(report=report)
    # A teardown report closes the test case (JUnit writes its properties from it).
    closing = pytest.TestReport(
        nodeid=item.nodeid,
        location=item.location,
        keywords=dict.fromkeys(item.keywords, 1),
        outcome="passed",
        longrepr=None,
        when="teardown",
        user_properties=list(item.user_properties),
    )
    item.ihook.pytest_runtest_logreport(report=closing)


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
    ):
        item.user_properties.append((name, value))


class StepProgress:
    """With ``-v`` (and no xdist), one line per agent step while a task runs."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_osworld_step(self, item: pytest.Item, step: dict[str, Any]) -> None:
        """Print the step's number, actions and any error."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or not isinstance(item, TaskItem):
            return
        actions = "; ".join(
            a if isinstance(a, str) else json.dumps(a) for a in step.get("actions", [])
        ).replace("\n", " | ")
        problem = step.get("parse_error") or "; ".join(step.get("action_errors", []))
        line = f"    step {step['step_num']}/{item.config.stash[SETTINGS_KEY].max_steps}: {actions[:120]}"
        if problem:
            line += f"  [{problem[:80]}]"
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
        self.task_ids[report.nodeid] = str(data.get("task_id", report.nodeid))
        self.records[report.nodeid] = TaskRecord(
            nodeid=report.nodeid,
            domain=str(data["domain"]),
            outcome=outcome,
            score=float(score) if score is not None else (previous.score if previous else None),
            infeasible=bool(data["infeasible"]),
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
        """The final HTML report, once every task has finished."""
        if self.records:
            self._write_report()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print success rate and mean score overall, per category, domain and feasibility."""
        lines = summarize(self.records.values())
        if not lines:
            return
        terminalreporter.section("OSWorld summary")
        for line in lines:
            terminalreporter.line(line)
        if self.settings.repeat > 1:
            from pytest_osworld.report.stats import summarize_repeats

            trials = [
                (self.task_ids[nodeid], record.outcome == "passed")
                for nodeid, record in self.records.items()
                if record.outcome in ("passed", "failed", "error")
            ]
            if trials:
                terminalreporter.line(f"repeats ({self.settings.repeat} runs of each task):")
                for line in summarize_repeats(trials).lines():
                    terminalreporter.line(f"  {line}")
        terminalreporter.line(f"results: {self.settings.results_dir}")
        if self.report_path is not None:
            terminalreporter.line(f"report:  {self.report_path}")


def _outcome_of(report: pytest.TestReport) -> str | None:
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    if report.skipped:
        return "skipped"
    if report.failed:
        return "error" if report.when != "call" else "failed"
    if report.when == "call":
        return "passed"
    return None
