"""The guest API as the host sees it: what every environment's guest server offers.

This is OSWorld's in-VM server API (OSWORLD-CONTRACT.md section 4) as a Python protocol.
:class:`pytest_osworld.guest_client.client.GuestClient` implements it over HTTP (unix socket or TCP);
the ``fake`` provider implements it in memory for the plugin's own tests. Setup steps,
getters and the episode loop talk to an environment only through this protocol.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class CommandResult:
    """What ``/execute`` returns: exit code, standard output and standard error."""

    returncode: int
    output: str
    error: str


@runtime_checkable
class Guest(Protocol):
    """The operations of a guest server. Failures raise ``GuestError``."""

    def health(self) -> dict[str, Any]:
        """Readiness: ``{"ready": bool, ...}`` with the state of X, the WM and AT-SPI."""
        ...

    def screenshot(self) -> bytes:
        """The whole screen as PNG bytes, with the mouse cursor drawn in."""
        ...

    def accessibility_tree(self) -> str:
        """The accessibility tree as OSWorld's XML."""
        ...

    def terminal_output(self) -> str | None:
        """Text of the focused terminal, or None when no terminal is focused."""
        ...

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        """Run a command inside the environment and wait for it."""
        ...

    def launch(self, command: list[str] | str, shell: bool = False) -> None:
        """Start a command inside the environment without waiting for it."""
        ...

    def run_python(self, code: str, timeout: float = 30.0) -> CommandResult:
        """Run Python code inside the environment (agent actions go here, in-process)."""
        ...

    def run_bash_script(
        self, script: str, timeout: float = 100.0, working_dir: str | None = None
    ) -> CommandResult:
        """Run a bash script inside the environment (stderr merged into output)."""
        ...

    def open_file(self, path: str, timeout: float = 120.0) -> None:
        """Open a file with its default app and wait until its window shows."""
        ...

    def activate_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        """Raise and focus the window whose title (or class) matches."""
        ...

    def close_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        """Close the window whose title (or class) matches."""
        ...

    def read_file(self, path: str) -> bytes:
        """The bytes of a file inside the environment; ``FileNotFoundError`` if absent."""
        ...

    def upload_file(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` inside the environment, creating parent folders."""
        ...

    def list_directory(self, path: str) -> dict[str, Any]:
        """The directory tree at ``path``: ``{"type", "name", "children"}`` recursively."""
        ...

    def screen_size(self) -> tuple[int, int]:
        """The screen's width and height in pixels."""
        ...

    def window_size(self, app_class_name: str) -> tuple[int, int] | None:
        """The size of the first window whose WM_CLASS matches, or None."""
        ...

    def cursor_position(self) -> tuple[int, int]:
        """The mouse position."""
        ...

    def desktop_path(self) -> str:
        """The user's desktop folder."""
        ...

    def wallpaper(self) -> bytes:
        """The current wallpaper image file's bytes."""
        ...

    def start_recording(self) -> None:
        """Start recording the screen to a video inside the environment."""
        ...

    def end_recording(self) -> bytes:
        """Stop recording and return the MP4 bytes."""
        ...

    def open_vnc(self) -> tuple[socket.socket, bytes]:
        """A connection carrying the desktop's VNC bytes (live view) and those already read."""
        ...

    def allow_vnc_input(self) -> None:
        """Let the live view's input reach the desktop (a person takes over)."""
        ...
