"""The X side of the guest: screenshots, screen and cursor, windows, readiness probes.

Screenshots go through mss (XShmGetImage, a few ms) with the cursor composited in by
XFixes, then a lossless PNG encode by :mod:`pytest_osworld.guest.png` (fpng when it is
installed, else Pillow at zlib level 1): the encoder dominates, so it is tuned for
speed, not size. Window operations follow OSWorld's ``wmctrl`` semantics so titles and classes
match the same way they do on OSWorld's VM.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from pytest_osworld.guest import png
from pytest_osworld.guest.png import PNG_COMPRESS_LEVEL
from pytest_osworld.guest.x_windows import find_window, parse_wmctrl_lx

__all__ = ["PNG_COMPRESS_LEVEL", "DesktopError", "Screen", "Window"]


class DesktopError(Exception):
    """An X or window-manager operation failed; the message says which and why."""


@dataclass(frozen=True)
class Window:
    """One top-level client window as the window manager lists it."""

    window_id: int
    title: str
    wm_class: str


def _display() -> Any:
    from Xlib import display

    return display.Display()


class Screen:
    """Screenshots of the whole X screen, serialised behind one mss instance.

    ``encoder`` names the PNG encoder (:data:`pytest_osworld.guest.png.ENCODERS`); by
    default it is chosen at the first screenshot (:func:`~pytest_osworld.guest.png.choose_encoder`).
    """

    def __init__(self, encoder: str | None = None) -> None:
        self._lock = threading.Lock()
        self._grabber: Any = None
        self._requested = encoder
        self.encoder: str | None = None

    def _mss(self) -> Any:
        if self._grabber is None:
            import mss

            factory = mss.MSS if hasattr(mss, "MSS") else mss.mss  # mss.mss is deprecated in 10.2
            self._grabber = factory(with_cursor=True)
        return self._grabber

    def grab_rgb(self) -> tuple[bytes, int, int]:
        """The screen as packed RGB pixels, cursor included, with its width and height."""
        with self._lock:
            try:
                shot = self._mss().grab(self._mss().monitors[1])
            except Exception:
                # A stale connection (e.g. after an X restart): reconnect once.
                self._grabber = None
                shot = self._mss().grab(self._mss().monitors[1])
        width, height = shot.size
        return png.bgrx_to_rgb(shot.raw, width, height), width, height

    def grab_png(self) -> bytes:
        """The screen as PNG bytes, cursor included."""
        if self.encoder is None:
            self.encoder = png.choose_encoder(self._requested)
        rgb, width, height = self.grab_rgb()
        return png.encode_png(rgb, width, height, self.encoder)


def screen_size() -> tuple[int, int]:
    """Width and height of the default screen."""
    disp = _display()
    try:
        screen = disp.screen()
        return int(screen.width_in_pixels), int(screen.height_in_pixels)
    finally:
        disp.close()


def cursor_position() -> tuple[int, int]:
    """The pointer's position on the root window."""
    disp = _display()
    try:
        reply = disp.screen().root.query_pointer()
        return int(reply.root_x), int(reply.root_y)
    finally:
        disp.close()


def _text_property(disp: Any, window: Any, name: str) -> str:
    atom = disp.intern_atom(name)
    utf8 = disp.intern_atom("UTF8_STRING")
    prop = window.get_full_property(atom, utf8)
    if prop is None or not prop.value:
        prop = window.get_full_property(disp.intern_atom("WM_NAME"), 0)
    if prop is None or not prop.value:
        return ""
    value = prop.value
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def list_windows() -> list[Window]:
    """The window manager's client list (``_NET_CLIENT_LIST``), in stacking-independent order."""
    from Xlib import X

    disp = _display()
    try:
        root = disp.screen().root
        prop = root.get_full_property(disp.intern_atom("_NET_CLIENT_LIST"), X.AnyPropertyType)
        windows: list[Window] = []
        for wid in [] if prop is None else list(prop.value):
            win = disp.create_resource_object("window", wid)
            try:
                title = _text_property(disp, win, "_NET_WM_NAME")
                wm_class = win.get_wm_class() or ("", "")
            except Exception:  # the window vanished between list and query
                continue
            windows.append(Window(int(wid), title, ".".join(wm_class)))
        return windows
    finally:
        disp.close()


