"""GuestClient against a real guest server on a unix socket and on TCP (no desktop)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_osworld.errors import GuestError
from pytest_osworld.guest.server import GuestApp
from pytest_osworld.guest.server_http import make_server
from pytest_osworld.guest.worker import ActionWorker, WorkerResult, run_code
from pytest_osworld.guest_client.api import CommandResult, Guest
from pytest_osworld.guest_client.client import GuestClient

TOKEN = "client-test-token"


class InProcessWorker(ActionWorker):
    def ensure_started(self) -> None:
        pass

    def run(self, code: str, timeout: float) -> WorkerResult:
        return run_code(code, {})

    def close(self) -> None:
        pass


@pytest.fixture(params=["unix", "tcp"])
def client(request, tmp_path: Path) -> Iterator[GuestClient]:
    app = GuestApp(TOKEN, worker=InProcessWorker())
    if request.param == "unix":
        server = make_server(app, unix_socket=str(tmp_path / "g.sock"))
        made = GuestClient(unix_socket=str(tmp_path / "g.sock"), token=TOKEN)
    else:
        server = make_server(app, host="127.0.0.1", port=0)
        made = GuestClient(url=f"http://127.0.0.1:{server.server_address[1]}", token=TOKEN)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield made
    made.close()
    server.shutdown()
    server.server_close()


def test_client_implements_the_guest_protocol(client):
    assert isinstance(client, Guest)


def test_execute_and_run_python(client):
    assert client.execute(["sh", "-c", "echo out; exit 2"]) == CommandResult(2, "out\n", "")
    assert client.run_python("print('py')") == CommandResult(0, "py\n", "")
    assert client.run_bash_script("echo $((2*3))") == CommandResult(0, "6\n", "")


def test_upload_then_read_back(client, tmp_path):
    target = tmp_path / "sub" / "dir" / "blob.bin"
    payload = bytes(range(256)) * 4096 + b"\r\n--boundary-like--\r\n"
    client.upload_file(str(target), payload)
    assert target.read_bytes() == payload
    assert client.read_file(str(target)) == payload


def test_read_missing_file_raises_file_not_found(client, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist in the environment"):
        client.read_file(str(tmp_path / "absent"))


def test_list_directory(client, tmp_path):
    (tmp_path / "x.txt").write_text("x")
    tree = client.list_directory(str(tmp_path))
    assert {"type": "file", "name": "x.txt"} in tree["children"]


def test_wrong_token_raises_guest_error_naming_401(client):
    client._token = "nope"
    with pytest.raises(GuestError, match=r"guest /setup/execute: 401 unauthorized"):
        client.execute("true")


def test_http_errors_name_endpoint_and_reason(client, tmp_path):
    with pytest.raises(GuestError, match=r"guest /setup/open_file: HTTP 404: .*does not exist"):
        client.open_file(str(tmp_path / "missing.xlsx"))


def test_unreachable_guest_fails_after_bounded_retries(tmp_path):
    dead = GuestClient(unix_socket=str(tmp_path / "none.sock"), token="t", retries=2)
    with pytest.raises(GuestError, match=r"guest /screenshot: failed after 2 attempt\(s\)"):
        dead.screenshot()
    with pytest.raises(GuestError, match=r"failed after 1 attempt\(s\)"):
        dead.execute("true")  # not idempotent: never retried


def test_a_full_backlog_delays_an_action_instead_of_losing_it(tmp_path):
    # The guest's accept loop is not running yet and its backlog is full: a unix socket then
    # refuses a connect at once (EAGAIN). An action is sent once only, so the client must
    # wait for room rather than fail.
    path = str(tmp_path / "busy.sock")
    server = make_server(GuestApp(TOKEN, worker=InProcessWorker()), unix_socket=path)
    queued = []
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(path)
        except BlockingIOError:
            sock.close()
            break
        queued.append(sock)
        assert len(queued) < 1000, "the backlog never filled"

    def drain_then_serve() -> None:
        time.sleep(0.5)
        for sock in queued:
            sock.close()  # the server accepts these, reads nothing and moves on
        server.serve_forever(0.05)

    threading.Thread(target=drain_then_serve, daemon=True).start()
    client = GuestClient(unix_socket=path, token=TOKEN, timeout=20)
    try:
        assert client.execute(["echo", "queued"]) == CommandResult(0, "queued\n", "")
    finally:
        client.close()
        server.shutdown()
        server.server_close()


def test_constructor_validates_its_arguments():
    with pytest.raises(ValueError, match="exactly one"):
        GuestClient()
    with pytest.raises(ValueError, match="http://host:port"):
        GuestClient(url="ftp://x")


def test_no_token_sends_no_authorization_header(tmp_path):
    # An unmodified OSWorld server has no token: the client must not invent one.
    client = GuestClient(url="http://127.0.0.1:9", token=None)
    assert client._token is None
