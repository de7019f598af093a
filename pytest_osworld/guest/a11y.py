"""The accessibility tree as OSWorld's XML, read from AT-SPI.

Naming is OSWorld's, so its tools and our observation code read the tree unchanged:
each element is the AT-SPI role with spaces turned into ``-``; attributes are ``name``,
``st:<state>="true"``, ``attr:<toolkit attribute>``, ``cp:screencoord="(x, y)"`` and
``cp:size="(w, h)"`` (only for nodes both visible and showing), ``val:value|min|max|step``,
``act:<action>_desc|_kb``, ``image="true"`` and ``selection="true"``; the element text is
the node's full text with U+FFFC and U+FFFD removed.

Speed is the point of this module. Every property read is a D-Bus call into the
application; pyatspi makes them one blocking round trip at a time (7-8 per node, 2-4 s
for Calc). :class:`DBusWalk` sends the same calls through a small pipelined D-Bus
client (:mod:`pytest_osworld.guest.atspi_dbus`), hundreds in flight, over each
application's peer-to-peer socket, so the applications never wait for us between calls;
the XML is the same, element for element. The pyatspi walk stays as the fallback
(:meth:`TreeBuilder.build_pyatspi`, or ``OSWORLD_A11Y_WALKER=pyatspi``). Both read
interfaces only when the node declares them, and never enumerate giant tables (Calc's
sheet reports 2^31 children): only the cells on screen are read, through the Table
interface, with a slimmer set of properties.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pytest_osworld.guest.atspi_dbus import BusError, Connection, Pipeline

_log = logging.getLogger(__name__)

#: Serialises every use of pyatspi in the server: libatspi is not safe for concurrent
#: calls into one application (cell reads from several threads deadlocked).
ATSPI_LOCK = threading.Lock()

_BASE = "https://accessibility.ubuntu.example.org/ns/"
#: XML namespaces of the tree, by prefix (the URIs OSWorld's Ubuntu server emits).
NAMESPACES: dict[str, str] = {
    "st": _BASE + "state",
    "attr": _BASE + "attributes",
    "cp": _BASE + "component",
    "val": _BASE + "value",
    "act": _BASE + "action",
}
for _prefix, _uri in NAMESPACES.items():
    ET.register_namespace(_prefix, _uri)

_ST = "{" + NAMESPACES["st"] + "}"
_ATTR = "{" + NAMESPACES["attr"] + "}"
_CP = "{" + NAMESPACES["cp"] + "}"
_VAL = "{" + NAMESPACES["val"] + "}"
_ACT = "{" + NAMESPACES["act"] + "}"

_STRIP = str.maketrans("", "", "\ufffc\ufffd")
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffb\U00010000-\U0010ffff]")
_XML_NAME_BAD = re.compile(r"[^\w.-]", re.ASCII)


@dataclass(frozen=True)
class Limits:
    """Bounds of one walk: OSWorld's depth and fan-out limits plus our table caps."""

    max_depth: int = 50
    max_children: int = 1024
    #: a node with more children than this is a "giant table": only visible cells are read.
    giant: int = 5000
    max_cells: int = 2000
    text_chars: int = 10_000


def _xml_name(raw: str) -> str:
    """A string usable as an XML local name (AT-SPI attribute keys are free-form)."""
    cleaned = _XML_NAME_BAD.sub("-", raw.strip())
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "_" + cleaned
    return cleaned


def _xml_text(raw: str) -> str:
    """Drop characters XML 1.0 cannot carry (control characters, U+FFFC/U+FFFD, surrogates)."""
    return _NOT_XML.sub("", raw)


