"""The provider contract: one environment per xdist worker, restored before each task.

A provider's public methods wrap ``_impl`` methods: they add the provider's name and
logs to errors and re-raise them as :class:`~pytest_osworld.errors.EnvironmentFailure`,
so a broken environment is always an ERROR with its reason.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_osworld.errors import EnvironmentFailure, NeedsCapability
from pytest_osworld.guest_client.api import Guest

#: The spellings of a yes/no provider option (any case).
FLAG_VALUES = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
    "": False,
}


def flag_option(options: dict[str, str], key: str, provider: str) -> bool:
    """A yes/no option of ``provider`` (absent: no); a spelling not in :data:`FLAG_VALUES`
    is a ValueError that names the option and says what to write."""
    raw = options.get(key, "0")
    value = FLAG_VALUES.get(raw.strip().lower())
    if value is None:
        raise ValueError(f"{provider} provider option {key}={raw!r}: use 1 or 0")
    return value


@dataclass(frozen=True)
class ProviderConfig:
    """What every provider is given: worker identity, screen, options and directories."""

    worker_id: str
    screen_size: tuple[int, int] = (1920, 1080)
    options: dict[str, str] = field(default_factory=dict)
    work_dir: str = ""
    network: bool = False


@dataclass(frozen=True)
class Environment:
    """A desktop environment ready for one task: its guest and a description."""

    guest: Guest
    name: str
    description: str
    #: What the desktop was made from (a box name, a template key), for results' provenance.
    image: str = ""
    client_password: str = "password"
    screen_size: tuple[int, int] = (1920, 1080)
    extra: dict[str, Any] = field(default_factory=dict)


class Provider(ABC):
    """Owns one environment for the session and restores it before every task."""

    #: The provider's registry name, e.g. ``local``.
    name: str = ""
    #: The desktop user's password (OSWorld tasks pipe it to ``sudo -S``).
    client_password: str = "password"
    #: The values of the shared ``--provider-arg network=`` this provider honours. One whose
    #: desktop's network is set some other way (a VM's own network, a desktop running
    #: elsewhere) honours none: an explicit ``network=`` it would ignore is a usage error
    #: (``PROVIDER_NETWORK_IGNORED``); leaving ``network=`` out is always fine.
    network_modes: tuple[str, ...] = ("none", "shared")
    #: What sets the desktop's network instead, ending that usage error (what to pass).
    network_instead: str = ""
    #: Whether its desktops can be watched live: their guest is our server, which bridges
    #: ``GET /vnc`` to an x11vnc it starts when first watched (:mod:`pytest_osworld.guest.vnc`).
    live_view: bool = False
    #: Whether :meth:`restore` gives a desktop in its snapshot's state, whatever the one before
    #: did: what ``--budgets`` needs, to replay an episode's first steps on a fresh desktop.
    restorable: bool = True

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        #: Whether another restore is coming, so that ``restore`` may prepare for it (the
        #: local provider starts its warm spare). The plugin clears it for a process's last
        #: task: a spare that nobody takes is a desktop start's CPU spent for nothing.
        self.more_restores = True

    @property
    def live_network(self) -> bool:
        """Whether the desktop may reach the live web; steps and getters that load a live
        page skip without it. ``network=shared`` here; a provider whose desktop's network
        is set some other way says from its own settings."""
        return self.config.network

    @property
    def top_bar_clock(self) -> bool:
        """Whether the desktop's screen shows GNOME's top bar, with its clock in the middle
        (a budget replay's screen comparison leaves the clock out); none by default."""
        return False

    @classmethod
    def check_options(cls, options: dict[str, str]) -> None:
        """Raise ``ValueError`` naming a bad ``--provider-arg``; called before the run starts."""
        if not isinstance(options, dict):
            raise ValueError("provider options must be a mapping of strings")

    @classmethod
    def check_live_view(cls, options: dict[str, str]) -> None:
        """Raise ``ValueError`` saying why desktops made with ``options`` cannot be watched live."""
        if not cls.live_view:
            raise ValueError(
                f"the {cls.name!r} provider's desktops cannot be watched live: use --provider=local, "
                "vagrant or remote"
            )

    @classmethod
    def check_restorable(cls, options: dict[str, str]) -> None:
        """Raise ``ValueError`` saying why desktops made with ``options`` cannot be restored to
        a snapshot's state (so ``--budgets`` cannot replay on them)."""
        if not cls.restorable:
            raise ValueError(
                f"the {cls.name!r} provider cannot restore its desktops to a snapshot: use "
                "--provider=local or vagrant"
            )

    @classmethod
    def prepare(cls, config: ProviderConfig, say: Callable[[str], None]) -> None:
        """Do, once per run and before any worker starts, the slow one-off work that each
        worker's first :meth:`start` would otherwise do unseen (a home template, a box
        build), saying on ``say`` what it waits for and how long it took. Raises
        :class:`~pytest_osworld.errors.OSWorldError` when it cannot; the workers then try
        again themselves. The default has nothing to prepare."""
        return

    def start(self) -> None:
        """Bring the environment up once per session (image build, boot) under a lock."""
        self._wrap("start", self._start_impl)

    def restore(self, snapshot: str) -> Environment:
        """Restore the environment to ``snapshot`` and return it once it is ready."""
        result: Environment = self._wrap("restore", lambda: self._restore_impl(snapshot))
        return result

    def stop(self) -> None:
        """Tear the environment down (errors here are logged by the caller, not raised)."""
        self._wrap("stop", self._stop_impl)

    def describe(self) -> str:
        """One line for the report header: provider, image, screen."""
        return self.name

    def logs(self) -> str:
        """Recent logs of the environment, appended to errors. Empty when there are none."""
        return ""

    def diagnose(self) -> str:
        """After an episode broke: one phrase on what happened to the environment, or ''.

        For example ``the local desktop's sandbox ended (killed by SIGKILL)``; it is put in
        front of the error's message, so it must be short and certain (never a guess).
        """
        return ""

    def _wrap(self, phase: str, func: Any) -> Any:
        try:
            return func()
        except (EnvironmentFailure, NeedsCapability):
            raise
        except Exception as exc:
            logs = self.logs()
            tail = f"\n--- {self.name} logs ---\n{logs}" if logs else ""
            raise EnvironmentFailure(
                f"provider {self.name!r} failed to {phase}: {type(exc).__name__}: {exc}{tail}"
            ) from exc

    @abstractmethod
    def _start_impl(self) -> None: ...

    @abstractmethod
    def _restore_impl(self, snapshot: str) -> Environment: ...

    @abstractmethod
    def _stop_impl(self) -> None: ...
