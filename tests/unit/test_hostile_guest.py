"""The guest server under hostile requests: every one gets a 4xx with a reason (or a timeout),
and the server keeps serving; the token check is constant-time; it listens only where told.

The server runs on a temporary unix socket (or loopback TCP) with a worker that never
executes anything, and short timeouts so that stalled clients are dropped within a second.
"""

from __future__ import annotations

import contextlib
import hmac
import inspect
import json
import os
import re
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_osworld.errors import GuestUnreachable
from pytest_osworld.guest import server as server_module
from pytest_osworld.guest import server_http
from pytest_osworld.guest.server import GuestApp
from pytest_osworld.guest.server_http import MAX_BODY, make_server
from pytest_osworld.guest.worker import ActionWorker, WorkerResult
from pytest_osworld.guest_client import client as client_module
from pytest_osworld.guest_client.client import GuestClient

TOKEN = "hostile-test-token"
#: Short timeouts for the test server (the defaults are a minute and an hour).
REQUEST_TIMEOUT = 3.0
IDLE_TIMEOUT = 6.0
AUTH = f"Authorization: Bearer {TOKEN}\r\n".encode()


class InertWorker(ActionWorker):
    """Records the code it is given and runs none of it."""

    def __init__(self) -> None:
        super().__init__()
        self.codes: list[str] = []

    def ensure_started(self) -> None:
        pass

    def run(self, code: str, timeout: float) -> WorkerResult:
        self.codes.append(code)
        return WorkerResult(0, "", "")

    def close(self) -> None:
        pass


class Guest:
    """A running server and raw-socket helpers to talk to it."""

    def __init__(self, path: str, server: Any) -> None:
        self.path = path
        self.server = server

    def connect(self, timeout: float = 10.0) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(self.path)
        return sock

    def connect_patiently(self) -> socket.socket:
        """Connect, waiting while the listen backlog is full."""
        for _ in range(100):
            try:
                return self.connect()
            except BlockingIOError:
                time.sleep(0.02)
        raise AssertionError("the server stopped accepting connections")

    def exchange(self, raw: bytes, timeout: float = 10.0, expect_body: bool = True) -> tuple[int, bytes]:
        """Send ``raw`` on a fresh connection; the status and body of the first answer."""
        with self.connect(timeout) as sock:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(raw)  # the server may answer and close before reading everything
            return read_response(sock.makefile("rb"), expect_body)

    def healthy(self) -> bool:
        """A following valid request still succeeds."""
        status, body = self.exchange(b"GET /platform HTTP/1.1\r\nHost: g\r\n" + AUTH + b"\r\n")
        return (status, body) == (200, b"Linux")


def read_response(stream: BinaryIO, expect_body: bool = True) -> tuple[int, bytes]:
    """Status and body of the next HTTP response on ``stream`` (0 when it closed without one)."""
    status_line = stream.readline()
    if not status_line:
        return 0, b""
    if not status_line.startswith(b"HTTP/"):
        # A request line too broken to have a version is answered HTTP/0.9 style: the error
        # page alone, no status line, then the connection closes.
        page = status_line + stream.read()
        found = re.search(rb"Error code: (\d+)", page)
        return (int(found.group(1)) if found else 0), page
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return int(status_line.split()[1]), stream.read(length) if expect_body else b""


def still_held(sock: socket.socket) -> bool:
    """The server has neither answered nor closed ``sock`` yet (nothing to read right now)."""
    sock.setblocking(False)
    try:
        sock.recv(1)
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)
    return False


def reason(body: bytes) -> str:
    """The JSON reason of a refusal (or the text of the standard library's error page)."""
    try:
        return str(json.loads(body)["message"])
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace")


@pytest.fixture
def guest(tmp_path: Path) -> Iterator[Guest]:
    app = GuestApp(TOKEN, worker=InertWorker())
    path = str(tmp_path / "g.sock")
    server = make_server(app, unix_socket=path)
    server.request_timeout = REQUEST_TIMEOUT  # type: ignore[attr-defined]
    server.idle_timeout = IDLE_TIMEOUT  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield Guest(path, server)
    server.shutdown()
    server.server_close()


def post(endpoint: str, body: bytes, content_type: str = "application/json", token: bool = True) -> bytes:
    return (
        f"POST {endpoint} HTTP/1.1\r\nHost: g\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n".encode()
        + (AUTH if token else b"")
        + b"\r\n"
        + body
    )


