"""GNOME Settings opened as a user opens it, for reference solutions on the gnome session.

A user of Ubuntu 22.04 opens Settings from the top bar's system menu and picks a panel in
its sidebar; the solutions of OSWorld's os and multi_apps tasks that change a setting do
the same, through :func:`open_settings`. The gnome session draws that menu as Ubuntu 22.04
does (the ``osworld-system-menu`` shell extension), with Settings as one of its rows.
Settings is a GTK 4 application: its elements are placed on screen by :mod:`.waits_gtk4`.
"""

from __future__ import annotations

from pytest_osworld.guest.waits import Element, click_element, wait_window
from pytest_osworld.guest.waits_gtk4 import click_gtk4_element, gtk4_elements, wait_gtk4_element

__all__ = ["SETTINGS_APP", "SETTINGS_WINDOW", "open_settings"]

#: The accessibility name of GNOME Settings' application (``gnome-control-center``).
SETTINGS_APP = "control"
#: The title of its window.
SETTINGS_WINDOW = "Settings"
#: The sidebar's first row (on a machine without Wi-Fi), there as soon as the window is.
FIRST_ROW = "Network"


def open_settings(panel: str, *, timeout: float = 30.0) -> Element:
    """Open GNOME Settings from the top bar's system menu and show its ``panel`` (a sidebar
    row's label, e.g. ``"Accessibility"``), scrolling the sidebar when the row is below
    its fold; return the row clicked. Raises :class:`~.waits.WaitTimeout` naming what
    never appeared."""
    import pyautogui

    click_element("menu", "System", app="gnome-shell", timeout=25)
    click_element("menu item", "Settings", app="gnome-shell")
    wait_window(SETTINGS_WINDOW, timeout=timeout)
    first = wait_gtk4_element("label", FIRST_ROW, app=SETTINGS_APP, window=SETTINGS_WINDOW, timeout=20)
    if not gtk4_elements("label", panel, app=SETTINGS_APP, window=SETTINGS_WINDOW):
        pyautogui.moveTo(*first.center)
        pyautogui.scroll(-15)  # to the sidebar's end: every row below the fold comes into view
    return click_gtk4_element("label", panel, app=SETTINGS_APP, window=SETTINGS_WINDOW)
