"""The warm spare's CPU weight: a sandbox's session autogroup, read and set through /proc.

Real processes in real sessions (``setsid``); only where this process's own autogroup
is read from is replaced, to stand for a runner in the kernel's default group (which
prints nothing), as under a CI runner started by pid 1 without a session of its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

from pytest_osworld.providers import local_processes
from pytest_osworld.providers.local_processes import sandbox_nice, set_sandbox_nice

pytestmark = pytest.mark.skipif(
    not local_processes._autogroups_enabled(), reason="this kernel does not weigh sessions as autogroups"
)


@pytest.fixture
def sandbox() -> Iterator[subprocess.Popen[bytes]]:
    """A parent in our session whose child starts a session of its own, as bwrap's does."""
    proc = subprocess.Popen(["sh", "-c", "setsid sleep 60 & wait"])
    try:
        yield proc
    finally:
        for child, _started in local_processes.children_of(proc.pid):
            os.kill(child, signal.SIGKILL)
        proc.kill()
        proc.wait()


def _read_self_as(monkeypatch: pytest.MonkeyPatch, group: str | None) -> None:
    real = local_processes._autogroup
    monkeypatch.setattr(local_processes, "_autogroup", lambda pid: group if pid == "self" else real(pid))


@pytest.mark.parametrize("ours", ["own session", "kernel's default group"])
def test_the_spare_weight_is_set_and_read_back(
    monkeypatch: pytest.MonkeyPatch, sandbox: subprocess.Popen[bytes], ours: str
) -> None:
    if ours == "kernel's default group":
        _read_self_as(monkeypatch, None)
    assert set_sandbox_nice(sandbox.pid, 19) is True
    assert sandbox_nice(sandbox.pid) == 19
    time.sleep(0.15)  # the kernel refuses a second change within 0.1 s; it is retried anyway
    assert set_sandbox_nice(sandbox.pid, 0) is True
    assert sandbox_nice(sandbox.pid) == 0


def test_a_process_without_a_session_of_its_own_has_no_weight_to_set() -> None:
    proc = subprocess.Popen(["sleep", "60"])  # stays in our session
    try:
        started = time.monotonic()
        assert set_sandbox_nice(proc.pid, 19, timeout=0.3) is False
        assert time.monotonic() - started < 2.0
        assert sandbox_nice(proc.pid) is None
    finally:
        proc.kill()
        proc.wait()


def test_nothing_is_set_where_autogroups_are_off(
    monkeypatch: pytest.MonkeyPatch, sandbox: subprocess.Popen[bytes]
) -> None:
    monkeypatch.setattr(local_processes, "_autogroups_enabled", lambda: False)
    assert set_sandbox_nice(sandbox.pid, 19) is False
    assert sandbox_nice(sandbox.pid) is None
