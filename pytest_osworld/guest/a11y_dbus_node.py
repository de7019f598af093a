"""What the pipelined accessibility walk knows about objects, and their XML.

Owns the AT-SPI names the walk calls (bus name, paths, interfaces), the tables that turn
role numbers and state bits into pyatspi's names, :class:`Node` (one object as its
replies fill it in), :func:`node_element` (a walked node and its subtree as OSWorld's
XML, attribute for attribute what the pyatspi walk writes), the cache of interfaces
across walks, and the lookup of the accessibility bus's address. The walk itself is
:class:`pytest_osworld.guest.a11y_dbus.DBusWalk`.
"""

from __future__ import annotations

import os
import threading
import xml.etree.ElementTree as ET
from functools import lru_cache
from typing import Any

from pytest_osworld.guest.a11y_xml import ACT, ATTR, ST, put_extents, put_value, xml_name, xml_text
from pytest_osworld.guest.atspi_dbus import BusError, Connection

#: The registry's bus name, the desktop object and the null reference.
REGISTRY = "org.a11y.atspi.Registry"
ROOT_PATH = "/org/a11y/atspi/accessible/root"
NULL_PATH = "/org/a11y/atspi/null"
#: D-Bus interfaces the walk calls.
I_ACCESSIBLE = "org.a11y.atspi.Accessible"
I_COMPONENT = "org.a11y.atspi.Component"
I_TEXT = "org.a11y.atspi.Text"
I_TABLE = "org.a11y.atspi.Table"
I_ACTION = "org.a11y.atspi.Action"
I_VALUE = "org.a11y.atspi.Value"
I_APPLICATION = "org.a11y.atspi.Application"
I_PROPS = "org.freedesktop.DBus.Properties"
IFACE_PREFIX = "org.a11y.atspi."
SCREEN_COORDS = 0  # ATSPI_COORD_TYPE_SCREEN, what pyatspi.DESKTOP_COORDS means

#: A reply's arguments, or None for an error reply or a lost call.
Reply = tuple[Any, ...] | None

#: Interfaces of ATK-bridge objects by (application bus name, object path), across walks.
INTERFACE_CACHE: dict[tuple[str, str], frozenset[str]] = {}
INTERFACE_CACHE_MAX = 200_000

#: Each application's peer-to-peer address ("" for none) by (accessibility bus address,
#: unique bus name), across walks: ``GetApplicationBusAddress`` is asked once per
#: application, as libatspi does. Asking Chromium 156 again on every walk crashes it
#: (SIGSEGV in its main loop) within a few navigations; a bus never reuses a unique name.
ADDRESS_CACHE: dict[tuple[str, str], str] = {}
ADDRESS_CACHE_MAX = 10_000

#: The connection that asks for peer-to-peer addresses, by accessibility bus address; it
#: stays open for the life of the process. The ATK bridge counts whoever asks as a client
#: (at-spi2-atk's ``spi_atk_add_client``) and removes its event listeners, its key
#: listener included, when that client's bus name goes away. Asking over each walk's own
#: connection made every first walk's end remove them, and Chromium 156 crashes (SIGSEGV in
#: its key-listener loop) when that happens while it hands a key press to the bridge:
#: code-server's window died after a shortcut in about 1 replay of 15.
_ASKERS: dict[str, Connection] = {}
_ASKERS_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def role_names() -> dict[int, str]:
    """Role number -> name, exactly as libatspi's ``get_role_name`` computes it locally.

    libatspi names roles below ``ROLE_COUNT`` itself (except ``extended``, which it asks
    the application for); pyatspi's ``getRoleName`` returns that name.
    """
    import gi  # type: ignore[import-untyped]

    gi.require_version("Atspi", "2.0")
    from gi.repository import Atspi  # type: ignore[import-untyped]

    extended = int(Atspi.Role.EXTENDED)
    names = {}
    for number in range(int(Atspi.Role.LAST_DEFINED)):
        if number != extended:
            names[number] = Atspi.role_get_name(Atspi.Role(number)) or ""
    return names


@lru_cache(maxsize=1)
def state_names() -> dict[int, str]:
    """State bit -> name, as ``pyatspi.stateToString`` gives it."""
    from pyatspi import state

    return {int(value): name for value, name in state.STATE_VALUE_TO_NAME.items()}


def states_from_bits(words: Any) -> set[str] | None:
    """State names from ``GetState``'s ``au`` (two 32-bit words, low word first)."""
    if not isinstance(words, list):
        return None
    bits = 0
    for shift, word in enumerate(words[:2]):
        bits |= int(word) << (32 * shift)
    names = state_names()
    return {names[bit] for bit in range(64) if bits >> bit & 1 and bit in names}


def object_ref(value: Any) -> tuple[str, str] | None:
    """An object reference ``(bus name, path)`` from a reply value, or None for the null object."""
    if not isinstance(value, tuple) or len(value) != 2:
        return None
    name, path = value
    if not isinstance(path, str) or path == NULL_PATH or not path:
        return None
    return str(name), path


