"""How the vagrant provider reaches the guest server in its VM: straight over TCP, or
through a ``socat`` relay run inside the libvirt network namespace; the same for Chrome's
DevTools port (9222, which OSWorld's Chrome getters and setup steps use); readiness polling
(``/health`` of our server, a screenshot from OSWorld's own); and setting a restored VM's
clock.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from pytest_osworld.errors import GuestError
from pytest_osworld.guest_client.client import GuestClient
from pytest_osworld.providers.local_relay import UnixForward
from pytest_osworld.providers.vagrant_config import VagrantError

#: Chrome's DevTools port in the VM (OSWorld's tasks relay it there with socat).
CDP_PORT = 9222


class GuestLink:
    """The way to one VM's guest server: its address, the session token, the relay.

    Without ``netns`` a client talks to ``http://<address>``; with it, to
    ``relay_socket``, a unix socket that a ``socat`` inside the namespace forwards to the
    address. ``fail`` builds the error raised when the relay or the guest does not come up
    (the provider's, which appends the VM's logs). An empty ``token`` means OSWorld's own
    server (no token, no ``/health``).
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
        self._cdp_relay: subprocess.Popen[bytes] | None = None
        self._cdp_forward: UnixForward | None = None

    @property
    def cdp_socket(self) -> Path:
        """The unix socket relayed into the namespace to the VM's DevTools port."""
        return self.relay_socket.with_name("cdp.sock")

    def cdp_url(self) -> str | None:
        """Chrome's DevTools endpoint as the host reaches it (None before the address is known).

        Straight to ``http://<vm>:9222`` without a namespace; with one, a loopback port on
        the host forwarded to the relayed socket (opened once, kept across restores).
        """
        if self.address is None:
            return None
        host = self.address[0]
        if not self.netns:
            return f"http://{host}:{CDP_PORT}"
        if self._cdp_relay is None or self._cdp_relay.poll() is not None:
            self._cdp_relay = self._socat(self.cdp_socket, host, CDP_PORT, "DevTools relay")
        if self._cdp_forward is None:
            socket_path = str(self.cdp_socket)
            self._cdp_forward = UnixForward(lambda: socket_path)
        return f"http://127.0.0.1:{self._cdp_forward.port}"

    def open_relay(self) -> None:
        """Start the ``socat`` relay (``netns`` only; a running one is replaced)."""
        if not self.netns or self.address is None:
            return
        self.close_relay()
        host, port = self.address
        self._relay = self._socat(self.relay_socket, host, port, "guest relay")

    def _socat(self, socket_path: Path, host: str, port: int, what: str) -> subprocess.Popen[bytes]:
        """A ``socat`` inside the namespace from ``socket_path`` to ``host:port``, started."""
        if self.netns is None:
            raise VagrantError(f"the {what} needs a network namespace")
        socket_path.unlink(missing_ok=True)
        argv = [
            "ip",
            "netns",
            "exec",
            self.netns,
            "socat",
            f"UNIX-LISTEN:{socket_path},fork,mode=600",
            f"TCP:{host}:{port},connect-timeout=10",
        ]
        relay = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while not socket_path.exists():
            if relay.poll() is not None or time.monotonic() > deadline:
                _stop(relay)
                raise self._fail(f"the {what} (socat in netns {self.netns}) did not start")
            time.sleep(0.05)
        return relay

    def close_relay(self) -> None:
        """Stop the guest relay, if any, and remove its socket."""
        relay, self._relay = self._relay, None
        _stop(relay)
        self.relay_socket.unlink(missing_ok=True)

    def close(self) -> None:
        """Stop every relay and forward of this VM."""
        self.close_relay()
        relay, self._cdp_relay = self._cdp_relay, None
        _stop(relay)
        self.cdp_socket.unlink(missing_ok=True)
        forward, self._cdp_forward = self._cdp_forward, None
        if forward is not None:
            forward.close()

    def new_client(self, timeout: float = 30.0, retries: int = 3) -> GuestClient:
        """A client of the guest server, through the relay or straight to the address."""
        token = self.token or None
        if self.netns:
            return GuestClient(
                unix_socket=str(self.relay_socket), token=token, timeout=timeout, retries=retries
            )
        if self.address is None:
            raise VagrantError("vagrant provider: the guest address is unknown")
        host, port = self.address
        return GuestClient(url=f"http://{host}:{port}", token=token, timeout=timeout, retries=retries)

    def wait_ready(self, timeout: float, when: str) -> GuestClient:
        """Poll until the desktop is ready; a new client for the session.

        Our server says so on ``/health`` (X, window manager, AT-SPI, action worker);
        OSWorld's own has no such route, so there a screenshot that decodes is the sign,
        as in OSWorld's own providers.
        """
        deadline = time.monotonic() + timeout
        # Under software emulation the first /health (it starts the pyautogui worker) is slow.
        probe = self.new_client(timeout=60.0, retries=1)
        last = "no answer"
        try:
            while time.monotonic() < deadline:
                if self._relay is not None and self._relay.poll() is not None:
                    self.open_relay()
                try:
                    state = probe.health() if self.token else {"ready": bool(probe.screenshot())}
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


def _stop(relay: subprocess.Popen[bytes] | None) -> None:
    if relay is not None and relay.poll() is None:
        relay.terminate()
        try:
            relay.wait(timeout=5)
        except subprocess.TimeoutExpired:
            relay.kill()
            relay.wait()


def sync_clock(client: GuestClient) -> None:
    """A restored VM's clock is the snapshot's; set it to now (best effort, as root)."""
    with contextlib.suppress(GuestError):
        client.execute(
            f"echo password | sudo -S -p '' date -u -s @{time.time():.3f} >/dev/null",
            shell=True,
            timeout=20,
        )