# -- methods, fields and types --------------------------------------------------------------


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "GET"])
def test_wrong_methods_get_405_naming_the_right_one(guest: Guest, method: str) -> None:
    status, body = guest.exchange(
        f"{method} /execute HTTP/1.1\r\nHost: g\r\nContent-Length: 0\r\n".encode() + AUTH + b"\r\n"
    )
    assert (status, reason(body)) == (405, "use POST")
    assert guest.healthy()


def test_head_and_unknown_methods_are_refused_and_the_server_keeps_serving(guest: Guest) -> None:
    status, _ = guest.exchange(b"HEAD /execute HTTP/1.1\r\nHost: g\r\n" + AUTH + b"\r\n", expect_body=False)
    assert status == 405
    status, body = guest.exchange(b"BREW /execute HTTP/1.1\r\nHost: g\r\n" + AUTH + b"\r\n")
    assert status == 501 and "Unsupported method ('BREW')" in reason(body)
    assert guest.healthy()


REQUIRED_STRING_FIELDS = {
    "/setup/open_file": "path",
    "/setup/activate_window": "window_name",
    "/setup/close_window": "window_name",
    "/file": "file_path",
    "/list_directory": "path",
    "/window_size": "app_class_name",
    "/setup/change_wallpaper": "path",
}


@pytest.mark.parametrize(("endpoint", "field"), sorted(REQUIRED_STRING_FIELDS.items()))
def test_missing_fields_are_named(guest: Guest, endpoint: str, field: str) -> None:
    status, body = guest.exchange(post(endpoint, b"{}"))
    assert (status, reason(body)) == (400, f"missing field {field!r}")


WRONG_TYPES = [5, 1.5, True, [], ["x"], {}, {"a": 1}]


@pytest.mark.parametrize("value", WRONG_TYPES, ids=repr)
@pytest.mark.parametrize(("endpoint", "field"), sorted(REQUIRED_STRING_FIELDS.items()))
def test_wrong_json_types_in_string_fields_are_400(
    guest: Guest, endpoint: str, field: str, value: object
) -> None:
    status, body = guest.exchange(post(endpoint, json.dumps({field: value}).encode()))
    assert (status, reason(body)) == (400, f"field {field!r} must be a string")


@pytest.mark.parametrize(
    ("endpoint", "payload", "message"),
    [
        ("/execute", {"command": 5}, "'command' must be a string or a list of strings"),
        ("/execute", {"command": ["ls", 3]}, "'command' must be a string or a list of strings"),
        ("/execute", {"command": {"argv": "ls"}}, "'command' must be a string or a list of strings"),
        ("/execute", {"command": None}, "'command' must be a string or a list of strings"),
        ("/execute", {"command": "a\x00b"}, "'command' contains a NUL byte"),
        ("/execute", {"command": ["ls", "a\x00b"]}, "'command' contains a NUL byte"),
        ("/execute", {"command": "a\x00b", "shell": True}, "'command' contains a NUL byte"),
        ("/execute", {"command": "true", "shell": []}, "field 'shell' must be true or false"),
        ("/execute", {"command": "true", "shell": {"x": 1}}, "field 'shell' must be true or false"),
        ("/execute", {"command": "true", "shell": 2.5}, "field 'shell' must be true or false"),
        ("/execute", {"command": "true", "timeout": True}, "field 'timeout' must be a number"),
        ("/execute", {"command": "true", "timeout": [1]}, "field 'timeout' must be a number"),
        ("/execute", {"command": "true", "timeout": 0}, "field 'timeout' must be positive"),
        ("/execute", {"command": "true", "timeout": float("inf")}, "field 'timeout' must be a finite number"),
        ("/execute", {"command": "true", "timeout": float("nan")}, "field 'timeout' must be a finite number"),
        ("/execute", {"command": "true", "timeout": "1e400"}, "field 'timeout' must be a finite number"),
        ("/setup/launch", {"command": 7}, "'command' must be a string or a list of strings"),
        ("/setup/launch", {"command": ["x\x00"]}, "'command' contains a NUL byte"),
        ("/run_python", {"code": 3}, "'code' must be a string"),
        ("/run_python", {"code": "pass", "timeout": float("inf")}, "field 'timeout' must be a finite number"),
        ("/run_bash_script", {"script": ["ls"]}, "'script' must be a string"),
        ("/run_bash_script", {"script": "a\x00b"}, "'script' contains a NUL byte"),
        (
            "/run_bash_script",
            {"script": "true", "timeout": float("nan")},
            "field 'timeout' must be a finite number",
        ),
        ("/run_bash_script", {"script": "true", "working_dir": 5}, "field 'working_dir' must be a string"),
        ("/setup/activate_window", {"window_name": "a\x00b"}, "field 'window_name' contains a NUL byte"),
        ("/setup/close_window", {"window_name": "x", "strict": [1]}, "field 'strict' must be true or false"),
        ("/setup/open_file", {"path": "/x.txt", "timeout": "soon"}, "field 'timeout' must be a number"),
        ("/file", {"file_path": "/etc/x\x00"}, "field 'file_path' contains a NUL byte"),
    ],
)
def test_wrong_values_get_400_with_the_reason_and_nothing_runs(
    guest: Guest, endpoint: str, payload: dict[str, Any], message: str
) -> None:
    """Before the fix, NUL bytes and NaN/Infinity timeouts were 500s with a Python traceback."""
    status, body = guest.exchange(post(endpoint, json.dumps(payload).encode()))
    assert (status, reason(body)) == (400, message)
    assert guest.server.app.worker.codes == []
    assert guest.healthy()


