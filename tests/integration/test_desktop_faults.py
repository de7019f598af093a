"""Fault injection on the real local desktop: real processes, real signals.

Each test runs pytest in a subprocess on tiny tasks with a fault-injecting agent, breaks
something in the middle of an episode (the guest server, Xvfb, the whole sandbox, pytest
itself, an xdist worker), and checks four things: the task is an ERROR with its reason
(in the output and in result.json, never a silent absence nor a false PASS/FAIL), the
next task gets a working desktop, the completed steps and finished results stay on disk,
and nothing of the run is left behind (processes, work folders, control sockets).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.providers.local import RUNS_DIR, LocalOptions, process_start

pytestmark = pytest.mark.desktop

FAULT_AGENT = '''
"""Replays a task's solution; at step 2 of a task whose instruction says FAULT=<kind>,
records the run's processes in $FAULT_DIR/<kind>.json and injects the fault."""
import json, os, signal, time
from pathlib import Path

from pytest_osworld.agents.basic import ReplayAgent


def descendants(root):
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            try:
                argv = [a.decode() for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\\0") if a]
                started = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
            except (OSError, IndexError):
                continue
            found.append({"pid": pid, "started": started, "argv": argv})
            todo.append(pid)
    return found


def session_number(proc):
    """N of the ``session-N`` folder an outer bwrap names; a large number for other processes."""
    if not proc["argv"] or proc["argv"][0] != "bwrap":
        return 10**9
    for arg in proc["argv"]:
        for part in arg.split("/"):
            if part.startswith("session-") and part[8:].isdigit():
                return int(part[8:])
    return 10**9


TARGETS = {
    "guest": lambda argv: "pytest_osworld.guest" in argv,
    "xvfb": lambda argv: bool(argv) and argv[0].endswith("Xvfb"),
    "bwrap": lambda argv: bool(argv) and argv[0] == "bwrap",
}


class FaultAgent(ReplayAgent):
    def reset(self, task):
        super().reset(task)
        words = [w for w in task.instruction.split() if w.startswith("FAULT=")]
        self.fault = words[0].split("=", 1)[1] if words else None
        self.index = 0

    def act(self, instruction, observation):
        self.index += 1
        if self.fault and self.index == 2:
            procs = descendants(os.getpid())
            record = {"pid": os.getpid(), "procs": procs}
            path = Path(os.environ["FAULT_DIR"]) / f"{self.fault}.json"
            path.with_suffix(".tmp").write_text(json.dumps(record))
            path.with_suffix(".tmp").rename(path)
            if self.fault == "hang":
                time.sleep(120)
            else:
                # In the task's own sandbox, not the warm spare started after it: the lower
                # session number. The first match in tree order: the outer bwrap, then the inner.
                current = min(procs, key=session_number)
                own = [current, *descendants(current["pid"])]
                victim = next(p for p in own if TARGETS[self.fault](p["argv"]))
                os.kill(victim["pid"], signal.SIGKILL)
                # Killing the outer bwrap ends the rest of the sandbox a moment later (its
                # pid namespace goes down): step 2 must meet the dead desktop, not a guest
                # server that still answers one more request.
                doomed = own if self.fault == "bwrap" else [victim]
                deadline = time.monotonic() + 10
                while any(alive(p) for p in doomed) and time.monotonic() < deadline:
                    time.sleep(0.05)
        return super().act(instruction, observation)


def alive(proc):
    """The process still runs (not exited, not a zombie, not a new one with its pid)."""
    try:
        fields = Path(f"/proc/{proc['pid']}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == proc["started"] and fields[0] != "Z"
'''

AGENT = "--agent=fault_agent:FaultAgent"
#: The machine's template cache (pytester points HOME elsewhere; a rebuild costs seconds).
CACHE_DIR = LocalOptions.parse({}).cache_dir
STEP_1 = "open('/home/user/step1.txt', 'w').write('one')"
WRITE_HELLO = "open('/home/user/out.txt', 'w').write('hello')"


def task_json(task_id: str, instruction: str, solution: list[str]) -> dict[str, Any]:
    """A task that needs no app: write hello into ~/out.txt (checked with cat)."""
    return {
        "id": task_id,
        "snapshot": "os",
        "instruction": instruction,
        "config": [],
        "related_apps": ["os"],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
        "proxy": False,
        "solution": solution,
    }


FAULT_ID = "f0000000-0000-0000-0000-00000000000a"
NEXT_ID = "f0000000-0000-0000-0000-00000000000b"
OTHER_IDS = ("f0000000-0000-0000-0000-00000000000c", "f0000000-0000-0000-0000-00000000000d")


def default_sigint() -> None:
    """In the child, before pytest starts: SIGINT as a terminal gives it (Ctrl-C raises).

    A process started in the background by a non-interactive shell (``cmd &`` in a CI
    script) inherits SIGINT ignored, Python then never raises KeyboardInterrupt, and the
    interrupted runs below would hang; a person pressing Ctrl-C has the default.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Run:
    """A pytester project for one fault: tasks, agent, and pytest subprocesses."""

    def __init__(self, pytester: pytest.Pytester, fault: str) -> None:
        self.root = pytester.path
        self.fault = fault
        self.fault_dir = self.root / "faults"
        self.fault_dir.mkdir()
        pytester.makepyfile(fault_agent=FAULT_AGENT)
        pytester.makeini(
            """
            [pytest]
            osworld_results_dir = results/run
            filterwarnings = ignore::pytest.PytestAssertRewriteWarning
            """
        )
        tasks = self.root / "tasks" / "os"
        tasks.mkdir(parents=True)
        fault_task = task_json(
            FAULT_ID, f"Write hello into ~/out.txt. FAULT={fault}", [STEP_1, WRITE_HELLO, "DONE"]
        )
        (tasks / "a_fault.json").write_text(json.dumps(fault_task))
        (tasks / "b_next.json").write_text(
            json.dumps(task_json(NEXT_ID, "Write hello.", [WRITE_HELLO, "DONE"]))
        )
        self.env = {**os.environ, "PYTHONPATH": str(self.root), "FAULT_DIR": str(self.fault_dir)}

    def add_tasks(self, *ids: str) -> None:
        for number, task_id in enumerate(ids):
            path = self.root / "tasks" / "os" / f"c_other_{number}.json"
            path.write_text(json.dumps(task_json(task_id, "Write hello.", [WRITE_HELLO, "DONE"])))

    def argv(self, *args: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-rA",
            f"--provider-arg=cache_dir={CACHE_DIR}",
            *args,
        ]

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args),
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=default_sigint,
        )

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args),
            cwd=self.root,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=default_sigint,
        )

    def wait_for_fault(self, process: subprocess.Popen[str], timeout: float = 60) -> dict[str, Any]:
        """The agent's record of the run's processes, once it reaches the faulty step."""
        path = self.fault_dir / f"{self.fault}.json"
        deadline = time.monotonic() + timeout
        while not path.exists():
            if process.poll() is not None:
                raise AssertionError(f"pytest ended before the fault:\n{process.communicate()[0]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"the episode never reached step 2 in {timeout} s")
            time.sleep(0.05)
        # Observed from outside, as a CI runner would: step 1 is on disk.
        assert self.traj(FAULT_ID)[0]["step_num"] == 1
        return json.loads(path.read_text())

    def task_dir(self, task_id: str) -> Path:
        return self.root / "results/run/pyautogui/screenshot/fault_agent_FaultAgent/os" / task_id

    def traj(self, task_id: str) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.task_dir(task_id) / "traj.jsonl").read_text().splitlines()]

    def result(self, task_id: str) -> dict[str, Any]:
        return json.loads((self.task_dir(task_id) / "result.json").read_text())

    def recorded_procs(self) -> list[dict[str, Any]]:
        return json.loads((self.fault_dir / f"{self.fault}.json").read_text())["procs"]


def work_dirs(procs: list[dict[str, Any]]) -> set[Path]:
    """The provider work folders named on the recorded bwrap command lines."""
    found = set()
    for proc in procs:
        argv = proc["argv"]
        if argv and argv[0] == "bwrap" and "--bind" in argv:
            ctl = Path(argv[argv.index("--bind", argv.index("/etc/group")) + 1])
            found.add(ctl.parent.parent)  # <work>/session-N/ctl
    assert found, "no sandbox among the recorded processes"
    return found


def run_records() -> Path:
    return CACHE_DIR / RUNS_DIR


def assert_nothing_left(procs: list[dict[str, Any]], timeout: float = 10) -> None:
    """No recorded process still runs; no work folder, socket or run record remains."""
    deadline = time.monotonic() + timeout
    while alive := [p for p in procs if process_start(p["pid"]) == p["started"]]:
        if time.monotonic() > deadline:
            raise AssertionError(f"left running: {[(p['pid'], p['argv'][:2]) for p in alive]}")
        time.sleep(0.1)
    for work in work_dirs(procs):
        assert not work.exists(), f"left behind: {work} {sorted(p.name for p in work.rglob('*'))}"
        assert not (run_records() / f"{work.name}.json").exists()


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        (
            "guest",
            "the local desktop's sandbox ended during the task (exit status 137: the guest server was killed by SIGKILL): guest /*",
        ),
        ("xvfb", "guest /screenshot: HTTP 500: *display*"),
        ("bwrap", "the local desktop's sandbox ended during the task (killed by SIGKILL): guest /*"),
    ],
    ids=["guest", "xvfb", "bwrap"],
)
def test_a_desktop_part_killed_mid_episode(pytester: pytest.Pytester, fault: str, reason: str) -> None:
    run = Run(pytester, fault)
    result = run.run("tasks", AGENT)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    # The broken task is an ERROR with the reason first, and the next one passes.
    pytest.LineMatcher(out.splitlines()).fnmatch_lines(
        [
            f"*ERROR at setup of osworld os/{FAULT_ID}*",
            reason,
            f"PASSED tasks/os/b_next.json::os/{NEXT_ID}",
            "*1 passed, 1 error*",
        ]
    )
    broken = run.result(FAULT_ID)
    assert broken["outcome"] == "error" and broken["score"] is None and broken["steps"] == 1
    assert pytest.LineMatcher([broken["reason"]]).fnmatch_lines([reason]) is None
    traj = run.traj(FAULT_ID)
    assert [line.get("step_num") for line in traj] == [1, None]
    assert traj[1]["Error"] == broken["reason"]
    assert (run.task_dir(FAULT_ID) / "step_1.png").is_file()
    assert run.result(NEXT_ID)["outcome"] == "passed"
    assert_nothing_left(run.recorded_procs())


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_pytest_interrupted_mid_episode(pytester: pytest.Pytester, sig: signal.Signals) -> None:
    run = Run(pytester, "hang")
    process = run.start("tasks", AGENT, "--junitxml=junit.xml")
    try:
        run.wait_for_fault(process)
        process.send_signal(sig)
        out, _ = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == pytest.ExitCode.INTERRUPTED, out
    name = "SIGINT (Ctrl-C)" if sig == signal.SIGINT else "SIGTERM"
    head = f"interrupted by {name} after 1/15 steps; the steps so far are kept in *{FAULT_ID}/traj.jsonl"
    pytest.LineMatcher(out.splitlines()).fnmatch_lines(
        [
            f"*ERROR at setup of osworld os/{FAULT_ID}*",
            head,
            "*OSWorld summary*",
            "*0/1 passed*1 errors*",
            "*1 error in*",
        ]
    )
    broken = run.result(FAULT_ID)
    assert broken["outcome"] == "error" and broken["steps"] == 1
    assert [line.get("step_num") for line in run.traj(FAULT_ID)] == [1, None]
    junit = (run.root / "junit.xml").read_text()
    assert f'name="os/{FAULT_ID}"' in junit and "<error" in junit and "interrupted by" in junit
    assert f'<property name="task_id" value="{FAULT_ID}"' in junit
    assert not run.task_dir(NEXT_ID).exists()  # never started: not run, not faked
    assert_nothing_left(run.recorded_procs())
    # The next session gets a working desktop.
    again = run.run("tasks/os/b_next.json", "--agent=replay")
    assert again.returncode == 0, again.stdout


def test_sigkilled_run_is_swept_by_the_next_session(pytester: pytest.Pytester) -> None:
    run = Run(pytester, "hang")
    process = run.start("tasks", AGENT)
    try:
        record = run.wait_for_fault(process)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
    finally:
        process.kill()
    procs = record["procs"]
    (work,) = work_dirs(procs)
    # pytest could clean nothing up: the work folder (with its sockets) and the record stay.
    assert (run_records() / f"{work.name}.json").is_file()
    assert any(path.name == "guest.sock" for path in work.rglob("*"))
    # What was done is on disk: the finished steps, and no invented result.
    assert [line["step_num"] for line in run.traj(FAULT_ID)] == [1]
    assert not (run.task_dir(FAULT_ID) / "result.json").exists()
    again = run.run("tasks/os/b_next.json", "--agent=replay")
    assert again.returncode == 0, again.stdout
    assert_nothing_left(procs)


def test_xdist_worker_killed_mid_task(pytester: pytest.Pytester) -> None:
    run = Run(pytester, "hang")
    run.add_tasks(*OTHER_IDS)
    process = run.start("tasks", AGENT, "-n", "2")
    try:
        record = run.wait_for_fault(process, timeout=120)
        os.kill(record["pid"], signal.SIGKILL)
        out, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 1, out
    lines = pytest.LineMatcher(out.splitlines())
    lines.fnmatch_lines([f"*worker 'gw*' crashed while running 'tasks/os/a_fault.json::os/{FAULT_ID}'*"])
    lines.fnmatch_lines(["*OSWorld summary*", "*overall*(3/4 passed, 0 failed, 1 errors*"])
    crashed = run.result(FAULT_ID)
    assert crashed["outcome"] == "error" and crashed["steps"] == 1
    assert "crashed while running" in crashed["reason"] and "the worker process died" in crashed["reason"]
    assert [line.get("step_num") for line in run.traj(FAULT_ID)] == [1, None]
    for task_id in (NEXT_ID, *OTHER_IDS):
        assert run.result(task_id)["outcome"] == "passed"
    # The dead worker's desktop went with it; its folder is swept by the next session
    # that starts a local provider (here the follow-up run, if no new worker did).
    again = run.run("tasks/os/b_next.json", "--agent=replay")
    assert again.returncode == 0, again.stdout
    assert_nothing_left(record["procs"])


def test_the_desktop_dying_during_the_evaluation_is_an_error_not_a_fail(pytester: pytest.Pytester) -> None:
    run = Run(pytester, "none")
    task = task_json(FAULT_ID, "Write hello.", [WRITE_HELLO, "DONE"])
    # The postconfig kills the guest server, as a desktop that dies at that moment would.
    kill = {"type": "execute", "parameters": {"command": ["pkill", "-KILL", "-f", "pytest_osworld.guest"]}}
    task["evaluator"]["postconfig"] = [kill]
    (run.root / "tasks" / "os" / "a_fault.json").write_text(json.dumps(task))
    result = run.run("tasks", AGENT)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    pytest.LineMatcher(out.splitlines()).fnmatch_lines(
        [
            f"*ERROR at setup of osworld os/{FAULT_ID}*",
            "the local desktop's sandbox ended during the task (*); the evaluation could not run: postconfig failed: *",
            f"PASSED tasks/os/b_next.json::os/{NEXT_ID}",
        ]
    )
    broken = run.result(FAULT_ID)
    assert broken["outcome"] == "error" and broken["score"] is None and broken["steps"] == 2
    assert run.result(NEXT_ID)["outcome"] == "passed"


def test_xdist_controller_terminated_mid_task(pytester: pytest.Pytester) -> None:
    run = Run(pytester, "hang")
    process = run.start("tasks", AGENT, "-n", "2")
    try:
        record = run.wait_for_fault(process, timeout=120)
        process.send_signal(signal.SIGTERM)  # to the controller only, as `kill PID` does
        out, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == pytest.ExitCode.INTERRUPTED, out
    lines = pytest.LineMatcher(out.splitlines())
    lines.fnmatch_lines([f"ERROR tasks/os/a_fault.json::os/{FAULT_ID} - *"])
    lines.fnmatch_lines(["*OSWorld summary*", "*overall*1 errors*"])
    broken = run.result(FAULT_ID)
    assert broken["outcome"] == "error" and broken["steps"] == 1 and "interrupted" in broken["reason"]
    assert run.traj(FAULT_ID)[0]["step_num"] == 1
    assert_nothing_left(record["procs"])
