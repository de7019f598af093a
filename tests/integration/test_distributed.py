"""A run spread over two hosts with pytest-xdist over SSH: one JUnit report, one summary.

The two "hosts" are network namespaces of this machine, each with its own address and its
own sshd (see ``nethosts.py``); the controller runs in a third namespace and reaches them
only over SSH. Each host runs one xdist worker with the default ``local`` provider (its
own bubblewrap desktop). Workers are started the way docs/scaling.md describes: an SSH
proxy gateway per host (``--px id=hN//ssh=...//chdir=REPO``) and a worker spawned through
it (``--tx popen//via=hN``). A direct ``--tx ssh=...`` spec would make xdist copy pytest
into the remote directory and reject path arguments (its rsync, deprecated in xdist 3).

Run as root after ``scripts/install.sh``:  ``pytest tests/integration/test_distributed.py``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from nethosts import NetLab, skip_reason

pytestmark = [pytest.mark.desktop, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
#: The slice of the task suite: the four fast OS tasks (terminal and file tasks).
TASKS = REPO / "tasks" / "os"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NetLab]:
    """A controller namespace and two SSH hosts, removed with their keys at the end."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    lab = NetLab(tmp_path_factory.mktemp("nethosts"), prefix=f"osd{os.getpid()}")
    try:
        lab.add_host()
        lab.add_host()
        yield lab
    finally:
        lab.close()


def xdist_args(lab: NetLab, hosts: int, workers_per_host: int = 1) -> list[str]:
    """The controller's options for one worker per host through an SSH proxy gateway."""
    python = sys.executable
    args = ["--dist=load"]
    for index, host in enumerate(lab.hosts[:hosts], start=1):
        args.append(
            f"--px=id=h{index}//ssh={host.address}//ssh_config={lab.ssh_config}//python={python}//chdir={REPO}"
        )
        args.append(f"--tx={workers_per_host}*popen//via=h{index}//python={python}")
    return args


def run_distributed(lab: NetLab, out: Path, hosts: int) -> tuple[str, float]:
    """Run the slice on ``hosts`` hosts from the controller; its output and wall-clock."""
    argv = [
        sys.executable,
        "-m",
        "pytest",
        str(TASKS),
        "-p",
        "no:cacheprovider",
        "--agent=replay",
        f"--results-dir={out / 'results'}",
        f"--junitxml={out / 'junit.xml'}",
        *xdist_args(lab, hosts),
    ]
    # The outer run's xdist and pytest variables must not leak into the inner controller.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    started = time.monotonic()
    proc = lab.run(argv, timeout=600, env=env, cwd=REPO)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    return proc.stdout, elapsed


def junit_cases(path: Path) -> list[dict[str, str]]:
    """Each ``<testcase>``'s properties, plus ``outcome_tag`` (``passed`` or the child's tag)."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        bad = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        props["outcome_tag"] = bad[0] if bad else "passed"
        cases.append(props)
    return cases


def test_two_hosts_one_report(lab: NetLab, tmp_path: Path) -> None:
    """Both hosts run tasks; the controller writes one JUnit file and one summary for all."""
    tasks = sorted(TASKS.glob("*.json"))
    assert len(tasks) >= 2
    stdout, elapsed = run_distributed(lab, tmp_path, hosts=2)
    print(f"{len(tasks)} tasks on 2 hosts: {elapsed:.1f} s")

    # The controller reports both workers, every task once, and the summary exactly once.
    assert f"2 workers [{len(tasks)} items]" in stdout
    assert re.search(rf"^=+ {len(tasks)} passed in ", stdout, re.M), stdout[-3000:]
    assert stdout.count("OSWorld summary") == 1, stdout[-3000:]
    assert f"({len(tasks)}/{len(tasks)} passed, 0 failed" in stdout

    hostname = socket.gethostname()
    expected_hosts = {f"{hostname}:{host.netns}" for host in lab.hosts}
    cases = junit_cases(tmp_path / "junit.xml")
    assert len(cases) == len(tasks)
    assert {case["task_id"] for case in cases} == {path.stem for path in tasks}
    assert all(case["outcome_tag"] == "passed" and case["score"] == "1.0000" for case in cases), cases
    assert {case["host"] for case in cases} == expected_hosts
    assert {case["worker"] for case in cases} == {"gw0", "gw1"}

    # result.json (written by the workers into the controller's results folder) agrees.
    results = [json.loads(path.read_text()) for path in (tmp_path / "results").rglob("result.json")]
    assert len(results) == len(tasks)
    by_task = {case["task_id"]: case for case in cases}
    for result in results:
        assert result["outcome"] == "passed"
        assert result["provenance"]["host"] == by_task[result["task_id"]]["host"]
        assert result["provenance"]["worker"] == by_task[result["task_id"]]["worker"]
