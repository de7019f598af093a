"""``image=osworld``: OSWorld's own VM image as a Vagrant box, in both server modes.

OSWorld's image (23 GB on Hugging Face) cannot be downloaded here, so a stand-in takes its
place (``osworld_standin/build_standin.sh``): our minimal box's disk as a bare qcow2, with
its desktop starting at boot, login ``user``/``password``, and a token-less server on port
5000 that knows only OSWorld's routes. Through the plugin, as a user would run it:

- ``server=ours``: the import (hash, overlay box), ``vagrant up`` logged in as ``user``,
  our guest server deployed with a per-VM token in place of the image's server, the
  snapshot, and two of ``tasks/os``'s four tasks (a restore before each) passing with replay;
- ``server=osworld``: the other two through the image's own server, without a token,
  in the test's network namespace.

Two tasks each, not all four twice: under QEMU's software emulation a task costs about two
minutes of a core, and what these tests check (the image's import, each server's
plumbing, a restore between tasks) needs two; each task's own proof is the self-check's.
``server=ours`` is opt-in (``OSWORLD_VAGRANT_IMAGE_OURS=1``): what it adds to the other two
VM modules (the image's import is ``server=osworld``'s too, our server in a VM is
``test_vagrant.py``'s) no longer fits CI's 90 minutes beside them (2026-12-07: the two tests
were 1,563 of the suite's 10,635 test-seconds).

The results name the image and its hash. Run as root after ``scripts/install-vagrant.sh``:
``pytest tests/integration/test_vagrant_osworld_image.py -m vagrant``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_vagrant import cache_dir, netns  # noqa: F401 (module fixtures: the namespace, the box cache)

from pytest_osworld.providers.vagrant_box import package_tarball

pytestmark = [pytest.mark.vagrant, pytest.mark.timeout(2400)]

REPO = Path(__file__).resolve().parents[2]
STANDIN = Path(__file__).resolve().parent / "osworld_standin"
#: libvirt's QEMU (user libvirt-qemu) must be able to read the image through every folder.
STANDIN_DIR = Path("/var/lib/libvirt/images/pytest-osworld-standin")
#: The storage pool's folder (vagrant/netns.sh's default), where the box volumes go.
POOL_DIR = Path("/var/lib/libvirt/images/pytest-osworld")
OS_TASKS = sorted((REPO / "tasks" / "os").glob("*.json"))
#: The tasks each server mode runs: two each, together all four.
TASKS_BY_SERVER = {"ours": OS_TASKS[:2], "osworld": OS_TASKS[2:]}
#: What of the package baked into the stand-in runs inside it at boot (the session,
#: ``session.sh``, starts ``python -m pytest_osworld.guest``): the image is rebuilt when these
#: change, not on every change to the host's side. ``server=ours`` deploys the whole
#: package afresh at ``vagrant up``, so the host's side is tested as it is anyway.
IMAGE_RUNS = (
    REPO / "pytest_osworld" / "__init__.py",
    REPO / "pytest_osworld" / "guest",
    REPO / "pytest_osworld" / "providers" / "local_desktop",
)


def _tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")) if root.is_dir() else [root]:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def standin_image(netns: str, cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """The stand-in qcow2, rebuilt when the box, the stand-in's files or what of the package
    runs in it (:data:`IMAGE_RUNS`) change."""
    build = subprocess.run(
        [str(REPO / "vagrant" / "build_box.sh"), "--minimal", "--cache", str(cache_dir)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    values = dict(line.split("=", 1) for line in build.stdout.splitlines() if "=" in line)
    box_file = Path(values["BOX_FILE"])
    key = hashlib.sha256(
        "|".join([box_file.name, _tree_hash(STANDIN), *map(_tree_hash, IMAGE_RUNS)]).encode()
    ).hexdigest()[:12]
    STANDIN_DIR.mkdir(parents=True, exist_ok=True)
    STANDIN_DIR.chmod(0o755)
    image = STANDIN_DIR / f"Ubuntu-standin-{key}.qcow2"
    if not image.is_file():
        # Box volumes made from an older stand-in are overlays on it: remove both together.
        for old in [*STANDIN_DIR.glob("Ubuntu-standin-*.qcow2"), *POOL_DIR.glob("*ubuntu-image-*box.img")]:
            old.unlink()
        package = package_tarball(tmp_path_factory.mktemp("standin") / "pytest_osworld.tar.gz")
        # A build that did not keep what it wrote says so (build_standin.sh reads the disk
        # back) and is made once more before the test gives up: it was seen once, not twice.
        for _attempt in range(2):
            made = subprocess.run(
                [str(STANDIN / "build_standin.sh"), str(box_file), str(package), str(image)],
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            if made.returncode == 0:
                break
        assert made.returncode == 0, made.stderr[-3000:]
    return image


def _run_os_tasks(
    server: str,
    netns: str,  # noqa: F811
    cache_dir: Path,  # noqa: F811
    image: Path,
    results: Path,
    vm_network: str = "nat",
) -> str:
    args = {
        "image": "osworld",
        "image_file": str(image),
        "server": server,
        "vm_network": vm_network,
        "netns": netns,
        "storage_pool": "osworld",
        "libvirt_driver": "qemu",
        "memory": "1536",
        "cache_dir": str(cache_dir),
        "vagrant_home": str(cache_dir / "vagrant.d"),
    }
    argv = [
        sys.executable,
        "-m",
        "pytest",
        *map(str, TASKS_BY_SERVER[server]),
        "-p",
        "no:cacheprovider",
        "--provider=vagrant",
        "--agent=replay",
        f"--results-dir={results}",
        "-rA",
        *(f"--provider-arg={key}={value}" for key, value in args.items()),
    ]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=2000, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-6000:]
    assert f"{len(TASKS_BY_SERVER[server])} passed" in proc.stdout, proc.stdout[-3000:]
    return proc.stdout


def _image_sha(cache_dir: Path, image: Path) -> str:  # noqa: F811
    hashes = json.loads((cache_dir / "osworld-image" / "hashes.json").read_text())
    matches = [sha for key, sha in hashes.items() if key.startswith(f"{image}|")]
    assert len(matches) == 1, hashes
    return str(matches[0])


def _check_results(results: Path, sha: str, server: str) -> None:
    found = sorted(results.rglob("result.json"))
    assert len(found) == len(TASKS_BY_SERVER[server]), found
    for path in found:
        text = path.read_text()
        assert sha in text, f"{path} does not name the image's hash"
        assert f"server {server}" in text, f"{path} does not name the server mode"


def _restores(cache_dir: Path) -> int:  # noqa: F811
    log = (cache_dir / "machines" / "osworld-main" / "vagrant.log").read_text()
    return log.count("snapshot restore --no-provision osworld-ready")


@pytest.mark.skipif(
    os.environ.get("OSWORLD_VAGRANT_IMAGE_OURS") != "1",
    reason="opt-in (the image booted again under software emulation, ~8 min): OSWORLD_VAGRANT_IMAGE_OURS=1",
)
def test_osworld_image_with_our_server(
    netns: str,  # noqa: F811
    cache_dir: Path,  # noqa: F811
    standin_image: Path,
    tmp_path: Path,
) -> None:
    """server=ours: our guest server and token deployed into the image; its two tasks pass."""
    stdout = _run_os_tasks("ours", netns, cache_dir, standin_image, tmp_path / "results")
    assert "NO TOKEN" not in stdout
    _check_results(tmp_path / "results", _image_sha(cache_dir, standin_image), "ours")
    assert _restores(cache_dir) >= len(TASKS_BY_SERVER["ours"])


def test_osworld_image_with_its_own_server(
    netns: str,  # noqa: F811
    cache_dir: Path,  # noqa: F811
    standin_image: Path,
    tmp_path: Path,
) -> None:
    """server=osworld: the image's own token-less server, in the namespace and on an isolated
    (host-only) management network; its two tasks pass."""
    stdout = _run_os_tasks("osworld", netns, cache_dir, standin_image, tmp_path / "results", "host-only")
    assert "NO TOKEN" in stdout and f"network namespace {netns}" in stdout
    _check_results(tmp_path / "results", _image_sha(cache_dir, standin_image), "osworld")
    assert _restores(cache_dir) >= len(TASKS_BY_SERVER["osworld"])
