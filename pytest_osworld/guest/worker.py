"""The persistent action worker: runs agent code with pyautogui already imported.

OSWorld starts a new interpreter for every action (about 250 ms: interpreter start,
``import pyautogui`` and pyautogui's default pause). The guest server instead keeps one
worker process alive that imported pyautogui once, and sends it code over a socket pair.
A worker that hangs past its timeout is killed and replaced, so a runaway action never
blocks the server.

Wire format, both directions: a 4-byte big-endian length, then that many bytes of JSON.
Request ``{"code": str}``; reply ``{"returncode": int, "output": str, "error": str}``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any

_HEADER = struct.Struct(">I")
#: pyautogui's pause after each call; OSWorld's default is 0.1 s. Overridable by env.
DEFAULT_PAUSE = 0.01


@dataclass(frozen=True)
class WorkerResult:
    """The outcome of one code run in the worker."""

    returncode: int
    output: str
    error: str
    timed_out: bool = False


def send_message(sock: socket.socket, payload: dict[str, Any]) -> None:
    """Write one length-prefixed JSON message."""
    data = json.dumps(payload).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = sock.recv(remaining)
        if not chunk:
            raise ConnectionError("worker channel closed")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def recv_message(sock: socket.socket) -> dict[str, Any]:
    """Read one length-prefixed JSON message."""
    (size,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    message: dict[str, Any] = json.loads(_recv_exact(sock, size))
    return message


def run_code(code: str, preload: dict[str, Any]) -> WorkerResult:
    """Execute ``code`` in a fresh namespace holding ``preload``, capturing its output."""
    out, err = io.StringIO(), io.StringIO()
    namespace: dict[str, Any] = {"__name__": "__main__", **preload}
    returncode = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(code, "<action>", "exec"), namespace)
        except SystemExit as exc:
            if exc.code is None:
                returncode = 0
            elif isinstance(exc.code, int):
                returncode = exc.code
            else:
                print(exc.code, file=sys.stderr)
                returncode = 1
        except BaseException:
            traceback.print_exc()
            returncode = 1
    return WorkerResult(returncode, out.getvalue(), err.getvalue())


def _serve(fd: int) -> None:
    """The worker's main loop: import pyautogui once, then run code until EOF."""
    import pyautogui

    pyautogui.FAILSAFE = False
    pyautogui.PAUSE = float(os.environ.get("OSWORLD_PYAUTOGUI_PAUSE", DEFAULT_PAUSE))
    preload: dict[str, Any] = {"pyautogui": pyautogui, "time": time, "os": os, "sys": sys}
    sock = socket.socket(fileno=fd)
    send_message(sock, {"ready": True})
    while True:
        try:
            request = recv_message(sock)
        except ConnectionError:
            return
        result = run_code(str(request.get("code", "")), preload)
        send_message(
            sock,
            {"returncode": result.returncode, "output": result.output, "error": result.error},
        )


class ActionWorker:
    """The server's handle on the worker process; thread-safe, restarts on demand."""

    def __init__(self, python: str = sys.executable, start_timeout: float = 30.0) -> None:
        self._python = python
        self._start_timeout = start_timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None

    def _spawn(self) -> None:
        parent, child = socket.socketpair()
        proc = subprocess.Popen(
            [self._python, "-m", "pytest_osworld.guest.worker", str(child.fileno())],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        child.close()
        parent.settimeout(self._start_timeout)
        try:
            recv_message(parent)
        except (OSError, ConnectionError):
            proc.kill()
            proc.wait()
            parent.close()
            raise
        self._proc, self._sock = proc, parent

    def _kill(self) -> None:
        if self._sock is not None:
            self._sock.close()
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
        self._proc = self._sock = None

    def alive(self) -> bool:
        """Whether the worker process is running (it starts on first use)."""
        return self._proc is not None and self._proc.poll() is None

    def ensure_started(self) -> None:
        """Start the worker now rather than on the first action."""
        with self._lock:
            if not self.alive():
                self._kill()
                self._spawn()

    def run(self, code: str, timeout: float) -> WorkerResult:
        """Run ``code`` in the worker; on timeout the worker is replaced."""
        with self._lock:
            if not self.alive():
                self._kill()
                self._spawn()
            assert_sock = self._sock
            if assert_sock is None:  # pragma: no cover - _spawn sets it or raises
                raise RuntimeError("worker socket missing after spawn")
            try:
                assert_sock.settimeout(timeout)
                send_message(assert_sock, {"code": code})
                reply = recv_message(assert_sock)
            except TimeoutError:
                self._kill()
                return WorkerResult(-9, "", f"timed out after {timeout:g} s", timed_out=True)
            except (OSError, ConnectionError) as exc:
                self._kill()
                return WorkerResult(-1, "", f"worker died: {exc}")
            return WorkerResult(int(reply["returncode"]), str(reply["output"]), str(reply["error"]))

    def close(self) -> None:
        """Stop the worker."""
        with self._lock:
            self._kill()


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
