"""A small pipelined D-Bus client: just enough of the protocol to read AT-SPI trees fast.

libatspi (under pyatspi) makes one blocking round trip per property read. Reading
Calc's tree that way is ~20,000 sequential round trips through the bus daemon. This
client instead writes many method calls before reading any reply, over non-blocking
unix sockets multiplexed with :mod:`selectors`, and dispatches each reply to a
callback that may queue further calls. It speaks the D-Bus wire protocol directly
(authentication ``EXTERNAL``, method calls, replies and errors; signals are ignored),
so it needs neither libdbus nor a GLib main loop, and it can talk to an application
over its private peer-to-peer socket (``Application.GetApplicationBusAddress``),
bypassing the bus daemon.

This module owns the sockets: :class:`Connection` (connect, authenticate, buffers) and
:class:`Pipeline` (the window of calls in flight, the selector loop, reply dispatch).
The messages themselves are built and parsed by :mod:`pytest_osworld.guest.dbus_wire`,
whose names are re-exported here.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import struct
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from pytest_osworld.guest.dbus_wire import (
    ERROR,
    F_DESTINATION,
    F_ERROR_NAME,
    F_INTERFACE,
    F_MEMBER,
    F_PATH,
    F_REPLY_SERIAL,
    F_SENDER,
    F_SIGNATURE,
    METHOD_CALL,
    METHOD_RETURN,
    NO_AUTO_START,
    SIGNAL,
    BusError,
    Callback,
    DBusError,
    encode_method_call,
    parse_address,
    parse_body,
    parse_header,
)

__all__ = [
    "ERROR",
    "F_DESTINATION",
    "F_ERROR_NAME",
    "F_INTERFACE",
    "F_MEMBER",
    "F_PATH",
    "F_REPLY_SERIAL",
    "F_SENDER",
    "F_SIGNATURE",
    "METHOD_CALL",
    "METHOD_RETURN",
    "NO_AUTO_START",
    "SIGNAL",
    "BusError",
    "Callback",
    "Connection",
    "DBusError",
    "Pipeline",
    "encode_method_call",
    "parse_address",
    "parse_body",
    "parse_header",
]


# -- connections ----------------------------------------------------------------------------


class Connection:
    """One authenticated D-Bus connection over a unix socket (bus or peer-to-peer)."""

    def __init__(self, address: str, *, bus: bool, timeout: float = 5.0) -> None:
        self.address = address
        self.is_bus = bus
        self.unique_name = ""
        self.sock = self._connect(address, timeout)
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        #: encoded calls waiting for a free slot in the in-flight window
        self.queue: deque[tuple[int, bytes]] = deque()
        #: the serial of the latest :meth:`call_blocking` (Hello is 1; pipelines start at 2)
        self.blocking_serial = 0
        self.in_flight = 0
        self.closed = False
        self.last_activity = time.monotonic()
        try:
            self._authenticate(timeout)
            if bus:
                (name,) = self.call_blocking(
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus",
                    "Hello",
                    "org.freedesktop.DBus",
                    timeout=timeout,
                )
                self.unique_name = str(name)
        except BaseException:
            self.close()
            raise
        self.sock.setblocking(False)

    @staticmethod
    def _connect(address: str, timeout: float) -> socket.socket:
        targets = parse_address(address)
        if not targets:
            raise BusError(f"no unix socket in D-Bus address {address!r}")
        last: OSError | None = None
        for target in targets:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            try:
                sock.connect(target)
                return sock
            except OSError as exc:
                sock.close()
                last = exc
        raise BusError(f"cannot connect to {address!r}: {last}")

    def _authenticate(self, timeout: float) -> None:
        uid_hex = str(os.getuid()).encode().hex().encode()
        self.sock.sendall(b"\0AUTH EXTERNAL " + uid_hex + b"\r\n")
        reply = self._read_line(timeout)
        if not reply.startswith(b"OK "):
            raise BusError(f"D-Bus authentication refused: {reply!r}")
        self.sock.sendall(b"BEGIN\r\n")

    def _read_line(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        data = bytearray()
        while not data.endswith(b"\r\n"):
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(4096)
            except OSError as exc:
                raise BusError(f"D-Bus authentication failed: {exc}") from exc
            if not chunk:
                raise BusError("D-Bus peer closed the connection during authentication")
            data += chunk
            if len(data) > 16384:
                raise BusError("D-Bus authentication reply too long")
        return bytes(data)

    def call_blocking(
        self,
        path: str,
        interface: str,
        member: str,
        destination: str | None = None,
        signature: str = "",
        args: Sequence[Any] = (),
        timeout: float = 5.0,
    ) -> tuple[Any, ...]:
        """One synchronous call, on a connection that no :class:`Pipeline` uses.

        Each call has its own serial, so a late reply to an earlier call that timed out is
        skipped; bytes read past the reply stay in :attr:`inbuf` for the next call. An
        error reply or no reply in ``timeout`` raises :class:`BusError` and keeps the
        connection; a broken connection is closed, then :class:`BusError` is raised.
        """
        self.blocking_serial += 1
        serial = self.blocking_serial
        deadline = time.monotonic() + timeout
        try:
            self.sock.settimeout(timeout)
            message = encode_method_call(serial, path, interface, member, destination, signature, args)
            self.sock.sendall(message)
            buf = self.inbuf
            while True:
                while len(buf) >= 16:
                    msg_type, _serial, total, fields, body_offset = parse_header(bytes(buf))
                    if len(buf) < total:
                        break
                    message = bytes(buf[:total])
                    del buf[:total]
                    if fields.get(F_REPLY_SERIAL) != serial:
                        continue
                    if msg_type == ERROR:
                        raise BusError(f"{member} failed: {fields.get(F_ERROR_NAME)}")
                    return parse_body(message, fields.get(F_SIGNATURE, ""), body_offset)
                self.sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise OSError("connection closed")
                buf += chunk
        except TimeoutError as exc:  # a slow peer, not a broken connection: keep it
            raise BusError(f"{member}: no reply in {timeout} s") from exc
        except OSError as exc:
            self.close()
            raise BusError(f"{member}: {exc}") from exc

    def fileno(self) -> int:
        """The socket's descriptor (for selectors)."""
        return self.sock.fileno()

    def close(self) -> None:
        """Close the socket (idempotent)."""
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.close()


