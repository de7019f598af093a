"""The vagrant provider end to end: offline Debian box, vagrant-libvirt under TCG, snapshots.

The test makes its own network namespace with libvirtd inside it (``vagrant/netns.sh``),
builds the minimal box (or reuses the cached one), brings a VM up through
:class:`VagrantProvider`, checks the guest server through the namespace's relay, proves
that a snapshot restore reverts a change, and removes the VM, the namespace and the
libvirt objects it made, even when it fails.

It also powers a VM off (``virsh destroy``) in the middle of a task: the task is an ERROR
naming the VM's state, its first step stays on disk and the next task passes.

The tests hand one VM on (``keep_vms=1``, machine ``osworld-main``): the box test, the replay
and noop sessions, then the power-off session, which destroys it. Each boot under TCG is
about 190 s; a kept VM is restored to its clean snapshot and redeployed instead. Each test
still boots its own VM when it runs alone or when none is kept.

Two more are opt-in: two VMs side by side (``OSWORLD_VAGRANT_PARALLEL=1``) and the gnome
session in the full box through ``DesktopEnv`` (``OSWORLD_VAGRANT_GNOME=1``).

Run as root after ``scripts/install-vagrant.sh``:  ``pytest tests/integration/test_vagrant.py -m vagrant``.
``OSWORLD_VAGRANT_CACHE`` moves the box cache (default ``~/.cache/pytest-osworld/vagrant``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rfb import RfbClient
from vm_lock import vm_tests_lock

from pytest_osworld.live.session import LiveView
from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.vagrant import VagrantProvider, explain_domstate

pytestmark = [pytest.mark.vagrant, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
NETNS_SH = REPO / "vagrant" / "netns.sh"
TOOLS = ("vagrant", "virsh", "libvirtd", "virtlogd", "qemu-system-x86_64", "debootstrap", "extlinux", "socat")


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespace, libvirtd, debootstrap)"
    if shutil.which("ip") is None:
        return "needs iproute2's `ip netns`"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"`ip netns` is unavailable: {probe.stderr.strip()}"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"missing {', '.join(missing)}: run scripts/install-vagrant.sh"
    return None


@pytest.fixture(scope="module")
def netns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A network namespace running libvirtd, removed with everything in it at the end."""
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    name = f"osw-it-{os.getpid()}"
    state = tmp_path_factory.mktemp("netns")
    with vm_tests_lock():
        try:
            subprocess.run([str(NETNS_SH), "up", name, str(state)], check=True, timeout=120)
            yield name
        finally:
            subprocess.run([str(NETNS_SH), "down", name, str(state)], check=False, timeout=300)


@pytest.fixture(scope="module")
def cache_dir() -> Path:
    default = Path.home() / ".cache" / "pytest-osworld" / "vagrant"
    return Path(os.environ.get("OSWORLD_VAGRANT_CACHE") or default)


