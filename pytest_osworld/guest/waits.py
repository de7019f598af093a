"""Waits for reference solutions: readiness checks instead of fixed sleeps.

A solution step runs inside the desktop, in the guest's action worker (``pyautogui``,
``time``, ``os`` and ``sys`` already imported). Instead of ``time.sleep(3)`` before a
click at fixed coordinates, a step waits for what it needs and acts on it::

    from pytest_osworld.guest.waits import click_element, wait_laid_out
    wait_laid_out("roster.xlsx - LibreOffice Calc", app="soffice")
    pyautogui.hotkey("alt", "s")
    click_element("menu item", "Rename Sheet...", app="soffice")

Every wait polls (50 ms for windows and files, one accessibility walk after another
for elements), returns as soon as its condition holds, and raises :class:`WaitTimeout`
(a :class:`TimeoutError`) naming what it waited for and for how long, plus what it saw
last, so a failing replay says why. A step runs under the guest's action timeout
(30 s by default): keep a step's waits below it.

Windows come from the window manager's client list (:func:`desktop.list_windows`),
elements from the same accessibility walk that builds the observation tree
(:class:`~pytest_osworld.guest.a11y_dbus.DBusWalk`, pyatspi as the fallback); an
element counts only when it is visible and showing on screen.
"""

from __future__ import annotations

import os
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from pytest_osworld.guest.a11y_xml import CP, ST

__all__ = [
    "Element",
    "WaitTimeout",
    "WindowInfo",
    "click_element",
    "desktop_tree",
    "find_elements",
    "find_windows",
    "wait_element",
    "wait_element_gone",
    "wait_file",
    "wait_laid_out",
    "wait_until",
    "wait_window",
    "wait_window_gone",
    "window_geometry",
]

T = TypeVar("T")

#: Pause between two polls of a cheap condition (a window list, a file's size).
POLL = 0.05
#: Message of every timeout; tests match it.
TIMEOUT_MESSAGE = "timed out after {timeout:g} s waiting for {what}"


class WaitTimeout(TimeoutError):
    """A wait's condition did not hold in time; the message says what, how long, what was seen."""

    def __init__(self, what: str, timeout: float, seen: str = "") -> None:
        self.what = what
        self.timeout = timeout
        self.seen = seen
        message = TIMEOUT_MESSAGE.format(timeout=timeout, what=what)
        super().__init__(f"{message}; {seen}" if seen else message)


