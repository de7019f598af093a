"""Which window a task means: wmctrl's matching rules, plus OSWorld's names for our apps.

OSWorld's tasks name windows as Ubuntu shows them (``activate_window`` "Google Chrome",
``close_window`` class "Mail.thunderbird"). Matching follows ``wmctrl -a``/``-c``: a
case-insensitive substring of the title (of ``instance.class`` with ``by_class``), or the
exact string with ``strict``. When nothing matches a name that has an alias here, the
alias is tried: the same app under the name it has on our desktops. Shared by the guest
server (which acts on the window) and the host (which waits for it); standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Name in OSWorld's tasks -> (``title`` or ``class``, what the same window shows here).
WINDOW_ALIASES: dict[str, tuple[str, str]] = {
    # Chromium stands in for Google Chrome; its titles end in "- Chromium".
    "Google Chrome": ("title", "Chromium"),
    # GNOME Terminal's title is "user@host: dir"; its class names it.
    "Terminal": ("class", "gnome-terminal"),
}


@dataclass(frozen=True)
class ListedWindow:
    """One line of ``wmctrl -lx``."""

    window_id: int
    wm_class: str  # "instance.class"
    title: str


def parse_wmctrl_lx(listing: str) -> list[ListedWindow]:
    """The windows of ``wmctrl -lx`` output (id, desktop, class, host, title)."""
    windows = []
    for line in listing.splitlines():
        fields = line.split(None, 4)
        if len(fields) < 4:
            continue
        try:
            window_id = int(fields[0], 16)
        except ValueError:
            continue
        windows.append(ListedWindow(window_id, fields[2], fields[4] if len(fields) > 4 else ""))
    return windows


def _matches(text: str, name: str, strict: bool) -> bool:
    return text == name if strict else name.lower() in text.lower()


def find_window(
    windows: list[ListedWindow], name: str, strict: bool = False, by_class: bool = False
) -> ListedWindow | None:
    """The first window ``name`` designates, trying its alias when nothing matches it."""
    for window in windows:
        if _matches(window.wm_class if by_class else window.title, name, strict):
            return window
    alias = WINDOW_ALIASES.get(name)
    if alias is None or by_class:
        return None
    kind, text = alias
    for window in windows:
        if _matches(window.wm_class if kind == "class" else window.title, text, strict=False):
            return window
    return None
