"""The vagrant provider end to end: offline Debian box, vagrant-libvirt under TCG, snapshots.

The test makes its own network namespace with libvirtd inside it (``vagrant/netns.sh``),
builds the minimal box (or reuses the cached one), brings a VM up through
:class:`VagrantProvider`, checks the guest server through the namespace's relay, proves
that a snapshot restore reverts a change, and removes the VM, the namespace and the
libvirt objects it made, even when it fails.

Run as root after ``scripts/install-vagrant.sh``:  ``pytest tests/integration/test_vagrant.py -m vagrant``.
``OSWORLD_VAGRANT_CACHE`` moves the box cache (default ``~/.cache/pytest-osworld/vagrant``).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.vagrant import VagrantProvider

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
            worker_id="it",
            options={
                "build": "minimal",
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

        env = provider.restore("init_state")
        timings["restore"] = env.extra["restore_seconds"]
        timings["restore_to_ready"] = env.extra["ready_seconds"]
        gone = env.guest.execute(["bash", "-c", "test -e /home/user/marker.txt && echo present || echo gone"])
        assert gone.output.strip() == "gone", "the snapshot restore did not revert the file"
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

    left = subprocess.run(
        ["virsh", "-c", "qemu:///system", "list", "--all", "--name"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert provider.machine not in left, "the VM was not destroyed"


#: An OSWorld-format task of ours that the minimal box can run (gnome-terminal + tar).
OS_TASK = REPO / "tasks" / "os" / "9cf34795-a8b8-4693-a578-31eb2c71aef1.json"


def _run_task(
    agent: str, netns: str, cache_dir: Path, results: Path, keep: bool
) -> subprocess.CompletedProcess[str]:
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
        str(OS_TASK),
        "-p",
        "no:cacheprovider",
        "--provider=vagrant",
        f"--agent={agent}",
        f"--results-dir={results}",
        "-rA",
    ]
    for key, value in args.items():
        argv.append(f"--provider-arg={key}={value}")
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=1500, check=False)


def test_task_replay_scores_1_then_noop_scores_0(netns: str, cache_dir: Path, tmp_path: Path) -> None:
    """A real task through the plugin: replay passes; after a restore, noop fails (score 0)."""
    # A VM left behind by a failure here is removed by the netns fixture (netns.sh down).
    t0 = time.monotonic()
    replay = _run_task("replay", netns, cache_dir, tmp_path / "replay", keep=True)
    assert replay.returncode == 0, replay.stdout[-4000:] + replay.stderr[-2000:]
    assert "1 passed" in replay.stdout
    t1 = time.monotonic()
    # The same VM (kept), restored to the snapshot: the tarball replay made is gone.
    noop = _run_task("noop", netns, cache_dir, tmp_path / "noop", keep=False)
    assert noop.returncode == 1, noop.stdout[-4000:] + noop.stderr[-2000:]
    assert "1 failed" in noop.stdout and "OSWorld score 0.00" in noop.stdout
    print(f"task timings (s): replay session {t1 - t0:.0f}, noop session {time.monotonic() - t1:.0f}")
