"""The desktop's ``xclip`` (``local_desktop/bin/xclip``, first on the desktop's PATH, so
pyperclip.copy runs it): when it returns, the clipboard serves the new text.

Debian's xclip leaves its request for the selection in Xlib's buffer and exits, and its
forked child sends it later. On a loaded machine a Ctrl+V right after pyperclip.copy
pasted the old text. These tests make that delay certain with strace, which holds the first
``writev`` (Xlib's way of sending requests) of every traced process for a moment. The copy
is then judged when its first process exits, as pyperclip judges it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_osworld.providers.local_sandbox import DESKTOP_DIR

pytestmark = [
    pytest.mark.desktop,
    pytest.mark.skipif(shutil.which("xclip") is None, reason="xclip is not installed"),
]

WRAPPER = DESKTOP_DIR / "bin" / "xclip"
DEBIANS = "/usr/bin/xclip"


def _read(display: str) -> str:
    env = {**os.environ, "DISPLAY": display}
    argv = [DEBIANS, "-selection", "clipboard", "-o"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=10).stdout


def _copy_with_late_requests(xclip: str, text: str, display: str, tmp_path: Path) -> str:
    """Copies ``text`` with ``xclip`` under strace (the first ``writev`` of each process held 1.5 s) and returns
    what the clipboard serves the moment the copy's first process has exited."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (scripts/install-apt.sh installs it)")
    log, pid_file = tmp_path / "strace.log", tmp_path / "copier.pid"
    # The shell writes its pid and becomes the copier: its exit is the copy's end.
    copier = ["sh", "-c", 'echo $$ > "$0"; exec "$1" -selection clipboard', str(pid_file), xclip]
    argv = ["strace", "-f", "-qq", "-o", str(log), "-e", "trace=writev,exit_group"]
    argv += ["-e", "inject=writev:delay_enter=1500000:when=1", *copier]
    env = {**os.environ, "DISPLAY": display}
    tracer = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert tracer.stdin is not None
        tracer.stdin.write(text.encode())
        tracer.stdin.close()
        deadline = time.monotonic() + 60
        while not _exited(log, pid_file):
            if time.monotonic() > deadline:
                pytest.fail(f"{xclip} did not return within 60 s under strace")
            time.sleep(0.005)
        return _read(display)
    finally:
        # The copy's child stays to serve the clipboard: killing strace lets it go on.
        tracer.kill()
        tracer.wait(10)


def _exited(log: Path, pid_file: Path) -> bool:
    pid = pid_file.read_text().strip() if pid_file.exists() else ""
    if not pid or not log.exists():
        return False
    # strace pads the pid on the left of each line to five columns.
    return re.search(rf"^{pid}\s+(exit_group|\+\+\+ exited)", log.read_text(), re.MULTILINE) is not None


def _own(display: str, text: str) -> None:
    env = {**os.environ, "DISPLAY": display}
    subprocess.run([DEBIANS, "-selection", "clipboard"], input=text.encode(), env=env, check=True)
    deadline = time.monotonic() + 10
    while _read(display) != text:
        if time.monotonic() > deadline:
            pytest.fail(f"the clipboard never served {text!r}")
        time.sleep(0.05)


def test_debians_xclip_returns_before_the_clipboard_changes(xvfb: Callable[[], str], tmp_path: Path):
    """The race itself, so that the next test is known to be able to fail."""
    display = xvfb()
    _own(display, "old text")
    assert _copy_with_late_requests(DEBIANS, "new text", display, tmp_path) == "old text"


def test_the_desktops_xclip_returns_once_the_clipboard_serves_the_new_text(
    xvfb: Callable[[], str], tmp_path: Path
):
    display = xvfb()
    _own(display, "old text")
    assert _copy_with_late_requests(str(WRAPPER), "new text\nwith é", display, tmp_path) == "new text\nwith é"


def test_the_desktops_xclip_reads_and_fails_as_debians_does(xvfb: Callable[[], str]):
    display = xvfb()
    _own(display, "kept")
    env = {**os.environ, "DISPLAY": display}
    read = subprocess.run(
        [str(WRAPPER), "-selection", "clipboard", "-o"], env=env, capture_output=True, text=True
    )
    assert (read.returncode, read.stdout) == (0, "kept")
    # No X server: xclip's own error and exit status, not a wait.
    env["DISPLAY"] = ":999"
    started = time.monotonic()
    failed = subprocess.run(
        [str(WRAPPER), "-selection", "clipboard"], input=b"x", env=env, capture_output=True
    )
    assert failed.returncode != 0 and b"Can't open display" in failed.stderr
    assert time.monotonic() - started < 5
