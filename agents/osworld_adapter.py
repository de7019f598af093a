"""Run an OSWorld-style agent object under pytest-osworld.

OSWorld's agents have ``reset(...)`` and ``predict(instruction, obs) -> (response,
actions)``, where ``obs`` is a dict with ``screenshot`` (PNG bytes),
``accessibility_tree`` (XML or None), ``terminal`` and ``instruction``, and ``actions``
is a list of pyautogui strings, computer_13 dicts or ``WAIT``/``DONE``/``FAIL``, or None
when the agent could not parse its model's answer. :class:`OSWorldAdapter` wraps such
an object into our :class:`~pytest_osworld.agent.contract.Agent` protocol; a None is a wasted
step with a ``parse_error``, not a crash.

A factory for ``--agent mypackage.mymodule:make_agent``::

    def make_agent(config: AgentConfig) -> OSWorldAdapter:
        inner = MyOSWorldAgent(model=config.model, action_space=config.action_space,
                               observation_type=config.observation_type)
        return OSWorldAdapter(inner)

OSWorld's own agents (``mm_agents`` in the ``desktop-env`` package) run unchanged with
``--agent=osworld:mm_agents.agent.PromptAgent --model=gpt-4o`` (``--agent-arg`` sets
their other constructor keywords), once ``scripts/osworld-agents`` has installed them:
:func:`osworld_factory` puts that install on ``sys.path``, builds the class from the
run's settings and wraps it in :class:`OSWorldAdapter`. Until the ``osworld:`` prefix is
wired into the ``osworld_agent`` fixture, ``--agent=pytest_osworld.agents.osworld_adapter:prompt_agent``
runs PromptAgent the same way.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pytest_osworld.agent.actions import Action, ActionParseError, action_from_json
from pytest_osworld.agent.computer13 import validate
from pytest_osworld.agent.contract import AgentConfig, AgentStep, Observation
from pytest_osworld.errors import AgentFailure
from pytest_osworld.task.model import Task

#: The parse_error of a step whose inner agent returned no action list.
NO_ACTIONS = "the agent returned no actions (it could not parse its model's answer)"


class OSWorldStyleAgent(Protocol):
    """What the adapter needs from the wrapped object."""

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """Forget the previous episode."""
        ...

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[Any, Any]:
        """Answer one observation with ``(response, actions)``."""
        ...


class OSWorldAdapter:
    """Our agent protocol over an OSWorld-style ``predict``/``reset`` object."""

    def __init__(self, inner: OSWorldStyleAgent) -> None:
        self.inner = inner

    def reset(self, task: Task) -> None:
        """Reset the inner agent (OSWorld agents take optional logger and VM arguments)."""
        self.inner.reset()

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """Call ``predict`` with OSWorld's observation dict and convert its actions."""
        obs = {
            "screenshot": observation.screenshot,
            "accessibility_tree": observation.accessibility_tree,
            "terminal": observation.terminal,
            "instruction": instruction,
        }
        response, raw_actions = self.inner.predict(instruction, obs)
        text = response if isinstance(response, str) else ("" if response is None else str(response))
        if raw_actions is None:
            return AgentStep([], response=text, parse_error=NO_ACTIONS)
        if not isinstance(raw_actions, list | tuple):
            raw_actions = [raw_actions]
        try:
            actions = [_convert(item) for item in raw_actions]
        except ActionParseError as exc:
            return AgentStep([], response=text, parse_error=str(exc))
        if not actions:
            return AgentStep([], response=text, parse_error=NO_ACTIONS)
        return AgentStep(actions, response=text)


def _convert(item: object) -> Action:
    action = action_from_json(item)
    if action.kind == "computer_13" and action.params is not None:
        validate(action.params)
    return action


#: The agent-name prefix of OSWorld's agents: ``--agent=osworld:mm_agents.agent.PromptAgent``.
OSWORLD_PREFIX = "osworld:"
#: The environment variable naming the folder ``scripts/osworld-agents`` installed into.
AGENTS_DIR_ENV = "PYTEST_OSWORLD_OSWORLD_AGENTS"
#: The error when an OSWorld agent class cannot be imported.
NOT_INSTALLED = (
    "cannot import OSWorld agent {spec!r} ({cause}); install OSWorld's agents with "
    "`python scripts/osworld-agents` (desktop-env without its heavy dependencies) or set "
    f"{AGENTS_DIR_ENV} to where they are"
)
#: Settings passed to an OSWorld agent's constructor, when it takes them.
_FROM_CONFIG = ("model", "action_space", "observation_type", "client_password")


