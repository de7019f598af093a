"""The shape of what each non-file getter gives, so value cases stay realistic.

Values derived from a task's rules (its URLs, keywords, expected dicts) are fed to a
metric only in the shape the task's result getter really produces: command output is a
string, ``active_tab_info`` a dict with a ``url``, ``open_tabs_info`` a list of such dicts,
``cookie_data`` and ``history`` rows of the Chrome databases, and so on. A value of another
shape is adapted when a natural adaptation exists (a URL string becomes ``{"url": URL}``)
and dropped otherwise. ``None`` (the getter produced nothing) is always kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Getters whose value is a string: command output, a URL, a settings value.
STRING_GETTERS = frozenset(
    {
        "vm_command_line",
        "vm_command_error",
        "vm_terminal_output",
        "active_url_from_accessTree",
        "default_video_player",
        "accessibility_tree",
        "enable_do_not_track",
        "profile_name",
        "new_startup_page",
        "enable_safe_browsing",
        "data_delete_automacally",
        "chrome_appearance_mode_ui",
        "default_search_engine",
        "content_from_vm_file",
    }
)
#: Getters whose value is a dict.
DICT_GETTERS = frozenset(
    {
        "active_tab_info",
        "active_tab_url_parse",
        "url_path_parse",
        "url_dashPart",
        "active_tab_html_parse",
        "page_info",
        "chrome_font_size",
        "vm_screen_size",
        "bookmarks",
    }
)
#: Getters whose value is a list of strings.
STRING_LIST_GETTERS = frozenset(
    {"find_unpacked_extension_path", "find_installed_extension_name", "list_directory"}
)


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def _tabs(value: Any) -> Any:
    items = _strings(value)
    return None if items is None else [{"title": item, "url": item} for item in items]


def _cookies(value: Any) -> Any:
    items = _strings(value)
    return None if items is None else [[index, item, "name", "value"] for index, item in enumerate(items)]


def _history(value: Any) -> Any:
    items = _strings(value)
    return None if items is None else [[item, "title", 0] for item in items]


#: Getters whose rows are rebuilt from strings (URLs, domains, keywords).
ADAPTERS: dict[str, Callable[[Any], Any]] = {
    "open_tabs_info": _tabs,
    "cookie_data": _cookies,
    "history": _history,
}


def shaped(getter: str | None, candidates: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Keep (or adapt) the candidates that have the shape ``getter`` produces."""
    kept: list[tuple[str, Any]] = []
    for label, value in candidates:
        if value is None:
            kept.append((label, value))
        elif getter in STRING_GETTERS:
            if isinstance(value, str):
                kept.append((label, value))
            elif isinstance(value, list):
                kept.append((f"lines-{label}", "\n".join(map(str, value))))
        elif getter in DICT_GETTERS:
            if isinstance(value, dict):
                kept.append((label, value))
            elif isinstance(value, str) and getter == "active_tab_info":
                kept.append((label, {"url": value, "title": value}))
        elif getter in STRING_LIST_GETTERS:
            if _strings(value) is not None:
                kept.append((label, _strings(value)))
        elif getter in ADAPTERS:
            adapted = ADAPTERS[getter](value)
            if adapted is not None:
                kept.append((label, adapted))
        else:
            kept.append((label, value))
    return kept
