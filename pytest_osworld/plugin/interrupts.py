"""Interrupted runs: SIGTERM handled as Ctrl-C is, and the task that was running kept.

This module owns the SIGTERM handler (installed at configure, put back at unconfigure)
and the ``pytest_runtest_protocol`` wrapper that turns the task pytest was running when
it was interrupted into an ERROR with its reason and its result.json, never an absence.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Generator
from typing import Any

import pytest

from pytest_osworld.plugin.collect import TaskItem, error_result
from pytest_osworld.report.failure import plain_failure
from pytest_osworld.task.settings import SETTINGS_KEY

#: The SIGTERM handler that was in place before ours (restored at unconfigure).
SIGTERM_KEY = pytest.StashKey[Any]()

#: result.json's reason for a task cut short by Ctrl-C or SIGTERM.
INTERRUPTED = "interrupted by {signal} after {steps}/{max_steps} steps; the steps so far are kept in {traj}"


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


def install_sigterm(config: pytest.Config) -> None:
    """Handle SIGTERM like Ctrl-C, unless someone else already handles it (or we cannot)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    config.stash[SIGTERM_KEY] = signal.signal(signal.SIGTERM, _on_sigterm)


def restore_sigterm(config: pytest.Config) -> None:
    """Put back the SIGTERM handler we replaced, if ours is still the one in place."""
    previous = config.stash.get(SIGTERM_KEY, None)
    if previous is None or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is _on_sigterm:
        signal.signal(signal.SIGTERM, previous)
    del config.stash[SIGTERM_KEY]


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
