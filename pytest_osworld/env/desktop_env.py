"""``DesktopEnv``: a drop-in for OSWorld's class, on our providers and our evaluators.

An OSWorld run script changes one line::

    from pytest_osworld.env import DesktopEnv   # was: from desktop_env.desktop_env import DesktopEnv

and keeps its constructor call, ``reset(task_config=...)``, ``step(action, pause)``,
``evaluate()``, ``render()``, ``close()`` and the ``env.controller`` calls listed in
:data:`~pytest_osworld.env.controller.CONTROLLER_METHODS`. ``provider_name`` names one of
our providers (``local`` by default, ``vagrant``, ``remote``); their options go in
``provider_options`` (for ``remote``, ``path_to_vm`` is the guest URL). Differences from
OSWorld are listed in docs/env.md.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_osworld.agent.actions import Action, ActionParseError, action_from_json
from pytest_osworld.env.controller import Controller
from pytest_osworld.env.engine import EngineConfig, EnvError, EpisodeEngine, load_task_config
from pytest_osworld.evaluators.evaluate import Evaluation
from pytest_osworld.task.model import Task

#: The action spaces ``step`` understands (OSWorld's two executable ones).
ACTION_SPACES = ("computer_13", "pyautogui", "claude_computer_use")
#: OSWorld's cloud providers, which have no counterpart here.
UNSUPPORTED_PROVIDERS = ("vmware", "virtualbox", "docker", "aws", "azure", "gcp", "aliyun", "volcengine")
#: The error for a provider name we do not have.
NO_SUCH_PROVIDER = (
    "provider_name={name!r} is OSWorld's; pytest-osworld runs its tasks on 'local' (this machine, "
    "the default), 'vagrant' or 'remote' (path_to_vm='http://host:port' of a guest server)"
)
#: Numbers the DesktopEnvs of a process, so each has a worker id of its own.
_INSTANCES = itertools.count(1)


class DesktopEnv:
    """OSWorld's ``DesktopEnv`` surface over :class:`~pytest_osworld.env.engine.EpisodeEngine`."""

    def __init__(
        self,
        provider_name: str = "local",
        region: str | None = None,
        path_to_vm: str | None = None,
        snapshot_name: str = "init_state",
        action_space: str = "computer_13",
        cache_dir: str = "cache",
        screen_size: tuple[int, int] = (1920, 1080),
        headless: bool = True,
        require_a11y_tree: bool = True,
        require_terminal: bool = False,
        os_type: str = "Ubuntu",
        enable_proxy: bool = False,
        client_password: str = "",
        *,
        provider_options: Mapping[str, str] | None = None,
        task_dir: str | Path | None = None,
        results_dir: str | Path | None = None,
        network: bool = False,
        offline: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if provider_name in UNSUPPORTED_PROVIDERS:
            raise EnvError(NO_SUCH_PROVIDER.format(name=provider_name))
        if action_space not in ACTION_SPACES:
            raise EnvError(f"action_space must be one of {ACTION_SPACES}, got {action_space!r}")
        if os_type.lower() not in ("ubuntu", "linux"):
            raise EnvError(f"os_type={os_type!r}: pytest-osworld's desktops are Linux ('Ubuntu')")
        options = dict(provider_options or {})
        if provider_name == "remote" and path_to_vm and "urls" not in options:
            options["urls"] = path_to_vm
        #: OSWorld's attributes, kept for scripts that read them.
        self.provider_name = provider_name
        self.region = region
        self.path_to_vm = path_to_vm
        self.snapshot_name = snapshot_name
        self.action_space = action_space
        self.cache_dir_base = cache_dir
        self.cache_dir = cache_dir
        self.screen_size = tuple(screen_size)
        self.headless = headless
        self.require_a11y_tree = require_a11y_tree
        self.require_terminal = require_terminal
        self.os_type = os_type
        self.enable_proxy = enable_proxy
        self.task_dir = Path(task_dir) if task_dir is not None else None
        self.engine = EpisodeEngine(
            EngineConfig(
                provider=provider_name,
                provider_options=options,
                worker_id=f"env-{os.getpid()}-{next(_INSTANCES)}",
                screen_size=(int(screen_size[0]), int(screen_size[1])),
                network=network,
                offline=offline,
                results_dir=Path(results_dir) if results_dir is not None else None,
                results_names=(action_space, "env", "DesktopEnv"),
                default_snapshot=snapshot_name,
            ),
            sleep=sleep,
        )
        self._client_password = client_password
        self.controller = Controller(lambda: self.engine.guest, self._run_action)
        self.instruction: str | None = None
        self.task_id: str | None = None
        self.task: Task | None = None
        self.action_history: list[Any] = []
        #: The last evaluation, with every metric's reason (ours; OSWorld keeps none).
        self.last_evaluation: Evaluation | None = None
        self.engine.start()

    # -- OSWorld's attributes ----------------------------------------------------------------

    @property
    def client_password(self) -> str:
        """The desktop user's password (the provider's, unless one was given)."""
        if self._client_password:
            return self._client_password
        env = self.engine.environment
        return env.client_password if env is not None else self.engine.provider.client_password

    @property
    def vm_ip(self) -> str:
        """Where the guest is; agents only log it. Local desktops answer on a socket."""
        return "127.0.0.1"

    @property
    def vm_platform(self) -> str | None:
        """``Linux`` (asked from the desktop, as OSWorld does)."""
        return self.controller.get_vm_platform()

    @property
    def vm_screen_size(self) -> dict[str, int] | None:
        """``{"width": ..., "height": ...}`` of the desktop's screen."""
        return self.controller.get_vm_screen_size()

    # -- the episode -------------------------------------------------------------------------

    def reset(
        self,
        task_config: Mapping[str, Any] | Task | str | Path | None = None,
        seed: int | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Restore the desktop, run the task's setup steps and return the observation.

        ``task_config`` is a task JSON object (OSWorld's way), a task file's path or a
        :class:`~pytest_osworld.task.model.Task`; None restores the bare snapshot. Setup failures
        raise the same explained errors as the pytest items.
        """
        task = load_task_config(task_config, self.task_dir) if task_config is not None else None
        self.task = task
        self.instruction = task.instruction if task is not None else None
        self.task_id = task.id if task is not None else None
        if task is not None:
            self.cache_dir = str(Path(self.cache_dir_base) / task.id)
        self.action_history = []
        self.last_evaluation = None
        self.engine.begin(task, None if task is not None and task.snapshot else self.snapshot_name)
        return self._get_obs()

    def _get_obs(self) -> dict[str, Any]:
        """OSWorld's observation dict: screenshot, a11y tree, terminal, instruction."""
        seen = self.engine.observe(tree=self.require_a11y_tree, terminal=self.require_terminal)
        return {
            "screenshot": seen.screenshot,
            "accessibility_tree": seen.accessibility_tree if self.require_a11y_tree else None,
            "terminal": seen.terminal if self.require_terminal else None,
            "instruction": self.instruction,
        }

    def step(self, action: Any, pause: float = 2) -> tuple[dict[str, Any], float, bool, dict[str, Any]]:
        """Run one action; ``(obs, reward, done, info)`` with OSWorld's reward of 0.

        ``action`` is pyautogui code, a computer_13 dict, ``WAIT``/``DONE``/``FAIL`` (a
        string or a dict with ``action_type``) or a dict with ``command`` (code). DONE and
        FAIL end the episode (``info`` gets ``done`` or ``fail``); an action that failed
        inside the desktop puts its error in ``info["error"]``. A desktop that died raises
        :class:`~pytest_osworld.env.engine.DesktopCrashed`.
        """
        self.action_history.append(action)
        parsed = self._parse(action)
        info: dict[str, Any] = {}
        done = parsed.is_terminal
        # OSWorld's WAIT is the pause alone (min_wait=0); DONE and FAIL do not pause.
        error = self.engine.act(parsed, pause=pause, min_wait=0.0)
        if done:
            info[parsed.kind.lower()] = True
        if error:
            info["error"] = error
        obs = self._get_obs()
        self.engine.record(parsed, info.get("error"), obs["screenshot"])
        return obs, 0.0, done, info

    def _parse(self, action: Any) -> Action:
        """Our :class:`Action` from OSWorld's forms; an unreadable action raises EnvError."""
        if isinstance(action, Mapping) and "command" in action and "action_type" not in action:
            action = action["command"]
        try:
            return action_from_json(dict(action) if isinstance(action, Mapping) else action)
        except ActionParseError as exc:
            raise EnvError(f"step() got an action it cannot run: {exc}") from exc

    def _run_action(self, action: Action) -> str | None:
        """Execute without pausing (``step`` pauses after)."""
        return self.engine.act(action, pause=0.0)

    def evaluate(self) -> float:
        """The episode's score as OSWorld computes it (postconfig, FAIL rules, metrics)."""
        self.last_evaluation = self.engine.evaluate()
        return float(self.last_evaluation.score)

    def render(self, mode: str = "rgb_array") -> bytes | None:
        """The current screenshot as PNG bytes (OSWorld's ``render``)."""
        return self.controller.get_screenshot()

    def close(self) -> None:
        """Stop the desktop."""
        self.engine.close()

    def __enter__(self) -> DesktopEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
