"""``env.controller``: the helpers of OSWorld's host-side controller that run scripts touch.

OSWorld scripts reach past ``DesktopEnv`` into ``env.controller`` for a handful of calls
(``start_recording``/``end_recording`` in the default runner, a screenshot, a file, a
command). :class:`Controller` offers those names over our guest client, with OSWorld's
return shapes: ``None`` where OSWorld's controller gives up after its retries, and dicts
with ``status``/``output``/``error``/``returncode`` for commands. Each call goes to the
desktop of the current episode.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_osworld.agent.actions import Action
from pytest_osworld.errors import OSWorldError
from pytest_osworld.guest_client.api import CommandResult, Guest

#: The controller methods offered, as documented in docs/env.md.
CONTROLLER_METHODS = (
    "get_screenshot",
    "get_accessibility_tree",
    "get_terminal_output",
    "get_file",
    "execute_python_command",
    "execute_action",
    "run_python_script",
    "run_bash_script",
    "start_recording",
    "end_recording",
    "get_vm_platform",
    "get_vm_machine",
    "get_vm_screen_size",
    "get_vm_window_size",
    "get_vm_wallpaper",
    "get_vm_desktop_path",
    "get_vm_directory_tree",
    "get_cursor_position",
)


def _as_dict(result: CommandResult) -> dict[str, Any]:
    return {
        "status": "success" if result.returncode == 0 else "error",
        "output": result.output,
        "error": result.error,
        "returncode": result.returncode,
    }


class Controller:
    """OSWorld's ``PythonController`` surface over the current desktop's guest."""

    def __init__(self, guest: Callable[[], Guest], act: Callable[[Action], str | None]) -> None:
        self._guest = guest
        self._act = act

    def _quiet(self, call: Callable[[Guest], Any]) -> Any:
        """OSWorld's controller returns None when the guest fails; so do we."""
        try:
            return call(self._guest())
        except (OSWorldError, OSError):
            return None

    def get_screenshot(self) -> bytes | None:
        """The screen as PNG bytes, or None."""
        return self._quiet(lambda g: g.screenshot())  # type: ignore[no-any-return]

    def get_accessibility_tree(self) -> str | None:
        """The accessibility tree as XML, or None."""
        return self._quiet(lambda g: g.accessibility_tree())  # type: ignore[no-any-return]

    def get_terminal_output(self) -> str | None:
        """The focused terminal's text, or None."""
        return self._quiet(lambda g: g.terminal_output())  # type: ignore[no-any-return]

    def get_file(self, file_path: str) -> bytes | None:
        """A file's bytes from the desktop, or None when it cannot be read."""
        return self._quiet(lambda g: g.read_file(file_path))  # type: ignore[no-any-return]

    def execute_python_command(self, command: str) -> dict[str, Any] | None:
        """Run Python code in the desktop (pyautogui is already imported there)."""
        result = self._quiet(lambda g: g.run_python(command, timeout=120.0))
        return None if result is None else _as_dict(result)

    def run_python_script(self, script: str) -> dict[str, Any] | None:
        """Run a Python script in the desktop."""
        result = self._quiet(lambda g: g.run_python(script, timeout=90.0))
        return None if result is None else _as_dict(result)

    def run_bash_script(
        self, script: str, timeout: int = 30, working_dir: str | None = None
    ) -> dict[str, Any] | None:
        """Run a bash script in the desktop (stderr merged into output)."""
        result = self._quiet(lambda g: g.run_bash_script(script, timeout=timeout, working_dir=working_dir))
        return None if result is None else _as_dict(result)

    def execute_action(self, action: dict[str, Any] | str) -> None:
        """Run one computer_13 action (or a special code) as ``DesktopEnv.step`` would."""
        from pytest_osworld.agent.actions import action_from_json

        self._act(action_from_json(action))

    def start_recording(self) -> None:
        """Start recording the screen (a failure is ignored, as OSWorld's controller does)."""
        self._quiet(lambda g: g.start_recording())

    def end_recording(self, dest: str) -> None:
        """Stop recording and write the MP4 to ``dest`` (nothing when there is no video)."""
        video = self._quiet(lambda g: g.end_recording())
        if video:
            Path(dest).write_bytes(video)

    def get_vm_platform(self) -> str | None:
        """``Linux`` for our desktops (``platform.system()`` inside the desktop)."""
        return self._python_value("platform.system()")

    def get_vm_machine(self) -> str | None:
        """The desktop's machine type, e.g. ``x86_64``."""
        return self._python_value("platform.machine()")

    def get_vm_screen_size(self) -> dict[str, int] | None:
        """``{"width": ..., "height": ...}``, OSWorld's shape."""
        size = self._quiet(lambda g: g.screen_size())
        return None if size is None else {"width": size[0], "height": size[1]}

    def get_vm_window_size(self, app_class_name: str) -> dict[str, int] | None:
        """The size of the app's first window, or None."""
        size = self._quiet(lambda g: g.window_size(app_class_name))
        return None if size is None else {"width": size[0], "height": size[1]}

    def get_vm_wallpaper(self) -> bytes | None:
        """The wallpaper image's bytes, or None."""
        return self._quiet(lambda g: g.wallpaper())  # type: ignore[no-any-return]

    def get_vm_desktop_path(self) -> str | None:
        """The desktop folder's path, or None."""
        return self._quiet(lambda g: g.desktop_path())  # type: ignore[no-any-return]

    def get_vm_directory_tree(self, path: str) -> dict[str, Any] | None:
        """The folder tree at ``path``, or None."""
        return self._quiet(lambda g: g.list_directory(path))  # type: ignore[no-any-return]

    def get_cursor_position(self) -> tuple[int, int] | None:
        """The mouse position, or None."""
        return self._quiet(lambda g: g.cursor_position())  # type: ignore[no-any-return]

    def _python_value(self, expression: str) -> str | None:
        code = f"import json, platform\nprint(json.dumps({expression}))"
        result = self._quiet(lambda g: g.run_python(code))
        if result is None or result.returncode != 0:
            return None
        try:
            return str(json.loads(result.output.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            return None
