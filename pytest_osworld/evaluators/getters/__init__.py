"""Getters: fetch what a metric compares (a file, a command's output, a rule, ...).

A getter is ``getter(ctx: TaskContext, config: dict) -> Any``, where ``config`` is the
task's ``result``/``expected`` object. It raises :class:`~pytest_osworld.errors.GetterError`
with a reason when it cannot fetch; it never returns a silent None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_osworld.registry import Registry

Getter = Callable[..., Any]

#: Getter types by OSWorld's names.
GETTERS: Registry[Getter] = Registry("getter type")
_BASIC = "pytest_osworld.evaluators.getters.basic"
for _name in (
    "rule",
    "vm_file",
    "cloud_file",
    "cache_file",
    "vm_command_line",
    "vm_command_error",
    "vm_terminal_output",
    "accessibility_tree",
    "list_directory",
    "vm_screen_size",
    "vm_window_size",
    "vm_wallpaper",
):
    GETTERS.register(_name, f"{_BASIC}:get_{_name}")
_CHROME = "pytest_osworld.evaluators.getters.chrome"
for _name in (
    "profile_name",
    "chrome_font_size",
    "default_search_engine",
    "enable_do_not_track",
    "enable_safe_browsing",
    "new_startup_page",
    "data_delete_automacally",
    "chrome_appearance_mode_ui",
    "find_unpacked_extension_path",
    "find_installed_extension_name",
    "bookmarks",
    "history",
    "cookie_data",
    "shortcuts_on_desktop",
    "active_url_from_accessTree",
    "active_tab_url_parse",
    "url_dashPart",
    "url_path_parse",
    "open_tabs_info",
    "active_tab_info",
    "page_info",
    "pdf_from_url",
    "active_tab_html_parse",
    "info_from_website",
    "gotoRecreationPage_and_get_html_content",
):
    GETTERS.register(_name, f"{_CHROME}:get_{_name}")
_APPS = "pytest_osworld.evaluators.getters.apps"
for _name in (
    "vlc_config",
    "vlc_playing_info",
    "gimp_config_file",
    "vscode_config",
    "default_video_player",
    "audio_in_slide",
    "background_image_in_slide",
    "content_from_vm_file",
    "googledrive_file",
):
    GETTERS.register(_name, f"{_APPS}:get_{_name}")
GETTERS.register("rule_relativeTime", "pytest_osworld.evaluators.getters.relative_time:get_rule_relativeTime")
