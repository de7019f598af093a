"""The basic step types: files, processes, windows and waits."""

from __future__ import annotations

import shlex
import time
from typing import Any

from pytest_osworld.errors import EnvironmentFailure, GuestError, NeedsCapability
from pytest_osworld.guest.x_windows import find_window, parse_wmctrl_lx
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.paths import contained_path


def _command(ctx: TaskContext, command: list[str] | str, shell: bool | str) -> tuple[list[str] | str, bool]:
    """Substitute placeholders and normalise OSWorld's ``shell`` (sometimes the string "true")."""
    use_shell = shell is True or (isinstance(shell, str) and shell.lower() == "true")
    if isinstance(command, str):
        text = ctx.substitute(command)
        return (text, True) if use_shell else (shlex.split(text), False)
    return [ctx.substitute(part) for part in command], use_shell


def download_step(ctx: TaskContext, files: list[dict[str, str]]) -> None:
    """Put each ``{url, path}`` file into the environment, through the asset cache."""
    for entry in files:
        url, path = entry["url"], entry["path"]
        local = ctx.assets.fetch(url, base_dir=ctx.task.path.parent)
        ctx.guest.upload_file(path, local.read_bytes())


def upload_file_step(ctx: TaskContext, local_path: str, path: str) -> None:
    """Upload a file that lies beside the task file (or at an absolute host path)."""
    source = ctx.assets.fetch(local_path, base_dir=ctx.task.path.parent)
    ctx.guest.upload_file(path, source.read_bytes())


def launch_step(ctx: TaskContext, command: list[str] | str, shell: bool | str = False) -> None:
    """Start a program inside the environment without waiting for it."""
    cmd, use_shell = _command(ctx, command, shell)
    try:
        ctx.guest.launch(cmd, shell=use_shell)
    except GuestError as exc:
        if exc.status == 404 and not use_shell:
            program = cmd[0] if isinstance(cmd, list) else cmd
            raise NeedsCapability(
                f"the task launches {program!r}, which this desktop does not have ({exc}); "
                "use a provider whose image has it (for example --provider=vagrant with the Ubuntu box)"
            ) from exc
        raise


def execute_step(
    ctx: TaskContext,
    command: list[str] | str,
    shell: bool | str = False,
    stdout: str | None = None,
    stderr: str | None = None,
) -> None:
    """Run a command inside the environment and wait; ``stdout``/``stderr`` name host files.

    As in OSWorld, a non-zero exit code does not fail the step (tasks run commands that
    may legitimately fail, such as ``pkill``); the output files let ``cache_file`` read it.
    """
    cmd, use_shell = _command(ctx, command, shell)
    result = ctx.guest.execute(cmd, shell=use_shell)
    for name, text in ((stdout, result.output), (stderr, result.error)):
        if name:
            target = contained_path(ctx.work_dir, name, what="execute output file", error=EnvironmentFailure)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)


def command_step(ctx: TaskContext, **params: Any) -> None:
    """OSWorld's alias of ``execute``."""
    execute_step(ctx, **params)


def open_step(ctx: TaskContext, path: str) -> None:
    """Open a file with its default app and wait for its window."""
    ctx.guest.open_file(path)


def sleep_step(ctx: TaskContext, seconds: float) -> None:
    """Wait a fixed time (OSWorld uses at most 5 s at setup)."""
    time.sleep(float(seconds))


#: How long ``activate_window`` waits for a window that a just-launched app has yet to map.
WINDOW_WAIT_S = 30.0


def activate_window_step(
    ctx: TaskContext, window_name: str, strict: bool = False, by_class: bool = False
) -> None:
    """Raise and focus a window by title (or class), once it is there.

    Tasks launch an app and activate its window in the next step; OSWorld's VM relies on
    the app being quick. Here the step waits, up to :data:`WINDOW_WAIT_S`, for the window
    to be listed (as :func:`pytest_osworld.guest.x_windows.find_window` matches it); when it never
    shows (or wmctrl is missing) it activates anyway, which, as in OSWorld, does nothing.
    """
    deadline = time.monotonic() + WINDOW_WAIT_S
    while time.monotonic() < deadline:
        listing = ctx.guest.execute(["wmctrl", "-lx"], timeout=30)
        if listing.returncode != 0:
            break
        if find_window(parse_wmctrl_lx(listing.output), window_name, strict, by_class):
            break
        time.sleep(0.5)
    ctx.guest.activate_window(window_name, strict=strict, by_class=by_class)


def close_window_step(
    ctx: TaskContext, window_name: str, strict: bool = False, by_class: bool = False
) -> None:
    """Close a window by title (or class)."""
    ctx.guest.close_window(window_name, strict=strict, by_class=by_class)


def change_wallpaper_step(ctx: TaskContext, path: str) -> None:
    """Set the desktop wallpaper to an image inside the environment."""
    ctx.guest.execute(["gsettings", "set", "org.gnome.desktop.background", "picture-uri", f"file://{path}"])
