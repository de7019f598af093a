"""The guest server's request handling, without a desktop.

The server is started on a temporary unix socket with a scripted action worker, and
driven both with raw HTTP (to send malformed requests) and with ``GuestClient``.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_osworld.guest.server import (
    GuestApp,
    HTTPError,
    Request,
    command_argv,
    pyautogui_snippet,
)
from pytest_osworld.guest.server_http import make_server
from pytest_osworld.guest.worker import ActionWorker, WorkerResult, run_code

TOKEN = "s3cret-token"


class ScriptedWorker(ActionWorker):
    """Runs code in-process (no pyautogui, no X) and records what it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.codes: list[str] = []

    def ensure_started(self) -> None:
        pass

    def run(self, code: str, timeout: float) -> WorkerResult:
        self.codes.append(code)
        # There is no pyautogui here: drop the import OSWorld's snippets start with.
        return run_code(code.removeprefix("import pyautogui;").strip(), {})

    def close(self) -> None:
        pass


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("guest", timeout=10)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self._path)


@pytest.fixture
def guest(tmp_path: Path) -> Iterator[tuple[str, ScriptedWorker]]:
    worker = ScriptedWorker()
    app = GuestApp(TOKEN, worker=worker)
    path = str(tmp_path / "guest.sock")
    server = make_server(app, unix_socket=path)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield path, worker
    server.shutdown()
    server.server_close()


def call(
    path: str,
    method: str,
    endpoint: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    token: str | None = TOKEN,
) -> tuple[int, bytes]:
    conn = _UnixConnection(path)
    all_headers = dict(headers or {})
    if token is not None:
        all_headers["Authorization"] = f"Bearer {token}"
    conn.request(method, endpoint, body=body, headers=all_headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def post_json(path: str, endpoint: str, payload: object, token: str | None = TOKEN) -> tuple[int, dict]:
    status, data = call(
        path,
        "POST",
        endpoint,
        json.dumps(payload).encode(),
        {"Content-Type": "application/json"},
        token,
    )
    return status, json.loads(data)


# -- authentication --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "endpoint"),
    [
        ("GET", "/health"),
        ("GET", "/screenshot"),
        ("POST", "/execute"),
        ("POST", "/file"),
        ("GET", "/no-such-endpoint"),
    ],
)
def test_requests_without_token_get_401(guest, method, endpoint):
    path, _ = guest
    status, data = call(path, method, endpoint, b"{}", token=None)
    assert status == 401
    assert json.loads(data)["message"] == "missing or wrong bearer token"


@pytest.mark.parametrize("header", ["Bearer wrong", "Bearer ", "Basic czNjcmV0", TOKEN, ""])
def test_wrong_authorization_headers_get_401(guest, header):
    path, _ = guest
    status, _ = call(path, "GET", "/platform", headers={"Authorization": header}, token=None)
    assert status == 401


def test_the_right_token_is_accepted(guest):
    path, _ = guest
    status, data = call(path, "GET", "/platform")
    assert (status, data) == (200, b"Linux")


def test_an_unauthorized_upload_is_refused_before_its_body_is_read(guest, tmp_path):
    """The 401 comes back after the headers alone: the server never waits for the body."""
    import socket

    path, _ = guest
    target = tmp_path / "never.txt"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(path)
        sock.sendall(
            b"POST /setup/upload HTTP/1.1\r\nHost: guest\r\n"
            b"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n"
        )
        status_line = sock.makefile("rb").readline()
    assert status_line.split()[1] == b"401"
    assert not target.exists()


def test_an_empty_token_cannot_start_a_server():
    with pytest.raises(ValueError, match="non-empty token"):
        GuestApp("")


# -- malformed requests -----------------------------------------------------------------------


def test_unknown_endpoint_is_404(guest):
    path, _ = guest
    status, data = call(path, "GET", "/nope")
    assert status == 404
    assert "no such endpoint" in json.loads(data)["message"]