class Pipeline:
    """Many calls in flight over several connections; replies go to callbacks.

    ``call`` only queues; ``run`` sends, receives and dispatches until nothing is
    outstanding (callbacks may queue more calls meanwhile). A connection that gets no
    byte for ``stall_timeout`` seconds while calls are outstanding is given up: its
    outstanding calls get ``None``. Error replies also get ``None``.
    """

    def __init__(self, window: int = 256, stall_timeout: float = 10.0) -> None:
        self.window = window
        self.stall_timeout = stall_timeout
        self._serial = 1  # serial 1 is used by Connection.call_blocking
        self._pending: dict[tuple[int, int], Callback] = {}
        self._connections: list[Connection] = []
        #: callbacks of calls queued on a closed connection, answered None by run()
        self._failed: deque[Callback] = deque()
        self.calls = 0

    def call(
        self,
        conn: Connection,
        destination: str | None,
        path: str,
        interface: str,
        member: str,
        callback: Callback,
        signature: str = "",
        args: Sequence[Any] = (),
    ) -> None:
        """Queue one method call; ``callback`` gets its reply (or None) during :meth:`run`."""
        self.calls += 1
        if conn.closed:
            self._failed.append(callback)
            return
        self._serial += 1
        serial = self._serial
        message = encode_method_call(serial, path, interface, member, destination, signature, args)
        conn.queue.append((serial, message))
        self._pending[(id(conn), serial)] = callback
        if conn not in self._connections:
            self._connections.append(conn)

    def run(self, deadline: float | None = None) -> None:
        """Send and dispatch until no call is outstanding (or ``deadline``, monotonic, passes)."""
        selector = selectors.DefaultSelector()
        registered: dict[int, int] = {}
        try:
            while self._pending or self._failed:
                while self._failed:
                    self._failed.popleft()(None)
                if not self._pending:
                    break
                now = time.monotonic()
                if deadline is not None and now > deadline:
                    for conn in list(self._connections):
                        self._abandon(conn)
                    break
                for conn in list(self._connections):
                    self._fill(conn)
                    if conn.in_flight and now - conn.last_activity > self.stall_timeout:
                        self._abandon(conn)
                        continue
                    events = (selectors.EVENT_READ if conn.in_flight else 0) | (
                        selectors.EVENT_WRITE if conn.outbuf else 0
                    )
                    fd = conn.fileno()
                    if fd < 0:
                        continue
                    if registered.get(fd) != events:
                        if fd in registered:
                            if events:
                                selector.modify(fd, events, conn)
                            else:
                                selector.unregister(fd)
                                del registered[fd]
                        elif events:
                            selector.register(fd, events, conn)
                        if events:
                            registered[fd] = events
                if not registered:
                    break
                for key, mask in selector.select(timeout=0.5):
                    conn = key.data
                    if mask & selectors.EVENT_WRITE:
                        self._write(conn)
                    if mask & selectors.EVENT_READ:
                        self._read(conn)
        finally:
            selector.close()
        # Whatever is left (deadline passed, nothing to wait on) is answered None.
        while self._pending or self._failed:
            callbacks = list(self._pending.values()) + list(self._failed)
            self._pending.clear()
            self._failed.clear()
            for callback in callbacks:
                callback(None)

    def _fill(self, conn: Connection) -> None:
        while conn.queue and conn.in_flight < self.window:
            _serial, message = conn.queue.popleft()
            conn.outbuf += message
            conn.in_flight += 1
        if conn.outbuf:
            self._write(conn)

    def _write(self, conn: Connection) -> None:
        try:
            sent = conn.sock.send(conn.outbuf)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._abandon(conn)
            return
        del conn.outbuf[:sent]

    def _read(self, conn: Connection) -> None:
        try:
            chunk = conn.sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._abandon(conn)
            return
        if not chunk:
            self._abandon(conn)
            return
        conn.last_activity = time.monotonic()
        conn.inbuf += chunk
        buf = conn.inbuf
        start = 0
        size = len(buf)
        conn_id = id(conn)
        while size - start >= 16:
            head = bytes(buf[start : start + 16])
            endian = "<" if head[0:1] == b"l" else ">"
            body_len, _serial, fields_len = struct.unpack_from(endian + "III", head, 4)
            body_offset = 16 + fields_len + (-(16 + fields_len) % 8)
            total = body_offset + body_len
            if size - start < total:
                break
            message = bytes(buf[start : start + total])
            start += total
            msg_type, _serial, _total, fields, body_offset = parse_header(message)
            if msg_type not in (METHOD_RETURN, ERROR):
                continue
            callback = self._pending.pop((conn_id, fields.get(F_REPLY_SERIAL, -1)), None)
            if callback is None:
                continue
            conn.in_flight -= 1
            if msg_type == ERROR:
                callback(None)
                continue
            try:
                args = parse_body(message, fields.get(F_SIGNATURE, ""), body_offset)
            except (DBusError, struct.error, IndexError, UnicodeDecodeError):
                callback(None)
                continue
            callback(args)
        del buf[:start]

    def _abandon(self, conn: Connection) -> None:
        """Give up on a connection: every outstanding call on it gets None."""
        if conn in self._connections:
            self._connections.remove(conn)
        conn_id = id(conn)
        lost = [key for key in self._pending if key[0] == conn_id]
        callbacks = [self._pending.pop(key) for key in lost]
        conn.queue.clear()
        conn.outbuf.clear()
        conn.in_flight = 0
        conn.close()
        for callback in callbacks:
            callback(None)
