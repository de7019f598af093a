"""The host-side client of the guest API: OSWorld's endpoints as typed methods.

:class:`GuestClient` implements :class:`pytest_osworld.guest_client.api.Guest`: each method is
one endpoint of OSWorld's in-VM server (same paths and payloads), so it drives our own
guest server (token required) and an unmodified OSWorld VM server (no token, port 5000)
alike, and checks the shape of each answer. The transport under it (connection,
keep-alive, token, timeouts, retries of idempotent calls) is
:class:`pytest_osworld.guest_client.transport.GuestTransport`; its constants are re-exported here.
"""

from __future__ import annotations

import os
import socket
import uuid
from typing import Any

from pytest_osworld.errors import GuestError
from pytest_osworld.guest.vnc import VNC_UPGRADE
from pytest_osworld.guest_client.api import CommandResult
from pytest_osworld.guest_client.transport import (
    DEFAULT_TIMEOUT,
    MAX_RESPONSE_BYTES,
    RETRIES,
    RETRY_DELAY,
    REUSE_IDLE_S,
    SLACK,
    GuestTransport,
    Reply,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_RESPONSE_BYTES",
    "RETRIES",
    "RETRY_DELAY",
    "REUSE_IDLE_S",
    "SLACK",
    "GuestClient",
    "GuestTransport",
    "Reply",
]


