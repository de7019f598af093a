"""A minimal VNC (RFB 3.8) client for tests: the handshake, the screen's size, a pointer event.

It reads from any byte source (a socket, the live view's WebSocket), so a test can speak to
x11vnc straight, through the guest server's bridge, or through the host's live server.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable


class RfbClient:
    """Speaks just enough RFB to see the desktop's size and to move its pointer."""

    def __init__(
        self, receive: Callable[[], bytes], send: Callable[[bytes], None], first: bytes = b""
    ) -> None:
        self._receive = receive
        self._send = send
        self._buffer = first

    @classmethod
    def over_socket(cls, sock: socket.socket, first: bytes = b"") -> RfbClient:
        """A client on a connected socket (``first``: bytes already read from it)."""
        sock.settimeout(30)
        return cls(lambda: sock.recv(65536), sock.sendall, first)

    def _read(self, size: int) -> bytes:
        while len(self._buffer) < size:
            chunk = self._receive()
            if not chunk:
                raise ConnectionError(f"the VNC server closed the connection after {self._buffer!r}")
            self._buffer += chunk
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def handshake(self) -> tuple[int, int, str]:
        """Version, no authentication, shared ClientInit; the screen's width, height and name."""
        version = self._read(12)
        if not version.startswith(b"RFB 003."):
            raise ValueError(f"not a VNC server: {version!r}")
        self._send(b"RFB 003.008\n")
        count = self._read(1)[0]
        if count == 0:
            (length,) = struct.unpack(">I", self._read(4))
            raise ValueError(f"the VNC server refused: {self._read(length)!r}")
        kinds = self._read(count)
        if 1 not in kinds:
            raise ValueError(f"the VNC server wants authentication: security types {list(kinds)}")
        self._send(b"\x01")
        (result,) = struct.unpack(">I", self._read(4))
        if result != 0:
            raise ValueError(f"the VNC server refused the connection (result {result})")
        self._send(b"\x01")  # shared: other viewers stay connected
        width, height = struct.unpack(">HH", self._read(4))
        self._read(16)  # pixel format
        (length,) = struct.unpack(">I", self._read(4))
        return width, height, self._read(length).decode("utf-8", "replace")

    def move_pointer(self, x: int, y: int) -> None:
        """A PointerEvent with no button pressed."""
        self._send(struct.pack(">BBHH", 5, 0, x, y))
