"""The pipelined D-Bus client of the a11y walk: marshalling, parsing and the call pipeline.

Messages are cross-checked against GLib's own D-Bus implementation (``Gio.DBusMessage``)
when python3-gi is available; the pipeline runs against a scripted peer on a unix socket.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.guest.atspi_dbus import (
    ERROR,
    F_DESTINATION,
    F_INTERFACE,
    F_MEMBER,
    F_PATH,
    F_REPLY_SERIAL,
    F_SIGNATURE,
    METHOD_CALL,
    METHOD_RETURN,
    BusError,
    Connection,
    DBusError,
    Pipeline,
    encode_method_call,
    parse_address,
    parse_body,
    parse_header,
)

gi = pytest.importorskip("gi")
from gi.repository import Gio, GLib  # type: ignore[import-untyped]  # noqa: E402


def _gio_message(blob: bytes) -> Any:
    return Gio.DBusMessage.new_from_blob(blob, Gio.DBusCapabilityFlags.NONE)


_VARIANT_TYPES = {str: "s", int: "i", bool: "b", float: "d"}


def _as_variant(value: Any) -> Any:
    """A GLib variant for a plain value (GLib.Variant wants variants for ``v`` slots)."""
    if isinstance(value, dict):
        return GLib.Variant("a{ss}", value)
    if isinstance(value, tuple):
        return GLib.Variant("(ss)", value)
    return GLib.Variant(_VARIANT_TYPES[type(value)], value)


def _wrap_variants(signature: str, values: tuple[Any, ...]) -> tuple[Any, ...]:
    if signature == "v":
        return (_as_variant(values[0]),)
    if signature == "a{sv}":
        return ({key: _as_variant(value) for key, value in values[0].items()},)
    return values


def _reply_blob(
    body_sig: str | None, values: tuple[Any, ...] | None, reply_serial: int, big_endian: bool = False
) -> bytes:
    call = Gio.DBusMessage.new_method_call(":1.5", "/x", "org.example.I", "M")
    call.set_serial(reply_serial)
    reply = Gio.DBusMessage.new_method_reply(call)
    if body_sig is not None and values is not None:
        reply.set_body(GLib.Variant(f"({body_sig})", _wrap_variants(body_sig, values)))
    if big_endian:
        reply.set_byte_order(Gio.DBusMessageByteOrder.BIG_ENDIAN)
    reply.set_serial(reply_serial + 1000)
    return bytes(reply.to_blob(Gio.DBusCapabilityFlags.NONE))


# -- outgoing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "interface", "member", "destination", "signature", "args"),
    [
        ("/org/a11y/atspi/accessible/root", "org.a11y.atspi.Accessible", "GetChildren", None, "", ()),
        ("/org/a11y/atspi/accessible/7", "org.a11y.atspi.Text", "GetText", ":1.42", "ii", (0, -1)),
        (
            "/a",
            "org.freedesktop.DBus.Properties",
            "Get",
            "org.x",
            "ss",
            ("org.a11y.atspi.Accessible", "Name"),
        ),
        (
            "/org/a11y/atspi/accessible/123456",
            "org.a11y.atspi.Component",
            "GetAccessibleAtPoint",
            None,
            "iiu",
            (5, -7, 0),
        ),
        (
            "/p",
            "org.example.All",
            "Basic",
            None,
            "ybnqiuxtdsog",
            (255, True, -2, 3, -4, 5, -6, 7, 1.5, "é", "/o", "a{sv}"),
        ),
    ],
)
def test_method_calls_read_back_by_gio(
    path: str, interface: str, member: str, destination: str | None, signature: str, args: tuple[Any, ...]
) -> None:
    blob = encode_method_call(77, path, interface, member, destination, signature, args)
    message = _gio_message(blob)
    assert message.get_message_type() == Gio.DBusMessageType.METHOD_CALL
    assert message.get_serial() == 77
    assert (message.get_path(), message.get_interface(), message.get_member()) == (path, interface, member)
    assert message.get_destination() == destination
    body = message.get_body()
    if signature:
        assert body.get_type_string() == f"({signature})"
        assert body.unpack() == args
    else:
        assert body is None


def test_calls_with_cached_parts_stay_independent() -> None:
    first = encode_method_call(2, "/short", "org.a11y.atspi.Accessible", "GetRole")
    second = encode_method_call(3, "/a/much/longer/path/than/before", "org.a11y.atspi.Accessible", "GetRole")
    assert _gio_message(first).get_path() == "/short"
    assert _gio_message(second).get_path() == "/a/much/longer/path/than/before"
    assert _gio_message(second).get_serial() == 3


def test_argument_mismatch_and_unsupported_types_are_typed_errors() -> None:
    with pytest.raises(DBusError):
        encode_method_call(2, "/p", "i.f", "M", None, "ii", (1,))
    with pytest.raises(DBusError):
        encode_method_call(2, "/p", "i.f", "M", None, "v", (1,))


# -- incoming ----------------------------------------------------------------------------------

ATSPI_BODIES: list[tuple[str, tuple[Any, ...]]] = [
    ("a(so)", ([(":1.2", "/org/a11y/atspi/accessible/1"), (":1.2", "/org/a11y/atspi/accessible/2")],)),
    ("u", (42,)),
    ("au", ([0x41000100, 0x2],)),
    ("as", (["org.a11y.atspi.Accessible", "org.a11y.atspi.Component"],)),
    ("a{ss}", ({"toolkit": "gtk", "id": "é✓"},)),
    ("(iiii)", ((1, -2, 300, 40),)),
    ("s", ("text with \ufffc object",)),
    ("v", ("Name",)),
    ("a{sv}", ({"Name": "File", "ChildCount": 3, "Attributes": {"k": "v"}, "Parent": (":1.1", "/r")},)),
    ("a{sv}", ({"CurrentValue": 1.5, "Flag": True},)),
    ("d", (0.25,)),
    ("b", (True,)),
    ("a(sss)", ([("click", "Clicks", "<Alt>f"), ("", "", "")],)),
    ("ay", ([1, 2, 3],)),
    ("", ()),
]


@pytest.mark.parametrize("big_endian", [False, True])
@pytest.mark.parametrize(("signature", "values"), ATSPI_BODIES)
def test_replies_written_by_gio_parse(signature: str, values: tuple[Any, ...], big_endian: bool) -> None:
    blob = _reply_blob(
        signature or None, values if signature else None, reply_serial=9, big_endian=big_endian
    )
    msg_type, serial, total, fields, body_offset = parse_header(blob)
    assert (msg_type, serial, total) == (METHOD_RETURN, 1009, len(blob))
    assert fields[F_REPLY_SERIAL] == 9
    assert fields.get(F_SIGNATURE, "") == signature
    assert parse_body(blob, signature, body_offset) == values


def test_header_of_a_gio_method_call() -> None:
    message = Gio.DBusMessage.new_method_call(
        ":1.9", "/org/a11y/atspi/accessible/5", "org.a11y.atspi.Accessible", "GetState"
    )
    message.set_serial(5)
    blob = bytes(message.to_blob(Gio.DBusCapabilityFlags.NONE))
    msg_type, serial, _total, fields, _offset = parse_header(blob)
    assert (msg_type, serial) == (METHOD_CALL, 5)
    assert fields[F_PATH] == "/org/a11y/atspi/accessible/5"
    assert fields[F_INTERFACE] == "org.a11y.atspi.Accessible"
    assert fields[F_MEMBER] == "GetState"
    assert fields[F_DESTINATION] == ":1.9"


def test_partial_message_reports_its_length_without_fields() -> None:
    blob = _reply_blob("s", ("hello",), reply_serial=3)
    _type, _serial, total, fields, _offset = parse_header(blob[:20])
    assert total == len(blob)
    assert fields == {}


@pytest.mark.parametrize("bad", [b"x" + b"\0" * 15, b"l\x02\x00\x02" + b"\0" * 12])
def test_malformed_headers_are_typed_errors(bad: bytes) -> None:
    with pytest.raises(DBusError):
        parse_header(bad)


@pytest.mark.parametrize("signature", ["a", "(ii", "z", "a{s"])
def test_bad_signatures_are_typed_errors(signature: str) -> None:
    with pytest.raises(DBusError):
        parse_body(b"l" + b"\0" * 31, signature, 16)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("unix:path=/run/user/1000/at-spi/bus_0,guid=5ea0", ["/run/user/1000/at-spi/bus_0"]),
        ("unix:abstract=/tmp/dbus-XYZ,guid=1", [b"\0/tmp/dbus-XYZ"]),
        ("tcp:host=localhost,port=1;unix:path=/a%20b", ["/a b"]),
        ("tcp:host=localhost,port=1", []),
    ],
)
def test_addresses(address: str, expected: list[str | bytes]) -> None:
    assert parse_address(address) == expected


# -- the pipeline against a scripted peer ------------------------------------------------------


class FakePeer:
    """A unix-socket D-Bus peer: EXTERNAL auth, then ``answer(member, args)`` per call.

    ``answer`` returns ``(signature, values)`` for a reply, ``None`` for an error reply,
    or ``...`` to stay silent. Calls are answered in reverse order of each batch read, to
    show replies are matched by serial and not by position.
    """

    def __init__(self, path: Path, answer: Callable[[str, tuple[Any, ...]], Any]) -> None:
        self.path = path
        self.answer = answer
        self.calls: list[str] = []
        #: the object path of each call, in the order of ``calls``
        self.paths: list[str] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _session(self, conn: socket.socket) -> None:
        data = b""
        with conn:
            while b"\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            assert data.startswith(b"\0AUTH EXTERNAL ")
            conn.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")
            data = b""
            while b"BEGIN\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                data += chunk
            buf = data.split(b"BEGIN\r\n", 1)[1]
            while True:
                batch = []
                while True:
                    needed = Gio.DBusMessage.bytes_needed(buf) if len(buf) >= 16 else 16
                    if len(buf) < needed:
                        break
                    batch.append(Gio.DBusMessage.new_from_blob(buf[:needed], Gio.DBusCapabilityFlags.NONE))
                    buf = buf[needed:]
                for message in reversed(batch):
                    self._answer(conn, message)
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk

    def _answer(self, conn: socket.socket, message: Any) -> None:
        member = message.get_member()
        self.calls.append(member)
        self.paths.append(message.get_path())
        body = message.get_body()
        outcome = self.answer(member, body.unpack() if body is not None else ())
        if outcome is ...:
            return
        if outcome is None:
            reply = Gio.DBusMessage.new_method_error_literal(message, "org.example.Error.Nope", "no")
        else:
            reply = Gio.DBusMessage.new_method_reply(message)
            signature, values = outcome
            if signature:
                reply.set_body(GLib.Variant(f"({signature})", values))
        reply.set_serial(len(self.calls))
        conn.sendall(bytes(reply.to_blob(Gio.DBusCapabilityFlags.NONE)))

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def peer_factory(tmp_path: Path) -> Iterator[Callable[[Callable[[str, tuple[Any, ...]], Any]], FakePeer]]:
    peers: list[FakePeer] = []

    def make(answer: Callable[[str, tuple[Any, ...]], Any]) -> FakePeer:
        peer = FakePeer(tmp_path / f"peer{len(peers)}.sock", answer)
        peers.append(peer)
        return peer

    yield make
    for peer in peers:
        peer.close()


def _echo(member: str, args: tuple[Any, ...]) -> Any:
    if member == "Echo":
        return ("i", args)
    if member == "Fail":
        return None
    if member == "Children":
        return ("a(so)", ([(":1.2", f"/c/{i}") for i in range(args[0])],))
    if member == "Silent":
        return ...
    return ("s", (member,))


def test_pipeline_matches_replies_to_callbacks(peer_factory: Callable[..., FakePeer]) -> None:
    peer = peer_factory(_echo)
    conn = Connection(f"unix:path={peer.path}", bus=False)
    pipeline = Pipeline(window=7)
    got: dict[int, Any] = {}

    def keep(index: int) -> Callable[[tuple[Any, ...] | None], None]:
        return lambda reply: got.__setitem__(index, reply)

    for index in range(100):
        pipeline.call(conn, None, "/o", "org.example.I", "Echo", keep(index), "i", (index,))
    pipeline.call(conn, None, "/o", "org.example.I", "Fail", lambda r: got.__setitem__(-1, r))
    pipeline.run()
    conn.close()
    assert got == {**{i: (i,) for i in range(100)}, -1: None}
    assert pipeline.calls == 101


def test_callbacks_can_queue_more_calls(peer_factory: Callable[..., FakePeer]) -> None:
    peer = peer_factory(_echo)
    conn = Connection(f"unix:path={peer.path}", bus=False)
    pipeline = Pipeline()
    leaves: list[str] = []

    def deeper(depth: int) -> Callable[[tuple[Any, ...] | None], None]:
        return lambda reply: expand(reply, depth)

    def expand(reply: tuple[Any, ...] | None, depth: int) -> None:
        assert reply is not None
        for _name, path in reply[0]:
            if depth < 3:
                pipeline.call(conn, None, path, "i.f", "Children", deeper(depth + 1), "i", (3,))
            else:
                leaves.append(path)

    pipeline.call(conn, None, "/", "i.f", "Children", lambda r: expand(r, 1), "i", (3,))
    pipeline.run()
    conn.close()
    assert len(leaves) == 27


def test_silent_peer_is_given_up_after_the_stall_timeout(peer_factory: Callable[..., FakePeer]) -> None:
    peer = peer_factory(_echo)
    conn = Connection(f"unix:path={peer.path}", bus=False)
    pipeline = Pipeline(stall_timeout=0.3)
    got: list[Any] = []
    pipeline.call(conn, None, "/o", "i.f", "Echo", got.append, "i", (1,))
    pipeline.call(conn, None, "/o", "i.f", "Silent", got.append)
    pipeline.run()
    assert sorted(got, key=repr) == [(1,), None]
    assert conn.closed
    # Calls queued on a closed connection are answered None at once.
    pipeline.call(conn, None, "/o", "i.f", "Echo", got.append, "i", (2,))
    pipeline.run()
    assert got[-1] is None


def test_deadline_answers_outstanding_calls_none(peer_factory: Callable[..., FakePeer]) -> None:
    peer = peer_factory(_echo)
    conn = Connection(f"unix:path={peer.path}", bus=False)
    pipeline = Pipeline()
    got: list[Any] = []
    pipeline.call(conn, None, "/o", "i.f", "Silent", got.append)
    pipeline.run(deadline=0.0)
    assert got == [None]


def test_bus_connection_says_hello(peer_factory: Callable[..., FakePeer]) -> None:
    def bus(member: str, args: tuple[Any, ...]) -> Any:
        return ("s", (":1.77",)) if member == "Hello" else _echo(member, args)

    peer = peer_factory(bus)
    conn = Connection(f"unix:path={peer.path}", bus=True)
    assert conn.unique_name == ":1.77"
    assert conn.call_blocking("/o", "i.f", "Echo", None, "i", (5,)) == (5,)
    conn.close()


def test_connection_errors_are_typed(tmp_path: Path) -> None:
    with pytest.raises(BusError):
        Connection(f"unix:path={tmp_path / 'missing.sock'}", bus=False, timeout=0.5)
    with pytest.raises(BusError):
        Connection("tcp:host=localhost,port=1", bus=False)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(tmp_path / "rude.sock"))
    server.listen(1)

    def refuse() -> None:
        conn, _ = server.accept()
        conn.recv(4096)
        conn.sendall(b"REJECTED EXTERNAL\r\n")
        conn.close()

    thread = threading.Thread(target=refuse, daemon=True)
    thread.start()
    with pytest.raises(BusError, match="refused"):
        Connection(f"unix:path={tmp_path / 'rude.sock'}", bus=False, timeout=2.0)
    thread.join(5)
    server.close()


def test_error_reply_header() -> None:
    call = Gio.DBusMessage.new_method_call(":1.5", "/x", "org.example.I", "M")
    call.set_serial(4)
    error = Gio.DBusMessage.new_method_error_literal(call, "org.example.Error.Nope", "no")
    error.set_serial(8)
    blob = bytes(error.to_blob(Gio.DBusCapabilityFlags.NONE))
    msg_type, _serial, _total, fields, offset = parse_header(blob)
    assert msg_type == ERROR
    assert fields[F_REPLY_SERIAL] == 4
    assert parse_body(blob, fields[F_SIGNATURE], offset) == ("no",)
    assert struct.unpack_from("<I", blob, 4)[0] == len(blob) - offset


# -- the lasting connection that asks for peer-to-peer addresses -------------------------------


def _bus_with_apps(member: str, args: tuple[Any, ...]) -> Any:
    if member == "Hello":
        return ("s", (":1.9",))
    if member == "GetApplicationBusAddress":
        return ("s", ("unix:path=/tmp/app-socket",))
    return _echo(member, args)


def test_addresses_are_asked_over_one_lasting_bus_connection(
    peer_factory: Callable[..., FakePeer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ATK bridge drops its key listener when the asker's bus name goes away; Chromium
    crashes if that happens during a key press. So one connection asks, and stays open."""
    from pytest_osworld.guest import a11y_dbus_node

    monkeypatch.setattr(a11y_dbus_node, "_ASKERS", {})
    first, second = peer_factory(_bus_with_apps), peer_factory(_bus_with_apps)
    bus = f"unix:path={first.path}"
    for name in (":1.2", ":1.3", ":1.2"):
        assert a11y_dbus_node.app_bus_address(bus, name, "/org/a11y/atspi/accessible/root") == (
            "unix:path=/tmp/app-socket"
        )
    assert first.calls == ["Hello"] + ["GetApplicationBusAddress"] * 3  # one connection, kept
    kept = a11y_dbus_node._ASKERS[bus]
    assert not kept.closed
    # A desktop restored since: its bus gets a new connection and the old one is closed.
    other = f"unix:path={second.path}"
    assert a11y_dbus_node.app_bus_address(other, ":1.4", "/r") == "unix:path=/tmp/app-socket"
    assert kept.closed and list(a11y_dbus_node._ASKERS) == [other]


