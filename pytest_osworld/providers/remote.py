"""The ``remote`` provider: desktops that already run elsewhere, given by URL.

A pool of guest servers (ours, with their tokens, or unmodified OSWorld VMs without one)
is shared by the xdist workers: each worker claims one entry for the session under a file
lock, and checks it is healthy before every task. None of these desktops can be restored
to a snapshot from here, so a task's leftovers would leak into the next one: the provider
refuses to run unless the user opts in with ``--provider-arg allow_no_reset=1``.

Options (``--provider-arg``):

- ``pool``: a file with one desktop per line, ``URL [TOKEN]`` (``#`` comments allowed);
- ``urls``: the same inline, entries separated by ``,`` as ``URL`` or ``URL#TOKEN``
  (``pool`` or ``urls``, not both);
- ``allow_no_reset``: ``1`` to accept that state leaks between tasks;
- ``lock_dir``: where the claims are kept (default under the user cache folder).

The shared ``network=`` option is refused: a desktop's network is whatever the pool's
desktops have, so steps and getters that load a live page are not skipped here.
"""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from pytest_osworld.errors import EnvironmentFailure, GuestError
from pytest_osworld.guest_client.client import GuestClient
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig, flag_option

OPTIONS = ("pool", "urls", "allow_no_reset", "lock_dir")
NO_RESET = (
    "the remote provider cannot restore these desktops to a snapshot, so each task would see "
    "what the previous one left behind and scores would not be comparable; pass "
    "--provider-arg allow_no_reset=1 to run anyway (for smoke tests), or use the local or "
    "vagrant provider for scored runs"
)
#: ``pool`` and ``urls`` together: one of them would be ignored.
POOL_AND_URLS = (
    "the remote provider takes its desktops from pool=FILE or from urls=URL[#TOKEN],..., and "
    "with both it would ignore urls: give one (put every desktop in the pool file, or all in urls)"
)


@dataclass(frozen=True)
class RemoteDesktop:
    """One pool entry: the guest server's URL and its token (None for an OSWorld VM)."""

    url: str
    token: str | None

    @property
    def key(self) -> str:
        """A short stable name for the lock file."""
        return hashlib.sha256(self.url.encode()).hexdigest()[:16]


def parse_pool(text: str, separator: str = "\n") -> list[RemoteDesktop]:
    """Parse pool entries (``URL [TOKEN]`` lines, or ``URL#TOKEN`` items); ValueError if bad."""
    desktops = []
    for raw in text.split(separator):
        entry = raw.split(" #", 1)[0].strip() if separator == "\n" else raw.strip()
        if not entry or entry.startswith("#"):
            continue
        if separator == "\n":
            url, _, token = entry.partition(" ")
        else:
            url, _, token = entry.partition("#")
        parts = urllib.parse.urlsplit(url.strip())
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"remote desktop {url!r} is not an http://host:port URL")
        desktops.append(RemoteDesktop(url.strip(), token.strip() or None))
    if not desktops:
        raise ValueError("the remote pool is empty")
    return desktops


class RemoteProvider(Provider):
    """Claims one desktop of the pool for this worker; health-checks it before each task."""

    name = "remote"
    network_modes: tuple[str, ...] = ()
    live_view = True
    #: Its desktops run elsewhere and are never reset from here.
    restorable = False
    network_instead = (
        "a remote desktop's network is whatever the pool's desktops have, which pytest-osworld "
        "does not change: set it up on those desktops (steps that load a live page run there "
        "as they are), or use the local provider, which honours network=none|shared"
    )

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self.check_options(config.options)
        self.pool = self.load_pool(config.options)
        self.allow_no_reset = flag_option(config.options, "allow_no_reset", "remote")
        default_locks = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        self.lock_dir = Path(config.options.get("lock_dir") or default_locks / "pytest-osworld" / "remote")
        self._lock: FileLock | None = None
        self.desktop: RemoteDesktop | None = None

    @classmethod
    def check_options(cls, options: dict[str, str]) -> None:
        """Unknown options, no pool, or an unreadable pool are usage errors."""
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown remote provider option(s) {unknown}; known: {list(OPTIONS)}")
        flag_option(options, "allow_no_reset", "remote")
        cls.load_pool(options)

    @property
    def live_network(self) -> bool:
        """Always: the desktops have whatever network they have, so nothing is skipped for it."""
        return True

    @staticmethod
    def load_pool(options: dict[str, str]) -> list[RemoteDesktop]:
        """The pool from ``pool=FILE`` or ``urls=...``."""
        if "pool" in options and "urls" in options:
            raise ValueError(POOL_AND_URLS)
        if "pool" in options:
            try:
                return parse_pool(Path(options["pool"]).read_text())
            except OSError as exc:
                raise ValueError(f"cannot read the remote pool file {options['pool']!r}: {exc}") from exc
        if "urls" in options:
            return parse_pool(options["urls"], separator=",")
        raise ValueError("the remote provider needs pool=FILE or urls=URL[#TOKEN],...")

    def describe(self) -> str:
        """Which desktop this worker uses."""
        where = self.desktop.url if self.desktop else "(none claimed)"
        return f"remote {where} (no snapshot reset)"

    def _start_impl(self) -> None:
        if not self.allow_no_reset:
            raise EnvironmentFailure(NO_RESET)
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        for desktop in self.pool:
            lock = FileLock(str(self.lock_dir / f"{desktop.key}.lock"))
            try:
                lock.acquire(timeout=0)
            except Timeout:
                continue
            self._lock, self.desktop = lock, desktop
            return
        raise EnvironmentFailure(
            f"all {len(self.pool)} remote desktops are claimed by other workers; "
            "give the pool at least as many desktops as -n workers"
        )

    def _client(self) -> GuestClient:
        if self.desktop is None:
            raise EnvironmentFailure("no remote desktop was claimed (the provider did not start)")
        return GuestClient(url=self.desktop.url, token=self.desktop.token)

    def _restore_impl(self, snapshot: str) -> Environment:
        client = self._client()
        try:
            if self.desktop is not None and self.desktop.token is None:
                client.screenshot()  # an OSWorld VM has no /health; a screenshot proves it answers
            elif not client.health().get("ready"):
                raise EnvironmentFailure(f"remote desktop {client!r} is not ready: {client.health()}")
        except GuestError as exc:
            raise EnvironmentFailure(
                f"remote desktop {client!r} did not answer its health check: {exc}"
            ) from exc
        extra: dict[str, Any] = {"snapshot": snapshot, "reset": False}
        return Environment(
            guest=client,
            name=f"remote-{self.config.worker_id}",
            description=self.describe(),
            image=f"a running desktop at {self.desktop.url} (not reset)" if self.desktop else "",
            extra=extra,
        )

    def _stop_impl(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None
