"""Slow one-off work a provider does before its first desktop, done once by the controller
and said on the terminal.

On a fresh machine the first run builds the local desktop's home template (about a minute
on 2 cores) or a Vagrant box (minutes). Done by each worker's first provider start, that
time passed with nothing on screen after xdist's ``2 workers [66 items]``. Here the xdist
controller (once its first worker has collected, see
:mod:`~pytest_osworld.plugin.xdist_hooks`), or a plain run after collection and before its
first task (:func:`pytest_runtestloop`), asks the provider to prepare
(:meth:`~pytest_osworld.providers.base.Provider.prepare`): it says what it builds and how
long that took, and the workers then find it ready. A failure is said too and is not
fatal: each worker tries again and its tasks end as ERROR with the reason.
"""

from __future__ import annotations

import os

import pytest

from pytest_osworld.errors import OSWorldError
from pytest_osworld.omniact.collect import OmniactItem
from pytest_osworld.plugin.collect import TaskItem
from pytest_osworld.plugin.preflight import provider_network
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.task.settings import SETTINGS_KEY, Settings

#: Said when preparing failed; the run goes on.
PREPARE_FAILED = (
    "pytest-osworld: could not prepare the {provider!r} provider: {error}. Each worker tries "
    "again at its start; its tasks end as ERROR with the reason if that fails too"
)


def say_line(config: pytest.Config, line: str) -> None:
    """Write ``line`` on the terminal at once (the terminal reporter's, when there is one)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line(line, bold=True)
    else:
        config.get_terminal_writer().line(line)


def prepare_provider(config: pytest.Config, settings: Settings) -> None:
    """Have the run's provider prepare before any worker starts, saying what it does."""
    options, network = provider_network(settings)
    provider_config = ProviderConfig(
        worker_id="prepare",
        options=options,
        work_dir=os.path.join(str(settings.results_dir), ".providers", "prepare"),
        network=network,
    )
    try:
        PROVIDERS.get(settings.provider).prepare(
            provider_config, lambda message: say_line(config, f"pytest-osworld: {message}")
        )
    except OSWorldError as exc:
        say_line(config, PREPARE_FAILED.format(provider=settings.provider, error=exc))


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """In a plain run with tasks to run, prepare the provider before the first one. An xdist
    worker never prepares, and its controller has no items here: it prepares when its first
    worker has collected."""
    config = session.config
    if getattr(config, "workerinput", None) is not None or config.option.collectonly:
        return
    if any(isinstance(item, TaskItem | OmniactItem) for item in session.items):
        prepare_provider(config, config.stash[SETTINGS_KEY])