def test_wrong_method_is_405(guest):
    path, _ = guest
    status, data = call(path, "GET", "/execute")
    assert status == 405
    assert json.loads(data)["message"] == "use POST"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "body is not valid JSON"),
        (b"[1, 2]", "JSON body must be an object"),
        (b'{"command": 5}', "'command' must be a string or a list of strings"),
        (b'{"command": []}', "'command' is empty"),
        (b'{"command": "echo \\"unterminated"}', "cannot split command"),
        (b'{"command": "true", "timeout": "soon"}', "field 'timeout' must be a number"),
        (b'{"command": "true", "timeout": -1}', "field 'timeout' must be positive"),
    ],
)
def test_malformed_execute_gets_400_with_a_reason(guest, body, reason):
    path, _ = guest
    status, data = call(path, "POST", "/execute", body, {"Content-Type": "application/json"})
    assert status == 400
    assert reason in json.loads(data)["message"]


def test_missing_fields_name_the_field(guest):
    path, _ = guest
    assert post_json(path, "/setup/open_file", {})[1]["message"] == "missing field 'path'"
    assert post_json(path, "/list_directory", {"path": ""})[1]["message"] == "missing field 'path'"
    assert post_json(path, "/run_python", {"code": 3}) == (
        400,
        {"status": "error", "message": "'code' must be a string"},
    )


def test_bad_content_length_is_400(guest):
    path, _ = guest
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(
        b"POST /execute HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer "
        + TOKEN.encode()
        + b"\r\nContent-Length: lots\r\n\r\n"
    )
    reply = sock.recv(4096)
    sock.close()
    assert reply.startswith(b"HTTP/1.1 400")