@pytest.mark.parametrize(
    ("body", "content_type", "status", "message"),
    [
        (b"{not json", "application/json", 400, "body is not valid JSON"),
        (b"[1, 2]", "application/json", 400, "JSON body must be an object"),
        (b'"text"', "application/json", 400, "JSON body must be an object"),
        (b"\xff\xfe\x00", "application/json", 400, "body is not valid JSON"),
        (b"\xff\xfe", "application/x-www-form-urlencoded", 400, "form body is not UTF-8"),
        (b"<x/>", "text/xml", 415, "unsupported content type 'text/xml'"),
        (b"--b\r\nnot a part", "multipart/form-data; boundary=b", 400, "missing field 'file_path'"),
        (b"junk", "multipart/form-data", 400, "malformed multipart body"),
    ],
)
def test_invalid_bodies_get_4xx_with_a_reason(
    guest: Guest, body: bytes, content_type: str, status: int, message: str
) -> None:
    got, answer = guest.exchange(post("/file", body, content_type))
    assert got == status
    assert reason(answer).startswith(message)
    assert guest.healthy()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    endpoint=st.sampled_from(sorted(REQUIRED_STRING_FIELDS)),
    payload=st.dictionaries(
        st.sampled_from(["path", "file_path", "window_name", "app_class_name", "timeout", "strict", "x"]),
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers()
            | st.floats()
            | st.text(max_size=5).map(lambda t: t + "\x00"),
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
            ),
            max_leaves=6,
        ),
        max_size=4,
    ),
)
def test_fuzzed_bodies_never_get_a_500(guest: Guest, endpoint: str, payload: dict[str, Any]) -> None:
    """Any JSON in the fields (strings always carry a NUL, so nothing is ever opened or run)."""
    status, body = guest.exchange(post(endpoint, json.dumps(payload).encode()))
    assert 400 <= status < 500, (status, body)
    assert reason(body)


# -- tokens --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        b"",
        b"Authorization: Bearer\r\n",
        b"Authorization: Bearer wrong\r\n",
        b"Authorization: bearer " + TOKEN.encode() + b"\r\n",
        b"Authorization: Basic " + TOKEN.encode() + b"\r\n",
        b"Authorization: Bearer " + TOKEN[:-1].encode() + b"\r\n",
        b"Authorization: Bearer " + TOKEN.encode() + b"x\r\n",
        b"Authorization: Bearer \xff\xfe" + TOKEN.encode() + b"\r\n",
        b"Authorization: Bearer " + b"A" * 60000 + b"\r\n",
    ],
)
def test_missing_or_wrong_tokens_get_401(guest: Guest, header: bytes) -> None:
    status, body = guest.exchange(
        b"POST /execute HTTP/1.1\r\nHost: g\r\nContent-Length: 2\r\n" + header + b"\r\n{}"
    )
    assert (status, reason(body)) == (401, "missing or wrong bearer token")
    assert guest.healthy()