def test_minimal_box_up_snapshot_restore(netns: str, cache_dir: Path, tmp_path: Path) -> None:
    from PIL import Image

    provider = VagrantProvider(
        ProviderConfig(
            worker_id="main",  # the machine the plugin sessions below reuse
            options={
                "build": "minimal",
                "keep_vms": "1",
                "netns": netns,
                "storage_pool": "osworld",
                "libvirt_driver": "qemu",
                "memory": "1536",
                "cpus": "2",
                "cache_dir": str(cache_dir),
                "vagrant_home": str(cache_dir / "vagrant.d"),
                "up_timeout": "1500",
                "ready_timeout": "300",
            },
            work_dir=str(tmp_path),
        )
    )
    timings: dict[str, float] = {}
    t0 = time.monotonic()
    try:
        provider.start()
        timings.update(provider.timings)

        env = provider.restore("init_state")
        timings["first_restore_to_ready"] = env.extra["ready_seconds"]
        guest = env.guest
        health = guest.health()
        assert health["ready"], health
        shot = Image.open(io.BytesIO(guest.screenshot()))
        assert shot.size == (1920, 1080)
        result = guest.execute(
            ["bash", "-c", "id -un; echo hello > /home/user/marker.txt; cat /home/user/marker.txt"]
        )
        assert result.returncode == 0, result
        assert result.output.split() == ["user", "hello"]
        assert guest.read_file("/home/user/marker.txt") == b"hello\n"
        # Chrome's DevTools port (9222 in the VM) reaches the host through the namespace: a
        # stand-in server on that port answers the URL the Chrome getters are given.
        guest.launch(["python3", "-m", "http.server", "9222", "--directory", "/home/user"])
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(env.extra["chromium_cdp_url"] + "/marker.txt", timeout=5) as page:
                    assert page.read() == b"hello\n"
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise

        live = _live_view_checks(env)

        env = provider.restore("init_state")
        timings["restore"] = env.extra["restore_seconds"]
        timings["restore_to_ready"] = env.extra["ready_seconds"]
        gone = env.guest.execute(["bash", "-c", "test -e /home/user/marker.txt && echo present || echo gone"])
        assert gone.output.strip() == "gone", "the snapshot restore did not revert the file"
        if live is not None:
            # the restored VM's screen is view-only again, through the same live link
            live.attach(env, "after restore")
            _assert_view_only(live, env)
            live.close()
        assert env.guest.health()["ready"]
        clock = env.guest.execute(["date", "+%s"])
        assert abs(int(clock.output.strip()) - time.time()) < 120, "guest clock not set after restore"
    finally:
        provider.stop()
        timings.update(provider.timings)
        timings["total"] = round(time.monotonic() - t0, 1)
        print("vagrant timings (s):", json.dumps(timings))
        with (cache_dir / "last-integration-timings.json").open("w") as out:
            json.dump(timings, out, indent=1)

    # keep_vms=1: stop() leaves the VM running for the next session (the power-off test
    # checks that keep_vms=0 destroys it).
    assert provider.machine in _running_vms(netns), "keep_vms=1, yet the VM is not running"


@contextlib.contextmanager
def _watch(live: LiveView) -> Iterator[RfbClient]:
    """A VNC client through the host's live server (WebSocket, secret) to the VM's x11vnc."""
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{live.server.port}/vnc?s={live.server.secret}", open_timeout=60) as ws:
        yield RfbClient(lambda: ws.recv(timeout=120), ws.send)


def _assert_view_only(live: LiveView, env: Any) -> None:
    with _watch(live) as vnc:
        assert vnc.handshake()[:2] == (1920, 1080)
        start = env.guest.cursor_position()
        target = (start[0] // 2 + 100, start[1] // 2 + 100)
        vnc.move_pointer(*target)
        time.sleep(3)
        assert env.guest.cursor_position() == start, "view-only: the viewer moved the VM's pointer"


def _live_view_checks(env: Any) -> LiveView | None:
    """The live view of a VM: view-only through the relays until taken over (None when the
    host lacks noVNC or websockets, which scripts/install.sh installs)."""
    from pytest_osworld.live.server import NOVNC_DIR

    if importlib.util.find_spec("websockets") is None or not (NOVNC_DIR / "vnc.html").is_file():
        return None
    live = LiveView("it")
    live.attach(env, "vagrant live view")
    _assert_view_only(live, env)
    started = time.monotonic()
    live.take_over()
    print(f"vagrant live view: take over {time.monotonic() - started:.1f} s")
    with _watch(live) as vnc:
        vnc.handshake()
        vnc.move_pointer(640, 360)
        deadline = time.monotonic() + 30
        while env.guest.cursor_position() != (640, 360) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert env.guest.cursor_position() == (640, 360), "after taking over, the pointer must move"
    assert live.taken_over
    return live


#: An OSWorld-format task of ours that the minimal box can run (gnome-terminal + tar).
OS_TASK = REPO / "tasks" / "os" / "9cf34795-a8b8-4693-a578-31eb2c71aef1.json"


def _argv(agent: str, netns: str, cache_dir: Path, results: Path, keep: bool, tasks: list[Path]) -> list[str]:
    args = {
        "build": "minimal",
        "netns": netns,
        "storage_pool": "osworld",
        "libvirt_driver": "qemu",
        "memory": "1536",
        "cache_dir": str(cache_dir),
        "vagrant_home": str(cache_dir / "vagrant.d"),
        "keep_vms": "1" if keep else "0",
    }
    argv = [
        sys.executable,
        "-m",
        "pytest",
        *map(str, tasks),
        "-p",
        "no:cacheprovider",
        "--provider=vagrant",
        f"--agent={agent}",
        f"--results-dir={results}",
        "-rA",
    ]
    for key, value in args.items():
        argv.append(f"--provider-arg={key}={value}")
    return argv


def _run_task(
    agent: str, netns: str, cache_dir: Path, results: Path, keep: bool, live: bool = False
) -> subprocess.CompletedProcess[str]:
    argv = _argv(agent, netns, cache_dir, results, keep, [OS_TASK]) + (["--live"] if live else [])
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=1500, check=False)


