"""The public fixtures of pytest-osworld. Each can be overridden in a conftest.py.

=====================  ========  =======================================================
fixture                scope     what it gives
=====================  ========  =======================================================
``osworld_settings``   session   the resolved :class:`~pytest_osworld.plugin.settings.Settings`
``osworld_assets``     session   the :class:`~pytest_osworld.task.assets.AssetCache`
``osworld_provider``   session   this worker's started provider (one environment)
``osworld_agent``      session   the agent chosen with ``--agent`` (reset per task)
``osworld_live``       session   this worker's live view, or None (``--live``)
``osworld_task``       function  the :class:`~pytest_osworld.task.model.Task` of the item
``osworld_recorder``   function  the task's results folder writer
``osworld_env``        function  the environment restored to its snapshot
``osworld_context``    function  the environment after the task's setup steps
=====================  ========  =======================================================
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from pytest_osworld.agent.contract import AGENTS, Agent
from pytest_osworld.errors import EnvironmentFailure, NeedsCapability
from pytest_osworld.live.session import LIVE_KEY, LiveView, wants_live
from pytest_osworld.plugin.preflight import build_agent, close_agent, provider_network, take_prebuilt_agent
from pytest_osworld.plugin.task_runs import start_run, task_run
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.assets import check_assets_available as check_assets_available  # re-exported
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Task
from pytest_osworld.task.settings import SETTINGS_KEY, Settings

NO_AGENT = "no agent chosen: OSWorld tasks need --agent NAME (or module:attr). Available agents: {names}"


def worker_id(config: pytest.Config) -> str:
    """The xdist worker id (``gw0``...) or ``main`` without xdist."""
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput else "main"


@pytest.fixture(scope="session")
def osworld_settings(pytestconfig: pytest.Config) -> Settings:
    """The run's resolved settings (options and ini values)."""
    return pytestconfig.stash[SETTINGS_KEY]


@pytest.fixture(scope="session")
def osworld_assets(osworld_settings: Settings) -> AssetCache:
    """The asset cache every download and gold file goes through."""
    return AssetCache(osworld_settings.asset_cache, offline=osworld_settings.offline)


@pytest.fixture(scope="session")
def osworld_provider(pytestconfig: pytest.Config, osworld_settings: Settings) -> Iterator[Provider]:
    """This worker's provider, started once per session and stopped at the end."""
    factory = PROVIDERS.get(osworld_settings.provider)
    work_dir = os.path.join(str(osworld_settings.results_dir), ".providers", worker_id(pytestconfig))
    options, network = provider_network(osworld_settings)
    config = ProviderConfig(
        worker_id=worker_id(pytestconfig),
        options=options,
        work_dir=work_dir,
        network=network,
    )
    provider = factory(config)
    provider.start()
    try:
        yield provider
    finally:
        try:
            provider.stop()
        except EnvironmentFailure as exc:
            pytestconfig.get_terminal_writer().line(f"osworld: stopping the provider failed: {exc}")


@pytest.fixture(scope="session")
def osworld_agent(pytestconfig: pytest.Config, osworld_settings: Settings) -> Iterator[Agent]:
    """The agent of ``--agent``, built once per worker; ``run_episode`` resets it per task.

    A plain run reuses the agent the run's check built before collection ended
    (:mod:`pytest_osworld.plugin.preflight`); a bad agent is a usage error, never a task's ERROR.
    """
    if not osworld_settings.agent:
        raise pytest.UsageError(NO_AGENT.format(names=", ".join(AGENTS.names())))
    agent = take_prebuilt_agent(pytestconfig)
    if agent is None:
        agent = build_agent(osworld_settings)
    yield agent
    close_agent(agent)


