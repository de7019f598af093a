"""A pytest run in a subprocess whose terminal a test reads and types into, and the
browser side of the live view (Playwright on Debian's Chromium, noVNC's canvas)."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
LINK = re.compile(r"osworld: live view of (\w+): (http://127\.0\.0\.1:\d+/\?s=[\w-]+)")


class Terminal:
    """``python -m pytest ARGS`` with a pipe for stdin and everything it prints kept."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.text = ""
        self._chunks: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), 4096):
            self._chunks.put(chunk)

    def wait_for(self, pattern: str, timeout: float, after: int = 0) -> re.Match[str]:
        """The first match of ``pattern`` in the output from offset ``after`` on."""
        deadline = time.monotonic() + timeout
        while True:
            match = re.compile(pattern).search(self.text, after)
            if match:
                return match
            left = deadline - time.monotonic()
            if left <= 0 or (self.proc.poll() is not None and self._chunks.empty()):
                raise AssertionError(f"no {pattern!r} in the run's output:\n{self.text[-4000:]}")
            with contextlib.suppress(queue.Empty):
                self.text += self._chunks.get(timeout=min(left, 0.5)).decode(errors="replace")

    def type(self, line: str) -> None:
        """Type ``line`` and Enter into the run's terminal."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def finish(self, timeout: float) -> int:
        """Wait for the run to end; its exit code (the output is read to the end)."""
        code = self.proc.wait(timeout=timeout)
        time.sleep(0.2)
        while not self._chunks.empty():
            self.text += self._chunks.get().decode(errors="replace")
        return code

    def kill(self) -> None:
        """End the run if it is still going."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def launch_browser(playwright: Any) -> Any:
    """Debian's Chromium under Playwright."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
    )


def open_desktop(page: Any, url: str) -> Any:
    """Open the live link; return noVNC's frame once it shows a connected desktop."""
    page.goto(url)
    frame = page.frame_locator("#view")
    frame.locator("#noVNC_container canvas").wait_for(state="visible", timeout=30_000)
    wait_connected(page)
    return frame


def wait_connected(page: Any, timeout: float = 30.0) -> None:
    """Until noVNC's canvas has the desktop's size (it is 0x0 before the first frame)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        size = (
            page.frame_locator("#view")
            .locator("#noVNC_container canvas")
            .evaluate("c => [c.width, c.height]")
        )
        if size[0] >= 640 and size[1] >= 480:
            return
        time.sleep(0.2)
    raise AssertionError("noVNC never showed the desktop")


def canvas_pixels(page: Any, colours: int = 6, timeout: float = 30.0) -> tuple[int, int, int]:
    """Width, height and the number of distinct colours on noVNC's canvas, once it has at
    least ``colours`` of them or ``timeout`` passed: the canvas takes the desktop's size at
    the VNC handshake, and its pixels come with the first screen update a moment later."""
    deadline = time.monotonic() + timeout
    seen = _canvas_pixels(page)
    while seen[2] < colours and time.monotonic() < deadline:
        time.sleep(0.3)
        seen = _canvas_pixels(page)
    return seen


def _canvas_pixels(page: Any) -> tuple[int, int, int]:
    return tuple(
        page.frame_locator("#view")
        .locator("#noVNC_container canvas")
        .evaluate(
            """c => {
                const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                const seen = new Set();
                for (let i = 0; i < data.length; i += 4 * 97) seen.add((data[i] << 16) | (data[i+1] << 8) | data[i+2]);
                return [c.width, c.height, seen.size];
            }"""
        )
    )


def type_in_desktop(page: Any, text: str) -> None:
    """Click into noVNC's canvas (the middle of the screen) and type ``text`` + Enter."""
    canvas = page.frame_locator("#view").locator("#noVNC_container canvas")
    box = canvas.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    time.sleep(0.3)
    page.keyboard.type(text, delay=40)
    page.keyboard.press("Enter")
