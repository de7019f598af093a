"""The live view's VNC path on a real Xvfb: the guest server starts x11vnc when first asked,
bridges ``GET /vnc`` to it for the host's client, and lets input through only after
``POST /vnc/input``; checked with a VNC client moving the X pointer."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from rfb import RfbClient
from Xlib import display

from pytest_osworld.errors import GuestError
from pytest_osworld.guest.server import GuestApp
from pytest_osworld.guest.server_http import make_server
from pytest_osworld.guest_client.client import GuestClient

pytestmark = [
    pytest.mark.desktop,
    pytest.mark.skipif(shutil.which("x11vnc") is None, reason="x11vnc is not installed"),
]

TOKEN = "vnc-test-token"


@dataclass
class Served:
    """A guest server's app, a client with its token, its display, a client without it."""

    app: GuestApp
    client: GuestClient
    display: str
    stranger: GuestClient


@pytest.fixture(params=["unix", "tcp"])
def guest(
    request: pytest.FixtureRequest, xvfb: Callable[[], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Served]:
    """A guest server for a fresh Xvfb, on a unix socket (local, VM relay) or loopback TCP
    (a remote desktop's URL); its app, a client, the display."""
    name = xvfb()
    monkeypatch.setenv("DISPLAY", name)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    app = GuestApp(TOKEN)
    if request.param == "unix":
        server = make_server(app, unix_socket=str(tmp_path / "g.sock"))
        where: dict[str, str] = {"unix_socket": str(tmp_path / "g.sock")}
    else:
        server = make_server(app, host="127.0.0.1", port=0)
        where = {"url": f"http://127.0.0.1:{server.server_address[1]}"}
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    client = GuestClient(**where, token=TOKEN)  # type: ignore[arg-type]
    stranger = GuestClient(**where, token="wrong")  # type: ignore[arg-type]
    yield Served(app, client, name, stranger)
    stranger.close()
    client.close()
    server.shutdown()
    server.server_close()
    app.vnc.close()


def pointer(name: str) -> tuple[int, int]:
    screen = display.Display(name)
    try:
        reply = screen.screen().root.query_pointer()
        return reply.root_x, reply.root_y
    finally:
        screen.close()


def settle_pointer(name: str, want: tuple[int, int], timeout: float = 5.0) -> tuple[int, int]:
    deadline = time.monotonic() + timeout
    where = pointer(name)
    while where != want and time.monotonic() < deadline:
        time.sleep(0.1)
        where = pointer(name)
    return where


def test_nothing_runs_until_watched_then_view_only_until_input_allowed(
    guest: Served,
) -> None:
    app, client, name = guest.app, guest.client, guest.display
    assert app.vnc.socket_path is None  # nothing started with the server
    sock, first = client.open_vnc()
    vnc = RfbClient.over_socket(sock, first)
    assert vnc.handshake()[:2] == (1280, 800)
    folder = app.vnc.socket_path.parent if app.vnc.socket_path else None
    assert folder is not None and folder.stat().st_mode & 0o777 == 0o700
    start = pointer(name)
    vnc.move_pointer(321, 123)
    time.sleep(1.0)
    assert pointer(name) == start, "view-only: the viewer's pointer must not reach the desktop"

    client.allow_vnc_input()
    vnc.move_pointer(321, 123)
    assert settle_pointer(name, (321, 123)) == (321, 123)
    # a second viewer shares the same server, with input now
    other_sock, other_first = client.open_vnc()
    other = RfbClient.over_socket(other_sock, other_first)
    assert other.handshake()[:2] == (1280, 800)
    other.move_pointer(10, 700)
    assert settle_pointer(name, (10, 700)) == (10, 700)
    sock.close()
    other_sock.close()


def test_input_allowed_before_anyone_watches_starts_the_server_with_input(
    guest: Served,
) -> None:
    app, client, name = guest.app, guest.client, guest.display
    client.allow_vnc_input()
    assert app.vnc.socket_path is not None
    sock, first = client.open_vnc()
    vnc = RfbClient.over_socket(sock, first)
    vnc.handshake()
    vnc.move_pointer(200, 300)
    assert settle_pointer(name, (200, 300)) == (200, 300)
    sock.close()


def test_the_bridge_needs_the_token(guest: Served) -> None:
    app, stranger = guest.app, guest.stranger
    with pytest.raises(GuestError, match="401"):
        stranger.open_vnc()
    with pytest.raises(GuestError, match="401"):
        stranger.allow_vnc_input()
    assert app.vnc.socket_path is None  # nothing started for a stranger
