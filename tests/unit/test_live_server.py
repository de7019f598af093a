"""The live view's server without a desktop: the secret, Host and Origin checks, noVNC's
folder and nothing else, the VNC bridge's bytes, and the page's channel."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("websockets")

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from pytest_osworld.live.server import LiveServer


@pytest.fixture
def novnc(tmp_path: Path) -> Path:
    folder = tmp_path / "novnc"
    (folder / "core").mkdir(parents=True)
    (folder / "vnc.html").write_text("<canvas>noVNC</canvas>")
    (folder / "core" / "rfb.js").write_text("export default 1;")
    (tmp_path / "outside.txt").write_text("private")
    return folder


@pytest.fixture
def server(novnc: Path) -> Iterator[LiveServer]:
    live = LiveServer("gw0", novnc_dir=novnc)
    live.start()
    yield live
    live.close()


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read(), dict(answer.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def test_listens_on_loopback_only(server: LiveServer) -> None:
    assert server.url.startswith(f"http://127.0.0.1:{server.port}/?s=")
    assert server.secret not in server.address
    sockets = list(server._server.sockets) if server._server else []
    assert sockets and all(sock.getsockname()[0] == "127.0.0.1" for sock in sockets)


def test_the_page_needs_the_secret_and_sets_it_as_a_cookie(server: LiveServer) -> None:
    status, body, _ = get(server.address)
    assert status == 403 and b"secret" in body and b"<iframe" not in body
    status, body, _ = get(f"{server.address}?s=not-{server.secret}")
    assert status == 403
    status, body, headers = get(server.url)
    assert status == 200 and b"<iframe" in body and b"gw0" in body
    assert f"osworld_live_{server.port}={server.secret}" in headers["Set-Cookie"]
    assert "HttpOnly" in headers["Set-Cookie"] and "SameSite=Strict" in headers["Set-Cookie"]
    cookie = {"Cookie": f"osworld_live_{server.port}={server.secret}"}
    assert get(f"{server.address}novnc/vnc.html", cookie)[0] == 200
    assert get(f"{server.address}novnc/vnc.html")[0] == 403
    assert get(f"{server.address}novnc/vnc.html", {"Cookie": f"osworld_live_{server.port}=x"})[0] == 403


def test_serves_novnc_and_nothing_outside_it(server: LiveServer) -> None:
    cookie = {"Cookie": f"osworld_live_{server.port}={server.secret}"}
    status, body, headers = get(f"{server.address}novnc/core/rfb.js", cookie)
    assert status == 200 and body == b"export default 1;" and headers["Content-Type"] == "text/javascript"
    for escape in ("novnc/../outside.txt", "novnc/%2e%2e/outside.txt", "novnc/core/../../outside.txt", "etc"):
        status, body, _ = get(f"{server.address}{escape}", cookie)
        assert status == 404 and b"private" not in body, escape


def test_host_and_origin_must_be_the_loopback_address(server: LiveServer) -> None:
    assert get(server.url, {"Host": f"evil.example:{server.port}"})[0] == 403
    ws = f"ws://127.0.0.1:{server.port}/events?s={server.secret}"
    with pytest.raises(Exception, match="403"):
        connect(ws, origin="http://evil.example").close()  # type: ignore[arg-type]
    with connect(ws, origin=f"http://127.0.0.1:{server.port}") as channel:  # type: ignore[arg-type]
        assert json.loads(channel.recv(timeout=5))["label"] == "gw0"


def test_vnc_bridge_relays_bytes_both_ways(server: LiveServer, tmp_path: Path) -> None:
    path = str(tmp_path / "vnc.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    seen: list[bytes] = []

    def vnc_server() -> None:
        conn, _ = listener.accept()
        conn.sendall(b"RFB 003.008\n")
        seen.append(conn.recv(100))
        conn.close()

    threading.Thread(target=vnc_server, daemon=True).start()
    ws = f"ws://127.0.0.1:{server.port}/vnc?s={server.secret}"
    with connect(ws) as closed, pytest.raises(ConnectionClosed) as ended:
        closed.recv(timeout=5)  # no desktop yet: the bridge closes at once
    assert "no desktop is running" in str(ended.value)

    def open_vnc() -> tuple[socket.socket, bytes]:
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(path)
        return sock, b""

    server.connect_vnc = open_vnc
    with connect(ws) as bridge:
        assert bridge.recv(timeout=5) == b"RFB 003.008\n"
        bridge.send(b"RFB 003.008\n")
    threading.Event().wait(0.3)
    assert seen == [b"RFB 003.008\n"]
    with pytest.raises(Exception, match="403"):
        connect(f"ws://127.0.0.1:{server.port}/vnc").close()
    listener.close()


def test_verdicts_count_only_while_the_page_offers_them(server: LiveServer) -> None:
    verdicts: list[str] = []
    takeovers: list[int] = []
    server.on_verdict = verdicts.append
    server.on_take_over = lambda: takeovers.append(1)
    ws = f"ws://127.0.0.1:{server.port}/events?s={server.secret}"
    with connect(ws) as channel:
        assert json.loads(channel.recv(timeout=5))["verdicts"] is False
        channel.send(json.dumps({"action": "verdict", "verdict": "DONE"}))  # not offered: ignored
        threading.Event().wait(0.5)
        server.update(verdicts=True, task="os/1")
        state = json.loads(channel.recv(timeout=5))
        assert state["verdicts"] is True and state["task"] == "os/1"
        for message in ("not json", json.dumps([1]), json.dumps({"action": "verdict", "verdict": "rm -rf"})):
            channel.send(message)
        channel.send(json.dumps({"action": "verdict", "verdict": "INFEASIBLE"}))
        channel.send(json.dumps({"action": "take_over"}))
        threading.Event().wait(0.5)
    assert verdicts == ["INFEASIBLE"] and takeovers == [1]


def test_a_failed_take_over_is_shown_on_the_page(server: LiveServer) -> None:
    def refuse() -> None:
        raise RuntimeError("guest /vnc/input: HTTP 501: x11vnc is not installed in this desktop")

    server.on_take_over = refuse
    with connect(f"ws://127.0.0.1:{server.port}/events?s={server.secret}") as channel:
        assert json.loads(channel.recv(timeout=5)).get("problem") is None
        channel.send(json.dumps({"action": "take_over"}))
        state = json.loads(channel.recv(timeout=5))
        assert state["problem"] == (
            "could not take over: guest /vnc/input: HTTP 501: x11vnc is not installed in this desktop"
        )
        assert state["mode"] == "view"
        channel.send(json.dumps({"action": "take_over"}))  # the channel is still open
        assert "could not take over" in json.loads(channel.recv(timeout=5))["problem"]


def test_missing_novnc_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="novnc"):
        LiveServer("gw0", novnc_dir=tmp_path)
