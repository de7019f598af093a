"""Draw what every task's windows make GNOME Shell draw, once, on a desktop no task gets.

GNOME Shell composites through Mesa's software renderer, which compiles a shader the first
time something needs it and keeps it in ``~/.cache/mesa_shader_cache``. A desktop just
started has compiled only what its empty screen needed: the first window a task opens (its
frame, shadow and map animation), the first menu and the overview compile a dozen more,
in every desktop, each costing CPU while the task waits (docs/desktop.md, "CPU").

:func:`exercise` opens a terminal, its context menu, its menu bar and the overview, closes
them, and returns once the cache has stopped growing. The provider runs it on a desktop it
started for that alone and then discards, and copies the cache into the home template
(:mod:`pytest_osworld.providers.local_caches`): later desktops start with those shaders
compiled, and no desktop a task gets was ever driven by anything but the task.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable

import pyautogui

from pytest_osworld.guest.desktop import wmctrl
from pytest_osworld.guest.waits import wait_until, wait_window, wait_window_gone

#: Mesa's shader cache in the home (its default place; the session sets no other).
CACHE = os.path.expanduser("~/.cache/mesa_shader_cache")
#: How long the cache must keep its count of entries to be done (Mesa writes them from a
#: thread of its own, a moment after the shader was compiled).
STILL_FOR = 1.0
#: Pause after each action: the shell animates a map, a menu or the overview for about 0.25 s.
ANIMATION = 0.6


def cache_entries() -> int:
    """The number of files in Mesa's shader cache (0 when it has none yet)."""
    return sum(len(files) for _, _, files in os.walk(CACHE))


def exercise(timeout: float = 25.0) -> int:
    """Open and close a terminal window, its context menu, its menu bar's first menu and
    the overview; wait until the shader cache is still; return its number of entries.
    Raises :class:`~pytest_osworld.guest.waits.WaitTimeout` when the terminal never opens."""
    terminal = subprocess.Popen(["gnome-terminal"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    window = wait_window(wm_class="gnome-terminal", timeout=timeout, activate=True)
    time.sleep(ANIMATION)
    width, height = pyautogui.size()
    actions: list[Callable[[], object]] = [
        lambda: pyautogui.rightClick(width // 2, height // 2),  # a context menu
        lambda: pyautogui.press("f10"),  # the menu bar's first menu
        lambda: pyautogui.press("super"),  # the overview
    ]
    for action in actions:
        action()
        time.sleep(ANIMATION)
        pyautogui.press("escape")
        time.sleep(ANIMATION)
    wmctrl("-i", "-c", hex(window.window_id))
    wait_window_gone(wm_class="gnome-terminal", timeout=timeout)
    terminal.wait(timeout=timeout)
    return _still_count(timeout)


def _still_count(timeout: float) -> int:
    seen = [cache_entries(), time.monotonic()]

    def still() -> bool:
        count = cache_entries()
        if count != seen[0]:
            seen[:] = [count, time.monotonic()]
        return time.monotonic() - seen[1] >= STILL_FOR

    wait_until(still, timeout, what="the shader cache to stop growing")
    return int(seen[0])
