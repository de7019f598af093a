"""Checks before any desktop starts: the agent, the provider's options, the results folder.

A mistake in what the user asked for is one ``pytest.UsageError`` for the whole run,
raised on the controller before a provider starts, never one ERROR per task after each
desktop restore. Every message names the value, where it came from (command line, ini,
default or an environment variable) and the fix; the templates are the constants below,
which tests match.

When it runs: the provider's options at configure; the agent and the results folder once
the tasks to run are known (after collection on a plain run; on the xdist controller when
the first worker has collected, before any worker runs a task). The agent is built then,
exactly as the tasks would build it, so a missing API key or a constructor that rejects
its arguments is found at once. A plain run hands that agent to the ``osworld_agent``
fixture; the xdist controller closes it and each worker builds its own.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import traceback
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.agent.contract import AGENTS, Agent, AgentConfig, AgentFactory
from pytest_osworld.errors import AgentFailure
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.task.settings import Settings

#: The agent contract, shown with every message about an agent that does not fit it.
AGENT_CONTRACT = """\
  An agent factory is called once per worker as factory(config), config being a
  pytest_osworld.agent.AgentConfig; what it returns needs reset(task) and
  act(instruction, observation) -> AgentStep (close() is optional). For example:

    from pytest_osworld.agent import Action, AgentConfig, AgentStep, Observation

    class {name}:
        def __init__(self, config: AgentConfig) -> None:
            self.config = config

        def reset(self, task) -> None:
            pass

        def act(self, instruction: str, observation: Observation) -> AgentStep:
            return AgentStep(actions=[Action(kind="DONE")])"""

#: Every agent message starts with the value and where it came from.
AGENT_PREFIX = "--agent={value!r} ({source}): "
AGENT_MALFORMED = (
    AGENT_PREFIX + "expected a registered agent or 'module:attr' (for example --agent=my_agents:MyAgent); "
    "registered agents: {names}"
)
AGENT_NO_MODULE = (
    AGENT_PREFIX + "no module named {module!r} can be imported from here ({cwd}).\n"
    "  Fix: install the package that provides it, or put its folder on the path: "
    "`pythonpath = <folder>` in the ini file, or PYTHONPATH=<folder>, or run `python -m pytest` "
    "from the folder that contains {file!r}."
)
AGENT_IMPORT_FAILED = (
    AGENT_PREFIX + "importing {module!r} failed: {error}\n"
    "  at {where}\n"
    "  Fix: the error is in that module (or a module it imports); `python -c 'import {module}'` shows it."
)
AGENT_NO_ATTR = (
    AGENT_PREFIX + "module {module!r} ({file}) has no attribute {attr!r}{hint}.\n"
    "  Fix: name a class or function defined there{example}."
)
AGENT_NOT_CALLABLE = (
    AGENT_PREFIX + "{attr!r} is {kind}, not a class or function that builds an agent.\n" + AGENT_CONTRACT
)
AGENT_BAD_SIGNATURE = (
    AGENT_PREFIX + "{attr}{signature} cannot be called with one AgentConfig ({error}).\n" + AGENT_CONTRACT
)
AGENT_MISSING_METHODS = AGENT_PREFIX + "{made} has no {missing}: it is not an agent.\n" + AGENT_CONTRACT
AGENT_REFUSED = AGENT_PREFIX + "the agent cannot start: {error}"
AGENT_CRASHED = (
    AGENT_PREFIX + "building the agent raised {kind}: {error}\n"
    "  at {where}\n"
    "  Fix: the error is in the agent's own constructor, which runs once per worker as factory(config)."
)

#: A ``--provider-arg`` the provider rejects.
PROVIDER_ARG_REJECTED = (
    "--provider-arg {args} ({source}): the {provider!r} provider rejects it: {error}.\n"
    "  Fix: correct or drop that --provider-arg; {where}"
)
#: ``network=`` is the one option every provider takes.
PROVIDER_NETWORK = (
    "--provider-arg network={value!r} ({source}): expected network=none (the default: no network "
    "inside the desktop) or network=shared (the host's network, for tasks that need the live web)"
)
#: An explicit ``network=`` that the provider would ignore (``Provider.network_modes``); its
#: ``network_instead`` says what sets the desktop's network there.
PROVIDER_NETWORK_IGNORED = (
    "--provider-arg network={value!r} ({source}): the {provider!r} provider would ignore it: "
    "network= sets the local desktop's network, not this provider's desktop's.\n"
    "  Fix: drop network={value}; {instead}"
)
#: Where each built-in provider's options are described.
PROVIDER_DOCS = {
    "local": "docs/desktop.md, section 'Options', lists the local provider's options",
    "vagrant": "docs/vagrant.md, section 'Options', lists the vagrant provider's options",
    "remote": "docs/scaling.md, section 'The remote provider', lists the remote provider's options",
}

#: ``--budgets`` on a provider whose desktops cannot be restored (``Provider.restorable``).
BUDGETS_NEED_RESTORE = (
    "--budgets={value} ({source}): the budgets are scored by replaying each episode's first steps "
    "on a freshly restored desktop, and {error}"
)
#: ``--budgets`` with ``--pause-on-fail``: the replays would replace the desktop the pause shows.
BUDGETS_WITH_PAUSE = (
    "--budgets={value} ({source}) cannot go with --pause-on-fail: a task's budget replays restore "
    "its desktop before the pause could show it as the episode left it; drop one of them"
)

#: The results folder cannot be written.
RESULTS_NOT_WRITABLE = (
    "{name}={value!r} ({source}): the results folder cannot be written: {problem}.\n"
    "  Fix: pass --results-dir=DIR (or osworld_results_dir in the ini file) naming a folder you can "
    "write, or start pytest from a writable folder (the default is ./results/<UTC time> there)."
)

#: The agent built by the check, waiting for the ``osworld_agent`` fixture (plain runs only).
PREBUILT_AGENT_KEY = pytest.StashKey[Agent]()


# -- the agent -------------------------------------------------------------------------------


def agent_config(settings: Settings) -> AgentConfig:
    """The :class:`AgentConfig` every agent factory of this run is called with."""
    return AgentConfig(
        name=settings.agent or "",
        model=settings.model,
        args=dict(settings.agent_args),
        observation_type=settings.observation_type,
        action_space=settings.action_space,
        client_password=PROVIDERS.get(settings.provider).client_password,
    )


def _where(exc: BaseException) -> str:
    """``file:line in function`` of the innermost frame of ``exc``'s traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    if not frames:
        return "(no traceback)"
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"