def wait_until(
    predicate: Callable[[], T | None],
    timeout: float = 10.0,
    *,
    what: str = "a condition",
    poll: float = POLL,
    seen: Callable[[], str] | None = None,
) -> T:
    """Call ``predicate`` until it returns a truthy value and return that value.

    Checks at least twice, so a check slower than the whole timeout still gets a second chance.
    Raises :class:`WaitTimeout` naming ``what`` (and ``seen()``, if given) after
    ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    checks = 0
    while True:
        value = predicate()
        checks += 1
        if value:
            return value
        remaining = deadline - time.monotonic()
        if remaining <= 0 and checks >= 2:
            raise WaitTimeout(what, timeout, seen() if seen is not None else "")
        time.sleep(max(0.0, min(poll, remaining)))


# --- files ----------------------------------------------------------------------------


def wait_file(path: str, timeout: float = 20.0, *, non_empty: bool = True, stable_for: float = 0.3) -> str:
    """Wait until ``path`` exists (and is non-empty, unless ``non_empty=False``) and its
    size has not changed for ``stable_for`` seconds (0 to skip); returns the path.

    ``~`` is expanded. Use it after an export or a save whose file the evaluator reads.
    """
    full = os.path.expanduser(path)
    last: list[tuple[float, int]] = []

    def ready() -> bool:
        try:
            size = os.stat(full).st_size
        except OSError:
            last.clear()
            return False
        now = time.monotonic()
        if not last or last[0][1] != size:
            last[:] = [(now, size)]
        if non_empty and size == 0:
            return False
        return now - last[0][0] >= stable_for

    def seen() -> str:
        return f"size {last[0][1]} bytes" if last else "no such file"

    condition = "non-empty, stable" if non_empty else "stable"
    wait_until(ready, timeout, what=f"file {full} ({condition})", seen=seen)
    return full


# --- windows --------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowInfo:
    """A top-level window: X id, title and ``instance.Class`` (WM_CLASS)."""

    window_id: int
    title: str
    wm_class: str


def _client_list() -> list[WindowInfo]:
    from pytest_osworld.guest.desktop import list_windows

    return [WindowInfo(w.window_id, w.title, w.wm_class) for w in list_windows()]


def find_windows(
    title: str | None = None,
    *,
    wm_class: str | None = None,
    windows: Iterable[WindowInfo] | None = None,
) -> list[WindowInfo]:
    """Windows whose title contains ``title`` and whose WM_CLASS contains ``wm_class``
    (any case); both optional, at least one needed."""
    if title is None and wm_class is None:
        raise ValueError("give a title substring, a wm_class substring or both")
    found = []
    for window in _client_list() if windows is None else windows:
        if title is not None and title not in window.title:
            continue
        if wm_class is not None and wm_class.lower() not in window.wm_class.lower():
            continue
        found.append(window)
    return found


def _window_what(title: str | None, wm_class: str | None) -> str:
    parts = [f"title containing {title!r}"] if title is not None else []
    if wm_class is not None:
        parts.append(f"class containing {wm_class!r}")
    return "a window with " + " and ".join(parts)


def _window_titles() -> str:
    titles = [w.title for w in _client_list()]
    return "windows: " + (", ".join(repr(t) for t in titles) if titles else "none")


def wait_window(
    title: str | None = None,
    *,
    wm_class: str | None = None,
    timeout: float = 20.0,
    activate: bool = False,
) -> WindowInfo:
    """Wait for a window whose title contains ``title`` (case-sensitive, like the title
    bar shows it) and/or whose WM_CLASS contains ``wm_class`` (any case); return it.

    ``activate=True`` raises and focuses it (``wmctrl -i -a``) before returning.
    """
    window = wait_until(
        lambda: next(iter(find_windows(title, wm_class=wm_class)), None),
        timeout,
        what=_window_what(title, wm_class),
        seen=_window_titles,
    )
    if activate:
        from pytest_osworld.guest.desktop import activate_window_id

        activate_window_id(window.window_id)
    return window


def window_geometry(window_id: int) -> tuple[int, int, int, int]:
    """``(x, y, width, height)`` of a window's client area on screen (``xwininfo``); a
    decorated, maximized window starts below its title bar (``y > 0``)."""
    import subprocess

    listing = subprocess.run(
        ["xwininfo", "-id", hex(window_id)], capture_output=True, text=True, timeout=10, check=False
    ).stdout
    fields: dict[str, int] = {}
    for line in listing.splitlines():
        key, _, value = line.strip().partition(":")
        if key in ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height"):
            fields[key] = int(value.strip())
    if len(fields) < 4:
        raise OSError(f"xwininfo could not describe window {hex(window_id)}")
    x, y = fields["Absolute upper-left X"], fields["Absolute upper-left Y"]
    return x, y, fields["Width"], fields["Height"]


def wait_window_gone(title: str | None = None, *, wm_class: str | None = None, timeout: float = 20.0) -> None:
    """Wait until no window matches (a dialog closed); see :func:`wait_window`."""
    wait_until(
        lambda: not find_windows(title, wm_class=wm_class),
        timeout,
        what=f"no {_window_what(title, wm_class)[2:]}",
        seen=_window_titles,
    )


# --- accessibility elements -----------------------------------------------------------


@dataclass(frozen=True)
class Element:
    """An on-screen accessibility element: role, name, states, application and extents."""

    role: str
    name: str
    x: int
    y: int
    width: int
    height: int
    app: str
    states: frozenset[str]

    @property
    def center(self) -> tuple[int, int]:
        """The middle of the element, where a click lands."""
        return self.x + self.width // 2, self.y + self.height // 2


def desktop_tree(app: str | None = None) -> ET.Element:
    """One walk of the desktop's accessibility tree (the observation's walk), as XML
    elements; with ``app``, of only the applications whose name contains it (any case)."""
    from pytest_osworld.guest.a11y import DBusWalk, Limits, PyatspiWalk
    from pytest_osworld.guest.atspi_dbus import BusError

    limits = Limits(text_chars=200)
    try:
        return DBusWalk(limits, timeout=20.0, app=app).run()
    except (BusError, OSError):
        root = ET.fromstring(PyatspiWalk(limits).run())
    if app is not None:
        for application in list(root):
            if app.lower() not in application.get("name", "").lower():
                root.remove(application)
    return root


def _role_tag(role: str | None) -> str | None:
    return None if role is None else role.strip().lower().replace(" ", "-")


def _role_shown(role: str | None) -> str:
    return _role_tag(role) or "element"


def _pair(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        first, second = text.strip("()").split(",")
        return int(first), int(second)
    except ValueError:
        return None


def _on_screen(node: ET.Element, app: str) -> Element | None:
    where = _pair(node.get(CP + "screencoord"))
    size = _pair(node.get(CP + "size"))
    if where is None or size is None or size[0] <= 0 or size[1] <= 0:
        return None
    states = frozenset(
        key[len(ST) :] for key, value in node.attrib.items() if key.startswith(ST) and value == "true"
    )
    return Element(node.tag, node.get("name", ""), where[0], where[1], size[0], size[1], app, states)


def find_elements(
    role: str | None,
    name: str | None = None,
    *,
    app: str | None = None,
    partial: bool = False,
    state: str | None = None,
    text: str | None = None,
    tree: ET.Element | None = None,
) -> list[Element]:
    """On-screen elements of ``role`` (AT-SPI role, ``"push button"`` or ``"push-button"``; None: any)
    named ``name`` (exact, or a substring with ``partial=True``; any name if None), in
    applications whose name contains ``app`` (any case), with the AT-SPI ``state`` (e.g.
    ``"focused"``, ``"checked"``) and whose text contains ``text`` (paragraphs, cells and
    terminals have text but no name) if given; in document order.

    ``tree`` is a walk to search (:func:`desktop_tree` by default).
    """
    root = desktop_tree(app) if tree is None else tree
    tag = _role_tag(role)
    wanted_app = app.lower() if app is not None else None
    found: list[Element] = []
    for application in root:
        app_name = application.get("name", "")
        if wanted_app is not None and wanted_app not in app_name.lower():
            continue
        for node in application.iter(tag):
            node_name = node.get("name", "")
            if name is not None and not (name in node_name if partial else node_name == name):
                continue
            if text is not None and text not in (node.text or ""):
                continue
            element = _on_screen(node, app_name)
            if element is not None and (state is None or state in element.states):
                found.append(element)
    return found


def _element_what(
    role: str | None,
    name: str | None,
    app: str | None,
    partial: bool,
    state: str | None = None,
    text: str | None = None,
) -> str:
    named = "any name" if name is None else f"name {'containing ' if partial else ''}{name!r}"
    if text is not None:
        named += f" and text containing {text!r}"
    where = f" in {app!r}" if app is not None else ""
    having = f" and state {state!r}" if state is not None else ""
    return f"an on-screen {_role_shown(role)} with {named}{having}{where}"


def _same_role_seen(role: str | None, app: str | None, last: list[ET.Element]) -> str:
    if not last:
        return "no tree was read"
    names = [e.name for e in find_elements(role, app=app, tree=last[0])]
    shown = ", ".join(repr(n) for n in names[:12]) + (", ..." if len(names) > 12 else "")
    return f"on-screen {_role_shown(role)} elements: {shown or 'none'}"


def wait_element(
    role: str | None,
    name: str | None = None,
    *,
    app: str | None = None,
    partial: bool = False,
    state: str | None = None,
    text: str | None = None,
    stable: bool = False,
    timeout: float = 15.0,
    source: Callable[[], ET.Element] | None = None,
) -> Element:
    """Wait until an element matching :func:`find_elements` is on screen; return the first.

    ``stable=True`` also waits until two walks in a row see it at the same place (a
    window that is still being placed or laid out moves its elements). Each poll is one
    accessibility walk (``source``; by default :func:`desktop_tree` of ``app``'s
    applications only), 0.1-1 s depending on the apps open. The timeout message lists the
    on-screen elements of the same role seen last.
    """
    read = source or (lambda: desktop_tree(app))
    last: list[ET.Element] = []
    before: list[Element] = []

    def probe() -> Element | None:
        last[:] = [read()]
        found = find_elements(role, name, app=app, partial=partial, state=state, text=text, tree=last[0])
        if not found:
            before.clear()
            return None
        if stable and before != found[:1]:
            before[:] = found[:1]
            return None
        return found[0]

    return wait_until(
        probe,
        timeout,
        what=_element_what(role, name, app, partial, state, text) + (", standing still" if stable else ""),
        poll=0.1,
        seen=lambda: _same_role_seen(role, app, last),
    )


def wait_element_gone(
    role: str | None,
    name: str | None = None,
    *,
    app: str | None = None,
    partial: bool = False,
    state: str | None = None,
    text: str | None = None,
    timeout: float = 15.0,
    source: Callable[[], ET.Element] | None = None,
) -> None:
    """Wait until no element matching :func:`find_elements` is on screen (a menu closed,
    a field lost the focus); each poll walks as :func:`wait_element`'s does."""
    read = source or (lambda: desktop_tree(app))
    wait_until(
        lambda: not find_elements(role, name, app=app, partial=partial, state=state, text=text, tree=read()),
        timeout,
        what="no " + _element_what(role, name, app, partial, state, text)[3:],
        poll=0.1,
    )


