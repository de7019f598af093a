"""The pytest plugin (the ``pytest11`` entry point): options, settings and markers.

This module owns the start of a run: the hookspecs, the ``osworld`` options, resolving and
checking the settings at configure, the markers, and which helper plugins are registered.
The other hooks live with their concern and are re-exported here, so pytest finds them on
this one plugin module:

- :mod:`~pytest_osworld.plugin.selection`: collection (task files, ``--manifest``, ``--skip-done``);
- :mod:`~pytest_osworld.plugin.preflight`: the usage errors checked before any desktop starts;
- :mod:`~pytest_osworld.plugin.outcomes`: each task's reports, result.json of broken tasks, JUnit identity;
- :mod:`~pytest_osworld.plugin.interrupts`: SIGTERM, and the task running when a run is interrupted;
- :mod:`~pytest_osworld.plugin.xdist_hooks`: the xdist controller (one results folder, lost tasks);
- :mod:`~pytest_osworld.plugin.prepare`: the provider's one-off preparation, said before the first task;
- :mod:`~pytest_osworld.plugin.terminal`: report header, live step lines, summary, ``--rescore``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_osworld.agent.contract import AGENTS
from pytest_osworld.live.session import LiveLinks, check_live, wants_live
from pytest_osworld.omniact.collect import MARKER_LINE as OMNIACT_MARKER
from pytest_osworld.plugin import hookspecs
from pytest_osworld.plugin.fixtures import (  # noqa: F401  (fixtures are found by name)
    NO_AGENT,
    TaskOrder,
    osworld_agent,
    osworld_assets,
    osworld_context,
    osworld_env,
    osworld_live,
    osworld_provider,
    osworld_recorder,
    osworld_settings,
    osworld_task,
    recorder_for,
)
from pytest_osworld.plugin.interrupts import (  # noqa: F401  (hooks and names re-exported)
    INTERRUPTED,
    SIGTERM_KEY,
    Terminated,
    _on_sigterm,
    _report_interrupted,
    install_sigterm,
    pytest_runtest_protocol,
    restore_sigterm,
)
from pytest_osworld.plugin.outcomes import (  # noqa: F401
    _omniact_report,
    _record_unscored,
    pytest_runtest_makereport,
    pytest_runtest_setup,
)
from pytest_osworld.plugin.preflight import check_budgets, check_provider_args
from pytest_osworld.plugin.prepare import pytest_runtestloop  # noqa: F401
from pytest_osworld.plugin.selection import (  # noqa: F401
    KNOWN_BROKEN_KEY,
    load_known_broken,
    load_manifest,
    pytest_collect_file,
    pytest_collection_modifyitems,
    pytest_ignore_collect,
    pytest_report_collectionfinish,
)
from pytest_osworld.plugin.settings import add_options, resolve
from pytest_osworld.plugin.terminal import (  # noqa: F401
    StepProgress,
    SummaryPlugin,
    _outcome_of,
    pytest_cmdline_main,
    pytest_report_header,
)
from pytest_osworld.plugin.xdist_hooks import (  # noqa: F401
    WORKER_CRASHED,
    WORKER_INTERRUPTED,
    XdistHooks,
    _XdistHooks,
    with_results_dir,
)
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.task.settings import SETTINGS_KEY, Settings
from pytest_osworld.task.solutions import SOLUTIONS_KEY, load_solutions

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
#: The markers the plugin registers (``pytest --markers`` lists them).
MARKERS = (
    "osworld: an OSWorld task",
    "app(name): the task uses this app (from related_apps)",
    "snapshot(name): the task's snapshot label",
    "infeasible: the correct answer is FAIL",
    "proxy: the task asks for a proxy",
    OMNIACT_MARKER,
    "network: the task needs the live web (deselect with -m 'not network')",
    "gdrive: the task needs a Google Drive account",
    *(f"{domain}: OSWorld domain {domain}" for domain in DOMAINS),
)

#: The old private names of two helpers that moved to :mod:`pytest_osworld.plugin.interrupts`.
_install_sigterm = install_sigterm


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Declare ``pytest_osworld_step`` and ``pytest_osworld_task_result``."""
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``osworld`` option group and its ini twins."""
    add_options(parser)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put back the SIGTERM handler we replaced, if ours is still the one in place."""
    restore_sigterm(config)


def pytest_configure(config: pytest.Config) -> None:
    """Resolve the settings, register markers, and keep going past broken task files."""
    settings = resolve(config)
    workerinput = getattr(config, "workerinput", None)
    if workerinput and "osworld_results_dir" in workerinput:
        settings = with_results_dir(settings, Path(workerinput["osworld_results_dir"]))
    config.stash[SETTINGS_KEY] = settings
    config.stash[KNOWN_BROKEN_KEY] = load_known_broken(settings.known_broken)
    config.stash[SOLUTIONS_KEY] = load_solutions(settings.solutions)
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
    check_provider_args(settings)
    check_budgets(settings)
    check_live(settings, config)
    # A broken task file is a collection error for that file only: the run goes on.
    config.option.continue_on_collection_errors = True
    install_sigterm(config)
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    if getattr(config, "workerinput", None) is None:
        config.pluginmanager.register(SummaryPlugin(settings), "osworld-summary")
        if config.option.verbose > 0 and not getattr(config.option, "numprocesses", None):
            config.pluginmanager.register(StepProgress(config), "osworld-progress")
    if wants_live(settings):
        config.pluginmanager.register(LiveLinks(config), "osworld-live")
    config.pluginmanager.register(TaskOrder(), "osworld-task-order")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistHooks(settings, config), "osworld-xdist")


def _with_results_dir(settings: Settings, results_dir: Path) -> Settings:
    """The old private name of :func:`~pytest_osworld.plugin.xdist_hooks.with_results_dir`."""
    return with_results_dir(settings, results_dir)
