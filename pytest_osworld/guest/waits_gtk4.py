"""Waits and clicks for GTK 4 windows (GNOME Settings, Nautilus 43), for reference solutions.

GTK 4.8's accessibility tree places every element relative to its window's frame, not
on the screen, and marks none of them "showing"; so :mod:`.waits`, which keeps only
elements showing on screen, never finds them (Ubuntu 22.04's GTK 4.6 should behave
alike; not checked). Here an element is placed on the screen by adding the
window's position: the X window's origin plus its client-side shadow
(``_GTK_FRAME_EXTENTS``). An element counts when it has a size and lies inside the frame
(pages of a stack that are not shown have no size; rows scrolled out of view lie outside).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

from pytest_osworld.guest.waits import Element, find_windows, wait_until, window_geometry

__all__ = ["click_gtk4_element", "gtk4_elements", "shadow_of", "wait_gtk4_element"]


def shadow_of(xprop_output: str) -> tuple[int, int]:
    """The left and top widths of a window's client-side shadow, from ``xprop -id W
    _GTK_FRAME_EXTENTS`` (``= left, right, top, bottom``); no shadow when the window has
    none (a maximized window, a server-side frame)."""
    _, _, values = xprop_output.partition("=")
    extents = [int(v) for v in values.split(",") if v.strip().isdigit()]
    return (extents[0], extents[2]) if len(extents) == 4 else (0, 0)


def _frame_origin(window_id: int) -> tuple[int, int]:
    """Where the window's visible frame starts on screen: the X window less its shadow."""
    x, y, _, _ = window_geometry(window_id)
    listing = subprocess.run(
        ["xprop", "-id", hex(window_id), "_GTK_FRAME_EXTENTS"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    ).stdout
    left, top = shadow_of(listing)
    return x + left, y + top


def _descendants(node: Any) -> Iterator[Any]:
    """Every node below ``node``, depth first. A node that cannot be read counts as having
    no children: it went mid-walk, or its application is too busy to answer (AT-SPI then
    says it "no longer exists"; GNOME Settings switching panels on a loaded machine). A
    wait then finds nothing this time and asks again."""
    try:
        count = node.childCount
    except Exception:
        return
    for index in range(count):
        try:
            child = node.getChildAtIndex(index)
        except Exception:  # an element gone mid-walk: skip it, as the tree walks do
            continue
        if child is not None:
            yield child
            yield from _descendants(child)


def _placed(
    node: Any,
    role: str,
    name: str,
    partial: bool,
    checked: bool | None,
    bounds: Any,
    origin: tuple[int, int],
    app: str,
) -> Element | None:
    """``node`` placed on screen if it is the element asked for and lies inside the frame
    (``bounds``, window-relative like the node's own extents), else None."""
    import pyatspi

    node_name = node.name or ""
    if node.getRoleName() != role or not (name in node_name if partial else node_name == name):
        return None
    states = node.getState()
    if checked is not None and states.contains(pyatspi.STATE_CHECKED) != checked:
        return None
    box = node.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
    inside = (
        box.x >= 0
        and box.y >= 0
        and box.x + box.width <= bounds.width
        and box.y + box.height <= bounds.height
    )
    if box.width <= 0 or box.height <= 0 or not inside:
        return None
    state_names = frozenset(pyatspi.stateToString(s) for s in states.getStates())
    return Element(
        role, node_name, origin[0] + box.x, origin[1] + box.y, box.width, box.height, app, state_names
    )


def gtk4_elements(
    role: str, name: str, *, app: str, window: str, partial: bool = False, checked: bool | None = None
) -> list[Element]:
    """Elements of AT-SPI ``role`` (``"label"``, ``"toggle button"``, ...) named ``name``
    (a substring with ``partial=True``) in the frame titled ``window`` of the application
    whose name contains ``app``, placed on screen; ``checked`` filters on the checked state."""
    import pyatspi

    windows = [w for w in find_windows(window) if w.title == window]
    if not windows:
        return []
    origin_x, origin_y = _frame_origin(windows[0].window_id)
    found: list[Element] = []
    for application in pyatspi.Registry.getDesktop(0):
        if application is None or app.lower() not in (application.name or "").lower():
            continue
        for frame in application:
            if frame is None or frame.name != window:
                continue
            bounds = frame.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
            for node in _descendants(frame):
                try:
                    element = _placed(
                        node, role, name, partial, checked, bounds, (origin_x, origin_y), application.name
                    )
                except Exception:  # a node gone mid-walk (a page being swapped): not found
                    continue
                if element is not None:
                    found.append(element)
    return found


def wait_gtk4_element(
    role: str,
    name: str,
    *,
    app: str,
    window: str,
    partial: bool = False,
    checked: bool | None = None,
    timeout: float = 15.0,
) -> Element:
    """Wait until :func:`gtk4_elements` finds the element at the same place twice in a row
    (a window that the window manager is still placing moves it); return the first."""
    what = f"a {role} named {name!r} in the {window!r} window of {app!r}" + (
        "" if checked is None else f", {'checked' if checked else 'not checked'}"
    )
    before: list[Element] = []

    def probe() -> Element | None:
        found = gtk4_elements(role, name, app=app, window=window, partial=partial, checked=checked)[:1]
        settled = found and found == before
        before[:] = found
        return found[0] if settled else None

    return wait_until(probe, timeout, what=what + ", standing still", poll=0.2)


def click_gtk4_element(
    role: str, name: str, *, app: str, window: str, partial: bool = False, timeout: float = 15.0
) -> Element:
    """Wait for the element (:func:`wait_gtk4_element`), click its centre, return it."""
    import pyautogui

    element = wait_gtk4_element(role, name, app=app, window=window, partial=partial, timeout=timeout)
    pyautogui.click(*element.center)
    return element
