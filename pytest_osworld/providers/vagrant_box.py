"""The vagrant provider's box and first boot: building the offline Debian box, importing a
``.box`` file, ``vagrant up`` (the first boot of a box under a lock), and the package
tarball deployed into each VM.

Each function runs ``vagrant`` through the provider's :class:`VagrantRun` (which logs the
command and turns a failure into a :class:`VagrantError` with the logs) and records how
long its slow step took in the provider's ``timings``.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tarfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Protocol

from pytest_osworld.providers.vagrant_config import PACKAGE_DIR, SNAPSHOT, VagrantError, VagrantOptions
from pytest_osworld.providers.vagrant_diagnostics import tail

#: How ``vagrant/build_box.sh`` starts the line of each of its steps on stderr.
BUILD_STEP_PREFIX = "build_box: "


class VagrantRun(Protocol):
    """Runs one ``vagrant`` command and returns its output (the provider's ``_vagrant``)."""

    def __call__(self, args: list[str], *, timeout: float, check: bool = True) -> str:
        """Run ``vagrant ARGS``; raise :class:`VagrantError` on failure when ``check``."""
        ...


def package_tarball(target: Path, source: Path = PACKAGE_DIR) -> Path:
    """A ``.tar.gz`` of the ``pytest_osworld`` package (no caches), for ``deploy.sh``."""

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        if "__pycache__" in parts or info.name.endswith((".pyc", ".pyo")):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(target, "w:gz", compresslevel=6) as tar:
        tar.add(str(source), arcname="pytest_osworld", filter=keep)
    return target


def build_box(
    options: VagrantOptions, machine_dir: Path, progress: Callable[[str], None] | None = None
) -> tuple[str, Path]:
    """Run ``vagrant/build_box.sh`` (content-cached, locked by the script): box name and file.

    Its log goes to ``machine_dir/build_box.log``; ``progress``, when given, also gets each
    of the script's step lines (``build_box: [time] step``) as it prints them.
    """
    script = options.vagrant_dir / "build_box.sh"
    argv = [str(script), "--cache", str(options.cache_dir)]
    if options.build == "minimal":
        argv.append("--minimal")
    machine_dir.mkdir(parents=True, exist_ok=True)
    log_path = machine_dir / "build_box.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout: list[bytes] = []
        readers = [
            threading.Thread(target=lambda: stdout.append(proc.stdout.read() if proc.stdout else b"")),
            threading.Thread(target=_copy_lines, args=(proc.stderr, log, progress)),
        ]
        for reader in readers:
            reader.start()
        try:
            proc.wait(timeout=options.up_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise VagrantError(f"building the {options.build} box timed out; see {log_path}") from None
        finally:
            for reader in readers:
                reader.join()
    values = dict(line.split("=", 1) for line in b"".join(stdout).decode().splitlines() if "=" in line)
    if proc.returncode != 0 or "BOX_NAME" not in values:
        raise VagrantError(f"vagrant/build_box.sh failed (exit {proc.returncode}):\n{tail(log_path, 30)}")
    box_file = Path(values["BOX_FILE"])
    return values["BOX_NAME"], box_file


def _copy_lines(source: IO[bytes] | None, log: IO[bytes], progress: Callable[[str], None] | None) -> None:
    """Copy ``source`` into ``log`` line by line, handing ``build_box: ...`` lines to ``progress``."""
    if source is None:
        return
    for line in source:
        log.write(line)
        log.flush()
        text = line.decode(errors="replace").rstrip()
        if progress is not None and text.startswith(BUILD_STEP_PREFIX):
            progress(text.removeprefix(BUILD_STEP_PREFIX))


def ensure_box(
    run: VagrantRun, options: VagrantOptions, *, box: str, box_file: Path | None, timings: dict[str, float]
) -> None:
    """Import ``box_file`` as ``box`` when Vagrant does not list it (under a lock)."""
    from filelock import FileLock

    if box_file is None:
        return
    key = hashlib.sha256(str(options.vagrant_home or "~").encode()).hexdigest()[:8]
    with FileLock(str(options.cache_dir / f"box-import-{key}.lock")):
        listed = run(["box", "list", "--machine-readable"], timeout=300)
        names = {
            fields[3]
            for fields in (line.split(",") for line in listed.splitlines())
            if len(fields) >= 4 and fields[2] == "box-name"
        }
        if box in names:
            return
        if not box_file.is_file():
            raise VagrantError(f"box file {box_file} does not exist")
        t0 = time.monotonic()
        run(["box", "add", "--force", "--name", box, str(box_file)], timeout=1200)
        timings["box_add"] = round(time.monotonic() - t0, 1)


def bring_up(
    run: VagrantRun, options: VagrantOptions, *, box: str, box_record: Path, timings: dict[str, float]
) -> None:
    """``vagrant up`` (first boot of a box under a lock: it uploads the box volume).

    A machine kept from an earlier session is first restored to its clean snapshot, then
    provisioned so this run's package and token are deployed: ``vagrant provision`` when it
    runs (``up --provision`` on a running libvirt machine deploys twice, about 30 s more
    under TCG), ``up --provision`` when it is off. ``box_record`` names the box the machine
    was made from; a kept machine of another box (rebuilt since, or another variant) would
    run the old desktop, so it is destroyed and made anew.
    """
    from filelock import FileLock

    status = run(["status", "--machine-readable"], timeout=300, check=False)
    exists = re.search(r",state,(?!not_created)", status) is not None
    if exists and box_record.is_file() and box_record.read_text() != box:
        run(["destroy", "-f"], timeout=options.up_timeout)
        exists = False
    booted_marker = (
        options.cache_dir
        / "booted"
        / hashlib.sha256(f"{box}|{options.libvirt_uri}|{options.storage_pool}".encode()).hexdigest()[:16]
    )
    if exists and SNAPSHOT in run(["snapshot", "list"], timeout=300, check=False):
        # A kept VM is dirty from its last session: back to the clean desktop first, so
        # the snapshot re-taken after redeploying (new token, this package) is clean too.
        restore = ["snapshot", "restore", "--no-provision", SNAPSHOT]
        run(restore, timeout=options.up_timeout)
    if not exists:
        args = ["up"]
    elif re.search(r",state,running\b", status):  # a snapshot restore leaves it running
        args = ["provision"]
    else:
        args = ["up", "--provision"]
    t0 = time.monotonic()
    if booted_marker.exists() or options.vagrant_provider != "libvirt":
        run(args, timeout=options.up_timeout)
    else:
        booted_marker.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(booted_marker) + ".lock"):
            run(args, timeout=options.up_timeout)
            booted_marker.write_text(box)
    box_record.write_text(box)
    timings["up"] = round(time.monotonic() - t0, 1)
