"""The guest routes that run programs and handle windows: ``/execute``, ``/setup/launch``,
``/run_python``, ``/run_bash_script``, ``/setup/open_file``, ``/setup/activate_window``
and ``/setup/close_window``.

:class:`CommandRoutes` is a mixin of :class:`pytest_osworld.guest.server.GuestApp`;
``python -c "import pyautogui..."`` commands and ``/run_python`` code go to the app's
persistent action worker (:mod:`pytest_osworld.guest.worker`), everything else to a
child process started in the user's home.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import threading
from pathlib import Path

from pytest_osworld.guest import desktop
from pytest_osworld.guest.server_protocol import (
    HTTPError,
    Request,
    Response,
    bool_field,
    command_argv,
    expand_path,
    number_field,
    pyautogui_snippet,
    str_field,
)
from pytest_osworld.guest.worker import ActionWorker

#: Bound of ``/setup/open_file`` when the request names none (OSWorld waits up to 1800 s).
DEFAULT_OPEN_TIMEOUT = 120.0
MAX_OPEN_TIMEOUT = 1800.0

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


class CommandRoutes:
    """Routes that start programs, run code in the worker, and open, raise or close windows."""

    #: the persistent pyautogui worker (set by the app)
    worker: ActionWorker

    def execute(self, request: Request) -> Response:
        """Run a command and wait: ``{status, output, error, returncode}``."""
        fields = request.json()
        shell = bool_field(fields, "shell")
        argv = command_argv(fields.get("command"), shell)
        timeout = number_field(fields, "timeout", 120.0)
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
        shell = bool_field(fields, "shell")
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
        result = self.worker.run(code, number_field(fields, "timeout", 30.0))
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
        timeout = number_field(fields, "timeout", 100.0)
        cwd = expand_path(str_field(fields, "working_dir", required=False) or "~")
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
        path = expand_path(str_field(fields, "path"))
        timeout = min(number_field(fields, "timeout", DEFAULT_OPEN_TIMEOUT), MAX_OPEN_TIMEOUT)
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
        name = str_field(fields, "window_name")
        done = desktop.window_op(action, name, bool_field(fields, "strict"), bool_field(fields, "by_class"))
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