class Node:
    """What the walk learned about one accessible object (filled in by replies)."""

    __slots__ = (
        "actions",
        "app",
        "attributes",
        "cell",
        "child_count",
        "children",
        "conn",
        "depth",
        "dest",
        "extents",
        "interfaces",
        "name",
        "path",
        "pending",
        "role",
        "role_name",
        "stage",
        "states",
        "text",
        "value",
    )

    def __init__(
        self, conn: Connection, dest: str | None, app: str, path: str, depth: int, cell: bool = False
    ) -> None:
        self.conn = conn
        #: the application's bus name (``dest`` is None when reached peer-to-peer)
        self.app = app
        self.dest = dest
        self.path = path
        self.depth = depth
        self.cell = cell
        self.pending = 0
        #: 0 while the first calls are out, 1 once the details and children were asked
        self.stage = 0
        self.name: str | None = None
        self.role: int | None = None
        self.role_name: str | None = None
        self.states: set[str] | None = None
        self.attributes: list[tuple[str, str]] = []
        self.interfaces: set[str] = set()
        self.child_count = 0
        self.extents: tuple[int, int, int, int] | None = None
        self.text: str | None = None
        self.value: dict[str, Any] | None = None
        self.actions: list[tuple[str, str, str]] | None = None
        self.children: list[Node | None] = []


def node_element(node: Node, text_chars: int) -> ET.Element | None:
    """The XML of a node and its subtree (same attributes, in the same order, as pyatspi's).

    Text is cut at ``text_chars``; a node whose name or states never arrived is dropped.
    """
    if node.name is None or node.states is None:
        return None
    element = ET.Element(xml_name((node.role_name or "unknown").replace(" ", "-")))
    element.set("name", xml_text(node.name))
    states = node.states
    for state in sorted(states):
        element.set(ST + xml_name(state), "true")
    on_screen = "showing" in states and "visible" in states
    if node.cell:
        if on_screen and node.extents is not None:
            put_extents(element, node.extents)
        if node.text:
            element.text = xml_text(node.text[:text_chars])
        return element
    for key, value in node.attributes:
        key, _, value = f"{key}:{value}".partition(":")
        element.set(ATTR + xml_name(key), xml_text(value))
    interfaces = node.interfaces
    if on_screen and "Component" in interfaces and node.extents is not None:
        put_extents(element, node.extents)
    if "Text" in interfaces and node.text:
        element.text = xml_text(node.text[:text_chars])
    if on_screen and "Value" in interfaces and node.value:
        put_value(element, node.value)
    if on_screen and "Action" in interfaces and node.actions:
        for index, (name, description, key_binding) in enumerate(node.actions):
            tag = xml_name(name or f"action{index}")
            element.set(f"{ACT}{tag}_desc", xml_text(description))
            element.set(f"{ACT}{tag}_kb", xml_text(key_binding))
    if "Image" in interfaces:
        element.set("image", "true")
    if "Selection" in interfaces:
        element.set("selection", "true")
    for child in node.children:
        sub = None if child is None else node_element(child, text_chars)
        if sub is not None:
            element.append(sub)
    return element


def a11y_bus_address() -> str:
    """The accessibility bus address, asked of ``org.a11y.Bus`` on the session bus."""
    session = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "")
    if not session:
        runtime = os.environ.get("XDG_RUNTIME_DIR", f"/run/user/{os.getuid()}")
        session = f"unix:path={runtime}/bus"
    conn = Connection(session, bus=True)
    try:
        (address,) = conn.call_blocking(
            "/org/a11y/bus", "org.a11y.Bus", "GetAddress", "org.a11y.Bus", timeout=5.0
        )
    finally:
        conn.close()
    if not isinstance(address, str) or not address:
        raise BusError("org.a11y.Bus.GetAddress gave no address")
    return address


def app_bus_address(session: str, name: str, path: str, timeout: float = 2.0) -> str | None:
    """Application ``name``'s peer-to-peer address ("" for none), None when it did not answer.

    Asked over the process's one lasting connection to the accessibility bus ``session``
    (see ``_ASKERS``); a broken connection is replaced once. Connections to other buses
    (a desktop restored since) are closed: a process talks to one desktop at a time.
    """
    with _ASKERS_LOCK:
        for stale in [key for key in _ASKERS if key != session]:
            _ASKERS.pop(stale).close()
        for _attempt in range(2):
            conn = _ASKERS.get(session)
            if conn is None or conn.closed:
                conn = _ASKERS[session] = Connection(session, bus=True, timeout=timeout)
            try:
                (address,) = conn.call_blocking(
                    path, I_APPLICATION, "GetApplicationBusAddress", name, timeout=timeout
                )
            except BusError:
                if conn.closed:
                    continue  # the bus connection broke: one new one
                return None  # an error reply or none in time: ask again on a later walk
            return address if isinstance(address, str) else ""
    return None
