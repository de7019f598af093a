"""The local provider's process bookkeeping: sandboxes' PIDs, the records of running
providers and the start-up sweep of what dead runs left, and the spawner thread.

A process is named by its PID and start time (``/proc/<pid>/stat``), so a reused PID is
never mistaken for the process it replaced. :mod:`pytest_osworld.providers.local` uses
these to start, kill and clean up sandboxes.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

#: Under ``cache_dir``: one record per running provider (``<work folder name>.json``).
RUNS_DIR = "runs"
#: Every work folder's name starts with this (the sweep removes nothing else).
WORK_PREFIX = "osworld-local-"

T = TypeVar("T")


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks after boot), or None if it has ended.

    A PID and its start time name a process for good: a PID reused later has another
    start time.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    if len(fields) <= 19 or fields[0] in ("Z", "X"):
        return None  # a zombie has ended; only its exit status is left to collect
    return fields[19]


def _pid_namespace() -> str:
    """This process's PID namespace (``pid:[inode]``): PIDs only compare within one."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def write_run_record(runs_dir: Path, work: Path) -> Path:
    """Record that this process owns the work folder ``work``; return the record's path."""
    runs_dir.mkdir(parents=True, exist_ok=True)
    record = runs_dir / f"{work.name}.json"
    pid = os.getpid()
    data = {"pid": pid, "started": process_start(pid), "pid_ns": _pid_namespace(), "work": str(work)}
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, record)
    return record


def processes_naming(folder: Path) -> list[int]:
    """This user's processes with an argument inside ``folder`` (a sandbox's bwrap has its
    control folder on its command line, the outer and the inner bwrap alike)."""
    prefix = str(folder) + "/"
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if entry.stat().st_uid != os.getuid():
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(arg.decode(errors="replace").startswith(prefix) for arg in argv):
            found.append(int(entry.name))
    return found


def sweep_stale_runs(runs_dir: Path) -> list[str]:
    """Clean up after providers whose pytest process is gone; return what was swept.

    For each record in ``runs_dir`` whose owner (PID and start time, in this PID
    namespace) no longer runs: SIGKILL the processes that still name its work folder
    (killing a sandbox's bwrap ends its whole PID namespace), remove the folder and its
    sockets, and drop the record. Live owners and other namespaces are left alone.
    """
    swept: list[str] = []
    if not runs_dir.is_dir():
        return swept
    namespace = _pid_namespace()
    for record in sorted(runs_dir.glob("*.json")):
        try:
            data = json.loads(record.read_text())
            pid, started, work = int(data["pid"]), data["started"], Path(str(data["work"]))
            owner_ns = str(data.get("pid_ns", ""))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not ours to judge
        if owner_ns != namespace or process_start(pid) == started:
            continue
        killed = 0
        if work.name.startswith(WORK_PREFIX):
            for victim in processes_naming(work):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(victim, signal.SIGKILL)
                    killed += 1
            shutil.rmtree(work, ignore_errors=True)
        record.unlink(missing_ok=True)
        swept.append(f"{work} (left by pytest PID {pid}; {killed} process(es) killed)")
    return swept


def children_of(pid: int) -> list[tuple[int, str]]:
    """The direct children of ``pid`` with their start times (empty once it is gone)."""
    try:
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    found = []
    for child in map(int, listed):
        started = process_start(child)
        if started is not None:
            found.append((child, started))
    return found


def kill_and_wait(processes: list[tuple[int, str]], timeout: float) -> None:
    """SIGKILL each (PID, start time) still running and wait until all are gone."""
    for pid, started in processes:
        if process_start(pid) == started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while any(process_start(pid) == started for pid, started in processes):
        if time.monotonic() > deadline:
            return
        time.sleep(0.01)


def describe_exit(code: int) -> str:
    """``killed by SIGKILL`` or ``exit status 1``, for a ``Popen.returncode``."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    if code > 128:
        # bwrap exits with 128 + N when the process it runs was killed by signal N.
        with contextlib.suppress(ValueError):
            return f"exit status {code}: the guest server was killed by {signal.Signals(code - 128).name}"
    return f"exit status {code}"


class Spawner:
    """A long-lived thread that starts (and so parents) every sandbox.

    ``bwrap --die-with-parent`` uses ``PR_SET_PDEATHSIG``, which fires when the *thread*
    that forked bwrap exits. Spawning from this one thread, alive as long as the
    provider, keeps sandboxes alive between calls, and still kills them all when the
    pytest process dies, however it dies.
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            func, future = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(func())
            except BaseException as exc:
                future.set_exception(exc)

    def call(self, func: Callable[[], T]) -> T:
        """Run ``func`` on the spawner thread and return its result."""
        future: Future[T] = Future()
        self._jobs.put((func, future))
        return future.result()

    def stop(self) -> None:
        """End the thread (sandboxes it started should be killed first)."""
        self._jobs.put(None)
        self._thread.join(timeout=5)


def _autogroup(pid: int | str) -> str | None:
    """The scheduler autogroup of a process (``/autogroup-N``), or None if it has none of
    its own: the kernel's default group, which prints nothing (processes that never
    started a session, such as a runner started by pid 1), or no autogroups at all."""
    try:
        return Path(f"/proc/{pid}/autogroup").read_text().split()[0]
    except (OSError, IndexError):
        return None


def _autogroups_enabled() -> bool:
    """Whether the kernel weighs sessions as autogroups (``kernel.sched_autogroup_enabled``)."""
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


def set_sandbox_nice(pid: int, nice: int, timeout: float = 2.0) -> bool:
    """Give the CPU share of the sandbox under ``pid`` (bubblewrap, which starts it in a
    session of its own) the weight of ``nice``; whether it was set.

    Linux's scheduler shares the CPU between sessions' autogroups first, so a sandbox
    counts as one contender whatever runs in it; its autogroup's nice value weighs it.
    Raising the value needs no privilege, nor does lowering it back to 0; the kernel
    refuses changes less than 0.1 s apart (``EAGAIN``), which are retried. Waits up to
    ``timeout`` for the sandbox's session to exist. False where autogroups are off:
    then nothing changes, and nothing else depends on it.
    """
    if not _autogroups_enabled():
        return False
    ours = _autogroup("self")
    deadline = time.monotonic() + timeout
    while True:
        member = _session_member(pid, ours)
        if member is not None:
            try:
                Path(f"/proc/{member}/autogroup").write_text(str(nice))
                return True
            except BlockingIOError:
                pass  # another change in the last 0.1 s, anywhere on the machine
            except OSError:
                return False  # the process just ended
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _session_member(pid: int, ours: str | None) -> int | None:
    """A process under ``pid`` with an autogroup of its own other than ``ours`` (the
    sandbox's session), or None. ``ours`` is None where this process is in the kernel's
    default group: then any autogroup is another one."""
    todo = [pid]
    while todo:
        current = todo.pop()
        group = _autogroup(current)
        if group is not None and group != ours:
            return current
        todo.extend(child for child, _started in children_of(current))
    return None


def sandbox_nice(pid: int) -> int | None:
    """The nice value of the autogroup of the sandbox under ``pid`` (what
    :func:`set_sandbox_nice` set), or None where autogroups are off or it is gone."""
    if not _autogroups_enabled():
        return None
    member = _session_member(pid, _autogroup("self"))
    if member is None:
        return None
    try:
        return int(Path(f"/proc/{member}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None
