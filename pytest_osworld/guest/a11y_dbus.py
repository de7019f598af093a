"""The pipelined accessibility walk: every property read of the tree, in flight at once.

Owns :class:`DBusWalk`, which reads the whole desktop through the pipelined D-Bus
client (:mod:`pytest_osworld.guest.atspi_dbus`), over each application's peer-to-peer
socket when it has one: the calls each object needs, the stages that follow from their
answers (details and children once an object is identified), and the giant tables of
which only the visible cells are read. What a node holds and how it becomes XML is
:mod:`pytest_osworld.guest.a11y_dbus_node`'s.
"""

from __future__ import annotations

import logging
import os
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from pytest_osworld.guest.a11y_dbus_node import (
    ADDRESS_CACHE,
    ADDRESS_CACHE_MAX,
    I_ACCESSIBLE,
    I_ACTION,
    I_COMPONENT,
    I_PROPS,
    I_TABLE,
    I_TEXT,
    I_VALUE,
    IFACE_PREFIX,
    INTERFACE_CACHE,
    INTERFACE_CACHE_MAX,
    REGISTRY,
    ROOT_PATH,
    SCREEN_COORDS,
    Node,
    Reply,
    a11y_bus_address,
    app_bus_address,
    node_element,
    object_ref,
    role_names,
    states_from_bits,
)
from pytest_osworld.guest.a11y_xml import Limits, xml_name, xml_text
from pytest_osworld.guest.atspi_dbus import BusError, Connection, Pipeline

_log = logging.getLogger(__name__)


