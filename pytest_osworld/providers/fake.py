"""An in-memory provider for the plugin's own tests. Never the default for real runs.

The fake guest keeps a dictionary of files and answers the guest API from it. Agent
code is never executed: the fake understands one kind of line only, used by tests to
give an action an effect::

    # fake: write /home/user/out.txt hello world

Options (``--provider-arg``): ``fail=prepare|start|restore|step`` makes the provider or the
guest break at that point (``step`` fails the guest's second action), ``prepare=1`` makes
the controller's :meth:`FakeProvider.prepare` say that it prepares, ``files=a=1;b=2``
seeds files at every restore, ``screen=640x480`` sets the screen size.
"""

from __future__ import annotations

import io
import shlex
import socket
import struct
import zlib
from collections.abc import Callable
from typing import Any

from pytest_osworld.errors import EnvironmentFailure, GuestError
from pytest_osworld.guest_client.api import CommandResult
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig

FAKE_LINE = "# fake: write "


def tiny_png(width: int = 8, height: int = 8, gray: int = 200) -> bytes:
    """A real, valid grayscale PNG of the given size (no imaging library needed)."""
    raw = b"".join(b"\x00" + bytes([gray]) * width for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    out = io.BytesIO()
    out.write(b"\x89PNG\r\n\x1a\n")
    out.write(chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return out.getvalue()


class FakeGuest:
    """An in-memory guest: files in a dict, commands limited to ``cat`` and ``echo``."""

    def __init__(
        self,
        files: dict[str, bytes],
        fail_at_action: int | None = None,
        screen: tuple[int, int] = (1920, 1080),
    ) -> None:
        self.files = dict(files)
        self.actions: list[str] = []
        self.launched: list[list[str] | str] = []
        self.fail_at_action = fail_at_action
        self.screen = screen

    def health(self) -> dict[str, Any]:
        """Always ready."""
        return {"ready": True}

    def screenshot(self) -> bytes:
        """A small gray PNG."""
        return tiny_png()

    def accessibility_tree(self) -> str:
        """An almost empty desktop."""
        return '<desktop-frame name="fake"/>'

    def terminal_output(self) -> str | None:
        """No terminal."""
        return None

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        """``cat PATH`` and ``echo TEXT``; anything else exits 127."""
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if argv[:1] == ["cat"] and len(argv) == 2:
            if argv[1] in self.files:
                return CommandResult(0, self.files[argv[1]].decode(), "")
            return CommandResult(1, "", f"cat: {argv[1]}: No such file or directory\n")
        if argv[:1] == ["echo"]:
            return CommandResult(0, " ".join(argv[1:]) + "\n", "")
        return CommandResult(127, "", f"fake guest: {argv[0] if argv else ''}: command not found\n")

    def launch(self, command: list[str] | str, shell: bool = False) -> None:
        """Record the launch."""
        self.launched.append(command)

    def run_python(self, code: str, timeout: float = 30.0) -> CommandResult:
        """Record the code and apply its ``# fake: write`` lines."""
        self.actions.append(code)
        if self.fail_at_action is not None and len(self.actions) >= self.fail_at_action:
            raise GuestError("fake guest: connection reset while running an action (injected)")
        for line in code.splitlines():
            if line.strip().startswith(FAKE_LINE):
                path, _, text = line.strip()[len(FAKE_LINE) :].partition(" ")
                self.files[path] = text.encode()
        return CommandResult(0, "", "")

    def run_bash_script(
        self, script: str, timeout: float = 100.0, working_dir: str | None = None
    ) -> CommandResult:
        """Not supported by the fake."""
        return CommandResult(127, "fake guest: bash scripts are not supported\n", "")

    def open_file(self, path: str, timeout: float = 120.0) -> None:
        """Succeeds when the file exists."""
        if path not in self.files:
            raise GuestError(f"open_file: {path} does not exist")

    def activate_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        """Nothing to activate."""

    def close_window(self, window_name: str, strict: bool = False, by_class: bool = False) -> None:
        """Nothing to close."""

    def read_file(self, path: str) -> bytes:
        """The stored bytes, or ``FileNotFoundError``."""
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    def upload_file(self, path: str, data: bytes) -> None:
        """Store the bytes."""
        self.files[path] = data

    def list_directory(self, path: str) -> dict[str, Any]:
        """The stored files below ``path``, flat."""
        prefix = path.rstrip("/") + "/"
        children = [
            {"type": "file", "name": p[len(prefix) :]} for p in sorted(self.files) if p.startswith(prefix)
        ]
        return {"type": "directory", "name": path, "children": children}

    def screen_size(self) -> tuple[int, int]:
        """The configured screen size."""
        return self.screen

    def window_size(self, app_class_name: str) -> tuple[int, int] | None:
        """No windows."""
        return None

    def cursor_position(self) -> tuple[int, int]:
        """The screen's centre."""
        return self.screen[0] // 2, self.screen[1] // 2

    def desktop_path(self) -> str:
        """``/home/user/Desktop``."""
        return "/home/user/Desktop"

    def wallpaper(self) -> bytes:
        """A small PNG."""
        return tiny_png()

    def start_recording(self) -> None:
        """Nothing to record."""

    def end_recording(self) -> bytes:
        """No video."""
        return b""

    def open_vnc(self) -> tuple[socket.socket, bytes]:
        """No screen to watch."""
        raise GuestError("the fake desktop has no VNC server")

    def allow_vnc_input(self) -> None:
        """No screen to take over."""
        raise GuestError("the fake desktop has no VNC server")


class FakeProvider(Provider):
    """Gives a fresh :class:`FakeGuest` at every restore."""

    name = "fake"

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self.fail = config.options.get("fail", "")
        self.seed = _parse_files(config.options.get("files", ""))
        width, _, height = config.options.get("screen", "1920x1080").partition("x")
        self.screen = (int(width), int(height))
        self.restores = 0

    def describe(self) -> str:
        """``fake (in memory)``."""
        return "fake (in memory, tests only)"

    @classmethod
    def prepare(cls, config: ProviderConfig, say: Callable[[str], None]) -> None:
        """With ``prepare=1``, say two lines as a slow one-off build would; with
        ``fail=prepare``, fail as one can."""
        if config.options.get("fail") == "prepare":
            raise EnvironmentFailure("injected prepare failure")
        if config.options.get("prepare") == "1":
            say(f"preparing the fake provider for {config.worker_id}")
            say("the fake provider is prepared (0 s)")

    def _start_impl(self) -> None:
        if self.fail == "start":
            raise RuntimeError("injected start failure")

    def _restore_impl(self, snapshot: str) -> Environment:
        if self.fail == "restore":
            raise RuntimeError(f"injected failure restoring snapshot {snapshot!r}")
        self.restores += 1
        guest = FakeGuest(self.seed, fail_at_action=2 if self.fail == "step" else None, screen=self.screen)
        return Environment(
            guest=guest,
            name=f"fake-{self.config.worker_id}",
            description=self.describe(),
            image="fake",
            screen_size=self.screen,
        )

    def _stop_impl(self) -> None:
        return None


def _parse_files(spec: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for item in filter(None, spec.split(";")):
        path, _, text = item.partition("=")
        files[path] = text.encode()
    return files
