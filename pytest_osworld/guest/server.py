"""The guest server: OSWorld's in-VM HTTP API, served inside each desktop.

Same paths and payloads as OSWorld's server (OSWORLD-CONTRACT.md section 4), so OSWorld's
tools can drive our desktops and our client can drive OSWorld's VMs. What differs:

- every request needs ``Authorization: Bearer <token>`` (compared in constant time);
  without it the answer is 401, and malformed requests get a 4xx with a JSON reason;
- a stalled request is dropped after ``REQUEST_TIMEOUT`` and an idle connection after
  ``IDLE_TIMEOUT``, so slow clients never hold more than their own thread;
- there is no debug mode and no interactive error page;
- agent code runs in a persistent worker that imported pyautogui once
  (:mod:`pytest_osworld.guest.worker`), not in a new interpreter per action;
- ``/health`` reports readiness: X, the window manager, the AT-SPI registry, the worker.

Served by :class:`http.server.ThreadingHTTPServer` on a unix socket or loopback TCP.
"""

from __future__ import annotations

import email.parser
import email.policy
import hmac
import json
import math
import os
import shlex
import shutil
import signal
import socket
import socketserver
import stat
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pytest_osworld.guest import a11y, desktop
from pytest_osworld.guest.worker import ActionWorker

#: Largest request body accepted (uploads of task files).
MAX_BODY = 1 << 31
#: Bound of ``/setup/open_file`` when the request names none (OSWorld waits up to 1800 s).
DEFAULT_OPEN_TIMEOUT = 120.0
MAX_OPEN_TIMEOUT = 1800.0
RECORDING_PATH = "/tmp/osworld_recording.mp4"

#: File types opened with a fixed program instead of ``xdg-open`` (whose choice without a
#: desktop environment is unpredictable). OSWorld's tasks open these types.
OPENERS: dict[str, list[str]] = {
    **{
        ext: ["libreoffice", "--norestore"]
        for ext in (
            ".xlsx",
            ".xls",
            ".ods",
            ".csv",
            ".docx",
            ".doc",
            ".odt",
            ".rtf",
            ".pptx",
            ".ppt",
            ".odp",
        )
    },
    ".pdf": ["google-chrome"],
    ".mp4": ["vlc"],
    ".mp3": ["vlc"],
    ".mkv": ["vlc"],
    ".webm": ["vlc"],
}

#: The local desktop's wrappers (``code``, ``google-chrome``, ...). One whose program is
#: not installed exits at once with status 127, which ``launch`` reports as a missing program.
DESKTOP_WRAPPERS = Path(__file__).resolve().parent.parent / "providers" / "local_desktop" / "bin"


def _wrapper_found_nothing(proc: subprocess.Popen[bytes], argv: list[str] | str) -> bool:
    """Whether ``argv`` ran a desktop wrapper that exited 127 within 0.3 s (not installed)."""
    if isinstance(argv, str) or not argv:
        return False
    found = shutil.which(argv[0])
    if found is None or Path(found).resolve().parent != DESKTOP_WRAPPERS:
        return False
    try:
        return proc.wait(timeout=0.3) == 127
    except subprocess.TimeoutExpired:
        return False


class HTTPError(Exception):
    """A request that cannot be served: turned into ``status`` with a JSON reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class Request:
    """One parsed HTTP request."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""

    def content_type(self) -> str:
        """The media type without parameters, lower-case."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def json(self) -> dict[str, Any]:
        """The body as a JSON object (400 when it is not one)."""
        if not self.body:
            return {}
        try:
            value = json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HTTPError(400, f"body is not valid JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise HTTPError(400, "JSON body must be an object")
        return value

    def fields(self) -> dict[str, Any]:
        """Form fields (urlencoded or multipart; file parts as bytes) or JSON keys."""
        kind = self.content_type()
        if kind == "application/json":
            return self.json()
        if kind == "multipart/form-data":
            return _parse_multipart(self.headers.get("content-type", ""), self.body)
        if kind in ("application/x-www-form-urlencoded", ""):
            try:
                text = self.body.decode()
            except UnicodeDecodeError as exc:
                raise HTTPError(400, "form body is not UTF-8") from exc
            if text.lstrip().startswith("{"):
                return self.json()
            return {k: v[-1] for k, v in urllib.parse.parse_qs(text).items()}
        raise HTTPError(415, f"unsupported content type {kind!r}")


@dataclass
class Response:
    """What a route returns: status, body and its media type."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of_json(cls, value: Any, status: int = 200) -> Response:
        """A JSON response."""
        return cls(status, json.dumps(value).encode())

    @classmethod
    def of_text(cls, text: str, status: int = 200) -> Response:
        """A plain-text response."""
        return cls(status, text.encode(), "text/plain; charset=utf-8")