class DBusWalk:
    """One walk of the desktop with many D-Bus calls in flight (same XML as pyatspi's walk).

    Each application is read over its private peer-to-peer socket when it offers one
    (``Application.GetApplicationBusAddress``, as libatspi does), else through the
    accessibility bus. Per object: ``Properties.GetAll(Accessible)`` (name, attributes,
    child count), ``GetRole``, ``GetState``, ``GetInterfaces``; then, depending on those,
    ``GetExtents``, ``GetText``, the Value properties, ``GetActions`` and the children.
    Applications reached through the bus (Qt's bridge: VLC) get one ``Get`` per property
    instead of ``GetAll``, which Qt 5.15's bridge mishandles. Every call is queued at once,
    so the applications work through their queues
    without waiting for us. (``org.a11y.atspi.Cache.GetItems`` would give the first
    four in one call per application, but at-spi2-core 2.46's ATK bridge, used by
    LibreOffice, Chromium, Thunderbird, GIMP and GTK apps here, no longer serves it.)
    """

    def __init__(self, limits: Limits, timeout: float = 60.0, app: str | None = None) -> None:
        self.limits = limits
        self.timeout = timeout
        #: read only the applications whose name contains this (any case); None: all
        self.app = app
        self.pipeline = Pipeline()
        self.bus: Connection | None = None
        #: the accessibility bus's address (set by :meth:`run`)
        self.session = ""
        #: peer-to-peer connections by application bus name
        self.routes: dict[str, Connection] = {}
        self._conns: list[Connection] = []

    # -- plumbing ----------------------------------------------------------------------------

    def _call(
        self,
        node: Node,
        interface: str,
        member: str,
        on_reply: Callable[[Reply], None],
        signature: str = "",
        args: tuple[Any, ...] = (),
        path: str | None = None,
    ) -> None:
        """Queue a call on ``node``'s object; ``on_reply`` runs, then the node may advance."""
        node.pending += 1

        def done(reply: Reply) -> None:
            on_reply(reply)
            node.pending -= 1
            if node.pending == 0:
                self._advance(node)

        self.pipeline.call(node.conn, node.dest, path or node.path, interface, member, done, signature, args)

    def _node_for(self, ref: tuple[str, str], depth: int, cell: bool = False) -> Node:
        """A node for an object reference, routed to its application's connection."""
        name, path = ref
        conn = self.routes.get(name)
        if conn is not None:
            return Node(conn, None, name, path, depth, cell)
        if self.bus is None:
            raise BusError("the walk has no bus connection")
        return Node(self.bus, name, name, path, depth, cell)

    def run(self) -> ET.Element:
        """Walk the desktop; the root element (``desktop-frame``) with every application."""
        session = os.environ.get("AT_SPI_BUS_ADDRESS") or a11y_bus_address()
        self.session = session
        deadline = time.monotonic() + self.timeout
        self.bus = Connection(session, bus=True)
        self._conns.append(self.bus)
        try:
            desktop = Node(self.bus, REGISTRY, REGISTRY, ROOT_PATH, 0)
            apps: list[tuple[str, str]] = []

            def got_apps(reply: Reply) -> None:
                if reply and isinstance(reply[0], list):
                    refs = (object_ref(item) for item in reply[0][: self.limits.max_children])
                    apps.extend(ref for ref in refs if ref is not None)

            self._desktop_props(desktop)
            self.pipeline.call(self.bus, REGISTRY, ROOT_PATH, I_ACCESSIBLE, "GetChildren", got_apps)
            self.pipeline.run(deadline)
            self._connect_apps(apps)
            roots = [self._node_for(ref, 1) for ref in apps]
            if self.app is not None:
                roots = self._named(roots, self.app.lower(), deadline)
            for root in roots:
                self._start(root)
            self.pipeline.run(deadline)
            element = ET.Element(
                xml_name((desktop.role_name or "unknown").replace(" ", "-")),
                {"name": xml_text(desktop.name or "")},
            )
            for root in roots:
                sub = node_element(root, self.limits.text_chars)
                if sub is not None:
                    element.append(sub)
            return element
        finally:
            for conn in self._conns:
                conn.close()

    def _named(self, roots: list[Node], wanted: str, deadline: float) -> list[Node]:
        """The application roots whose name contains ``wanted`` (lower case), asking each
        only for its name: a wait on one application does not read GNOME Shell's 1,400
        objects (about 170 ms of CPU, ours and the shell's) at every poll."""
        names: dict[int, str] = {}

        def got_name(index: int) -> Callable[[Reply], None]:
            def done(reply: Reply) -> None:
                names[index] = str(reply[0]) if reply else ""

            return done

        for index, root in enumerate(roots):
            self.pipeline.call(
                root.conn,
                root.dest,
                root.path,
                I_PROPS,
                "Get",
                got_name(index),
                "ss",
                (I_ACCESSIBLE, "Name"),
            )
        self.pipeline.run(deadline)
        return [root for index, root in enumerate(roots) if wanted in names.get(index, "").lower()]

    def _desktop_props(self, desktop: Node) -> None:
        def got_name(reply: Reply) -> None:
            desktop.name = str(reply[0]) if reply else ""

        def got_role(reply: Reply) -> None:
            desktop.role_name = role_names().get(int(reply[0]), "") if reply else ""

        if self.bus is None:
            raise BusError("the walk has no bus connection")
        self.pipeline.call(
            self.bus, REGISTRY, ROOT_PATH, I_PROPS, "Get", got_name, "ss", (I_ACCESSIBLE, "Name")
        )
        self.pipeline.call(self.bus, REGISTRY, ROOT_PATH, I_ACCESSIBLE, "GetRole", got_role)

    def _connect_apps(self, apps: list[tuple[str, str]]) -> None:
        """Open each application's peer-to-peer socket when it has one (else: the bus)."""
        for name, path in apps:
            if (self.session, name) in ADDRESS_CACHE:
                continue
            try:
                address = app_bus_address(self.session, name, path)
            except BusError as exc:  # no lasting connection to the bus: this walk goes by the bus
                _log.debug("cannot ask %s for its peer-to-peer address: %s", name, exc)
                continue
            if address is None:
                continue  # no answer: ask again on the next walk
            if len(ADDRESS_CACHE) >= ADDRESS_CACHE_MAX:
                ADDRESS_CACHE.clear()
            ADDRESS_CACHE[self.session, name] = address
        for name, _path in apps:
            address = ADDRESS_CACHE.get((self.session, name), "")
            if not address:
                continue
            try:
                conn = Connection(address, bus=False, timeout=2.0)
            except (BusError, OSError) as exc:
                _log.debug("no peer-to-peer a11y connection to %s: %s", name, exc)
                continue
            self._conns.append(conn)
            self.routes[name] = conn

    # -- per-object stages -------------------------------------------------------------------

    def _start(self, node: Node) -> None:
        """Stage 1: what every object needs (name, role, states, interfaces, attributes...)."""
        if node.cell:
            self._start_cell(node)
            return

        def got_props(reply: Reply) -> None:
            props = reply[0] if reply and isinstance(reply[0], dict) else {}
            if "Name" in props:
                node.name = str(props["Name"])
            else:
                self._call(node, I_PROPS, "Get", got_name, "ss", (I_ACCESSIBLE, "Name"))
            if "ChildCount" in props:
                node.child_count = int(props["ChildCount"])
            else:
                self._call(node, I_PROPS, "Get", got_count, "ss", (I_ACCESSIBLE, "ChildCount"))
            if isinstance(props.get("Attributes"), dict):
                got_attributes((props["Attributes"],))
            else:
                self._call(node, I_ACCESSIBLE, "GetAttributes", got_attributes)

        def got_name(reply: Reply) -> None:
            if reply:
                node.name = str(reply[0])

        def got_count(reply: Reply) -> None:
            if reply:
                node.child_count = int(reply[0])

        def got_attributes(reply: Reply) -> None:
            if reply and isinstance(reply[0], dict):
                node.attributes = [(str(k), str(v)) for k, v in reply[0].items()]

        def got_interfaces(reply: Reply) -> None:
            if reply and isinstance(reply[0], list):
                node.interfaces = {str(i).removeprefix(IFACE_PREFIX) for i in reply[0]}
                if cache_key is not None:
                    if len(INTERFACE_CACHE) >= INTERFACE_CACHE_MAX:
                        INTERFACE_CACHE.clear()
                    INTERFACE_CACHE[cache_key] = frozenset(node.interfaces)

        if node.dest is None:
            self._call(node, I_PROPS, "GetAll", got_props, "s", (I_ACCESSIBLE,))
        else:
            # Reached through the bus: not the ATK bridge, maybe Qt 5's, which reads a
            # second argument that GetAll does not have and crashes (VLC, now and then).
            got_props(({},))
        self._call(node, I_ACCESSIBLE, "GetRole", self._got_role(node))
        self._call(node, I_ACCESSIBLE, "GetState", self._got_states(node))
        # The ATK bridge (every application reached peer-to-peer) numbers its objects from
        # a counter and never reuses a path while the application lives, and an ATK
        # object's interfaces are fixed by its type: they are remembered across walks.
        cache_key = (node.app, node.path) if node.dest is None else None
        known = INTERFACE_CACHE.get(cache_key) if cache_key is not None else None
        if known is not None:
            node.interfaces = set(known)
        else:
            self._call(node, I_ACCESSIBLE, "GetInterfaces", got_interfaces)

    def _start_cell(self, node: Node) -> None:
        """A cell of a giant table: name, role, states, extents and text, all at once."""

        def got_name(reply: Reply) -> None:
            if reply:
                node.name = str(reply[0])

        self._call(node, I_PROPS, "Get", got_name, "ss", (I_ACCESSIBLE, "Name"))
        self._call(node, I_ACCESSIBLE, "GetRole", self._got_role(node))
        self._call(node, I_ACCESSIBLE, "GetState", self._got_states(node))
        self._call(node, I_COMPONENT, "GetExtents", self._got_extents(node), "u", (SCREEN_COORDS,))
        self._call(node, I_TEXT, "GetText", self._got_text(node), "ii", (0, -1))

    def _got_role(self, node: Node) -> Callable[[Reply], None]:
        def got_role(reply: Reply) -> None:
            if reply:
                node.role = int(reply[0])
                node.role_name = role_names().get(node.role)

        return got_role

    def _got_states(self, node: Node) -> Callable[[Reply], None]:
        def got_states(reply: Reply) -> None:
            if reply:
                node.states = states_from_bits(reply[0])

        return got_states

    def _got_extents(self, node: Node) -> Callable[[Reply], None]:
        def got_extents(reply: Reply) -> None:
            if reply and isinstance(reply[0], tuple) and len(reply[0]) == 4:
                x, y, width, height = (int(v) for v in reply[0])
                node.extents = (x, y, width, height)

        return got_extents

    def _got_text(self, node: Node) -> Callable[[Reply], None]:
        def got_text(reply: Reply) -> None:
            if reply and isinstance(reply[0], str):
                node.text = reply[0]

        return got_text

    def _advance(self, node: Node) -> None:
        """Stage 2, once stage 1 answered: the role name if unknown, then details and children."""
        if node.stage or node.cell or node.name is None or node.states is None:
            return  # already advanced; cells are complete after one stage; failed objects are dropped
        node.stage = 1
        if node.role_name is None:

            def got_role_name(reply: Reply) -> None:
                node.role_name = reply[0] if reply and isinstance(reply[0], str) else ""

            self._call(node, I_ACCESSIBLE, "GetRoleName", got_role_name)
        self._details(node)

    def _details(self, node: Node) -> None:
        """Extents, text, value, actions and children of a fully identified object."""
        states = node.states or set()
        interfaces = node.interfaces
        on_screen = "showing" in states and "visible" in states
        if on_screen and "Component" in interfaces:
            self._call(node, I_COMPONENT, "GetExtents", self._got_extents(node), "u", (SCREEN_COORDS,))
        if "Text" in interfaces:
            self._call(node, I_TEXT, "GetText", self._got_text(node), "ii", (0, -1))
        if on_screen and "Value" in interfaces:
            # One Get per property, not GetAll: on a Chromium spin button (VS Code's
            # Settings) one of the Value properties has no value, at-spi2-atk leaves its
            # a{sv} entry empty and libdbus aborts the whole browser; a Get only fails.
            node.value = {}

            def got_value(prop: str) -> Callable[[Reply], None]:
                def got(reply: Reply) -> None:
                    if reply and node.value is not None:
                        node.value[prop] = reply[0]

                return got

            for prop in ("CurrentValue", "MinimumValue", "MaximumValue", "MinimumIncrement"):
                self._call(node, I_PROPS, "Get", got_value(prop), "ss", (I_VALUE, prop))
        if on_screen and "Action" in interfaces:
            self._actions(node)
        if node.depth >= self.limits.max_depth:
            return
        count = node.child_count
        if count > self.limits.giant and "Table" in interfaces:
            self._giant_table(node)
            return
        wanted = min(count, self.limits.max_children)
        if wanted <= 0:
            return
        if count <= self.limits.giant:

            def got_children(reply: Reply) -> None:
                if reply and isinstance(reply[0], list):
                    self._adopt(node, [object_ref(item) for item in reply[0][:wanted]])
                else:
                    self._children_one_by_one(node, wanted)

            self._call(node, I_ACCESSIBLE, "GetChildren", got_children)
        else:
            self._children_one_by_one(node, wanted)

    def _children_one_by_one(self, node: Node, wanted: int) -> None:
        """Children by ``GetChildAtIndex`` (never ``GetChildren`` on a huge container)."""
        refs: list[tuple[str, str] | None] = [None] * wanted
        remaining = [wanted]

        for index in range(wanted):

            def got_child(reply: Reply, index: int = index) -> None:
                if reply:
                    refs[index] = object_ref(reply[0])
                remaining[0] -= 1
                if remaining[0] == 0:
                    self._adopt(node, refs)

            self._call(node, I_ACCESSIBLE, "GetChildAtIndex", got_child, "i", (index,))

    def _adopt(self, node: Node, refs: list[tuple[str, str] | None]) -> None:
        """Create and start the child nodes of ``node`` in index order."""
        children: list[Node | None] = [self._node_for(ref, node.depth + 1) for ref in refs if ref is not None]
        node.children = children
        for child in children:
            if child is not None:
                self._start(child)

    def _actions(self, node: Node) -> None:
        """Name, description and key binding of each action, one call per part.

        (``Action.GetActions`` would give them in one call, but the ATK bridge answers it
        with localized names, ``Click`` for ``click``, and empty ones where ``GetName``
        has a name: not what pyatspi's ``getName`` reads.)
        """

        def got_count(reply: Reply) -> None:
            count = int(reply[0]) if reply else 0
            parts = [["", "", ""] for _ in range(count)]
            remaining = [3 * count]
            for index in range(count):
                for column, member in enumerate(("GetName", "GetDescription", "GetKeyBinding")):

                    def got_part(reply: Reply, index: int = index, column: int = column) -> None:
                        if reply and isinstance(reply[0], str):
                            parts[index][column] = reply[0]
                        remaining[0] -= 1
                        if remaining[0] == 0:
                            node.actions = [(name, desc, key) for name, desc, key in parts]

                    self._call(node, I_ACTION, member, got_part, "i", (index,))

        self._call(node, I_PROPS, "Get", got_count, "ss", (I_ACTION, "NActions"))

    # -- giant tables ------------------------------------------------------------------------

    def _giant_table(self, node: Node) -> None:
        """Only the on-screen cells, found by hit-testing the table's visible corners."""
        corners: dict[str, tuple[str, str] | None] = {}
        positions: dict[str, tuple[int, int]] = {}

        def got_extents(reply: Reply) -> None:
            if not (reply and isinstance(reply[0], tuple) and len(reply[0]) == 4):
                return
            x, y, width, height = (int(v) for v in reply[0])
            for key, point in (("first", (x + 1, y + 1)), ("last", (x + width - 2, y + height - 2))):

                def got_hit(reply: Reply, key: str = key) -> None:
                    corners[key] = object_ref(reply[0]) if reply else None
                    if len(corners) == 2:
                        locate()

                self._call(node, I_COMPONENT, "GetAccessibleAtPoint", got_hit, "iiu", (*point, SCREEN_COORDS))

        def locate() -> None:
            if corners.get("first") is None or corners.get("last") is None:
                return
            for key in ("first", "last"):
                ref = corners[key]
                if ref is None:
                    return

                def got_index(reply: Reply, key: str = key) -> None:
                    if not reply:
                        return
                    index = int(reply[0])
                    cell: list[int] = []
                    for member in ("GetRowAtIndex", "GetColumnAtIndex"):

                        def got_rc(reply: Reply) -> None:
                            if reply:
                                cell.append(int(reply[0]))
                                if len(cell) == 2:
                                    positions[key] = (cell[0], cell[1])
                                    if len(positions) == 2:
                                        read_cells()

                        self._call(node, I_TABLE, member, got_rc, "i", (index,))

                self._call(node, I_ACCESSIBLE, "GetIndexInParent", got_index, path=ref[1])

        def read_cells() -> None:
            (row0, col0), (row1, col1) = positions["first"], positions["last"]
            wanted = [(row, col) for row in range(row0, row1 + 1) for col in range(col0, col1 + 1)]
            wanted = wanted[: self.limits.max_cells]
            slots: list[Node | None] = [None] * len(wanted)
            node.children = slots
            for index, (row, col) in enumerate(wanted):

                def got_cell(reply: Reply, index: int = index) -> None:
                    ref = object_ref(reply[0]) if reply else None
                    if ref is not None:
                        cell = self._node_for(ref, node.depth + 1, cell=True)
                        slots[index] = cell
                        self._start(cell)

                self._call(node, I_TABLE, "GetAccessibleAt", got_cell, "ii", (row, col))

        self._call(node, I_COMPONENT, "GetExtents", got_extents, "u", (SCREEN_COORDS,))

    # -- XML -----------------------------------------------------------------------------------