class GuestClient(GuestTransport):
    """A :class:`~pytest_osworld.guest_client.api.Guest` over HTTP.

    Give exactly one of ``unix_socket`` (a path) or ``url`` (``http://host:port``).
    ``token`` is sent as ``Authorization: Bearer``; leave it None for an OSWorld VM.
    """

    def health(self) -> dict[str, Any]:
        """Readiness of X, the window manager, AT-SPI and the worker."""
        value = self.request("GET", "/health", timeout=10.0).json("/health")
        if not isinstance(value, dict):
            raise GuestError(f"guest /health: unexpected answer {value!r}")
        return value

    def screenshot(self) -> bytes:
        """The screen as PNG bytes (cursor drawn in)."""
        reply = self.request("GET", "/screenshot", idempotent=True)
        if not reply.body.startswith(b"\x89PNG") and not reply.body.startswith(b"\xff\xd8"):
            raise GuestError(f"guest /screenshot: not an image ({reply.content_type})")
        return reply.body

    def accessibility_tree(self) -> str:
        """OSWorld's a11y XML."""
        value = self.request("GET", "/accessibility", idempotent=True, timeout=120.0)
        tree = value.json("/accessibility")
        if not isinstance(tree, dict) or not isinstance(tree.get("AT"), str):
            raise GuestError("guest /accessibility: answer has no 'AT' string")
        return str(tree["AT"])

    def terminal_output(self) -> str | None:
        """Focused terminal text, or None."""
        value = self.request("GET", "/terminal", idempotent=True).json("/terminal")
        output = value.get("output") if isinstance(value, dict) else None
        return output if isinstance(output, str) else None

    def _command_result(self, endpoint: str, value: Any, code_key: str) -> CommandResult:
        if not isinstance(value, dict):
            raise GuestError(f"guest {endpoint}: unexpected answer {value!r}")
        code = value.get(code_key)
        return CommandResult(
            returncode=int(code) if isinstance(code, int) else -1,
            output=str(value.get("output") or ""),
            error=str(value.get("error") or ""),
        )

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        """Run a command and wait for it."""
        reply = self.request(
            "POST",
            "/setup/execute",
            json_body={"command": command, "shell": shell, "timeout": timeout},
            timeout=timeout + SLACK,
        )
        return self._command_result("/setup/execute", reply.json("/setup/execute"), "returncode")

    def launch(self, command: list[str] | str, shell: bool = False) -> None:
        """Start a command without waiting for it."""
        self.request("POST", "/setup/launch", json_body={"command": command, "shell": shell})

    def run_python(self, code: str, timeout: float = 30.0) -> CommandResult:
        """Run code in the guest's pyautogui worker."""
        reply = self.request(
            "POST",
            "/run_python",
            json_body={"code": code, "timeout": timeout},
            timeout=timeout + SLACK,
        )
        return self._command_result("/run_python", reply.json("/run_python"), "return_code")

    def run_bash_script(
        self, script: str, timeout: float = 100.0, working_dir: str | None = None
    ) -> CommandResult:
        """Run a bash script (stderr merged into output)."""
        payload: dict[str, Any] = {"script": script, "timeout": timeout}
        if working_dir is not None:
            payload["working_dir"] = working_dir
        reply = self.request("POST", "/run_bash_script", json_body=payload, timeout=timeout + SLACK)
        return self._command_result("/run_bash_script", reply.json("/run_bash_script"), "returncode")

    def open_file(self, path: str, timeout: float = 120.0) -> None:
        """Open a file and wait for its window."""
        self.request(
            "POST",
            "/setup/open_file",
            json_body={"path": path, "timeout": timeout},
            timeout=timeout + SLACK,
        )

    def activate_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        """Focus a window by title or class."""
        self.request(
            "POST",
            "/setup/activate_window",
            json_body={"window_name": window_name, "strict": strict, "by_class": by_class},
        )

    def close_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        """Close a window by title or class."""
        self.request(
            "POST",
            "/setup/close_window",
            json_body={"window_name": window_name, "strict": strict, "by_class": by_class},
        )

    def read_file(self, path: str) -> bytes:
        """A file's bytes; ``FileNotFoundError`` when the guest has no such file."""
        reply = self.request(
            "POST",
            "/file",
            form={"file_path": path},
            idempotent=True,
            timeout=120.0,
            ok=(200, 404),
        )
        if reply.status == 404:
            raise FileNotFoundError(f"{path} does not exist in the environment")
        return reply.body

    def upload_file(self, path: str, data: bytes) -> None:
        """Write ``data`` to ``path`` in the guest (multipart, as OSWorld sends it)."""
        boundary = uuid.uuid4().hex
        name = os.path.basename(path) or "file"
        body = b"".join(
            [
                f'--{boundary}\r\nContent-Disposition: form-data; name="file_path"\r\n\r\n'.encode(),
                path.encode(),
                f"\r\n--{boundary}\r\n".encode(),
                f'Content-Disposition: form-data; name="file_data"; filename="{name}"\r\n'.encode(),
                b"Content-Type: application/octet-stream\r\n\r\n",
                data,
                f"\r\n--{boundary}--\r\n".encode(),
            ]
        )
        self.request(
            "POST",
            "/setup/upload",
            raw=(body, f"multipart/form-data; boundary={boundary}"),
            timeout=600.0,
            idempotent=True,
        )

    def list_directory(self, path: str) -> dict[str, Any]:
        """The directory tree at ``path``."""
        value = self.request("POST", "/list_directory", json_body={"path": path}, idempotent=True).json(
            "/list_directory"
        )
        tree = value.get("directory_tree") if isinstance(value, dict) else None
        if not isinstance(tree, dict):
            raise GuestError("guest /list_directory: answer has no 'directory_tree'")
        return tree

    def screen_size(self) -> tuple[int, int]:
        """Screen width and height."""
        value = self.request("POST", "/screen_size", idempotent=True).json("/screen_size")
        return int(value["width"]), int(value["height"])

    def window_size(self, app_class_name: str) -> tuple[int, int] | None:
        """Size of the first window of a WM class, or None."""
        reply = self.request(
            "POST",
            "/window_size",
            form={"app_class_name": app_class_name},
            idempotent=True,
            ok=(200, 404),
        )
        if reply.status == 404:
            return None
        value = reply.json("/window_size")
        if not isinstance(value, dict):
            return None
        return int(value["width"]), int(value["height"])

    def cursor_position(self) -> tuple[int, int]:
        """The mouse position."""
        value = self.request("GET", "/cursor_position", idempotent=True).json("/cursor_position")
        return int(value[0]), int(value[1])

    def desktop_path(self) -> str:
        """The desktop folder."""
        value = self.request("POST", "/desktop_path", idempotent=True).json("/desktop_path")
        return str(value["desktop_path"])

    def wallpaper(self) -> bytes:
        """The wallpaper file's bytes."""
        return self.request("POST", "/wallpaper", idempotent=True).body

    def start_recording(self) -> None:
        """Start a screen recording."""
        self.request("POST", "/start_recording")

    def end_recording(self) -> bytes:
        """Stop the recording and return the MP4."""
        return self.request("POST", "/end_recording", timeout=60.0).body

    def start_input_recording(self) -> None:
        """Start recording the person's X input in the guest (``/input/start``)."""
        self.request("POST", "/input/start")

    def _input_actions(self, endpoint: str, body: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        value = self.request("POST", endpoint, json_body=body or {}).json(endpoint)
        actions = value.get("actions") if isinstance(value, dict) else None
        if not isinstance(actions, list) or not all(
            isinstance(a, dict) and isinstance(a.get("code"), str) for a in actions
        ):
            raise GuestError(f"guest {endpoint}: answer has no 'actions' list")
        return actions

    def take_input_actions(self, quiet: float = 0.0) -> list[dict[str, Any]]:
        """The recorded input since the last take as ``{"code", "wait_before"}`` dicts; with
        ``quiet``, nothing until no input came for that many seconds (a whole burst)."""
        return self._input_actions("/input/take", {"quiet": quiet} if quiet > 0 else None)

    def stop_input_recording(self) -> list[dict[str, Any]]:
        """Stop the input recording; returns the actions not yet taken."""
        return self._input_actions("/input/stop")

    def open_vnc(self) -> tuple[socket.socket, bytes]:
        """A connection carrying the desktop's VNC (RFB) bytes, for the live view, and the
        first bytes already received. The guest starts its VNC server, view-only, when first
        asked."""
        return self.upgrade("/vnc", VNC_UPGRADE, timeout=60.0)

    def allow_vnc_input(self) -> None:
        """Let the live view's input reach the desktop (the guest's VNC leaves view-only mode)."""
        self.request("POST", "/vnc/input", timeout=60.0)

    def platform(self) -> str:
        """``Linux`` (OSWorld's ``/platform``)."""
        return self.request("GET", "/platform", idempotent=True).body.decode().strip()
