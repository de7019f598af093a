"""The local provider's port relays: a loopback TCP port on the host for a unix socket
inside the current sandbox (Chromium's DevTools, VLC's HTTP interface)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable


class UnixForward:
    """A loopback TCP port on the host relayed to a unix socket of the current sandbox.

    Chromium's DevTools port and VLC's HTTP port live inside the sandbox's (possibly
    unshared) network; the session relays them to unix sockets in the control dir and
    this class makes each reachable on the host at ``127.0.0.1:<port>``.
    """

    def __init__(self, target: Callable[[], str | None]) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._closed = False
        threading.Thread(target=self._accept, name="osworld-forward", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            path = self._target()
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                if path is None:
                    raise ConnectionRefusedError("no sandbox")
                upstream.connect(path)
            except OSError:
                client.close()
                upstream.close()
                continue
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def close(self) -> None:
        """Stop accepting connections."""
        self._closed = True
        self._listener.close()
