"""The sequential accessibility walk through pyatspi, and the small pyatspi probes.

Owns :class:`PyatspiWalk`, the fallback tree walk (one blocking D-Bus round trip per
property read, the way libatspi works; same XML as the pipelined walk of
:mod:`pytest_osworld.guest.a11y_dbus`), :data:`ATSPI_LOCK`, the focused terminal's text
for ``/terminal`` and the registry probe of ``/health``.
"""

from __future__ import annotations

import threading
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pytest_osworld.guest.a11y_xml import ACT, ATTR, CP, ST, STRIP, VAL, Limits, xml_name, xml_text

#: Serialises every use of pyatspi in the server: libatspi is not safe for concurrent
#: calls into one application (cell reads from several threads deadlocked).
ATSPI_LOCK = threading.Lock()


class PyatspiWalk:
    """One walk of the desktop through pyatspi, bounded by ``limits``."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def run(self) -> str:
        """The serialized tree of every application on the AT-SPI desktop."""
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
            element.set("name", xml_text(obj.name or ""))
            states = obj.getState().getStates()
        except Exception:  # the object went away mid-walk
            return None
        state_names = {pyatspi.stateToString(state) for state in states}
        for state in sorted(state_names):
            element.set(ST + xml_name(state), "true")
        for pair in _safe(obj.getAttributes, []):
            key, _, value = pair.partition(":")
            element.set(ATTR + xml_name(key), xml_text(value))
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
        element.set("name", xml_text(cell.name or ""))
        states = {pyatspi.stateToString(s) for s in cell.getState().getStates()}
    except Exception:
        return None
    for state in sorted(states):
        element.set(ST + xml_name(state), "true")
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
    return xml_name(role.replace(" ", "-"))


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
    element.set(CP + "screencoord", f"({x}, {y})")
    element.set(CP + "size", f"({width}, {height})")


def _set_text(element: ET.Element, obj: Any, limit: int) -> None:
    try:
        text = obj.queryText().getText(0, -1)
    except Exception:
        return
    if text:
        element.text = xml_text(text[:limit])


def _set_value(element: ET.Element, obj: Any) -> None:
    try:
        value = obj.queryValue()
        element.set(VAL + "value", str(value.currentValue))
        element.set(VAL + "min", str(value.minimumValue))
        element.set(VAL + "max", str(value.maximumValue))
        element.set(VAL + "step", str(value.minimumIncrement))
    except Exception:
        return


def _set_actions(element: ET.Element, obj: Any) -> None:
    try:
        action = obj.queryAction()
        for index in range(action.nActions):
            name = xml_name(action.getName(index) or f"action{index}")
            element.set(f"{ACT}{name}_desc", xml_text(action.getDescription(index) or ""))
            element.set(f"{ACT}{name}_kb", xml_text(action.getKeyBinding(index) or ""))
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
        return text.translate(STRIP)
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
