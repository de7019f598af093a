"""The desktop's VNC server for the live view: x11vnc, started when someone first watches.

Nothing runs until the host asks: the first ``GET /vnc`` (an upgraded connection the guest
server bridges to x11vnc, see :mod:`~pytest_osworld.guest.server_http`) or ``POST
/vnc/input`` starts x11vnc on a unix socket in a private folder (mode 0700), never on a
TCP port. It starts view-only and ignores every viewer's input until the host takes over
(``POST /vnc/input``, which turns view-only mode off with ``x11vnc -remote``). The socket
is reachable only through the guest server, so only with the desktop's token, and only by
the ways the provider already reaches the guest (a unix socket, a relay into a network
namespace, a loopback port).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from pytest_osworld.guest.server_protocol import HTTPError

#: The ``Upgrade`` token of ``GET /vnc``: after ``101`` the connection carries VNC's bytes.
VNC_UPGRADE = "osworld-vnc"
#: Seconds x11vnc gets to accept its first connection (a VM under software emulation is slow).
START_TIMEOUT = 30.0
#: Seconds ``x11vnc -remote noviewonly`` is tried before x11vnc is started again without
#: view-only mode instead.
REMOTE_TIMEOUT = 8.0


class VncServer:
    """One x11vnc for this desktop's display, started on demand, view-only until asked."""

    def __init__(self, display: str | None = None, start_timeout: float = START_TIMEOUT) -> None:
        self.display = display or os.environ.get("DISPLAY", ":0")
        self.start_timeout = start_timeout
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._folder: Path | None = None
        #: Whether viewers' input reaches the desktop.
        self.input_allowed = False

    @property
    def socket_path(self) -> Path | None:
        """x11vnc's unix socket once it was started (None before)."""
        return self._folder / "vnc.sock" if self._folder is not None else None

    def connect(self) -> socket.socket:
        """A connection to x11vnc (started view-only first if it is not running)."""
        with self._lock:
            path = self._ensure_running()
        return _connect(path)

    def allow_input(self) -> None:
        """Let viewers' input reach the desktop: x11vnc leaves view-only mode (or starts without it)."""
        with self._lock:
            if self.input_allowed:
                return
            self.input_allowed = True
            try:
                if self._running() and self._remote_noviewonly():
                    return
                # Not running, or it did not take the command (a busy or slow desktop): start
                # it without view-only mode; viewers reconnect (noVNC does by itself).
                self._stop_process()
                self._ensure_running()
            except BaseException:
                self.input_allowed = False
                raise

    def _remote_noviewonly(self) -> bool:
        """Turn view-only mode off in the running x11vnc (``-remote``, through an X
        property it polls), trying for a few seconds; whether it took the command."""
        deadline = time.monotonic() + REMOTE_TIMEOUT
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                result = subprocess.run(
                    ["x11vnc", "-display", self.display, "-sync", "-remote", "noviewonly"],
                    capture_output=True,
                    timeout=REMOTE_TIMEOUT,
                    check=False,
                )
                if result.returncode == 0:
                    return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.3)

    def close(self) -> None:
        """Stop x11vnc and remove its folder."""
        with self._lock:
            self._stop_process()
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder = None

    def _stop_process(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            if process.poll() is None:
                process.kill()
                process.wait()

    def _running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _ensure_running(self) -> Path:
        """Start x11vnc if it is not running and wait until its socket accepts; its path."""
        if self._running() and self.socket_path is not None:
            return self.socket_path
        if shutil.which("x11vnc") is None:
            raise HTTPError(501, "x11vnc is not installed in this desktop: apt-get install x11vnc")
        if self._folder is None:
            base = os.environ.get("XDG_RUNTIME_DIR")
            self._folder = Path(tempfile.mkdtemp(prefix="osworld-vnc-", dir=base if base else None))
        path = self._folder / "vnc.sock"
        log = self._folder / "x11vnc.log"
        path.unlink(missing_ok=True)
        argv = ["x11vnc", "-display", self.display, "-unixsock", str(path), "-rfbport", "0"]
        argv += ["-nopw", "-forever", "-shared", "-quiet", "-nossl", "-noipv6", "-nowf", "-nosel"]
        argv += ["-o", str(log)]
        if not self.input_allowed:
            argv.append("-viewonly")
        self._process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self._process.poll() is not None:
                code = self._process.returncode
                raise HTTPError(503, f"x11vnc exited at start (exit {code}): {_tail(log)}")
            if path.exists():
                with contextlib.suppress(OSError):
                    _connect(path).close()
                    return path
            if time.monotonic() > deadline:
                raise HTTPError(503, f"x11vnc did not accept within {self.start_timeout:g} s: {_tail(log)}")
            time.sleep(0.05)


def _connect(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        raise
    return sock


def _tail(log: Path) -> str:
    try:
        return " | ".join(log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:])
    except OSError:
        return "(no log)"