def test_the_token_is_compared_with_hmac_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(server_module.hmac, "compare_digest", spy)
    app = GuestApp(TOKEN, worker=InertWorker())
    assert app.authorized(f"Bearer {TOKEN}") and not app.authorized("Bearer nope")
    assert calls == [(TOKEN.encode(), TOKEN.encode()), (b"nope", TOKEN.encode())]
    source = inspect.getsource(GuestApp.authorized)
    assert "==" not in source and "compare_digest" in source


# -- sizes, lengths and floods -------------------------------------------------------------------


def test_a_content_length_far_over_the_limit_is_413_and_nothing_is_read(guest: Guest) -> None:
    started = time.monotonic()
    status, body = guest.exchange(
        b"POST /setup/upload HTTP/1.1\r\nHost: g\r\n"
        + AUTH
        + f"Content-Length: {MAX_BODY * 8}\r\n\r\n".encode()
    )
    assert status == 413
    assert (
        reason(body)
        == f"bad Content-Length '{MAX_BODY * 8}': give the body's size in bytes, at most {MAX_BODY}"
    )
    assert time.monotonic() - started < REQUEST_TIMEOUT  # answered from the headers alone
    assert guest.healthy()


@pytest.mark.parametrize("length", ["-1", "lots", "1e3", "0x10", ""])
def test_malformed_content_lengths_are_400(guest: Guest, length: str) -> None:
    status, body = guest.exchange(
        b"POST /execute HTTP/1.1\r\nHost: g\r\n" + AUTH + f"Content-Length: {length}\r\n\r\n".encode()
    )
    assert status == 400 and "bad Content-Length" in reason(body)
    assert guest.healthy()


def test_conflicting_content_lengths_are_400(guest: Guest) -> None:
    status, body = guest.exchange(
        b"POST /execute HTTP/1.1\r\nHost: g\r\n" + AUTH + b"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"
    )
    assert (status, reason(body)) == (400, "conflicting Content-Length headers")
    assert guest.healthy()


def test_chunked_bodies_are_411(guest: Guest) -> None:
    status, body = guest.exchange(
        b"POST /execute HTTP/1.1\r\nHost: g\r\n"
        + AUTH
        + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    )
    assert (status, reason(body)) == (411, "chunked bodies are not supported")
    assert guest.healthy()


def test_a_body_shorter_than_its_length_times_out_without_blocking_others(guest: Guest) -> None:
    """The liar holds only its own connection, and only for the request timeout."""
    with guest.connect() as liar:
        liar.sendall(post("/run_python", b'{"code": "pass"}')[:-4])  # 4 bytes missing, forever
        started = time.monotonic()
        assert guest.healthy()  # another client is served meanwhile ...
        assert still_held(liar)  # ... not after the liar was dropped
        liar.settimeout(10)
        assert liar.recv(100) == b""  # dropped after request_timeout
        assert time.monotonic() - started < REQUEST_TIMEOUT + 4
    assert guest.server.app.worker.codes == []


def test_a_body_longer_than_its_length_leaves_a_bad_request_behind(guest: Guest) -> None:
    """The extra bytes are read as the next request on the connection: a 400, never executed."""
    with guest.connect() as sock:
        sock.sendall(post("/file", b"{}") + b"GARBAGE\x00\x01 not http\r\n\r\n")
        stream = sock.makefile("rb")
        first = read_response(stream)
        second = read_response(stream)
    assert first[0] == 400 and reason(first[1]) == "missing field 'file_path'"
    assert second[0] == 400
    assert guest.healthy()


def test_a_header_flood_is_431(guest: Guest) -> None:
    flood = b"".join(f"X-Flood-{i}: {'y' * 50}\r\n".encode() for i in range(500))
    status, body = guest.exchange(b"GET /platform HTTP/1.1\r\nHost: g\r\n" + AUTH + flood + b"\r\n")
    assert status == 431 and "Too many headers" in reason(body)
    assert guest.healthy()


def test_an_overlong_header_line_or_request_line_is_refused(guest: Guest) -> None:
    status, _ = guest.exchange(b"GET /platform HTTP/1.1\r\nX-Big: " + b"z" * 70000 + b"\r\n" + AUTH + b"\r\n")
    assert status in (400, 431)
    status, _ = guest.exchange(b"GET /" + b"p" * 70000 + b" HTTP/1.1\r\n\r\n")
    assert status == 414
    assert guest.healthy()


