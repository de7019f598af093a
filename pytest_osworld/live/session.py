"""The live view in a pytest run: one :class:`LiveView` per worker, its link in the terminal.

A worker's view follows its desktop across restores (:meth:`LiveView.attach`). It starts
view-only at every task: the desktop's VNC server ignores input until the person takes
over (:meth:`LiveView.take_over`, the page's button or ``t`` at a pause), which turns
x11vnc's view-only mode off inside the desktop and is written to the task's result.json
(``person_took_over``), so a score a person helped with is never mistaken for the agent's.

The link, which holds the secret, reaches the terminal through the task's setup report
(:data:`LINK_ATTR`), so an xdist controller prints the links of its workers as they come;
it is never a JUnit property or section, and never written to the results folder.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Generator
from typing import Any

import pytest

from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.base import Environment
from pytest_osworld.report.html import LIVE_NAME
from pytest_osworld.task.settings import SETTINGS_KEY, Settings
from pytest_osworld.task.solutions import load_solutions

#: The attribute of a setup report that carries ``{"worker", "url"}`` to the terminal.
LINK_ATTR = "osworld_live"
#: The stash key of the worker's live view (None without one), for hooks.
LIVE_KEY = pytest.StashKey["LiveView | None"]()
#: The agent a person plays through the live view.
HUMAN_AGENT = "human"


def wants_live(settings: Settings) -> bool:
    """Whether the run's desktops need a live view: ``--live``, ``--pause-on-fail`` or a person."""
    return settings.live or settings.pause_on_fail or settings.agent == HUMAN_AGENT


def check_live(settings: Settings, config: pytest.Config) -> None:
    """Usage errors of the live options, before anything starts."""
    if settings.record_solutions is not None and settings.agent != HUMAN_AGENT:
        raise pytest.UsageError(
            f"--record-solutions {settings.record_solutions}: only --agent=human records solutions "
            "(other agents' trajectories are in traj.jsonl)"
        )
    if settings.record_solutions is not None and settings.record_solutions.exists():
        # a usage error unless the file is a solutions file already
        load_solutions(settings.record_solutions, "--record-solutions")
    if settings.pause_on_fail and (getattr(config.option, "numprocesses", None) or 0):
        raise pytest.UsageError(
            "--pause-on-fail waits for Enter in this terminal, which xdist's workers cannot read: "
            "run without -n (one desktop), or use --live to watch a parallel run"
        )
    if not wants_live(settings):
        return
    what = "--live" if settings.live else "--pause-on-fail" if settings.pause_on_fail else "--agent=human"
    try:
        PROVIDERS.get(settings.provider).check_live_view(settings.provider_args)
    except ValueError as exc:
        raise pytest.UsageError(f"{what}: {exc}") from None
    if importlib.util.find_spec("websockets") is None:
        raise pytest.UsageError(f"{what} needs the websockets package: pip install 'pytest-osworld[live]'")
    from pytest_osworld.live.server import NOVNC_DIR

    if not (NOVNC_DIR / "vnc.html").is_file():
        raise pytest.UsageError(f"{what} needs noVNC: apt-get install novnc (scripts/install.sh does)")


class LiveView:
    """One worker's live view: the server, the desktop it shows, and taking over."""

    def __init__(self, worker: str) -> None:
        from pytest_osworld.live.server import LiveServer

        self.worker = worker
        self._environment: Environment | None = None
        #: Whether the person took over the current task's desktop.
        self.taken_over = False
        self.server = LiveServer(worker)
        self.server.on_take_over = self.take_over
        self.server.start()

    @property
    def url(self) -> str:
        """The link with its secret (terminal only)."""
        return self.server.url

    def attach(self, environment: Environment, task: str) -> None:
        """Show ``environment``'s desktop (just restored for ``task``), view-only."""
        self._environment = environment
        self.taken_over = False
        self.server.connect_vnc = environment.guest.open_vnc
        self.server.update(task=task, mode="view", verdicts=False, take_over=True, problem=None)

    def take_over(self) -> None:
        """Let the person's input reach the desktop (its VNC server leaves view-only mode)."""
        environment = self._environment
        if environment is None or self.server.mode == "control":
            return
        environment.guest.allow_vnc_input()
        self.taken_over = True
        self.server.update(mode="control")

    def close(self) -> None:
        """Stop the server."""
        self.server.close()


def attach_link(item: pytest.Item, report: pytest.TestReport, printed: set[str]) -> None:
    """Put the worker's link on its first setup report (the only way to an xdist controller)."""
    live = item.config.stash.get(LIVE_KEY, None)
    if live is None or report.when != "setup" or live.worker in printed:
        return
    printed.add(live.worker)
    setattr(report, LINK_ATTR, {"worker": live.worker, "url": live.url})


def link_line(report: Any) -> str | None:
    """The terminal line for a report that carries a worker's link, else None."""
    data = getattr(report, LINK_ATTR, None)
    if not isinstance(data, dict):
        return None
    return f"osworld: live view of {data['worker']}: {data['url']}"


class LiveLinks:
    """Hooks of a run with live views: each worker's link, once, in this terminal."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._attached: set[str] = set()
        self._printed: set[str] = set()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Put this worker's link on its first setup report."""
        report = yield
        attach_link(item, report, self._attached)
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Print a worker's link the first time a report brings it (not on xdist workers)."""
        if getattr(self.config, "workerinput", None) is not None:
            return
        line = link_line(report)
        if line is None or line in self._printed:
            return
        self._printed.add(line)
        self._list_in_report(getattr(report, LINK_ATTR))
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if reporter is None:
            return
        if capture is None:
            reporter.write_line(line)
            return
        with capture.global_and_fixture_disabled():
            reporter.ensure_newline()
            reporter.write_line(line)

    def _list_in_report(self, link: dict[str, str]) -> None:
        """Add the worker's address, without its secret, to the results' ``live.json``."""
        results = self.config.stash[SETTINGS_KEY].results_dir
        path = results / LIVE_NAME
        try:
            views = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except (OSError, ValueError):
            views = {}
        views[link["worker"]] = link["url"].split("?", 1)[0]
        results.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(views, indent=1) + "\n", encoding="utf-8")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        """The run is over and its views are gone: the report no longer lists them."""
        if getattr(self.config, "workerinput", None) is None:
            (self.config.stash[SETTINGS_KEY].results_dir / LIVE_NAME).unlink(missing_ok=True)