def click_element(
    role: str | None,
    name: str | None = None,
    *,
    app: str | None = None,
    partial: bool = False,
    state: str | None = None,
    text: str | None = None,
    stable: bool = False,
    timeout: float = 15.0,
    clicks: int = 1,
    button: str = "left",
    source: Callable[[], ET.Element] | None = None,
) -> Element:
    """Wait for the element (:func:`wait_element`; ``stable=True`` if it may still be
    moving, e.g. in a window still being laid out), click its centre, and return it."""
    import pyautogui

    element = wait_element(
        role,
        name,
        app=app,
        partial=partial,
        state=state,
        text=text,
        stable=stable,
        timeout=timeout,
        source=source,
    )
    x, y = element.center
    pyautogui.click(x, y, clicks=clicks, button=button)
    return element


def wait_laid_out(title: str, *, app: str | None = None, timeout: float = 30.0) -> WindowInfo:
    """Wait until the window titled ``title`` is placed by the window manager (below its
    title bar) and its accessibility coordinates have caught up (its ``root-pane`` lies
    inside the window's client area); return the window.

    LibreOffice reports its widgets' screen positions from before the window manager
    decorated the window (25 px too high) for a while after it opens; a click at such a
    position lands on the wrong widget. Use this before the first click in such a window.
    """
    window = wait_window(title, timeout=timeout)

    def laid_out() -> bool:
        top = window_geometry(window.window_id)[1]
        panes = find_elements("root-pane", title, partial=True, app=app)
        return top > 0 and bool(panes) and all(pane.y >= top for pane in panes)

    wait_until(laid_out, timeout, what=f"the window {title!r} laid out under its title bar", poll=0.1)
    return window