def _import_module(module: str, values: dict[str, str]) -> Any:
    """Import ``module``; a missing module or a failing import is a usage error."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            file = module.split(".")[0] + ".py"
            raise pytest.UsageError(
                AGENT_NO_MODULE.format(module=module, cwd=os.getcwd(), file=file, **values)
            ) from None
        error = f"{type(exc).__name__}: {exc}"
        raise pytest.UsageError(
            AGENT_IMPORT_FAILED.format(module=module, error=error, where=_where(exc), **values)
        ) from None
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        raise pytest.UsageError(
            AGENT_IMPORT_FAILED.format(module=module, error=error, where=_where(exc), **values)
        ) from None


def _resolve_spec(spec: str, values: dict[str, str]) -> object:
    """The object ``"module:attr"`` names, or a usage error saying why it cannot be had."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise pytest.UsageError(AGENT_MALFORMED.format(names=", ".join(AGENTS.names()), **values))
    module = _import_module(module_name, values)
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            candidates = sorted(
                name
                for name, value in vars(module).items()
                if not name.startswith("_")
                and callable(value)
                and getattr(value, "__module__", None) == module.__name__
            )
            close = difflib.get_close_matches(attr, candidates, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            example = f", such as --agent={module_name}:{(close or candidates)[0]}" if candidates else ""
            file = getattr(module, "__file__", None) or "built in"
            raise pytest.UsageError(
                AGENT_NO_ATTR.format(
                    module=module_name, file=file, attr=attr, hint=hint, example=example, **values
                )
            )
        obj = getattr(obj, part)
    return obj


def _missing_methods(obj: object) -> list[str]:
    return [f"{name}()" for name in ("reset", "act") if not callable(getattr(obj, name, None))]


#: ``--agent=osworld:mm_agents.agent.PromptAgent`` names an agent class of OSWorld's own code.
OSWORLD_AGENT_PREFIX = "osworld:"
AGENT_OSWORLD_MISSING = AGENT_PREFIX + "{error}. See docs/env.md, 'OSWorld's own agents under pytest'."


def _osworld_agent_factory(name: str, values: dict[str, str]) -> object:
    """The factory of an OSWorld ``mm_agents`` class, imported now so a missing install is
    one usage error before any desktop starts."""
    adapter = importlib.import_module("pytest_osworld.agents.osworld_adapter")  # agents/ is loaded lazily
    try:
        factory: object = adapter.osworld_factory(name)
        return factory
    except (ImportError, ValueError, AttributeError) as exc:
        raise pytest.UsageError(AGENT_OSWORLD_MISSING.format(error=exc, **values)) from None


def load_factory(settings: Settings) -> AgentFactory:
    """The agent factory of ``--agent``, checked against the contract without calling it."""
    name = settings.agent or ""
    values = {"value": name, "source": settings.sources.get("agent", "default")}
    entry = settings.agent
    factory: object
    if name.startswith(OSWORLD_AGENT_PREFIX):
        factory = _osworld_agent_factory(name, values)
        entry = name
    elif ":" not in name:
        try:
            factory = AGENTS.get(name)
        except (ImportError, AttributeError) as exc:
            # a registered "module:attr" entry that does not load (a third-party plugin's)
            raise pytest.UsageError(AGENT_REFUSED.format(error=exc, **values)) from None
    else:
        factory = _resolve_spec(name, values)
        entry = name.partition(":")[2]
    if not callable(factory):
        kind = f"{type(factory).__name__} {factory!r}"[:120]
        raise pytest.UsageError(
            AGENT_NOT_CALLABLE.format(attr=entry, kind=f"a {kind}", name="MyAgent", **values)
        )
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        signature = None  # a builtin or C callable: calling it will tell
    if signature is not None:
        try:
            signature.bind(AgentConfig(name=name))
        except TypeError as exc:
            raise pytest.UsageError(
                AGENT_BAD_SIGNATURE.format(
                    attr=entry, signature=signature, error=exc, name=_shown_name(factory), **values
                )
            ) from None
    if inspect.isclass(factory) and _missing_methods(factory):
        missing = " or ".join(_missing_methods(factory))
        made = f"class {factory.__name__}"
        raise pytest.UsageError(
            AGENT_MISSING_METHODS.format(made=made, missing=missing, name=factory.__name__, **values)
        )
    return factory


def _shown_name(factory: object) -> str:
    """The class name to use in the contract's example."""
    name = getattr(factory, "__name__", "")
    return name if inspect.isclass(factory) and name.isidentifier() else "MyAgent"


def build_agent(settings: Settings) -> Agent:
    """Build the agent of ``--agent``, or raise one ``pytest.UsageError`` that explains why not."""
    factory = load_factory(settings)
    values = {"value": settings.agent or "", "source": settings.sources.get("agent", "default")}
    try:
        agent = factory(agent_config(settings))
    except AgentFailure as exc:
        raise pytest.UsageError(AGENT_REFUSED.format(error=exc, **values)) from None
    except Exception as exc:
        raise pytest.UsageError(
            AGENT_CRASHED.format(kind=type(exc).__name__, error=exc, where=_where(exc), **values)
        ) from None
    missing = _missing_methods(agent)
    if missing:
        entry = (settings.agent or "").partition(":")[2] or settings.agent
        made = f"the {type(agent).__name__} that {entry} returned"
        raise pytest.UsageError(
            AGENT_MISSING_METHODS.format(made=made, missing=" or ".join(missing), name="MyAgent", **values)
        )
    return agent


def take_prebuilt_agent(config: pytest.Config) -> Agent | None:
    """The agent the check built on this process, handed over once (None if there is none)."""
    agent = config.stash.get(PREBUILT_AGENT_KEY, None)
    if agent is not None:
        del config.stash[PREBUILT_AGENT_KEY]
    return agent


def close_agent(agent: object) -> None:
    """Call the agent's optional ``close()``."""
    close = getattr(agent, "close", None)
    if callable(close):
        close()


# -- the provider's options ------------------------------------------------------------------


def provider_network(settings: Settings) -> tuple[dict[str, str], bool]:
    """The provider's own options (``network=`` taken out) and whether ``network=shared``
    was given. A ``network=`` other than ``none``/``shared``, or one the provider would
    ignore (not in its ``network_modes``), is a usage error; leaving it out never is."""
    source = settings.sources.get("provider_args", "default")
    options = dict(settings.provider_args)
    if "network" not in options:
        return options, False
    network = options.pop("network")
    if network not in ("none", "shared"):
        raise pytest.UsageError(PROVIDER_NETWORK.format(value=network, source=source))
    provider = PROVIDERS.get(settings.provider)
    if network not in provider.network_modes:
        honoured = ", ".join(f"network={mode}" for mode in provider.network_modes)
        instead = provider.network_instead or (
            f"the {settings.provider!r} provider honours {honoured or 'no network='}"
        )
        raise pytest.UsageError(
            PROVIDER_NETWORK_IGNORED.format(
                value=network, source=source, provider=settings.provider, instead=instead
            )
        )
    return options, network == "shared"


def check_provider_args(settings: Settings) -> None:
    """The provider's ``check_options`` and the shared ``network=`` option, as usage errors."""
    source = settings.sources.get("provider_args", "default")
    options, _ = provider_network(settings)
    try:
        PROVIDERS.get(settings.provider).check_options(options)
    except ValueError as exc:
        args = " ".join(f"{key}={value}" for key, value in options.items())
        where = PROVIDER_DOCS.get(
            settings.provider, f"the {settings.provider!r} provider's documentation lists its options"
        )
        raise pytest.UsageError(
            PROVIDER_ARG_REJECTED.format(
                args=args, source=source, provider=settings.provider, error=str(exc).rstrip("."), where=where
            )
        ) from None


def check_budgets(settings: Settings) -> None:
    """``--budgets`` needs a provider that restores its desktops (``Provider.check_restorable``),
    and cannot go with ``--pause-on-fail``; either is a usage error before any desktop starts."""
    if not settings.budgets:
        return
    values = {
        "value": ",".join(str(budget) for budget in settings.budgets),
        "source": settings.sources.get("budgets", "default"),
    }
    if settings.pause_on_fail:
        raise pytest.UsageError(BUDGETS_WITH_PAUSE.format(**values))
    options, _ = provider_network(settings)
    try:
        PROVIDERS.get(settings.provider).check_restorable(options)
    except ValueError as exc:
        raise pytest.UsageError(BUDGETS_NEED_RESTORE.format(error=exc, **values)) from None


# -- the results folder ----------------------------------------------------------------------


def check_results_dir(settings: Settings) -> None:
    """Create the results folder and write a file in it; a usage error if that fails."""
    path = settings.results_dir
    source = settings.sources.get("results_dir", "default")
    name = "--results-dir" if source != "default" else "results folder"
    if source == "default":
        source = "default: ./results/<UTC time> under the folder pytest was started from"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".osworld-write-check-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise pytest.UsageError(
            RESULTS_NOT_WRITABLE.format(name=name, value=str(path), source=source, problem=_problem(exc))
        ) from None


def _problem(exc: OSError) -> str:
    """An ``OSError`` as a short phrase naming the file it is about."""
    where = Path(exc.filename) if exc.filename else None
    if isinstance(exc, FileExistsError | NotADirectoryError) and where is not None:
        blocker = next((p for p in (where, *where.parents) if p.is_file()), where)
        return f"{blocker} is a file, not a folder"
    if isinstance(exc, PermissionError) and where is not None:
        return f"no permission to write in {where.parent if not where.exists() else where}"
    return f"{exc.strerror or exc}" + (f": {where}" if where is not None else "")


# -- the whole check -------------------------------------------------------------------------


def check_run(config: pytest.Config, settings: Settings, *, keep_agent: bool) -> None:
    """Check the agent and the results folder of a run that has tasks to run.

    With ``keep_agent`` (a plain run) the agent built here is kept for the
    ``osworld_agent`` fixture; otherwise (the xdist controller) it is closed again.
    """
    if settings.agent:
        agent = build_agent(settings)
        if keep_agent:
            config.stash[PREBUILT_AGENT_KEY] = agent
            config.add_cleanup(lambda: close_agent(take_prebuilt_agent(config)))
        else:
            close_agent(agent)
    check_results_dir(settings)
