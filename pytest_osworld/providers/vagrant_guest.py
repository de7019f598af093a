"""How the vagrant provider reaches the guest server in its VM: straight over TCP, or
through a ``socat`` relay run inside the libvirt network namespace; readiness polling
of ``/health``; and setting a restored VM's clock.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from pytest_osworld.client import GuestClient
from pytest_osworld.errors import GuestError
from pytest_osworld.providers.vagrant_config import VagrantError


class GuestLink:
    """The way to one VM's guest server: its address, the session token, the relay.

    Without ``netns`` a client talks to ``http://<address>``; with it, to
    ``relay_socket``, a unix socket that a ``socat`` inside the namespace forwards to the
    address. ``fail`` builds the error raised when the relay or the guest does not come up
    (the provider's, which appends the VM's logs).
    """

    def __init__(self, *, netns: str | None, relay_socket: Path, fail: Callable[[str], VagrantError]) -> None:
        self.netns = netns
        self.relay_socket = relay_socket
        self._fail = fail
        #: Where the guest server listens, as seen from inside the namespace (or the host).
        self.address: tuple[str, int] | None = None
        #: The bearer token deployed into the VM this session.
        self.token = ""
        self._relay: subprocess.Popen[bytes] | None = None

    def open_relay(self) -> None:
        """Start the ``socat`` relay (``netns`` only; a running one is replaced)."""
        if not self.netns or self.address is None:
            return
        self.close_relay()
        self.relay_socket.unlink(missing_ok=True)
        host, port = self.address
        argv = [
            "ip",
            "netns",
            "exec",
            self.netns,
            "socat",
            f"UNIX-LISTEN:{self.relay_socket},fork,mode=600",
            f"TCP:{host}:{port},connect-timeout=10",
        ]
        self._relay = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while not self.relay_socket.exists():
            if self._relay.poll() is not None or time.monotonic() > deadline:
                raise self._fail(f"the guest relay (socat in netns {self.netns}) did not start")
            time.sleep(0.05)

    def close_relay(self) -> None:
        """Stop the relay, if any, and remove its socket."""
        relay, self._relay = self._relay, None
        if relay is not None and relay.poll() is None:
            relay.terminate()
            try:
                relay.wait(timeout=5)
            except subprocess.TimeoutExpired:
                relay.kill()
                relay.wait()
        self.relay_socket.unlink(missing_ok=True)

    def new_client(self, timeout: float = 30.0, retries: int = 3) -> GuestClient:
        """A client of the guest server, through the relay or straight to the address."""
        if self.netns:
            return GuestClient(
                unix_socket=str(self.relay_socket), token=self.token, timeout=timeout, retries=retries
            )
        if self.address is None:
            raise VagrantError("vagrant provider: the guest address is unknown")
        host, port = self.address
        return GuestClient(url=f"http://{host}:{port}", token=self.token, timeout=timeout, retries=retries)

    def wait_ready(self, timeout: float, when: str) -> GuestClient:
        """Poll ``/health`` until the desktop is ready; a new client for the session."""
        deadline = time.monotonic() + timeout
        # Under software emulation the first /health (it starts the pyautogui worker) is slow.
        probe = self.new_client(timeout=60.0, retries=1)
        last = "no answer"
        try:
            while time.monotonic() < deadline:
                if self._relay is not None and self._relay.poll() is not None:
                    self.open_relay()
                try:
                    state = probe.health()
                except GuestError as exc:
                    last = str(exc)
                    probe.close()
                else:
                    if state.get("ready"):
                        return self.new_client()
                    last = f"not ready: {state}"
                time.sleep(0.5)
        finally:
            probe.close()
        raise self._fail(f"the guest server was not ready {timeout:g} s {when}: {last}")


def sync_clock(client: GuestClient) -> None:
    """A restored VM's clock is the snapshot's; set it to now (best effort, as root)."""
    with contextlib.suppress(GuestError):
        client.execute(
            f"echo password | sudo -S -p '' date -u -s @{time.time():.3f} >/dev/null",
            shell=True,
            timeout=20,
        )