def test_task_replay_scores_1_then_noop_scores_0(netns: str, cache_dir: Path, tmp_path: Path) -> None:
    """A real task through the plugin: replay passes; after a restore, noop fails (score 0)."""
    # The VM is kept for the next test; the netns fixture (netns.sh down) removes whatever
    # is left at the end.
    t0 = time.monotonic()
    replay = _run_task("replay", netns, cache_dir, tmp_path / "replay", keep=True, live=True)
    assert replay.returncode == 0, replay.stdout[-4000:] + replay.stderr[-2000:]
    assert "1 passed" in replay.stdout
    assert "osworld: live view of main: http://127.0.0.1:" in replay.stdout  # --live on a VM
    t1 = time.monotonic()
    # The same VM (kept), restored to the snapshot: the tarball replay made is gone.
    noop = _run_task("noop", netns, cache_dir, tmp_path / "noop", keep=True)
    assert noop.returncode == 1, noop.stdout[-4000:] + noop.stderr[-2000:]
    assert "1 failed" in noop.stdout and "OSWorld score 0.00" in noop.stdout
    print(f"task timings (s): replay session {t1 - t0:.0f}, noop session {time.monotonic() - t1:.0f}")


#: A second task of ours that the minimal box can run (chmod in a terminal).
OS_TASK_2 = REPO / "tasks" / "os" / "ef9ea0c2-4f77-4017-9a2c-592f165ae51f.json"


def _running_vms(netns: str) -> set[str]:
    listing = subprocess.run(
        ["ip", "netns", "exec", netns, "virsh", "-c", "qemu:///system", "list", "--name"],
        capture_output=True,
        text=True,
        check=False,
    )
    return set(listing.stdout.split())


@pytest.mark.skipif(
    os.environ.get("OSWORLD_VAGRANT_PARALLEL") != "1",
    reason="opt-in (two VMs under software emulation take ~10 min): OSWORLD_VAGRANT_PARALLEL=1",
)
def test_two_workers_run_two_vms_side_by_side(netns: str, cache_dir: Path, tmp_path: Path) -> None:
    """``-n 2``: each worker brings up its own VM (osworld-gw0, osworld-gw1); both run at once."""
    argv = _argv("replay", netns, cache_dir, tmp_path / "results", False, [OS_TASK, OS_TASK_2])
    argv += ["-n", "2", "--dist", "load"]
    seen_together: set[str] = set()
    log = tmp_path / "pytest.log"
    with (
        log.open("w") as sink,
        subprocess.Popen(argv, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT) as proc,
    ):
        deadline = time.monotonic() + 2400
        while proc.poll() is None and time.monotonic() < deadline:
            running = _running_vms(netns)
            if len(running) >= 2:
                seen_together |= running
            time.sleep(5)
        if proc.poll() is None:
            proc.kill()
    output = log.read_text()
    assert proc.returncode == 0, output[-4000:]
    assert "2 passed" in output, output[-4000:]
    assert len(seen_together) >= 2, f"never saw two VMs running at once: {seen_together}"
    results = [json.loads(p.read_text()) for p in (tmp_path / "results").rglob("result.json")]
    machines = {r["provenance"]["provider"].split(",")[0] for r in results}
    assert len(results) == 2 and len(machines) == 2, machines
    assert not _running_vms(netns), "VMs were left running"