@pytest.mark.parametrize(
    "garbage",
    [
        b"\r\n\r\n",
        b"GET\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        b"GET / HTTP/9.9\r\n\r\n",
        b"\x00" * 64 + b"\r\n",
    ],
    ids=["empty", "no-path", "tls-hello", "http-9.9", "nul-bytes"],
)
def test_garbage_request_lines_are_refused(guest: Guest, garbage: bytes) -> None:
    status, _ = guest.exchange(garbage, timeout=5)
    assert status == 0 or 400 <= status < 500 or status == 505
    assert guest.healthy()


def test_slowloris_partial_headers_time_out_and_others_are_served(guest: Guest) -> None:
    slow = []
    for _ in range(20):
        slow.append(guest.connect_patiently())
    try:
        for sock in slow:
            sock.sendall(b"GET /platform HTTP/1.1\r\nHost: g\r\nX-Slow: ")
        started = time.monotonic()
        assert guest.healthy()
        assert all(still_held(sock) for sock in slow)  # served before they were dropped
        for sock in slow:
            sock.settimeout(10)
            assert sock.recv(100) == b""  # dropped after request_timeout
        assert time.monotonic() - started < REQUEST_TIMEOUT + 4
    finally:
        for sock in slow:
            sock.close()
    assert guest.healthy()


def test_a_burst_of_connections_waits_in_the_backlog_instead_of_being_refused(tmp_path: Path) -> None:
    # The accept loop is not running yet, as when it falls behind on a loaded machine: with
    # socketserver's default backlog of 5, the seventh connect failed at once with EAGAIN.
    path = str(tmp_path / "burst.sock")
    server = make_server(GuestApp(TOKEN, worker=InertWorker()), unix_socket=path)
    burst = [Guest(path, server).connect() for _ in range(50)]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        for sock in burst:
            sock.sendall(b"GET /platform HTTP/1.1\r\nHost: g\r\nConnection: close\r\n" + AUTH + b"\r\n")
        assert [read_response(sock.makefile("rb")) for sock in burst] == [(200, b"Linux")] * 50
    finally:
        for sock in burst:
            sock.close()
        server.shutdown()
        server.server_close()


class SlowWorker(InertWorker):
    """Takes a while to run each action, long enough for an impatient client to hang up."""

    def run(self, code: str, timeout: float) -> WorkerResult:
        time.sleep(0.3)
        return super().run(code, timeout)


def test_a_client_hanging_up_before_its_answer_leaves_no_traceback(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "hangup.sock")
    worker = SlowWorker()
    server = make_server(GuestApp(TOKEN, worker=worker), unix_socket=path)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    guest = Guest(path, server)
    try:
        for _ in range(3):
            with guest.connect() as impatient:
                impatient.sendall(post("/run_python", b'{"code": "pass"}'))
            # the answer is written 0.3 s later, to a closed socket (EPIPE)
        deadline = time.monotonic() + 10
        while len(worker.codes) < 3:  # the actions do run; only their answers have nowhere to go
            assert time.monotonic() < deadline, f"{len(worker.codes)} of 3 actions ran"
            time.sleep(0.05)
        time.sleep(0.5)  # the last answer is written, and fails, right after its action
        assert guest.healthy()
    finally:
        server.shutdown()
        server.server_close()
    assert "Traceback" not in capfd.readouterr().err


def test_idle_connections_are_closed_after_the_idle_timeout(guest: Guest) -> None:
    with guest.connect() as sock:
        started = time.monotonic()
        sock.settimeout(10)
        assert sock.recv(100) == b""
        assert IDLE_TIMEOUT - 0.5 < time.monotonic() - started < IDLE_TIMEOUT + 4


def test_a_kept_alive_connection_survives_pauses_shorter_than_the_idle_timeout(guest: Guest) -> None:
    request = b"GET /platform HTTP/1.1\r\nHost: g\r\n" + AUTH + b"\r\n"
    with guest.connect() as sock:
        stream = sock.makefile("rb")
        sock.sendall(request)
        assert read_response(stream) == (200, b"Linux")
        time.sleep(REQUEST_TIMEOUT + 0.5)  # longer than request_timeout, shorter than idle_timeout
        sock.sendall(request)
        assert read_response(stream) == (200, b"Linux")