def test_an_unanswered_address_question_keeps_the_connection(
    peer_factory: Callable[..., FakePeer], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_osworld.guest import a11y_dbus_node

    answer_with_error: list[bool] = []  # empty: stay silent

    def bus(member: str, args: tuple[Any, ...]) -> Any:
        if member == "Hello":
            return ("s", (":1.9",))
        return None if answer_with_error else ...

    monkeypatch.setattr(a11y_dbus_node, "_ASKERS", {})
    peer = peer_factory(bus)
    address = f"unix:path={peer.path}"
    assert a11y_dbus_node.app_bus_address(address, ":1.2", "/r", timeout=0.3) is None  # silent
    answer_with_error.append(True)
    assert a11y_dbus_node.app_bus_address(address, ":1.2", "/r", timeout=0.3) is None  # error reply
    assert peer.calls.count("Hello") == 1 and not a11y_dbus_node._ASKERS[address].closed


def test_blocking_calls_skip_late_replies(peer_factory: Callable[..., FakePeer]) -> None:
    """A reply that comes after its call timed out is not taken for the next call's."""
    late: list[bool] = []

    def slow_once(member: str, args: tuple[Any, ...]) -> Any:
        if member == "Echo" and not late:
            late.append(True)
            time.sleep(0.4)  # answered after the caller gave up
        return _echo(member, args)

    peer = peer_factory(slow_once)
    conn = Connection(f"unix:path={peer.path}", bus=False)
    with pytest.raises(BusError, match="no reply"):
        conn.call_blocking("/o", "i.f", "Echo", None, "i", (1,), timeout=0.2)
    assert not conn.closed
    assert conn.call_blocking("/o", "i.f", "Echo", None, "i", (2,), timeout=2.0) == (2,)
    peer.close()
    conn.close()


def _bus_of_empty_apps(apps: list[tuple[str, str]], name_of: Callable[[], str]) -> Callable[..., Any]:
    """A scripted accessibility bus listing ``apps`` (bus name, root path), each an empty
    application reached only through the bus (no peer-to-peer address, no ``GetAll``), the
    object asked named by ``name_of()``."""

    def bus(member: str, args: tuple[Any, ...]) -> Any:
        if member == "Hello":
            return ("s", (":1.9",))
        if member in ("GetApplicationBusAddress", "GetAll"):
            return None  # no peer-to-peer address; GetAll would crash a Qt application
        if member == "GetChildren":
            return ("a(so)", (apps,))
        if member == "Get":
            values = {"Name": GLib.Variant("s", name_of()), "ChildCount": GLib.Variant("i", 0)}
            return ("v", (values.get(args[1], GLib.Variant("s", "")),))
        if member == "GetAttributes":
            return ("a{ss}", ({},))
        if member == "GetRole":
            return ("u", (75,))  # application
        if member == "GetState":
            return ("au", ([0, 0],))
        if member == "GetInterfaces":
            return ("as", (["org.a11y.atspi.Accessible", "org.a11y.atspi.Application"],))
        return None

    return bus


def test_applications_reached_through_the_bus_are_never_asked_getall(
    peer_factory: Callable[..., FakePeer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qt 5.15's bridge reads a second argument of ``Properties.GetAll`` that the call does
    not have, and VLC segfaulted when a walk asked it while it started. An application that
    gives no peer-to-peer address (Qt's bridge) is walked with one ``Get`` per property."""
    from pytest_osworld.guest import a11y_dbus, a11y_dbus_node
    from pytest_osworld.guest.a11y_xml import Limits

    bus = _bus_of_empty_apps([(":1.5", "/org/a11y/atspi/accessible/root")], lambda: "vlc")

    monkeypatch.setattr(a11y_dbus_node, "_ASKERS", {})
    monkeypatch.setattr(a11y_dbus, "ADDRESS_CACHE", {})
    peer = peer_factory(bus)
    monkeypatch.setenv("AT_SPI_BUS_ADDRESS", f"unix:path={peer.path}")
    root = a11y_dbus.DBusWalk(Limits(), timeout=10).run()
    assert [child.get("name") for child in root] == ["vlc"]
    assert "GetAll" not in peer.calls
    assert peer.calls.count("Get") >= 2  # Name and ChildCount, one by one


def test_a_walk_for_one_application_reads_only_its_name_from_the_others(
    peer_factory: Callable[..., FakePeer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wait on one application (``app=``) walks only it: GNOME Shell's 1,400 objects
    cost about 170 ms of CPU per walk, and waits walk ten times a second."""
    from pytest_osworld.guest import a11y_dbus, a11y_dbus_node
    from pytest_osworld.guest.a11y_xml import Limits

    names = {"/vlc": "vlc", "/shell": "gnome-shell"}
    peers: list[FakePeer] = []

    apps = [(":1.5", "/vlc"), (":1.6", "/shell")]
    bus = _bus_of_empty_apps(apps, lambda: names.get(peers[0].paths[-1], "desktop"))

    monkeypatch.setattr(a11y_dbus_node, "_ASKERS", {})
    monkeypatch.setattr(a11y_dbus, "ADDRESS_CACHE", {})
    peers.append(peer_factory(bus))
    monkeypatch.setenv("AT_SPI_BUS_ADDRESS", f"unix:path={peers[0].path}")
    every = a11y_dbus.DBusWalk(Limits(), timeout=10).run()
    assert [child.get("name") for child in every] == ["vlc", "gnome-shell"]
    del peers[0].calls[:], peers[0].paths[:]
    one = a11y_dbus.DBusWalk(Limits(), timeout=10, app="VLC").run()
    assert [child.get("name") for child in one] == ["vlc"]
    shell_calls = [
        call for call, path in zip(peers[0].calls, peers[0].paths, strict=True) if path == "/shell"
    ]
    # asked for its peer-to-peer address (as every application is), then its name only
    assert [call for call in shell_calls if call != "GetApplicationBusAddress"] == ["Get"]
    assert "GetRole" in [
        call for call, path in zip(peers[0].calls, peers[0].paths, strict=True) if path == "/vlc"
    ]
