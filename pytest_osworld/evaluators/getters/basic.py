"""Getters that need only the guest API and the asset cache."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from pytest_osworld.errors import GetterError, GuestError
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.paths import contained_path


def _dest(ctx: TaskContext, name: object, what: str = "dest") -> Path:
    """A file under the task's work folder (its parent created); unsafe names are refused.

    See :func:`pytest_osworld.task.paths.contained_path` for what is refused: a
    :class:`GetterError` naming the field and the folder.
    """
    target = contained_path(ctx.work_dir, name, what=what, error=GetterError)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def _select(config: dict[str, Any], paths: list[Path]) -> Path | list[Path]:
    """OSWorld's ``multi``/``gives``: one path, or the listed indexes of several."""
    multi = config.get("multi") in (True, "true", "True")
    if not multi:
        return paths[0]
    gives = config.get("gives", [0])
    chosen = [paths[i] for i in gives]
    return chosen[0] if len(chosen) == 1 else chosen


def get_rule(ctx: TaskContext, config: dict[str, Any]) -> Any:
    """The task's ``rules`` object, unchanged."""
    return config.get("rules")


def get_vm_file(ctx: TaskContext, config: dict[str, Any]) -> Path | list[Path]:
    """Copy file(s) out of the environment into the work folder."""
    paths, dests = _as_list(config["path"]), _as_list(config["dest"])
    if len(paths) != len(dests):
        raise GetterError(f"vm_file: {len(paths)} paths but {len(dests)} dests")
    fetched: list[Path] = []
    for path, dest in zip(paths, dests, strict=True):
        try:
            data = ctx.guest.read_file(path)
        except FileNotFoundError:
            raise GetterError(f"vm_file: {path} not found in the environment") from None
        target = _dest(ctx, dest, "vm_file dest")
        target.write_bytes(data)
        fetched.append(target)
    return _select(config, fetched)


def get_cloud_file(ctx: TaskContext, config: dict[str, Any]) -> Path | list[Path]:
    """Gold files: fetched on the host through the asset cache, copied to the work folder."""
    urls, dests = _as_list(config["path"]), _as_list(config["dest"])
    fetched: list[Path] = []
    for url, dest in zip(urls, dests, strict=True):
        source = ctx.assets.fetch(url, base_dir=ctx.task.path.parent)
        target = _dest(ctx, dest, "cloud_file dest")
        target.write_bytes(source.read_bytes())
        fetched.append(target)
    return _select(config, fetched)


def get_cache_file(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """A file a postconfig step wrote to the work folder (its ``stdout`` option)."""
    target = _dest(ctx, config["path"], "cache_file path")
    if not target.is_file():
        raise GetterError(f"cache_file: {config['path']} was not written by the postconfig")
    return target


def _run(ctx: TaskContext, config: dict[str, Any]) -> tuple[str, str]:
    command = config["command"]
    shell = config.get("shell") in (True, "true", "True")
    if isinstance(command, str) and not shell:
        command = shlex.split(command)
    try:
        result = ctx.guest.execute(command, shell=shell)
    except GuestError as exc:
        raise GetterError(f"vm_command_line: {exc}") from exc
    return result.output, result.error


def get_vm_command_line(ctx: TaskContext, config: dict[str, Any]) -> str:
    """Standard output of a command run inside the environment."""
    return _run(ctx, config)[0]


def get_vm_command_error(ctx: TaskContext, config: dict[str, Any]) -> str:
    """Standard error of a command run inside the environment."""
    return _run(ctx, config)[1]


def get_vm_terminal_output(ctx: TaskContext, config: dict[str, Any]) -> str:
    """The text of the focused terminal."""
    text = ctx.guest.terminal_output()
    if text is None:
        raise GetterError("vm_terminal_output: no terminal window is focused")
    return text


def get_accessibility_tree(ctx: TaskContext, config: dict[str, Any]) -> str:
    """The whole accessibility tree as XML."""
    return ctx.guest.accessibility_tree()


def get_list_directory(ctx: TaskContext, config: dict[str, Any]) -> dict[str, Any]:
    """The directory tree at ``path``."""
    try:
        return ctx.guest.list_directory(config["path"])
    except FileNotFoundError:
        raise GetterError(f"list_directory: {config['path']} not found in the environment") from None


def get_vm_screen_size(ctx: TaskContext, config: dict[str, Any]) -> dict[str, int]:
    """``{"width", "height"}`` of the screen."""
    width, height = ctx.guest.screen_size()
    return {"width": width, "height": height}


def get_vm_window_size(ctx: TaskContext, config: dict[str, Any]) -> dict[str, int]:
    """``{"width", "height"}`` of the first window of class ``app_class_name``."""
    size = ctx.guest.window_size(config["app_class_name"])
    if size is None:
        raise GetterError(f"vm_window_size: no window of class {config['app_class_name']!r}")
    return {"width": size[0], "height": size[1]}


def get_vm_wallpaper(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """The wallpaper image, saved to ``dest``."""
    target = _dest(ctx, config.get("dest", "wallpaper.png"), "vm_wallpaper dest")
    target.write_bytes(ctx.guest.wallpaper())
    return target
