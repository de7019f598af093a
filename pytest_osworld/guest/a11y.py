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

This module owns :class:`TreeBuilder`, which picks the walk. The parts live beside it:
:mod:`~pytest_osworld.guest.a11y_xml` (namespaces, names, text, limits),
:mod:`~pytest_osworld.guest.a11y_dbus` (the pipelined walk) and
:mod:`~pytest_osworld.guest.a11y_dbus_node` (its nodes and their XML),
:mod:`~pytest_osworld.guest.a11y_pyatspi` (the pyatspi walk, the terminal text and the
registry probe). Their public names are re-exported here.
"""

from __future__ import annotations

import logging
import os
import xml.etree.ElementTree as ET

from pytest_osworld.guest.a11y_dbus import DBusWalk
from pytest_osworld.guest.a11y_pyatspi import (
    ATSPI_LOCK,
    PyatspiWalk,
    focused_terminal_text,
    registry_alive,
)
from pytest_osworld.guest.a11y_xml import CP, NAMESPACES, Limits
from pytest_osworld.guest.atspi_dbus import BusError

__all__ = [
    "ATSPI_LOCK",
    "NAMESPACES",
    "DBusWalk",
    "Limits",
    "PyatspiWalk",
    "TreeBuilder",
    "focused_terminal_text",
    "registry_alive",
    "shell_ready",
]

_log = logging.getLogger(__name__)


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
        return PyatspiWalk(self.limits).run()


def shell_ready() -> bool:
    """Whether GNOME Shell's dock is on screen in the accessibility tree: the "Show
    Applications" button and at least one named item beside it. The shell takes over the
    screen as window manager about a second before its dock fills in; an agent's first
    observation must not come from that second."""
    root = DBusWalk(Limits(), timeout=5.0, app="gnome-shell").run()
    for app in root:
        if app.get("name") != "gnome-shell":
            continue
        shown = [node for node in app.iter() if node.get(CP + "screencoord") is not None]
        apps_button = any(n.tag == "toggle-button" and n.get("name") == "Show Applications" for n in shown)
        items = any(n.tag == "push-button" and n.get("name") for n in shown)
        return apps_button and items
    return False