@pytest.fixture(scope="session")
def osworld_live(pytestconfig: pytest.Config, osworld_settings: Settings) -> Iterator[LiveView | None]:
    """This worker's live view (``--live``, ``--pause-on-fail``, ``--agent=human``), or None.

    Its link goes to the terminal with the worker's first task (never to the results)."""
    if not wants_live(osworld_settings):
        yield None
        return
    live = LiveView(worker_id(pytestconfig))
    pytestconfig.stash[LIVE_KEY] = live
    try:
        yield live
    finally:
        pytestconfig.stash[LIVE_KEY] = None
        live.close()


@pytest.fixture
def osworld_task(request: pytest.FixtureRequest) -> Task:
    """The task of the current item."""
    task = getattr(request.node, "task", None)
    if not isinstance(task, Task):
        raise pytest.UsageError("osworld_task is only available to OSWorld task items")
    return task


def recorder_for(settings: Settings, task: Task, repeat: int = 1, fresh: bool = True) -> TaskRecorder:
    """The results folder writer of ``task`` in this run (``fresh=False`` keeps its contents)."""
    return TaskRecorder(
        settings.results_dir,
        settings.action_space,
        settings.observation_type,
        settings.model or settings.agent or "agent",
        task.domain,
        task.id,
        repeat=repeat,
        fresh=fresh,
    )


@pytest.fixture
def osworld_recorder(
    request: pytest.FixtureRequest, osworld_settings: Settings, osworld_task: Task
) -> TaskRecorder:
    """The results folder of this task, in OSWorld's layout."""
    from pytest_osworld.plugin.collect import TaskItem

    recorder = recorder_for(osworld_settings, osworld_task, repeat=getattr(request.node, "repeat", 1))
    if isinstance(request.node, TaskItem):
        request.node.osworld_recorder = recorder
    return recorder


class TaskOrder:
    """Tells each task whether another task runs after it in this process, from pytest's
    ``nextitem`` (under xdist a worker knows its next item, or that none is left, before it
    runs one): :func:`osworld_env` lets the provider skip preparing a restore nobody asks for."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """Set ``item.osworld_task_follows``; the protocol itself is pytest's."""
        from pytest_osworld.plugin.collect import TaskItem

        if isinstance(item, TaskItem):
            item.osworld_task_follows = isinstance(nextitem, TaskItem)


@pytest.fixture
def osworld_env(
    request: pytest.FixtureRequest,
    osworld_provider: Provider,
    osworld_task: Task,
    osworld_assets: AssetCache,
    osworld_live: LiveView | None,
) -> Environment:
    """The environment restored to the task's snapshot and ready (an ERROR if it breaks);
    with a live view, the view shows it from now on. The task's clock starts here
    (:meth:`~pytest_osworld.episode.task_run.TaskRun.restore`)."""
    run = start_run(request.node, osworld_task, osworld_provider, osworld_assets)
    # With --budgets, the task's own replays restore the desktop again after its episode.
    budgets = SETTINGS_KEY in request.config.stash and bool(request.config.stash[SETTINGS_KEY].budgets)
    follows = getattr(request.node, "osworld_task_follows", True) or budgets
    try:
        environment = run.restore(more_restores=follows)
    except NeedsCapability as exc:
        pytest.skip(str(exc))
    if osworld_live is not None:
        osworld_live.attach(environment, f"{osworld_task.nodename}: {osworld_task.instruction}")
    return environment


@pytest.fixture
def osworld_context(
    request: pytest.FixtureRequest,
    osworld_provider: Provider,
    osworld_env: Environment,
    osworld_task: Task,
    osworld_assets: AssetCache,
    osworld_recorder: TaskRecorder,
) -> TaskContext:
    """The environment after the task's ``config`` setup steps have run and the programs
    they started have settled (:meth:`~pytest_osworld.episode.task_run.TaskRun.set_up`)."""
    run = task_run(request.node, osworld_task, osworld_provider, osworld_assets)
    run.recorder = osworld_recorder
    try:
        return run.set_up(osworld_env)
    except NeedsCapability as exc:
        pytest.skip(str(exc))