class TreeBuilder:
    """Builds the XML tree of the whole desktop; one walk at a time per builder."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()

    def build(self) -> str:
        """The serialized tree of every application on the AT-SPI desktop.

        Read over D-Bus with pipelined calls (:class:`DBusWalk`); if the accessibility bus
        cannot be reached that way, or ``OSWORLD_A11Y_WALKER=pyatspi`` is set, the
        sequential pyatspi walk (:meth:`build_pyatspi`) gives the same XML, slower.
        """
        if os.environ.get("OSWORLD_A11Y_WALKER", "") != "pyatspi":
            try:
                return self.build_dbus()
            except (BusError, OSError) as exc:
                _log.warning("fast a11y walk unavailable (%s); using pyatspi", exc)
            except Exception:  # a reply shaped unlike any seen: still answer, the slow way
                _log.exception("fast a11y walk failed; using pyatspi")
        return self.build_pyatspi()

    def build_dbus(self) -> str:
        """The tree read by :class:`DBusWalk` (raises BusError/OSError if the bus is unreachable)."""
        return ET.tostring(DBusWalk(self.limits).run(), encoding="unicode")

    def build_pyatspi(self) -> str:
        """The tree read through pyatspi, one blocking D-Bus round trip per property."""
        import pyatspi

        with ATSPI_LOCK:
            desktop = pyatspi.Registry.getDesktop(0)
            root = ET.Element(_tag(desktop), {"name": _safe(lambda: desktop.name, "")})
            apps = [app for app in _children(desktop, self.limits.max_children) if app is not None]
            if apps:
                with ThreadPoolExecutor(max_workers=min(8, len(apps))) as pool:
                    subtrees = list(pool.map(lambda app: self._node(app, 1), apps))
                root.extend(node for node in subtrees if node is not None)
            return ET.tostring(root, encoding="unicode")

    # -- one node --------------------------------------------------------------------------

    def _node(self, obj: Any, depth: int) -> ET.Element | None:
        import pyatspi

        try:
            element = ET.Element(_tag(obj))
            element.set("name", _xml_text(obj.name or ""))
            states = obj.getState().getStates()
        except Exception:  # the object went away mid-walk
            return None
        state_names = {pyatspi.stateToString(state) for state in states}
        for state in sorted(state_names):
            element.set(_ST + _xml_name(state), "true")
        for pair in _safe(obj.getAttributes, []):
            key, _, value = pair.partition(":")
            element.set(_ATTR + _xml_name(key), _xml_text(value))
        interfaces = set(_safe(obj.get_interfaces, []))
        on_screen = "showing" in state_names and "visible" in state_names
        if on_screen and "Component" in interfaces:
            _set_extents(element, obj)
        if "Text" in interfaces:
            _set_text(element, obj, self.limits.text_chars)
        # Values and actions of hidden nodes (closed menus: most of Calc's tree) cost two to
        # six D-Bus calls each and no observation uses them: read them on screen only.
        if on_screen and "Value" in interfaces:
            _set_value(element, obj)
        if on_screen and "Action" in interfaces:
            _set_actions(element, obj)
        if "Image" in interfaces:
            element.set("image", "true")
        if "Selection" in interfaces:
            element.set("selection", "true")
        if depth >= self.limits.max_depth:
            return element
        count = _safe(lambda: int(obj.childCount), 0)
        if count > self.limits.giant and "Table" in interfaces:
            element.extend(self._visible_cells(obj))
            return element
        for child in _children(obj, min(count, self.limits.max_children)):
            sub = self._node(child, depth + 1)
            if sub is not None:
                element.append(sub)
        return element

    # -- giant tables ------------------------------------------------------------------------

    def _visible_cells(self, table_obj: Any) -> list[ET.Element]:
        """The on-screen cells of a huge table, found by hit-testing its visible corners."""
        import pyatspi

        try:
            table = table_obj.queryTable()
            component = table_obj.queryComponent()
            x, y, width, height = component.getExtents(pyatspi.DESKTOP_COORDS)
            first = component.getAccessibleAtPoint(x + 1, y + 1, pyatspi.DESKTOP_COORDS)
            last = component.getAccessibleAtPoint(x + width - 2, y + height - 2, pyatspi.DESKTOP_COORDS)
            if first is None or last is None:
                return []
            row0, col0 = _cell_position(table, first)
            row1, col1 = _cell_position(table, last)
        except Exception:
            return []
        positions = [(row, col) for row in range(row0, row1 + 1) for col in range(col0, col1 + 1)][
            : self.limits.max_cells
        ]

        def read(position: tuple[int, int]) -> ET.Element | None:
            cell = _safe(lambda: table.getAccessibleAt(*position), None)
            return None if cell is None else _cell_node(cell, self.limits.text_chars)

        # Sequential on purpose: libatspi deadlocked when one application was read from
        # several threads at once (threads per application, as in build(), are fine).
        return [cell for cell in map(read, positions) if cell is not None]


def _cell_position(table: Any, cell: Any) -> tuple[int, int]:
    index = cell.getIndexInParent()
    return int(table.getRowAtIndex(index)), int(table.getColumnAtIndex(index))


def _cell_node(cell: Any, text_chars: int) -> ET.Element | None:
    """A table cell with name, states, extents and text (attributes and actions skipped)."""
    import pyatspi

    try:
        element = ET.Element(_tag(cell))
        element.set("name", _xml_text(cell.name or ""))
        states = {pyatspi.stateToString(s) for s in cell.getState().getStates()}
    except Exception:
        return None
    for state in sorted(states):
        element.set(_ST + _xml_name(state), "true")
    if "showing" in states and "visible" in states:
        _set_extents(element, cell)
    _set_text(element, cell, text_chars)
    return element


# -- property helpers -----------------------------------------------------------------------


def _safe(func: Any, default: Any) -> Any:
    try:
        return func()
    except Exception:
        return default


def _tag(obj: Any) -> str:
    role = _safe(obj.getRoleName, "") or "unknown"
    return _xml_name(role.replace(" ", "-"))


def _children(obj: Any, limit: int) -> list[Any]:
    count = _safe(lambda: int(obj.childCount), 0)
    result = []
    for index in range(min(count, limit)):
        child = _safe(lambda i=index: obj.getChildAtIndex(i), None)
        if child is not None:
            result.append(child)
    return result


def _set_extents(element: ET.Element, obj: Any) -> None:
    import pyatspi

    try:
        x, y, width, height = obj.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    except Exception:
        return
    element.set(_CP + "screencoord", f"({x}, {y})")
    element.set(_CP + "size", f"({width}, {height})")


def _set_text(element: ET.Element, obj: Any, limit: int) -> None:
    try:
        text = obj.queryText().getText(0, -1)
    except Exception:
        return
    if text:
        element.text = _xml_text(text[:limit])


def _set_value(element: ET.Element, obj: Any) -> None:
    try:
        value = obj.queryValue()
        element.set(_VAL + "value", str(value.currentValue))
        element.set(_VAL + "min", str(value.minimumValue))
        element.set(_VAL + "max", str(value.maximumValue))
        element.set(_VAL + "step", str(value.minimumIncrement))
    except Exception:
        return


def _set_actions(element: ET.Element, obj: Any) -> None:
    try:
        action = obj.queryAction()
        for index in range(action.nActions):
            name = _xml_name(action.getName(index) or f"action{index}")
            element.set(f"{_ACT}{name}_desc", _xml_text(action.getDescription(index) or ""))
            element.set(f"{_ACT}{name}_kb", _xml_text(action.getKeyBinding(index) or ""))
    except Exception:
        return


def focused_terminal_text() -> str | None:
    """Text of the focused ``terminal`` node (gnome-terminal's VTE), or None."""
    import pyatspi

    with ATSPI_LOCK:
        return _terminal_text(pyatspi.Registry.getDesktop(0), pyatspi.STATE_ACTIVE)


def _terminal_text(desktop: Any, active: Any) -> str | None:
    for app in _children(desktop, 1024):
        for frame in _children(app, 64):
            states = _safe(lambda f=frame: f.getState(), None)
            if states is None or not states.contains(active):
                continue
            found = _find_terminal(frame, 0)
            if found is not None:
                return found
    return None


def _find_terminal(obj: Any, depth: int) -> str | None:
    if depth > 30:
        return None
    if _safe(obj.getRoleName, "") == "terminal":
        try:
            text: str = obj.queryText().getText(0, -1)
        except Exception:
            return ""
        return text.translate(_STRIP)
    for child in _children(obj, 256):
        found = _find_terminal(child, depth + 1)
        if found is not None:
            return found
    return None


def registry_alive() -> bool:
    """Whether the AT-SPI registry answers (the desktop object can be read)."""
    import pyatspi

    with ATSPI_LOCK:
        return int(pyatspi.Registry.getDesktop(0).childCount) >= 0


# -- the pipelined D-Bus walk ----------------------------------------------------------------

_REGISTRY = "org.a11y.atspi.Registry"
_ROOT_PATH = "/org/a11y/atspi/accessible/root"
_NULL_PATH = "/org/a11y/atspi/null"
_I_ACCESSIBLE = "org.a11y.atspi.Accessible"
_I_COMPONENT = "org.a11y.atspi.Component"
_I_TEXT = "org.a11y.atspi.Text"
_I_TABLE = "org.a11y.atspi.Table"
_I_ACTION = "org.a11y.atspi.Action"
_I_VALUE = "org.a11y.atspi.Value"
_I_APPLICATION = "org.a11y.atspi.Application"
_I_PROPS = "org.freedesktop.DBus.Properties"
_IFACE_PREFIX = "org.a11y.atspi."
_SCREEN = 0  # ATSPI_COORD_TYPE_SCREEN, what pyatspi.DESKTOP_COORDS means

Reply = tuple[Any, ...] | None

#: Interfaces of ATK-bridge objects by (application bus name, object path), across walks.
_INTERFACES: dict[tuple[str, str], frozenset[str]] = {}
_INTERFACES_MAX = 200_000


@lru_cache(maxsize=1)
def _role_names() -> dict[int, str]:
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
def _state_names() -> dict[int, str]:
    """State bit -> name, as ``pyatspi.stateToString`` gives it."""
    from pyatspi import state

    return {int(value): name for value, name in state.STATE_VALUE_TO_NAME.items()}


def _states_from_bits(words: Any) -> set[str] | None:
    """State names from ``GetState``'s ``au`` (two 32-bit words, low word first)."""
    if not isinstance(words, list):
        return None
    bits = 0
    for shift, word in enumerate(words[:2]):
        bits |= int(word) << (32 * shift)
    names = _state_names()
    return {names[bit] for bit in range(64) if bits >> bit & 1 and bit in names}


def _ref(value: Any) -> tuple[str, str] | None:
    """An object reference ``(bus name, path)`` from a reply value, or None for the null object."""
    if not isinstance(value, tuple) or len(value) != 2:
        return None
    name, path = value
    if not isinstance(path, str) or path == _NULL_PATH or not path:
        return None
    return str(name), path


class _Node:
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
        self.children: list[_Node | None] = []


class DBusWalk:
    """One walk of the desktop with many D-Bus calls in flight (same XML as pyatspi's walk).

    Each application is read over its private peer-to-peer socket when it offers one
    (``Application.GetApplicationBusAddress``, as libatspi does), else through the
    accessibility bus. Per object: ``Properties.GetAll(Accessible)`` (name, attributes,
    child count), ``GetRole``, ``GetState``, ``GetInterfaces``; then, depending on those,
    ``GetExtents``, ``GetText``, the Value properties, ``GetActions`` and the children.
    Every call is queued at once, so the applications work through their queues
    without waiting for us. (``org.a11y.atspi.Cache.GetItems`` would give the first
    four in one call per application, but at-spi2-core 2.46's ATK bridge, used by
    LibreOffice, Chromium, Thunderbird, GIMP and GTK apps here, no longer serves it.)
    """

    def __init__(self, limits: Limits, timeout: float = 60.0) -> None:
        self.limits = limits
        self.timeout = timeout
        self.pipeline = Pipeline()
        self.bus: Connection | None = None
        #: peer-to-peer connections by application bus name
        self.routes: dict[str, Connection] = {}
        self._conns: list[Connection] = []

    # -- plumbing ----------------------------------------------------------------------------

    def _call(
        self,
        node: _Node,
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

    def _node_for(self, ref: tuple[str, str], depth: int, cell: bool = False) -> _Node:
        """A node for an object reference, routed to its application's connection."""
        name, path = ref
        conn = self.routes.get(name)
        if conn is not None:
            return _Node(conn, None, name, path, depth, cell)
        if self.bus is None:
            raise BusError("the walk has no bus connection")
        return _Node(self.bus, name, name, path, depth, cell)

    def run(self) -> ET.Element:
        """Walk the desktop; the root element (``desktop-frame``) with every application."""
        session = os.environ.get("AT_SPI_BUS_ADDRESS") or _a11y_bus_address()
        deadline = time.monotonic() + self.timeout
        self.bus = Connection(session, bus=True)
        self._conns.append(self.bus)
        try:
            desktop = _Node(self.bus, _REGISTRY, _REGISTRY, _ROOT_PATH, 0)
            apps: list[tuple[str, str]] = []

            def got_apps(reply: Reply) -> None:
                if reply and isinstance(reply[0], list):
                    refs = (_ref(item) for item in reply[0][: self.limits.max_children])
                    apps.extend(ref for ref in refs if ref is not None)

            self._desktop_props(desktop)
            self.pipeline.call(self.bus, _REGISTRY, _ROOT_PATH, _I_ACCESSIBLE, "GetChildren", got_apps)
            self.pipeline.run(deadline)
            self._connect_apps(apps, deadline)
            roots = [self._node_for(ref, 1) for ref in apps]
            for root in roots:
                self._start(root)
            self.pipeline.run(deadline)
            element = ET.Element(
                _xml_name((desktop.role_name or "unknown").replace(" ", "-")),
                {"name": _xml_text(desktop.name or "")},
            )
            for root in roots:
                sub = self._element(root)
                if sub is not None:
                    element.append(sub)
            return element
        finally:
            for conn in self._conns:
                conn.close()

    def _desktop_props(self, desktop: _Node) -> None:
        def got_name(reply: Reply) -> None:
            desktop.name = str(reply[0]) if reply else ""

        def got_role(reply: Reply) -> None:
            desktop.role_name = _role_names().get(int(reply[0]), "") if reply else ""

        if self.bus is None:
            raise BusError("the walk has no bus connection")
        self.pipeline.call(
            self.bus, _REGISTRY, _ROOT_PATH, _I_PROPS, "Get", got_name, "ss", (_I_ACCESSIBLE, "Name")
        )
        self.pipeline.call(self.bus, _REGISTRY, _ROOT_PATH, _I_ACCESSIBLE, "GetRole", got_role)

    def _connect_apps(self, apps: list[tuple[str, str]], deadline: float) -> None:
        """Open each application's peer-to-peer socket when it has one (else: the bus)."""
        addresses: dict[str, str] = {}
        if self.bus is None:
            raise BusError("the walk has no bus connection")
        for name, path in apps:

            def got_address(reply: Reply, name: str = name) -> None:
                if reply and isinstance(reply[0], str) and reply[0]:
                    addresses[name] = reply[0]

            self.pipeline.call(self.bus, name, path, _I_APPLICATION, "GetApplicationBusAddress", got_address)
        self.pipeline.run(deadline)
        for name, address in addresses.items():
            try:
                conn = Connection(address, bus=False, timeout=2.0)
            except (BusError, OSError) as exc:
                _log.debug("no peer-to-peer a11y connection to %s: %s", name, exc)
                continue
            self._conns.append(conn)
            self.routes[name] = conn

    # -- per-object stages -------------------------------------------------------------------

    def _start(self, node: _Node) -> None:
        """Stage 1: what every object needs (name, role, states, interfaces, attributes...)."""
        if node.cell:
            self._start_cell(node)
            return

        def got_props(reply: Reply) -> None:
            props = reply[0] if reply and isinstance(reply[0], dict) else {}
            if "Name" in props:
                node.name = str(props["Name"])
            else:
                self._call(node, _I_PROPS, "Get", got_name, "ss", (_I_ACCESSIBLE, "Name"))
            if "ChildCount" in props:
                node.child_count = int(props["ChildCount"])
            else:
                self._call(node, _I_PROPS, "Get", got_count, "ss", (_I_ACCESSIBLE, "ChildCount"))
            if isinstance(props.get("Attributes"), dict):
                got_attributes((props["Attributes"],))
            else:
                self._call(node, _I_ACCESSIBLE, "GetAttributes", got_attributes)

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
                node.interfaces = {str(i).removeprefix(_IFACE_PREFIX) for i in reply[0]}
                if cache_key is not None:
                    if len(_INTERFACES) >= _INTERFACES_MAX:
                        _INTERFACES.clear()
                    _INTERFACES[cache_key] = frozenset(node.interfaces)

        self._call(node, _I_PROPS, "GetAll", got_props, "s", (_I_ACCESSIBLE,))
        self._call(node, _I_ACCESSIBLE, "GetRole", self._got_role(node))
        self._call(node, _I_ACCESSIBLE, "GetState", self._got_states(node))
        # The ATK bridge (every application reached peer-to-peer) numbers its objects from
        # a counter and never reuses a path while the application lives, and an ATK
        # object's interfaces are fixed by its type: they are remembered across walks.
        cache_key = (node.app, node.path) if node.dest is None else None
        known = _INTERFACES.get(cache_key) if cache_key is not None else None
        if known is not None:
            node.interfaces = set(known)
        else:
            self._call(node, _I_ACCESSIBLE, "GetInterfaces", got_interfaces)

    def _start_cell(self, node: _Node) -> None:
        """A cell of a giant table: name, role, states, extents and text, all at once."""

        def got_name(reply: Reply) -> None:
            if reply:
                node.name = str(reply[0])

        self._call(node, _I_PROPS, "Get", got_name, "ss", (_I_ACCESSIBLE, "Name"))
        self._call(node, _I_ACCESSIBLE, "GetRole", self._got_role(node))
        self._call(node, _I_ACCESSIBLE, "GetState", self._got_states(node))
        self._call(node, _I_COMPONENT, "GetExtents", self._got_extents(node), "u", (_SCREEN,))
        self._call(node, _I_TEXT, "GetText", self._got_text(node), "ii", (0, -1))

    def _got_role(self, node: _Node) -> Callable[[Reply], None]:
        def got_role(reply: Reply) -> None:
            if reply:
                node.role = int(reply[0])
                node.role_name = _role_names().get(node.role)

        return got_role

    def _got_states(self, node: _Node) -> Callable[[Reply], None]:
        def got_states(reply: Reply) -> None:
            if reply:
                node.states = _states_from_bits(reply[0])

        return got_states

    def _got_extents(self, node: _Node) -> Callable[[Reply], None]:
        def got_extents(reply: Reply) -> None:
            if reply and isinstance(reply[0], tuple) and len(reply[0]) == 4:
                x, y, width, height = (int(v) for v in reply[0])
                node.extents = (x, y, width, height)

        return got_extents

    def _got_text(self, node: _Node) -> Callable[[Reply], None]:
        def got_text(reply: Reply) -> None:
            if reply and isinstance(reply[0], str):
                node.text = reply[0]

        return got_text

    def _advance(self, node: _Node) -> None:
        """Stage 2, once stage 1 answered: the role name if unknown, then details and children."""
        if node.stage or node.cell or node.name is None or node.states is None:
            return  # already advanced; cells are complete after one stage; failed objects are dropped
        node.stage = 1
        if node.role_name is None:

            def got_role_name(reply: Reply) -> None:
                node.role_name = reply[0] if reply and isinstance(reply[0], str) else ""

            self._call(node, _I_ACCESSIBLE, "GetRoleName", got_role_name)
        self._details(node)

    def _details(self, node: _Node) -> None:
        """Extents, text, value, actions and children of a fully identified object."""
        states = node.states or set()
        interfaces = node.interfaces
        on_screen = "showing" in states and "visible" in states
        if on_screen and "Component" in interfaces:
            self._call(node, _I_COMPONENT, "GetExtents", self._got_extents(node), "u", (_SCREEN,))
        if "Text" in interfaces:
            self._call(node, _I_TEXT, "GetText", self._got_text(node), "ii", (0, -1))
        if on_screen and "Value" in interfaces:

            def got_value(reply: Reply) -> None:
                node.value = reply[0] if reply and isinstance(reply[0], dict) else None

            self._call(node, _I_PROPS, "GetAll", got_value, "s", (_I_VALUE,))
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
                    self._adopt(node, [_ref(item) for item in reply[0][:wanted]])
                else:
                    self._children_one_by_one(node, wanted)

            self._call(node, _I_ACCESSIBLE, "GetChildren", got_children)
        else:
            self._children_one_by_one(node, wanted)

    def _children_one_by_one(self, node: _Node, wanted: int) -> None:
        """Children by ``GetChildAtIndex`` (never ``GetChildren`` on a huge container)."""
        refs: list[tuple[str, str] | None] = [None] * wanted
        remaining = [wanted]

        for index in range(wanted):

            def got_child(reply: Reply, index: int = index) -> None:
                if reply:
                    refs[index] = _ref(reply[0])
                remaining[0] -= 1
                if remaining[0] == 0:
                    self._adopt(node, refs)

            self._call(node, _I_ACCESSIBLE, "GetChildAtIndex", got_child, "i", (index,))

    def _adopt(self, node: _Node, refs: list[tuple[str, str] | None]) -> None:
        """Create and start the child nodes of ``node`` in index order."""
        children: list[_Node | None] = [
            self._node_for(ref, node.depth + 1) for ref in refs if ref is not None
        ]
        node.children = children
        for child in children:
            if child is not None:
                self._start(child)

    def _actions(self, node: _Node) -> None:
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

                    self._call(node, _I_ACTION, member, got_part, "i", (index,))

        self._call(node, _I_PROPS, "Get", got_count, "ss", (_I_ACTION, "NActions"))

    # -- giant tables ------------------------------------------------------------------------

    def _giant_table(self, node: _Node) -> None:
        """Only the on-screen cells, found by hit-testing the table's visible corners."""
        corners: dict[str, tuple[str, str] | None] = {}
        positions: dict[str, tuple[int, int]] = {}

        def got_extents(reply: Reply) -> None:
            if not (reply and isinstance(reply[0], tuple) and len(reply[0]) == 4):
                return
            x, y, width, height = (int(v) for v in reply[0])
            for key, point in (("first", (x + 1, y + 1)), ("last", (x + width - 2, y + height - 2))):

                def got_hit(reply: Reply, key: str = key) -> None:
                    corners[key] = _ref(reply[0]) if reply else None
                    if len(corners) == 2:
                        locate()

                self._call(node, _I_COMPONENT, "GetAccessibleAtPoint", got_hit, "iiu", (*point, _SCREEN))

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

                        self._call(node, _I_TABLE, member, got_rc, "i", (index,))

                self._call(node, _I_ACCESSIBLE, "GetIndexInParent", got_index, path=ref[1])

        def read_cells() -> None:
            (row0, col0), (row1, col1) = positions["first"], positions["last"]
            wanted = [(row, col) for row in range(row0, row1 + 1) for col in range(col0, col1 + 1)]
            wanted = wanted[: self.limits.max_cells]
            slots: list[_Node | None] = [None] * len(wanted)
            node.children = slots
            for index, (row, col) in enumerate(wanted):

                def got_cell(reply: Reply, index: int = index) -> None:
                    ref = _ref(reply[0]) if reply else None
                    if ref is not None:
                        cell = self._node_for(ref, node.depth + 1, cell=True)
                        slots[index] = cell
                        self._start(cell)

                self._call(node, _I_TABLE, "GetAccessibleAt", got_cell, "ii", (row, col))

        self._call(node, _I_COMPONENT, "GetExtents", got_extents, "u", (_SCREEN,))

    # -- XML -----------------------------------------------------------------------------------

    def _element(self, node: _Node) -> ET.Element | None:
        """The XML of a node and its subtree (same attributes, in the same order, as pyatspi's)."""
        if node.name is None or node.states is None:
            return None
        element = ET.Element(_xml_name((node.role_name or "unknown").replace(" ", "-")))
        element.set("name", _xml_text(node.name))
        states = node.states
        for state in sorted(states):
            element.set(_ST + _xml_name(state), "true")
        on_screen = "showing" in states and "visible" in states
        if node.cell:
            if on_screen and node.extents is not None:
                _put_extents(element, node.extents)
            if node.text:
                element.text = _xml_text(node.text[: self.limits.text_chars])
            return element
        for key, value in node.attributes:
            key, _, value = f"{key}:{value}".partition(":")
            element.set(_ATTR + _xml_name(key), _xml_text(value))
        interfaces = node.interfaces
        if on_screen and "Component" in interfaces and node.extents is not None:
            _put_extents(element, node.extents)
        if "Text" in interfaces and node.text:
            element.text = _xml_text(node.text[: self.limits.text_chars])
        if on_screen and "Value" in interfaces and node.value:
            _put_value(element, node.value)
        if on_screen and "Action" in interfaces and node.actions:
            for index, (name, description, key_binding) in enumerate(node.actions):
                tag = _xml_name(name or f"action{index}")
                element.set(f"{_ACT}{tag}_desc", _xml_text(description))
                element.set(f"{_ACT}{tag}_kb", _xml_text(key_binding))
        if "Image" in interfaces:
            element.set("image", "true")
        if "Selection" in interfaces:
            element.set("selection", "true")
        for child in node.children:
            sub = None if child is None else self._element(child)
            if sub is not None:
                element.append(sub)
        return element


def _put_extents(element: ET.Element, extents: tuple[int, int, int, int]) -> None:
    x, y, width, height = extents
    element.set(_CP + "screencoord", f"({x}, {y})")
    element.set(_CP + "size", f"({width}, {height})")


def _put_value(element: ET.Element, props: dict[str, Any]) -> None:
    for attribute, prop in (
        ("value", "CurrentValue"),
        ("min", "MinimumValue"),
        ("max", "MaximumValue"),
        ("step", "MinimumIncrement"),
    ):
        if prop not in props:
            return
        element.set(_VAL + attribute, str(float(props[prop])))


def _a11y_bus_address() -> str:
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