def osworld_agents_dir() -> Path:
    """Where ``scripts/osworld-agents`` installs (``$PYTEST_OSWORLD_OSWORLD_AGENTS`` first)."""
    explicit = os.environ.get(AGENTS_DIR_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-osworld" / "osworld-agents"


def enable_osworld_agents(folder: Path | None = None) -> None:
    """Make the install importable: its ``site`` and ``stubs`` go at the END of ``sys.path``
    (installed packages win), and tiktoken finds its local ``cl100k_base``."""
    root = folder or osworld_agents_dir()
    for sub in ("site", "stubs"):
        path = str(root / sub)
        if (root / sub).is_dir() and path not in sys.path:
            sys.path.append(path)
    if (root / "tiktoken").is_dir():
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(root / "tiktoken"))


def load_osworld_class(spec: str) -> Any:
    """The class named by ``mm_agents.agent.PromptAgent`` (``osworld:`` prefix allowed)."""
    dotted = spec.removeprefix(OSWORLD_PREFIX)
    module_name, _, attr = dotted.rpartition(".")
    if not module_name or not attr:
        raise ValueError(f"OSWorld agent {spec!r} is not of the form 'package.module.Class'")
    enable_osworld_agents()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(NOT_INSTALLED.format(spec=spec, cause=f"{type(exc).__name__}: {exc}")) from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ImportError(NOT_INSTALLED.format(spec=spec, cause=f"{module_name} has no {attr!r}")) from None


def constructor_arguments(cls: Any, config: AgentConfig) -> dict[str, Any]:
    """The keywords for ``cls``: the run's settings it accepts, then ``--agent-arg`` values
    converted to the type of the parameter's default. An unknown ``--agent-arg`` raises
    ``ValueError`` listing the accepted ones."""
    params = inspect.signature(cls).parameters
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs: dict[str, Any] = {}
    for name in _FROM_CONFIG:
        value = getattr(config, name)
        if value is not None and (name in params or accepts_any):
            kwargs[name] = value
    for name, text in config.args.items():
        if name not in params and not accepts_any:
            known = ", ".join(n for n in params if n != "self")
            raise ValueError(f"--agent-arg {name}: {cls.__name__} takes no such keyword; it takes {known}")
        default = params[name].default if name in params else None
        kwargs[name] = _convert_arg(name, text, default)
    return kwargs


def _convert_arg(name: str, text: str, default: Any) -> Any:
    """``text`` as the type of ``default`` (bool, int, float), else the string."""
    try:
        if isinstance(default, bool):
            if text.lower() not in ("1", "0", "true", "false", "yes", "no"):
                raise ValueError(text)
            return text.lower() in ("1", "true", "yes")
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        kind = type(default).__name__
        raise ValueError(
            f"--agent-arg {name}={text!r}: expected {kind} like the default {default!r}"
        ) from None
    return text


#: The API key variable OSWorld's PromptAgent reads for a model name's prefix. It reads the key
#: only when it calls the model and swallows the KeyError, so without this check every step of
#: a run without its key would be a silent empty answer.
MODEL_KEYS = (
    ("gpt", "OPENAI_API_KEY"),
    ("claude", "ANTHROPIC_API_KEY"),
    ("mistral", "TOGETHER_API_KEY"),
    ("gemini", "GENAI_API_KEY"),
    ("llama3", "GROQ_API_KEY"),
    ("qwen", "DASHSCOPE_API_KEY"),
)


def check_model_key(model: str) -> None:
    """Raise :class:`AgentFailure` when the key OSWorld's agents need for ``model`` is unset."""
    for prefix, variable in MODEL_KEYS:
        if model.startswith(prefix) and not os.environ.get(variable):
            local = (
                "; for a local OpenAI-compatible server, set OPENAI_BASE_URL and any non-empty key"
                if prefix == "gpt"
                else ""
            )
            raise AgentFailure(
                f"{variable} is not set: OSWorld's agents send {model!r} to its provider's API "
                f"with that key{local}"
            )


def osworld_factory(spec: str) -> Callable[[AgentConfig], OSWorldAdapter]:
    """The agent factory for the OSWorld agent class named by ``spec``.

    The class is imported now, so a missing install is reported before any task runs.
    """
    cls = load_osworld_class(spec)

    def build(config: AgentConfig) -> OSWorldAdapter:
        kwargs = constructor_arguments(cls, config)
        check_model_key(str(kwargs.get("model") or ""))
        return OSWorldAdapter(cls(**kwargs))

    return build


def prompt_agent(config: AgentConfig) -> OSWorldAdapter:
    """OSWorld's ``mm_agents.agent.PromptAgent``, unchanged, as a pytest-osworld agent."""
    return osworld_factory("mm_agents.agent.PromptAgent")(config)