def test_upload_needs_multipart(guest):
    path, _ = guest
    status, data = call(
        path,
        "POST",
        "/setup/upload",
        b"file_path=/tmp/x",
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 400
    assert "multipart" in json.loads(data)["message"]


def test_unsupported_content_type_is_415(guest):
    path, _ = guest
    status, _ = call(path, "POST", "/file", b"<x/>", {"Content-Type": "text/xml"})
    assert status == 415


# -- behaviour ---------------------------------------------------------------------------------


def test_execute_returns_output_and_exit_code(guest):
    path, _ = guest
    status, data = post_json(path, "/execute", {"command": ["sh", "-c", "echo hi; echo err >&2; exit 3"]})
    assert status == 200
    assert data == {"status": "success", "output": "hi\n", "error": "err\n", "returncode": 3}


def test_execute_string_command_is_split_and_shell_is_honoured(guest):
    path, _ = guest
    assert post_json(path, "/execute", {"command": "echo a   b"})[1]["output"] == "a b\n"
    assert post_json(path, "/execute", {"command": "echo $((1+2))", "shell": True})[1]["output"] == "3\n"


def test_execute_missing_program_is_127(guest):
    path, _ = guest
    status, data = post_json(path, "/execute", {"command": ["no-such-program-xyz"]})
    assert (status, data["returncode"], data["status"]) == (200, 127, "error")


def test_execute_timeout_is_504(guest):
    path, _ = guest
    status, data = post_json(path, "/execute", {"command": ["sleep", "5"], "timeout": 0.2})
    assert status == 504
    assert "timed out" in data["message"]


def test_python_c_pyautogui_commands_run_in_the_worker(guest):
    path, worker = guest
    code = "import pyautogui; print('from worker')"
    status, data = post_json(path, "/execute", {"command": ["python3", "-c", code]})
    assert status == 200
    assert data["output"] == "from worker\n"
    assert worker.codes == [code]


def test_run_python_reports_output_errors_and_exit_codes(guest):
    path, _ = guest
    ok = post_json(path, "/run_python", {"code": "print(6 * 7)"})[1]
    assert (ok["status"], ok["output"], ok["return_code"]) == ("success", "42\n", 0)
    bad = post_json(path, "/run_python", {"code": "1 / 0"})[1]
    assert bad["status"] == "error"
    assert bad["return_code"] == 1
    assert "ZeroDivisionError" in bad["error"]
    exited = post_json(path, "/run_python", {"code": "raise SystemExit(4)"})[1]
    assert exited["return_code"] == 4


def test_run_bash_script_merges_stderr(guest, tmp_path):
    path, _ = guest
    status, data = post_json(
        path,
        "/run_bash_script",
        {"script": "pwd; echo oops >&2; exit 2", "working_dir": str(tmp_path)},
    )
    assert status == 200
    assert data["output"] == f"{tmp_path}\noops\n"
    assert (data["returncode"], data["error"], data["status"]) == (2, "", "error")


def test_file_reads_and_404s(guest, tmp_path):
    path, _ = guest
    target = tmp_path / "a.bin"
    target.write_bytes(b"\x00\x01payload")
    status, data = call(
        path,
        "POST",
        "/file",
        f"file_path={target}".encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert (status, data) == (200, b"\x00\x01payload")
    status, data = call(
        path,
        "POST",
        "/file",
        f"file_path={tmp_path}/missing".encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 404
    assert "does not exist" in json.loads(data)["message"]
    status, _ = call(
        path,
        "POST",
        "/file",
        f"file_path={tmp_path}".encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 400


def test_list_directory_tree(guest, tmp_path):
    path, _ = guest
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("x")
    status, data = post_json(path, "/list_directory", {"path": str(tmp_path / "d")})
    assert status == 200
    assert data == {
        "directory_tree": {"type": "directory", "name": "d", "children": [{"type": "file", "name": "f.txt"}]}
    }
    assert post_json(path, "/list_directory", {"path": str(tmp_path / "nope")})[0] == 404


def test_keep_alive_serves_several_requests_on_one_connection(guest):
    path, _ = guest
    conn = _UnixConnection(path)
    for _ in range(3):
        conn.request("GET", "/platform", headers={"Authorization": f"Bearer {TOKEN}"})
        response = conn.getresponse()
        assert response.read() == b"Linux"
    conn.close()


# -- pure helpers -------------------------------------------------------------------------------


def test_command_argv_expands_home(monkeypatch):
    monkeypatch.setenv("HOME", "/home/user")
    assert command_argv(["ls", "~/Desktop", "a~b"], False) == ["ls", "/home/user/Desktop", "a~b"]
    assert command_argv(["echo", "a", "b"], True) == "echo a b"
    assert command_argv("ls ~/x", True) == "ls ~/x"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["python", "-c", "import pyautogui; pyautogui.click()"], "import pyautogui; pyautogui.click()"),
        (["/usr/bin/python3", "-c", "import pyautogui"], "import pyautogui"),
        (["python", "-c", "import os"], None),
        (["python", "script.py", "x"], None),
        ("python -c 'import pyautogui'", None),
    ],
)
def test_pyautogui_snippet_detection(argv, expected):
    assert pyautogui_snippet(argv) == expected


def test_request_json_rejects_non_objects():
    with pytest.raises(HTTPError, match="must be an object"):
        Request("POST", "/x", {}, b"3").json()


class CountingWorker(ScriptedWorker):
    """Counts how often it was asked to start."""

    def __init__(self) -> None:
        super().__init__()
        self.starts = 0

    def ensure_started(self) -> None:
        self.starts += 1


def test_the_server_warms_itself_up_to_ready_before_anyone_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_osworld.guest import a11y, desktop

    calls = {"x": 0}

    def screen_size() -> tuple[int, int]:
        calls["x"] += 1
        if calls["x"] < 3:  # X comes up on the third look
            raise OSError("Can't connect to display")
        return (1920, 1080)

    monkeypatch.setattr(desktop, "screen_size", screen_size)
    monkeypatch.setattr(desktop, "window_manager_name", lambda: "Openbox")
    monkeypatch.setattr(a11y, "registry_alive", lambda: True)
    worker = CountingWorker()
    app = GuestApp(TOKEN, worker=worker)
    app.start_warming(timeout=10).join(10)
    assert calls["x"] == 3  # it kept looking until ready, then stopped
    assert worker.starts == 1  # asked to start only once X answered
    assert app.readiness()["ready"] is True


def test_a_warm_up_that_never_gets_ready_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_osworld.guest import a11y, desktop

    monkeypatch.setattr(desktop, "screen_size", lambda: (1920, 1080))
    monkeypatch.setattr(desktop, "window_manager_name", lambda: None)  # no window manager, ever
    monkeypatch.setattr(a11y, "registry_alive", lambda: True)
    thread = GuestApp(TOKEN, worker=CountingWorker()).start_warming(timeout=0.3)
    thread.join(5)
    assert not thread.is_alive()


def test_readiness_asked_while_the_shell_is_walked_waits_for_that_walk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm-up and /health both ask whether GNOME Shell's dock is up; each walk of the
    shell's tree costs it and us 0.3-0.7 s of CPU while it starts, so a second asker takes
    the answer of the walk under way instead of walking beside it."""
    from pytest_osworld.guest import a11y, desktop
    from pytest_osworld.guest.server import SHELL_WM

    walks = []
    inside = threading.Event()
    release = threading.Event()

    def shell_ready() -> bool:
        walks.append(threading.current_thread().name)
        inside.set()
        release.wait(5)
        return True

    monkeypatch.setattr(desktop, "screen_size", lambda: (1920, 1080))
    monkeypatch.setattr(desktop, "window_manager_name", lambda: SHELL_WM)
    monkeypatch.setattr(a11y, "registry_alive", lambda: True)
    monkeypatch.setattr(a11y, "shell_ready", shell_ready)
    monkeypatch.setattr(desktop, "xsettings_manager_running", lambda: True)
    app = GuestApp(TOKEN, worker=CountingWorker())
    first = threading.Thread(target=app.readiness, name="first")
    first.start()
    assert inside.wait(5)
    answers = []
    second = threading.Thread(target=lambda: answers.append(app.readiness()["shell"]), name="second")
    second.start()
    time.sleep(0.2)
    assert second.is_alive()  # waiting for the first walk, not walking
    release.set()
    first.join(5)
    second.join(5)
    assert walks == ["first"] and answers == [True]
    assert app.readiness()["ready"] is True and walks == ["first"]  # seen once: never walked again


def test_a_server_without_x_stays_up_and_says_why(tmp_path: Path) -> None:
    """The real server process started where no X display answers (a VM whose session did
    not start): AT-SPI's library would abort the process from the warm-up's readiness
    check (a GLib error, exit status 133, restarted in a loop by its unit); it must keep
    serving and name what is missing, so the provider's timeout message says so."""
    import os
    import subprocess
    import sys

    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    path = str(tmp_path / "guest.sock")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "DISPLAY": ":4093",  # no server has it
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest_osworld.guest",
            "--token-file",
            str(token_file),
            "--unix-socket",
            path,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while not Path(path).exists() and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(2)  # the warm-up's readiness checks run meanwhile
        assert server.poll() is None, server.communicate()[0].decode(errors="replace")
        status, body = call(path, "GET", "/health")
        state = json.loads(body)
        assert status == 200 and state["ready"] is False and state["x"] is False, state
        assert state["atspi_error"] == "no X display", state
        time.sleep(1)
        assert server.poll() is None, server.communicate()[0].decode(errors="replace")
    finally:
        server.kill()
        server.wait(10)


@pytest.mark.parametrize(
    ("wm", "manager", "ready"),
    [("GNOME Shell", False, False), ("GNOME Shell", True, True), ("Openbox", False, True)],
)
def test_under_gnome_shell_readiness_waits_for_the_xsettings_daemon(
    monkeypatch: pytest.MonkeyPatch, wm: str, manager: bool, ready: bool
) -> None:
    """A GTK app started before ``gsd-xsettings`` owns its selection would come up with
    GTK's own theme and font, so under GNOME Shell the desktop is not ready without it;
    under another window manager nobody hands out settings, and nothing waits."""
    from pytest_osworld.guest import a11y, desktop

    asked = []

    def running() -> bool:
        asked.append(wm)
        return manager

    monkeypatch.setattr(desktop, "screen_size", lambda: (1920, 1080))
    monkeypatch.setattr(desktop, "window_manager_name", lambda: wm)
    monkeypatch.setattr(a11y, "registry_alive", lambda: True)
    monkeypatch.setattr(a11y, "shell_ready", lambda: True)
    monkeypatch.setattr(desktop, "xsettings_manager_running", running)
    state = GuestApp(TOKEN, worker=CountingWorker()).readiness()
    assert (state["xsettings"], state["ready"]) == (ready, ready)
    assert asked == ([wm] if wm == "GNOME Shell" else [])