def window_size(app_class_name: str) -> tuple[int, int] | None:
    """Size of the first window whose WM_CLASS contains ``app_class_name`` (any case)."""
    wanted = app_class_name.lower()
    disp = _display()
    try:
        for window in list_windows():
            if wanted in window.wm_class.lower():
                geometry = disp.create_resource_object("window", window.window_id).get_geometry()
                return int(geometry.width), int(geometry.height)
        return None
    finally:
        disp.close()


def window_manager_name() -> str | None:
    """The EWMH window manager's name, or None when no WM is running."""
    from Xlib import X

    disp = _display()
    try:
        root = disp.screen().root
        prop = root.get_full_property(disp.intern_atom("_NET_SUPPORTING_WM_CHECK"), X.AnyPropertyType)
        if prop is None or not prop.value:
            return None
        check = disp.create_resource_object("window", prop.value[0])
        return _text_property(disp, check, "_NET_WM_NAME") or "unknown"
    finally:
        disp.close()


def xsettings_manager_running() -> bool:
    """True when an XSETTINGS manager (GNOME's ``gsd-xsettings``) owns screen 0's
    ``_XSETTINGS_S0`` selection, so that GTK apps started now get the session's theme and
    fonts rather than GTK's defaults."""
    disp = _display()
    try:
        owner = disp.get_selection_owner(disp.intern_atom("_XSETTINGS_S0"))
        return getattr(owner, "id", owner) not in (0, None)
    finally:
        disp.close()


def wmctrl(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``wmctrl`` with ``args`` (``-l -x`` to list, ``-i -a ID`` to activate by id)."""
    if shutil.which("wmctrl") is None:
        raise DesktopError("wmctrl is not installed in the desktop")
    return subprocess.run(["wmctrl", *args], capture_output=True, text=True, timeout=10, check=False)


def window_op(action: str, name: str, strict: bool, by_class: bool) -> bool:
    """Activate (``a``) or close (``c``) the window ``name`` designates; False if none does.

    The window is chosen by :func:`pytest_osworld.guest.x_windows.find_window` (wmctrl's own
    matching, plus OSWorld's Ubuntu names for this desktop's apps), then acted on by id.
    """
    listing = wmctrl("-l", "-x")
    found = find_window(parse_wmctrl_lx(listing.stdout), name, strict, by_class)
    if found is None:
        return False
    if action == "a":
        activate_window_id(found.window_id)
        return True
    return wmctrl("-i", f"-{action}", hex(found.window_id)).returncode == 0


def title_matches(title: str, file_path: str) -> bool:
    """Whether a window title names ``file_path`` (its basename with or without extension)."""
    base = os.path.basename(file_path)
    stem, _ = os.path.splitext(base)
    return base in title or (bool(stem) and stem in title)


def wait_for_window(file_path: str, timeout: float, poll: float = 0.1) -> Window | None:
    """Poll the client list until a window's title names ``file_path``; None on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        for window in list_windows():
            if title_matches(window.title, file_path):
                return window
        if time.monotonic() >= deadline:
            return None
        time.sleep(poll)


#: How long an activation waits for the window manager to make the window active. Not an
#: error when it does not: some windows refuse focus, and OSWorld's activation never checks.
ACTIVATION_SETTLE_SECONDS = 2.0


def active_window_id() -> int | None:
    """The window manager's active window (``_NET_ACTIVE_WINDOW``), or None when none is."""
    from Xlib import X

    disp = _display()
    try:
        root = disp.screen().root
        prop = root.get_full_property(disp.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
        return int(prop.value[0]) if prop is not None and len(prop.value) and prop.value[0] else None
    finally:
        disp.close()


def activate_window_id(window_id: int) -> bool:
    """Raise and focus a window by id (``wmctrl -i -a``), then wait up to
    :data:`ACTIVATION_SETTLE_SECONDS` for the window manager to have done it, so the next
    step (a key, a screenshot) meets the window it expects; whether it became active."""
    if wmctrl("-i", "-a", hex(window_id)).returncode != 0:
        return False
    deadline = time.monotonic() + ACTIVATION_SETTLE_SECONDS
    while active_window_id() != window_id:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True
