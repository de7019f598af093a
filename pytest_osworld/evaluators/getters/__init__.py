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
