"""A desktop killed under an interactive episode: an explained error, then a fresh desktop."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from pytest_osworld.env import DesktopCrashed, DesktopEnv
from pytest_osworld.env.gym_env import DesktopGymEnv
from pytest_osworld.providers.local_processes import process_start

pytestmark = pytest.mark.desktop

SCREEN = (640, 360)
WRITE_HELLO = "open('/home/user/out.txt', 'w').write('hello')"
TASK = {
    "id": "env-fault",
    "snapshot": "os",
    "instruction": "Write hello into ~/out.txt.",
    "config": [],
    "evaluator": {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
        "expected": {"type": "rule", "rules": {"expected": "hello"}},
    },
}


def _children() -> dict[int, list[int]]:
    """Every running process's children, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    return children


def sandboxes(root: int) -> list[int]:
    """PIDs of the bwrap processes under ``root`` (outer ones first)."""
    children = _children()
    found, todo = [], [root]
    while todo:
        for pid in sorted(children.get(todo.pop(0), [])):
            try:
                argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if argv0 == b"bwrap":
                found.append(pid)
            todo.append(pid)
    return found


def _descendants(root: int) -> set[int]:
    """``root`` and every process under it."""
    children = _children()
    found, todo = {root}, [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.add(pid)
            todo.append(pid)
    return found


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def kill_desktop(others: set[int]) -> None:
    """SIGKILL the env's desktop sandbox and wait until none of its processes runs any more.

    ``others`` are the sandboxes that ran before the env started: under xdist the worker
    also holds the session's shared desktop, which must not be the one killed. Of the env's
    own two (its desktop and the warm spare started after it), the one started first is
    its desktop: by start time, not PID, since PIDs wrap around in a long run (CI killed
    the spare once, and the step it expected to fail passed).

    The kill is asynchronous: the guest server inside can answer one more request while the
    PID namespace is torn down, so the test waits for the teardown before it steps again.
    """
    victims = [pid for pid in sandboxes(os.getpid()) if pid not in others]
    assert victims, "no desktop sandbox of the env is running under this test"
    victims.sort(key=lambda pid: int(process_start(pid) or 0))
    doomed = _descendants(victims[0])
    os.kill(victims[0], signal.SIGKILL)
    deadline = time.monotonic() + 20
    while any(_running(pid) for pid in doomed):
        assert time.monotonic() < deadline, "the killed desktop's processes still run after 20 s"
        time.sleep(0.05)


def test_desktopenv_step_explains_a_killed_desktop_and_reset_recovers() -> None:
    others = set(sandboxes(os.getpid()))
    env = DesktopEnv(action_space="pyautogui", screen_size=SCREEN, require_a11y_tree=False)
    try:
        env.reset(task_config=TASK)
        env.step("pass", pause=0)
        kill_desktop(others)
        with pytest.raises(DesktopCrashed) as crashed:
            env.step(WRITE_HELLO, pause=0)
        message = str(crashed.value)
        assert message.startswith("the desktop stopped answering during step 2 of task os/env-fault: ")
        assert "the local desktop's sandbox ended during the task (killed by SIGKILL)" in message
        assert message.endswith("the next reset() restores a fresh desktop")
        env.reset(task_config=TASK)
        env.step(WRITE_HELLO, pause=0)
        env.step("DONE", pause=0)
        assert env.evaluate() == 1.0
    finally:
        env.close()


def test_gym_step_explains_a_killed_desktop_and_reset_recovers(tmp_path: Path) -> None:
    path = tmp_path / "os" / "env-fault.json"
    path.parent.mkdir()
    path.write_text(json.dumps(TASK))
    others = set(sandboxes(os.getpid()))
    env = DesktopGymEnv(path, screen_size=SCREEN, observation_type="screenshot")
    try:
        env.reset(seed=0)
        kill_desktop(others)
        with pytest.raises(DesktopCrashed, match="sandbox ended during the task"):
            env.step(WRITE_HELLO)
        env.reset(seed=0)
        env.step(WRITE_HELLO)
        _, reward, terminated, _, _ = env.step("DONE")
        assert (reward, terminated) == (1.0, True)
    finally:
        env.close()