#: An agent that replays the solution, but at step 2 of the first task tells the test it
#: is there and waits until the test has powered the VM off from outside.
POWER_OFF_AGENT = """
import os, time
from pathlib import Path

from agents.basic import ReplayAgent

FAULT_TASK = "9cf34795-a8b8-4693-a578-31eb2c71aef1"


class PowerOffAgent(ReplayAgent):
    def reset(self, task):
        super().reset(task)
        self.task_id = task.id
        self.index = 0

    def act(self, instruction, observation):
        self.index += 1
        if self.task_id == FAULT_TASK and self.index == 2:
            signals = Path(os.environ["FAULT_DIR"])
            (signals / "at-step-2").write_text("")
            deadline = time.monotonic() + 600
            while not (signals / "powered-off").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
        return super().act(instruction, observation)
"""


def _first_step_recorded(results: Path, task_id: str) -> bool:
    for traj in results.rglob(f"{task_id}/traj.jsonl"):
        lines = [json.loads(line) for line in traj.read_text().splitlines() if line.strip()]
        if any(line.get("step_num") == 1 for line in lines):
            return True
    return False


def test_vm_powered_off_mid_task_is_an_error_and_the_next_task_passes(
    netns: str, cache_dir: Path, tmp_path: Path
) -> None:
    """``virsh destroy`` of the VM at step 2: ERROR naming the VM's state; the next task passes."""
    (tmp_path / "vm_fault_agent.py").write_text(POWER_OFF_AGENT)
    signals = tmp_path / "signals"
    signals.mkdir()
    results = tmp_path / "results"
    fault_id, next_id = OS_TASK.stem, OS_TASK_2.stem
    argv = _argv("vm_fault_agent:PowerOffAgent", netns, cache_dir, results, False, [OS_TASK, OS_TASK_2])
    argv += ["-p", "no:randomly", "-p", "no:xdist"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), str(REPO), os.environ.get("PYTHONPATH")])),
        "FAULT_DIR": str(signals),
    }
    log = tmp_path / "pytest.log"
    t0 = time.monotonic()
    destroyed: list[str] = []
    with (
        log.open("w") as sink,
        subprocess.Popen(argv, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT) as proc,
    ):
        try:
            deadline = time.monotonic() + 900
            while not ((signals / "at-step-2").exists() and _first_step_recorded(results, fault_id)):
                assert proc.poll() is None, "pytest ended before step 2:\n" + log.read_text()[-4000:]
                assert time.monotonic() < deadline, "the first task never reached step 2"
                time.sleep(0.5)
            reached = time.monotonic() - t0
            # Powered off from outside, as a host crash or an operator would.
            destroyed = sorted(_running_vms(netns))
            assert len(destroyed) == 1, destroyed
            subprocess.run(
                ["ip", "netns", "exec", netns, "virsh", "-c", "qemu:///system", "destroy", destroyed[0]],
                check=True,
                capture_output=True,
                timeout=60,
            )
            (signals / "powered-off").write_text("")
            proc.wait(timeout=900)
        finally:
            if proc.poll() is None:
                proc.kill()
    output = log.read_text()
    print(f"vm fault timings (s): step 2 reached {reached:.0f}, session {time.monotonic() - t0:.0f}")
    reason = f"the VM {destroyed[0]} is shut off (powered off during the task; libvirt reason: destroyed)*"
    assert proc.returncode == 1, output[-6000:]
    lines = pytest.LineMatcher(output.splitlines())
    lines.fnmatch_lines([f"*ERROR at setup of osworld os/{fault_id}*", reason])
    lines.fnmatch_lines([f"PASSED *{OS_TASK_2.name}::os/{next_id}*", "*1 passed, 1 error*"])

    (broken_dir,) = [p.parent for p in results.rglob(f"{fault_id}/result.json")]
    broken = json.loads((broken_dir / "result.json").read_text())
    assert broken["outcome"] == "error" and broken["score"] is None and broken["steps"] == 1, broken
    assert pytest.LineMatcher([broken["reason"]]).fnmatch_lines([reason]) is None
    traj = [json.loads(line) for line in (broken_dir / "traj.jsonl").read_text().splitlines()]
    assert [line.get("step_num") for line in traj] == [1, None]
    assert (broken_dir / "step_1.png").is_file()
    (passed,) = [json.loads(p.read_text()) for p in results.rglob(f"{next_id}/result.json")]
    assert passed["outcome"] == "passed" and passed["score"] == 1, passed
    # keep_vms=0: the session destroyed its VM, so nothing runs or is defined any more.
    assert not _running_vms(netns), "a VM was left running"
    defined = subprocess.run(
        ["ip", "netns", "exec", netns, "virsh", "-c", "qemu:///system", "list", "--all", "--name"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert destroyed[0] not in defined, f"the VM was left defined: {defined}"


@pytest.mark.parametrize(
    ("domstate", "phrase"),
    [
        ("shut off (destroyed)", "shut off (powered off during the task; libvirt reason: destroyed)"),
        (
            "shut off (shutdown)\n",
            "shut off (shut down from inside the guest during the task; libvirt reason: shutdown)",
        ),
        ("paused (ioerror)", "paused (libvirt reason: ioerror)"),
        ("shut off", "shut off"),
    ],
)
def test_explain_domstate(domstate: str, phrase: str) -> None:
    """libvirt's ``domstate --reason`` as the phrase the ERROR starts with (no VM needed)."""
    assert explain_domstate(domstate) == phrase


#: The own gnome task whose solution opens Thunderbird from the dock (found in the tree).
DOCK_TASK = REPO / "tasks_gnome" / "os" / "5f0c2a8e-3d1b-4c6e-9a47-2b8d7e1f0c31.json"


@pytest.mark.skipif(
    os.environ.get("OSWORLD_VAGRANT_GNOME") != "1",
    reason="opt-in (the full box's build and a GNOME boot under software emulation): OSWORLD_VAGRANT_GNOME=1",
)
def test_full_box_gnome_session_through_desktop_env(netns: str, cache_dir: Path, tmp_path: Path) -> None:
    """``session=gnome`` in our full box, through OSWorld's front door: the first observation
    has the top bar and the dock on screen and gnome-shell's Activities and dock items in
    the tree, fontconfig finds the Ubuntu font, the dock task's solution scores 1 and, after
    a restore, doing nothing scores 0."""
    from PIL import Image, ImageStat

    from pytest_osworld.env import DesktopEnv
    from pytest_osworld.task.model import load_task

    task = load_task(DOCK_TASK)
    options = {
        "build": "full",
        "session": "gnome",
        "netns": netns,
        "storage_pool": "osworld",
        "libvirt_driver": "qemu",
        "memory": "3072",
        "cpus": "2",
        "cache_dir": str(cache_dir),
        "vagrant_home": str(cache_dir / "vagrant.d"),
        "up_timeout": "3600",
        "ready_timeout": "600",
    }
    t0 = time.monotonic()
    env = DesktopEnv(
        provider_name="vagrant",
        action_space="pyautogui",
        provider_options=options,
        task_dir=DOCK_TASK.parent,
        results_dir=tmp_path / "results",
    )
    try:
        observation = env.reset(task_config=DOCK_TASK)
        t_up = time.monotonic()
        tree = observation["accessibility_tree"]
        assert '<application name="gnome-shell">' in tree
        assert 'name="Activities"' in tree
        assert 'push-button name="Thunderbird"' in tree, "no Thunderbird in the dock's tree"
        shot = Image.open(io.BytesIO(observation["screenshot"])).convert("RGB")
        assert shot.size == (1920, 1080)
        assert max(ImageStat.Stat(shot.crop((300, 0, 900, 20))).mean) < 60, "no dark top bar"
        assert max(ImageStat.Stat(shot.crop((0, 600, 70, 900))).mean) < 60, "no dark dock on the left"
        font = env.controller.execute_python_command(
            "import subprocess; print(subprocess.run(['fc-match', 'Ubuntu'], capture_output=True, text=True).stdout)"
        )
        assert font is not None and '"Ubuntu"' in font["output"], f"the box has no Ubuntu font: {font}"

        for action in task.solution or []:
            _, _, done, info = env.step(action, pause=1)
            assert "error" not in info, info
        assert done
        assert env.evaluate() == 1.0
        t_replay = time.monotonic()

        env.reset(task_config=DOCK_TASK)
        env.step("DONE")
        assert env.evaluate() == 0.0
    finally:
        env.close()
    print(
        f"gnome VM timings (s): up and first reset {t_up - t0:.0f}, solution {t_replay - t_up:.0f}, "
        f"restore and noop {time.monotonic() - t_replay:.0f}"
    )
