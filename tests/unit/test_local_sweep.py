"""The local provider's start-up sweep of what dead runs left (real processes, real PIDs)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_osworld.providers.local import (
    process_start,
    sweep_stale_runs,
    template_key,
    write_run_record,
)
from pytest_osworld.providers.local_template import ensure_template


def dead_pid() -> tuple[int, str]:
    """The PID and start time of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    started = process_start(proc.pid)
    proc.wait()
    assert started is not None
    return proc.pid, started


def stale_run(runs: Path, work: Path, owner: tuple[int, str]) -> Path:
    """A record of ``work`` owned by ``owner``, as a provider writes it."""
    record = write_run_record(runs, work)
    data = json.loads(record.read_text())
    data["pid"], data["started"] = owner
    record.write_text(json.dumps(data))
    return record


def sandbox_like(work: Path) -> subprocess.Popen[bytes]:
    """A process naming a control folder of ``work`` on its command line, as bwrap does."""
    ctl = work / "session-1" / "ctl"
    ctl.mkdir(parents=True)
    (ctl / "guest.sock").write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "--bind", str(ctl), "/run/ctl"]
    )
    deadline = time.monotonic() + 30
    while str(ctl).encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, "the child never ran"
        time.sleep(0.01)  # forked but not yet exec'd: it still shows pytest's command line
    return proc


def test_a_dead_runs_processes_and_folder_are_removed(tmp_path: Path) -> None:
    runs, work = tmp_path / "runs", tmp_path / "osworld-local-gw0-abc"
    owner = dead_pid()
    proc = sandbox_like(work)
    try:
        record = stale_run(runs, work, owner)
        swept = sweep_stale_runs(runs)
        assert proc.wait(timeout=10) == -9
    finally:
        proc.kill()
    assert swept == [f"{work} (left by pytest PID {owner[0]}; 1 process(es) killed)"]
    assert not work.exists() and not record.exists()


def test_a_live_runs_folder_is_left_alone(tmp_path: Path) -> None:
    runs, work = tmp_path / "runs", tmp_path / "osworld-local-main-abc"
    work.mkdir()
    record = write_run_record(runs, work)  # owned by this (live) process
    assert sweep_stale_runs(runs) == []
    assert work.is_dir() and record.is_file()


def test_a_reused_pid_does_not_keep_a_dead_run_alive(tmp_path: Path) -> None:
    runs, work = tmp_path / "runs", tmp_path / "osworld-local-main-abc"
    work.mkdir()
    me = write_run_record(runs, work)
    data = json.loads(me.read_text())
    data["started"] = str(int(data["started"]) - 1)  # same PID, an earlier process
    me.write_text(json.dumps(data))
    assert len(sweep_stale_runs(runs)) == 1
    assert not work.exists()


@pytest.mark.parametrize("name", ["results", "osworld-locals"])
def test_only_work_folders_are_removed(tmp_path: Path, name: str) -> None:
    runs, folder = tmp_path / "runs", tmp_path / name
    folder.mkdir()
    record = stale_run(runs, folder, dead_pid())
    sweep_stale_runs(runs)
    assert folder.is_dir() and not record.exists()


def test_another_pid_namespace_is_not_judged(tmp_path: Path) -> None:
    runs, work = tmp_path / "runs", tmp_path / "osworld-local-main-abc"
    work.mkdir()
    record = stale_run(runs, work, dead_pid())
    data = json.loads(record.read_text())
    data["pid_ns"] = "pid:[1]"
    record.write_text(json.dumps(data))
    assert sweep_stale_runs(runs) == []
    assert work.is_dir()


def test_a_zombie_counts_as_ended() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while process_start(proc.pid) is not None and time.monotonic() < deadline:
        time.sleep(0.01)  # exited but not yet waited for: a zombie
    assert process_start(proc.pid) is None
    proc.wait()


def test_a_template_build_killed_half_way_leaves_no_staging_folder(tmp_path: Path) -> None:
    key = template_key()
    templates = tmp_path / "templates"
    (templates / key).mkdir(parents=True)
    (templates / f"{key}.done").write_text("built")
    stale = templates / f"{key}.staging-abc123"
    (stale / ".config").mkdir(parents=True)

    def no_build(staging: Path) -> None:
        raise AssertionError("a finished template was built again")

    # The finished template passes its check here (the check itself: test_local_template.py).
    assert ensure_template(tmp_path, rebuild=False, build=no_build, check=lambda home: []) == templates / key
    assert not stale.exists()