def _parse_multipart(content_type: str, body: bytes) -> dict[str, Any]:
    parser = email.parser.BytesParser(policy=email.policy.HTTP)
    message = parser.parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    if not message.is_multipart():
        raise HTTPError(400, "malformed multipart body")
    result: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        if part.get_filename() is None and name != "file_data":
            result[name] = data.decode("utf-8", "replace")
        else:
            result[name] = data
    return result


def _str_field(fields: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = fields.get(key)
    if value is None or value == "":
        if required:
            raise HTTPError(400, f"missing field {key!r}")
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise HTTPError(400, f"field {key!r} must be a string")
    if "\x00" in value:
        raise HTTPError(400, f"field {key!r} contains a NUL byte")
    return value


def _bool_field(fields: dict[str, Any], key: str) -> bool:
    """``true``/``false`` (OSWorld also sends the strings ``"true"``/``"false"``, and 0/1)."""
    value = fields.get(key, False)
    if value is None:
        return False
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise HTTPError(400, f"field {key!r} must be true or false")


def _number_field(fields: dict[str, Any], key: str, default: float) -> float:
    """A positive, finite number of seconds (JSON ``NaN``/``Infinity`` and booleans are refused)."""
    value = fields.get(key, default)
    if isinstance(value, bool):
        raise HTTPError(400, f"field {key!r} must be a number")
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise HTTPError(400, f"field {key!r} must be a number") from exc
    if not math.isfinite(number):
        raise HTTPError(400, f"field {key!r} must be a finite number")
    if number <= 0:
        raise HTTPError(400, f"field {key!r} must be positive")
    return number


def expand_path(path: str) -> str:
    """``~`` and ``$VAR`` expanded, as OSWorld's server does for file paths."""
    return os.path.expanduser(os.path.expandvars(path))


def command_argv(command: Any, shell: bool) -> list[str] | str:
    """Normalise an ``/execute`` command: a list, or one string for the shell.

    A string without ``shell`` is split like a shell would; arguments starting with
    ``~/`` are expanded (OSWorld does the same).
    """
    if isinstance(command, str):
        if "\x00" in command:
            raise HTTPError(400, "'command' contains a NUL byte")
        if shell:
            return command
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise HTTPError(400, f"cannot split command: {exc}") from exc
    elif isinstance(command, list) and all(isinstance(arg, str) for arg in command):
        if any("\x00" in arg for arg in command):
            raise HTTPError(400, "'command' contains a NUL byte")
        if shell:
            return " ".join(command)
        argv = list(command)
    else:
        raise HTTPError(400, "'command' must be a string or a list of strings")
    if not argv:
        raise HTTPError(400, "'command' is empty")
    return [os.path.expanduser(arg) if arg.startswith("~") else arg for arg in argv]


def pyautogui_snippet(argv: list[str] | str) -> str | None:
    """The code of ``python -c "import pyautogui..."``, which runs in the worker instead."""
    if isinstance(argv, str) or len(argv) != 3 or argv[1] != "-c":
        return None
    if os.path.basename(argv[0]) not in ("python", "python3"):
        return None
    code = argv[2]
    return code if code.lstrip().startswith("import pyautogui") else None


class GuestApp:
    """Routes and their implementations; independent of the HTTP transport."""

    def __init__(self, token: str, worker: ActionWorker | None = None) -> None:
        if not token:
            raise ValueError("the guest server needs a non-empty token")
        self._token = token.encode()
        self.worker = worker or ActionWorker()
        self.screen = desktop.Screen()
        self.tree = a11y.TreeBuilder()
        self._recording: subprocess.Popen[bytes] | None = None
        self._recording_lock = threading.Lock()
        get, post, both = frozenset({"GET"}), frozenset({"POST"}), frozenset({"GET", "POST"})
        self.routes: dict[str, tuple[frozenset[str], Callable[[Request], Response]]] = {
            "/health": (get, self.health),
            "/screenshot": (get, self.screenshot),
            "/accessibility": (get, self.accessibility),
            "/terminal": (get, self.terminal),
            "/execute": (post, self.execute),
            "/setup/execute": (post, self.execute),
            "/setup/launch": (post, self.launch),
            "/setup/open_file": (post, self.open_file),
            "/setup/activate_window": (post, self.activate_window),
            "/setup/close_window": (post, self.close_window),
            "/file": (post, self.read_file),
            "/setup/upload": (post, self.upload),
            "/list_directory": (post, self.list_directory),
            "/screen_size": (both, self.screen_size),
            "/window_size": (post, self.window_size),
            "/cursor_position": (get, self.cursor_position),
            "/wallpaper": (post, self.wallpaper),
            "/setup/change_wallpaper": (post, self.change_wallpaper),
            "/desktop_path": (post, self.desktop_path),
            "/platform": (get, self.platform),
            "/start_recording": (post, self.start_recording),
            "/end_recording": (post, self.end_recording),
            "/run_python": (post, self.run_python),
            "/run_bash_script": (post, self.run_bash_script),
        }

    # -- dispatch ------------------------------------------------------------------------------

    def authorized(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries this server's token."""
        if not header or not header.startswith("Bearer "):
            return False
        return hmac.compare_digest(header[len("Bearer ") :].strip().encode(), self._token)

    def handle(self, request: Request) -> Response:
        """Authorize, route and run one request; every failure becomes a JSON status."""
        if not self.authorized(request.headers.get("authorization")):
            return Response.of_json({"status": "error", "message": "missing or wrong bearer token"}, 401)
        route = self.routes.get(request.path)
        if route is None:
            return Response.of_json({"status": "error", "message": "no such endpoint"}, 404)
        methods, func = route
        if request.method not in methods:
            return Response.of_json(
                {"status": "error", "message": f"use {' or '.join(sorted(methods))}"}, 405
            )
        try:
            return func(request)
        except HTTPError as exc:
            return Response.of_json({"status": "error", "message": exc.reason}, exc.status)
        except Exception as exc:
            traceback.print_exc()
            return Response.of_json({"status": "error", "message": f"{type(exc).__name__}: {exc}"}, 500)

    # -- observation -------------------------------------------------------------------------

    def health(self, request: Request) -> Response:
        """Readiness of X, the window manager, AT-SPI and the action worker."""
        state: dict[str, Any] = {"server": True}
        try:
            desktop.screen_size()
            state["x"] = True
        except Exception as exc:
            state["x"] = False
            state["x_error"] = str(exc)
        try:
            state["wm"] = desktop.window_manager_name() if state["x"] else None
        except Exception:
            state["wm"] = None
        try:
            state["atspi"] = a11y.registry_alive()
        except Exception as exc:
            state["atspi"] = False
            state["atspi_error"] = str(exc)
        try:
            self.worker.ensure_started()
            state["worker"] = True
        except Exception as exc:
            state["worker"] = False
            state["worker_error"] = str(exc)
        state["ready"] = bool(state["x"] and state["wm"] and state["atspi"] and state["worker"])
        return Response.of_json(state)

    def screenshot(self, request: Request) -> Response:
        """The screen as PNG, cursor drawn in."""
        return Response(200, self.screen.grab_png(), "image/png")

    def accessibility(self, request: Request) -> Response:
        """``{"AT": xml}``."""
        return Response.of_json({"AT": self.tree.build()})

    def terminal(self, request: Request) -> Response:
        """``{"output": text | null, "status": "success"}``."""
        return Response.of_json({"output": a11y.focused_terminal_text(), "status": "success"})

    def screen_size(self, request: Request) -> Response:
        """``{"width", "height"}``."""
        width, height = desktop.screen_size()
        return Response.of_json({"width": width, "height": height})

    def window_size(self, request: Request) -> Response:
        """Size of the first window of a WM class, 404 when none matches."""
        name = _str_field(request.fields(), "app_class_name")
        size = desktop.window_size(name)
        if size is None:
            raise HTTPError(404, f"no window of class {name!r}")
        return Response.of_json({"width": size[0], "height": size[1]})

    def cursor_position(self, request: Request) -> Response:
        """``[x, y]``."""
        return Response.of_json(list(desktop.cursor_position()))

    def platform(self, request: Request) -> Response:
        """``Linux``."""
        import platform

        return Response.of_text(platform.system())

    def desktop_path(self, request: Request) -> Response:
        """``{"desktop_path"}``, 404 when the folder is missing."""
        path = os.path.expanduser("~/Desktop")
        if not os.path.isdir(path):
            raise HTTPError(404, f"{path} does not exist")
        return Response.of_json({"desktop_path": path})

    # -- commands ------------------------------------------------------------------------------

    def execute(self, request: Request) -> Response:
        """Run a command and wait: ``{status, output, error, returncode}``."""
        fields = request.json()
        shell = _bool_field(fields, "shell")
        argv = command_argv(fields.get("command"), shell)
        timeout = _number_field(fields, "timeout", 120.0)
        snippet = pyautogui_snippet(argv)
        if snippet is not None:
            result = self.worker.run(snippet, timeout)
            return Response.of_json(
                {
                    "status": "success" if result.returncode == 0 else "error",
                    "output": result.output,
                    "error": result.error,
                    "returncode": result.returncode,
                }
            )
        try:
            done = subprocess.run(
                argv,
                shell=shell,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                cwd=os.path.expanduser("~"),
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except FileNotFoundError as exc:
            return Response.of_json({"status": "error", "output": "", "error": str(exc), "returncode": 127})
        except subprocess.TimeoutExpired as exc:
            raise HTTPError(504, f"command timed out after {timeout:g} s") from exc
        return Response.of_json(
            {
                "status": "success",
                "output": done.stdout,
                "error": done.stderr,
                "returncode": done.returncode,
            }
        )

    def _spawn(self, argv: list[str] | str, shell: bool) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(
            argv,
            shell=shell,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=os.path.expanduser("~"),
            start_new_session=True,
        )
        # Reap it when it ends so no zombie stays behind.
        threading.Thread(target=proc.wait, daemon=True).start()
        return proc

    def launch(self, request: Request) -> Response:
        """Start a command without waiting for it."""
        fields = request.json()
        shell = _bool_field(fields, "shell")
        argv = command_argv(fields.get("command"), shell)
        try:
            proc = self._spawn(argv, shell)
        except FileNotFoundError as exc:
            raise HTTPError(404, f"program not found: {exc.filename or argv}") from exc
        if not shell and _wrapper_found_nothing(proc, argv):
            raise HTTPError(404, f"program not found: {argv[0]} is not installed in this desktop")
        shown = argv if isinstance(argv, str) else shlex.join(argv)
        return Response.of_text(f"{shown} launched successfully")

    def run_python(self, request: Request) -> Response:
        """Run code in the pyautogui worker: ``{status, message, output, error, return_code}``."""
        fields = request.json()
        code = fields.get("code")
        if not isinstance(code, str):
            raise HTTPError(400, "'code' must be a string")
        result = self.worker.run(code, _number_field(fields, "timeout", 30.0))
        ok = result.returncode == 0
        return Response.of_json(
            {
                "status": "success" if ok else "error",
                "message": "executed" if ok else "timed out" if result.timed_out else "failed",
                "output": result.output,
                "error": result.error,
                "return_code": result.returncode,
            }
        )

    def run_bash_script(self, request: Request) -> Response:
        """Run a bash script, stderr merged: ``{status, output, error, returncode}``."""
        fields = request.json()
        script = fields.get("script")
        if not isinstance(script, str):
            raise HTTPError(400, "'script' must be a string")
        if "\x00" in script:
            raise HTTPError(400, "'script' contains a NUL byte")
        timeout = _number_field(fields, "timeout", 100.0)
        cwd = expand_path(_str_field(fields, "working_dir", required=False) or "~")
        if not os.path.isdir(cwd):
            raise HTTPError(400, f"working_dir {cwd} is not a directory")
        try:
            done = subprocess.run(
                ["/bin/bash", "-c", script],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
                timeout=timeout,
                cwd=cwd,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            output = exc.stdout if isinstance(exc.stdout, str) else ""
            return Response.of_json(
                {
                    "status": "error",
                    "output": output,
                    "error": f"timed out after {timeout:g} s",
                    "returncode": -1,
                }
            )
        return Response.of_json(
            {
                "status": "success" if done.returncode == 0 else "error",
                "output": done.stdout,
                "error": "",
                "returncode": done.returncode,
            }
        )

    # -- windows -------------------------------------------------------------------------------

    def open_file(self, request: Request) -> Response:
        """Open a file with its app and wait (bounded) until a window names it."""
        fields = request.json()
        path = expand_path(_str_field(fields, "path"))
        timeout = min(_number_field(fields, "timeout", DEFAULT_OPEN_TIMEOUT), MAX_OPEN_TIMEOUT)
        if not os.path.exists(path):
            raise HTTPError(404, f"{path} does not exist")
        opener = OPENERS.get(os.path.splitext(path)[1].lower(), ["xdg-open"])
        try:
            self._spawn([*opener, path], shell=False)
        except FileNotFoundError as exc:
            raise HTTPError(404, f"no program to open {path}: {exc}") from exc
        window = desktop.wait_for_window(path, timeout)
        if window is None:
            raise HTTPError(504, f"no window showing {os.path.basename(path)} after {timeout:g} s")
        desktop.activate_window_id(window.window_id)
        return Response.of_text(f"{path} opened successfully")

    def _window_op(self, request: Request, action: str) -> Response:
        fields = request.json()
        name = _str_field(fields, "window_name")
        done = desktop.window_op(action, name, _bool_field(fields, "strict"), _bool_field(fields, "by_class"))
        verb = "activated" if action == "a" else "closed"
        if not done:
            return Response.of_text(f"no window matched {name!r}; nothing {verb}")
        return Response.of_text(f"window {name!r} {verb} successfully")

    def activate_window(self, request: Request) -> Response:
        """Raise and focus a window by title or class (no error when none matches)."""
        return self._window_op(request, "a")

    def close_window(self, request: Request) -> Response:
        """Close a window by title or class (no error when none matches)."""
        return self._window_op(request, "c")

    # -- files ---------------------------------------------------------------------------------

    def read_file(self, request: Request) -> Response:
        """The bytes of ``file_path``; 404 when it does not exist."""
        path = expand_path(_str_field(request.fields(), "file_path"))
        if not os.path.exists(path):
            raise HTTPError(404, f"{path} does not exist")
        if not os.path.isfile(path):
            raise HTTPError(400, f"{path} is not a regular file")
        try:
            data = Path(path).read_bytes()
        except PermissionError as exc:
            raise HTTPError(403, f"{path} is not readable") from exc
        name = urllib.parse.quote(os.path.basename(path))
        return Response(
            200,
            data,
            "application/octet-stream",
            {"Content-Disposition": f"attachment; filename*=UTF-8''{name}"},
        )

    def upload(self, request: Request) -> Response:
        """Write multipart ``file_data`` to ``file_path``, creating parent folders."""
        if request.content_type() != "multipart/form-data":
            raise HTTPError(400, "upload needs a multipart/form-data body")
        fields = request.fields()
        path = expand_path(_str_field(fields, "file_path"))
        data = fields.get("file_data")
        if not isinstance(data, bytes):
            raise HTTPError(400, "missing file part 'file_data'")
        target = Path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except PermissionError as exc:
            raise HTTPError(403, f"{path} is not writable") from exc
        except IsADirectoryError as exc:
            raise HTTPError(400, f"{path} is a directory") from exc
        return Response.of_text(f"file uploaded to {path} ({len(data)} bytes)")

    def list_directory(self, request: Request) -> Response:
        """``{"directory_tree": {type, name, children}}`` of ``path``."""
        path = expand_path(_str_field(request.json(), "path"))
        if not os.path.isdir(path):
            raise HTTPError(404, f"{path} is not a directory")
        return Response.of_json({"directory_tree": _tree(path, 0)})

    # -- wallpaper -----------------------------------------------------------------------------

    def wallpaper(self, request: Request) -> Response:
        """The wallpaper file named by gsettings ``picture-uri``; 404 when unset."""
        done = subprocess.run(
            ["gsettings", "get", "org.gnome.desktop.background", "picture-uri"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        uri = done.stdout.strip().strip("'\"")
        path = urllib.parse.unquote(urllib.parse.urlparse(uri).path) if uri else ""
        if not path or not os.path.isfile(path):
            raise HTTPError(404, "no wallpaper file is set")
        return Response(200, Path(path).read_bytes(), "application/octet-stream")

    def change_wallpaper(self, request: Request) -> Response:
        """Set gsettings ``picture-uri`` to ``path``."""
        path = expand_path(_str_field(request.json(), "path"))
        if not os.path.isfile(path):
            raise HTTPError(404, f"{path} does not exist")
        uri = Path(path).absolute().as_uri()
        for key in ("picture-uri", "picture-uri-dark"):
            subprocess.run(
                ["gsettings", "set", "org.gnome.desktop.background", key, uri],
                capture_output=True,
                timeout=10,
                check=False,
            )
        return Response.of_text(f"wallpaper set to {path}")

    # -- recording -----------------------------------------------------------------------------

    def start_recording(self, request: Request) -> Response:
        """Start ffmpeg x11grab into ``/tmp/osworld_recording.mp4``."""
        with self._recording_lock:
            if self._recording is not None and self._recording.poll() is None:
                raise HTTPError(400, "a recording is already running")
            width, height = desktop.screen_size()
            if os.path.exists(RECORDING_PATH):
                os.unlink(RECORDING_PATH)
            proc = subprocess.Popen(
                [
                    "ffmpeg",
                    "-y",
                    "-loglevel",
                    "error",
                    "-f",
                    "x11grab",
                    "-draw_mouse",
                    "1",
                    "-video_size",
                    f"{width}x{height}",
                    "-framerate",
                    "30",
                    "-i",
                    os.environ.get("DISPLAY", ":0"),
                    "-c:v",
                    "libx264",
                    "-preset",
                    "ultrafast",
                    "-pix_fmt",
                    "yuv420p",
                    RECORDING_PATH,
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            # Started means: ffmpeg wrote the file header, or is still running after 2 s.
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline and proc.poll() is None:
                if os.path.exists(RECORDING_PATH) and os.path.getsize(RECORDING_PATH) > 0:
                    break
                time.sleep(0.05)
            if proc.poll() is not None:
                message = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise HTTPError(500, f"ffmpeg exited at once: {message.strip()}")
            self._recording = proc
        return Response.of_json({"status": "success", "message": "recording started"})

    def end_recording(self, request: Request) -> Response:
        """Stop ffmpeg and return the MP4."""
        with self._recording_lock:
            proc, self._recording = self._recording, None
            if proc is None:
                raise HTTPError(400, "no recording is running")
            if proc.stdin is not None:
                try:
                    proc.stdin.write(b"q")
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if not os.path.exists(RECORDING_PATH) or os.path.getsize(RECORDING_PATH) == 0:
            raise HTTPError(500, "the recording file is empty")
        return Response(200, Path(RECORDING_PATH).read_bytes(), "video/mp4")


def _tree(path: str, depth: int) -> dict[str, Any]:
    name = os.path.basename(path.rstrip("/")) or path
    if not os.path.isdir(path) or os.path.islink(path):
        return {"type": "file", "name": name}
    children: list[dict[str, Any]] = []
    if depth < 32:
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            entries = []
        children = [_tree(os.path.join(path, entry), depth + 1) for entry in entries]
    return {"type": "directory", "name": name, "children": children}


#: The most of an unauthorized request's body that is read (and dropped) before the 401.
UNAUTHORIZED_DRAIN = 64 * 1024
#: Seconds a kept-alive connection may sit idle between requests before it is closed.
IDLE_TIMEOUT = 3600.0
#: Seconds a started request may go without sending a byte (request line, headers or
#: body) before its connection is dropped: a slow or stalled client holds only its own
#: thread, and not for long.
REQUEST_TIMEOUT = 60.0


class _Handler(BaseHTTPRequestHandler):
    """Reads one request, hands it to the app, writes its response."""

    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "pytest-osworld-guest"
    sys_version = ""

    def handle_one_request(self) -> None:
        """Wait up to the idle timeout for a request to start, then bound its reads.

        A connection that stays silent is closed after ``server.idle_timeout``; once the
        first byte of a request arrives, every read of it must make progress within
        ``server.request_timeout`` (the base class drops the connection on a timeout).
        """
        self.connection.settimeout(self.server.idle_timeout)
        try:
            started = self.rfile.peek(1)  # type: ignore[attr-defined]
        except (TimeoutError, OSError):
            started = b""
        if not started:
            self.close_connection = True
            return
        self.connection.settimeout(self.server.request_timeout)
        super().handle_one_request()

    def _dispatch(self) -> None:
        parsed = urllib.parse.urlsplit(self.path)
        headers = {key.lower(): value for key, value in self.headers.items()}
        app = self.server.app
        if not app.authorized(headers.get("authorization")):
            # Refuse without reading a large body; a small one is drained first, so a client
            # still sending it reads the 401 instead of a broken pipe.
            declared = headers.get("content-length", "0")
            if declared.isdigit() and 0 < int(declared) <= UNAUTHORIZED_DRAIN:
                self.rfile.read(int(declared))
            self._send(app.handle(Request(self.command, parsed.path, headers)), close=True)
            return
        length_text = headers.get("content-length", "0")
        if len(set(self.headers.get_all("Content-Length") or [])) > 1:
            # Two different lengths: which one the body follows is ambiguous (request smuggling).
            self._send(
                Response.of_json({"status": "error", "message": "conflicting Content-Length headers"}, 400),
                close=True,
            )
            return
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._send(
                Response.of_json({"status": "error", "message": "chunked bodies are not supported"}, 411),
                close=True,
            )
            return
        try:
            length = int(length_text)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            reason = (
                f"bad Content-Length {length_text[:40]!r}: give the body's size in bytes, at most {MAX_BODY}"
            )
            status = 413 if length > MAX_BODY else 400
            self._send(Response.of_json({"status": "error", "message": reason}, status), close=True)
            return
        body = self.rfile.read(length) if length else b""
        self._send(app.handle(Request(self.command, parsed.path, headers, body)))

    def _send(self, response: Response, close: bool = False) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for key, value in response.headers.items():
            self.send_header(key, value)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = _dispatch
    do_POST = _dispatch
    do_PUT = _dispatch
    do_DELETE = _dispatch
    # Methods no route uses still get an authorized 405 naming the right one (not a 501).
    do_HEAD = _dispatch
    do_PATCH = _dispatch
    do_OPTIONS = _dispatch

    def address_string(self) -> str:
        """The peer, readable for unix sockets too."""
        return str(self.client_address[0]) if self.client_address else "unix"

    def log_message(self, format: str, *args: Any) -> None:
        """Access log to stderr (the session log), one line per request."""
        if self.server.verbose:
            sys.stderr.write(f"guest: {self.address_string()} {format % args}\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 refuses a unix-socket connect (EAGAIN) as soon as a
    # busy accept loop falls behind a burst of connections (a pool of clients, a slow-header
    # attack); the kernel's own cap (somaxconn) still applies.
    request_queue_size = 128
    app: GuestApp
    verbose: bool = False
    idle_timeout: float = IDLE_TIMEOUT
    request_timeout: float = REQUEST_TIMEOUT

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Report a request that raised: a client that hung up before its answer is routine.

        Such a client (an interrupted run, a timed-out caller) costs one line in verbose mode,
        not a traceback in the desktop's log; anything else keeps the standard traceback.
        """
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            if self.verbose:
                name = type(error).__name__
                sys.stderr.write(f"guest: the client hung up before its answer was sent ({name})\n")
            return
        super().handle_error(request, client_address)


class _UnixServer(_Server):
    address_family = socket.AF_UNIX

    def server_bind(self) -> None:
        """Bind the socket so that only its owner can ever connect (mode 0600).

        A stale socket at the path is replaced; any other kind of file there is refused
        rather than deleted. The umask is tightened around ``bind`` so the socket never
        exists with wider permissions, even for an instant.
        """
        path = str(self.server_address)
        if os.path.lexists(path):
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                raise OSError(f"{path} exists and is not a socket; refusing to replace it")
            os.unlink(path)
        old_umask = os.umask(0o177)
        try:
            socketserver.TCPServer.server_bind(self)
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        self.server_name = "guest"
        self.server_port = 0


def make_server(
    app: GuestApp, *, unix_socket: str | None = None, host: str = "127.0.0.1", port: int = 0
) -> ThreadingHTTPServer:
    """A bound (not yet serving) HTTP server for ``app``, on a unix socket or TCP."""
    server: _Server
    if unix_socket is not None:
        server = _UnixServer(unix_socket, _Handler)  # type: ignore[arg-type]
    else:
        server = _Server((host, port), _Handler)
    server.app = app
    return server


def serve(app: GuestApp, server: ThreadingHTTPServer) -> None:
    """Serve until SIGTERM or SIGINT; the worker is stopped on the way out."""

    def _stop(signum: int, frame: Any) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        app.worker.close()
