"""The remote provider against a real desktop reached over TCP, through the plugin."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.desktop

TASK = {
    "id": "6f1b0b8e-2c7a-4a55-9a3e-0a2f1c9d7e21",
    "snapshot": "os",
    "instruction": "Write ok into ~/remote.txt.",
    "config": [],
    "evaluator": {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": "cat ~/remote.txt", "shell": True},
        "expected": {"type": "rule", "rules": {"expected": "ok\n"}},
    },
    "solution": ["import pathlib\npathlib.Path.home().joinpath('remote.txt').write_text('ok\\n')", "DONE"],
}


@pytest.fixture
def remote_url(desktop) -> Iterator[str]:
    """The desktop's guest server exposed on a loopback TCP port (URL#TOKEN)."""
    env = desktop.restore("os")
    ctl = Path(env.extra["control_dir"])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    bridge = subprocess.Popen(
        ["socat", f"TCP-LISTEN:{port},bind=127.0.0.1,reuseaddr,fork", f"UNIX-CONNECT:{ctl / 'guest.sock'}"]
    )
    try:
        yield f"http://127.0.0.1:{port}#{(ctl / 'token').read_text().strip()}"
    finally:
        bridge.terminate()
        bridge.wait(timeout=10)


def test_a_task_runs_on_a_remote_desktop(pytester: pytest.Pytester, remote_url: str) -> None:
    path = pytester.path / "tasks" / "os" / f"{TASK['id']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(TASK))
    args = [
        "tasks",
        "--agent=replay",
        "--provider=remote",
        f"--provider-arg=urls={remote_url}",
        f"--provider-arg=lock_dir={pytester.path / 'locks'}",
        "-p",
        "no:cacheprovider",
    ]
    result = pytester.runpytest_subprocess(*args)
    result.stdout.fnmatch_lines(["*ERROR*", "*cannot restore these desktops to a snapshot*allow_no_reset=1*"])
    result = pytester.runpytest_subprocess(*args, "--provider-arg=allow_no_reset=1")
    result.assert_outcomes(passed=1)