def test_the_client_survives_the_guest_closing_its_idle_connection(guest: Guest) -> None:
    # An action (not idempotent, so never re-sent) after the guest has closed the client's
    # kept-alive connection for idleness: the client opens a new connection instead.
    client = GuestClient(unix_socket=guest.path, token=TOKEN, retries=1)
    client.reuse_idle_s = IDLE_TIMEOUT / 2
    assert client.execute(["echo", "before"]).output.strip() == "before"
    time.sleep(IDLE_TIMEOUT + 1.0)  # the server has closed the connection by now
    assert client.execute(["echo", "after"]).output.strip() == "after"
    client.close()


def test_a_stale_connection_is_what_the_client_avoids(guest: Guest) -> None:
    # The same pause with reuse allowed: the request goes into the closed connection and
    # fails, which is why the client does not reuse connections idle that long.
    client = GuestClient(unix_socket=guest.path, token=TOKEN, retries=1)
    client.reuse_idle_s = IDLE_TIMEOUT * 10
    client.execute(["true"])
    time.sleep(IDLE_TIMEOUT + 1.0)
    with pytest.raises(GuestUnreachable):
        client.execute(["true"])
    client.close()


def test_the_default_timeouts_leave_room_for_slow_agents() -> None:
    assert client_module.REUSE_IDLE_S < server_http.IDLE_TIMEOUT
    assert server_http.IDLE_TIMEOUT >= 600 and 10 <= server_http.REQUEST_TIMEOUT <= 300


# -- where the server listens -------------------------------------------------------------------


def test_the_unix_socket_is_private_to_its_owner(guest: Guest) -> None:
    mode = os.stat(guest.path).st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600


def test_the_socket_is_never_created_with_wider_permissions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mode at the instant of bind (before the chmod) is already owner-only."""
    seen: list[int] = []
    real_chmod = os.chmod

    def spy(path: Any, mode: int, *args: Any, **kwargs: Any) -> None:
        seen.append(stat.S_IMODE(os.stat(path).st_mode))
        real_chmod(path, mode, *args, **kwargs)

    monkeypatch.setattr(server_http.os, "chmod", spy)
    old = os.umask(0)
    try:
        server = make_server(GuestApp(TOKEN, worker=InertWorker()), unix_socket=str(tmp_path / "s.sock"))
    finally:
        os.umask(old)
    server.server_close()
    assert seen and seen[0] & 0o077 == 0


def test_a_stale_socket_is_replaced_but_another_file_is_never_deleted(tmp_path: Path) -> None:
    stale = tmp_path / "stale.sock"
    old = socket.socket(socket.AF_UNIX)
    old.bind(str(stale))
    old.close()
    make_server(GuestApp(TOKEN, worker=InertWorker()), unix_socket=str(stale)).server_close()
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    with pytest.raises(OSError, match="exists and is not a socket; refusing to replace it"):
        make_server(GuestApp(TOKEN, worker=InertWorker()), unix_socket=str(precious))
    assert precious.read_text() == "keep me"


def test_tcp_defaults_to_loopback_never_all_interfaces() -> None:
    server = make_server(GuestApp(TOKEN, worker=InertWorker()))
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()
    assert inspect.signature(make_server).parameters["host"].default == "127.0.0.1"


def test_the_command_line_defaults_to_loopback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pytest_osworld.guest import __main__ as cli

    made: dict[str, Any] = {}

    def fake_make_server(app: GuestApp, **kwargs: Any) -> Any:
        made.update(kwargs)
        raise SystemExit(0)

    monkeypatch.setattr(cli, "make_server", fake_make_server)
    monkeypatch.setattr(cli, "GuestApp", lambda token: object())
    (tmp_path / "token").write_text(TOKEN)
    with pytest.raises(SystemExit):
        cli.main(["--token-file", str(tmp_path / "token"), "--port", "5000"])
    assert made["host"] == "127.0.0.1" and made["port"] == 5000


def test_tcp_serves_only_the_given_address() -> None:
    server = make_server(GuestApp(TOKEN, worker=InertWorker()), host="127.0.0.1", port=0)
    try:
        port = server.server_address[1]
        other = _non_loopback_address()
        if other is None:
            pytest.skip("this machine has no non-loopback IPv4 address to probe")
        with pytest.raises(OSError), socket.create_connection((other, port), timeout=2):
            pass
    finally:
        server.server_close()


def _non_loopback_address() -> str | None:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: nothing is sent, it only picks a route
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address
