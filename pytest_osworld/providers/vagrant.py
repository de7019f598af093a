"""The ``vagrant`` provider: one Vagrant-managed VM per xdist worker, reset by snapshot.

Each worker owns the machine ``osworld-<worker>`` of ``vagrant/Vagrantfile`` (its state in
``<cache_dir>/machines/<name>``, through ``VAGRANT_DOTFILE_PATH``). Once per session the
provider imports the box if needed and brings the machine up (under a file lock while the
box has never been booted, since the first boot also uploads the box into libvirt's
storage pool); the first ``up`` deploys this run's ``pytest_osworld`` package and a fresh
guest token (``vagrant/deploy.sh``), which start the desktop session inside the VM. When
the guest's ``/health`` says ready, the provider saves the snapshot ``osworld-ready``;
before each task it restores it (``vagrant snapshot restore --no-provision``) and waits
for ``/health`` again. At the end it destroys the machine unless ``keep_vms=1``.

The guest server listens on TCP (``guest_port``, 5000) inside the VM. Without ``netns``
the provider talks to ``http://<vm address>:<port>`` directly (for VirtualBox, a
forwarded loopback port). With ``netns=NAME`` (libvirtd and the VMs live in that network
namespace, see ``vagrant/netns.sh``), every ``vagrant`` command runs through
``ip netns exec NAME`` and the guest is reached through a unix socket relayed by a
``socat`` running inside the namespace: nothing on the host side touches the VM's
private addresses.

Options (``--provider-arg KEY=VALUE``, all strings):

``box``             box name (required unless ``build`` is given);
``box_file``        a ``.box`` file imported as ``box`` when Vagrant does not have it;
``build``           ``minimal`` or ``full``: build the offline Debian box with
                    ``vagrant/build_box.sh`` (cached by content) and use it;
``memory``          MiB (2048); ``cpus`` (2);
``vagrant_provider`` ``libvirt`` (default) or ``virtualbox``;
``libvirt_uri``     e.g. ``qemu:///system`` (default) or ``qemu+ssh://user@host/system``;
``libvirt_driver``  ``kvm`` or ``qemu`` (software emulation); default ``kvm`` when the
                    kvm_intel or kvm_amd module is loaded, else ``qemu``;
``storage_pool``    libvirt storage pool (``default``; ``osworld`` under ``vagrant/netns.sh``);
``netns``           network namespace running libvirtd (see above);
``keep_vms``        ``1`` keeps the VM at the end (the next session reuses it);
``provision``       ``1`` runs ``vagrant/provision.sh`` at the first ``up`` (base boxes,
                    e.g. Ubuntu 22.04; ``minimal=1`` with it installs only the core);
``cache_dir``       machines' state, built boxes (``$XDG_CACHE_HOME/pytest-osworld/vagrant``);
``vagrant_home``    ``VAGRANT_HOME`` for box storage (default: Vagrant's own);
``vagrant_dir``     the directory holding the Vagrantfile (default: the repository's
                    ``vagrant/``);
``guest_port``      the guest server's port inside the VM (5000);
``host_port``       VirtualBox: host loopback port forwarded to it (default 15000 + worker);
``up_timeout``      seconds for box build, import, ``up`` and first readiness (1800);
``ready_timeout``   seconds for readiness after a restore (300).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import secrets
import shutil
import signal
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_osworld.client import GuestClient
from pytest_osworld.errors import EnvironmentFailure, GuestError
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig

#: The package deployed into each VM (this source tree or installed copy).
PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: The repository's ``vagrant/`` directory, when running from a source tree.
DEFAULT_VAGRANT_DIR = PACKAGE_DIR.parent / "vagrant"
#: The snapshot saved once the desktop is ready; every task restores it.
SNAPSHOT = "osworld-ready"
#: Lines of the serial console and of Vagrant's output appended to errors.
CONSOLE_LINES = 40
VAGRANT_LINES = 25

_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_BOX_RE = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?$")
_OPTIONS = {
    "box",
    "box_file",
    "build",
    "memory",
    "cpus",
    "vagrant_provider",
    "libvirt_uri",
    "libvirt_driver",
    "storage_pool",
    "netns",
    "keep_vms",
    "provision",
    "minimal",
    "cache_dir",
    "vagrant_home",
    "vagrant_dir",
    "guest_port",
    "host_port",
    "up_timeout",
    "ready_timeout",
}


class VagrantError(EnvironmentFailure):
    """A Vagrant command, the VM or its guest server failed; the message has the logs."""


def _default_driver() -> str:
    """``kvm`` where a hardware KVM module is loaded, else ``qemu`` (TCG)."""
    modules = Path("/sys/module")
    return "kvm" if (modules / "kvm_intel").exists() or (modules / "kvm_amd").exists() else "qemu"


def _flag(options: dict[str, str], key: str) -> bool:
    raw = options.get(key, "0").strip().lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"vagrant provider option {key}={raw!r}: use 1 or 0")


def _number(options: dict[str, str], key: str, default: float, *, integer: bool = False) -> float:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = float(int(raw)) if integer else float(raw)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ValueError(f"vagrant provider option {key}={raw!r}: not {kind}") from None
    if value <= 0:
        raise ValueError(f"vagrant provider option {key}={raw!r}: must be positive")
    return value


@dataclass(frozen=True)
class VagrantOptions:
    """The provider's settings, parsed and validated from ``ProviderConfig.options``."""

    cache_dir: Path
    vagrant_dir: Path
    box: str | None = None
    box_file: Path | None = None
    build: str | None = None
    memory: int = 2048
    cpus: int = 2
    vagrant_provider: str = "libvirt"
    libvirt_uri: str = "qemu:///system"
    libvirt_driver: str = "qemu"
    storage_pool: str = "default"
    netns: str | None = None
    keep_vms: bool = False
    provision: bool = False
    minimal: bool = False
    vagrant_home: Path | None = None
    guest_port: int = 5000
    host_port: int | None = None
    up_timeout: float = 1800.0
    ready_timeout: float = 300.0

    @classmethod
    def parse(cls, options: dict[str, str]) -> VagrantOptions:
        """Validate ``options``; a bad value raises ``ValueError`` naming the option."""
        unknown = set(options) - _OPTIONS
        if unknown:
            raise ValueError(
                f"unknown vagrant provider option(s): {', '.join(sorted(unknown))} "
                f"(known: {', '.join(sorted(_OPTIONS))})"
            )
        box = options.get("box") or None
        build = options.get("build") or None
        if build is not None and build not in ("minimal", "full"):
            raise ValueError(f"vagrant provider option build={build!r}: use minimal or full")
        if box is None and build is None:
            raise ValueError("the vagrant provider needs --provider-arg box=NAME or build=minimal|full")
        if box is not None and not _BOX_RE.match(box):
            raise ValueError(f"vagrant provider option box={box!r}: not a box name (owner/name)")
        box_file = Path(options["box_file"]).expanduser() if options.get("box_file") else None
        if box_file is not None and box is None:
            raise ValueError("vagrant provider option box_file needs box=NAME (the name to import it as)")
        vagrant_provider = options.get("vagrant_provider", "libvirt")
        if vagrant_provider not in ("libvirt", "virtualbox"):
            raise ValueError(
                f"vagrant provider option vagrant_provider={vagrant_provider!r}: use libvirt or virtualbox"
            )
        uri = options.get("libvirt_uri", "qemu:///system")
        if not re.match(r"^qemu(\+[a-z]+)?://[^\s]*/(system|session)(\?[^\s]*)?$", uri):
            raise ValueError(
                f"vagrant provider option libvirt_uri={uri!r}: expected qemu:///system or "
                f"qemu+ssh://user@host/system"
            )
        driver = options.get("libvirt_driver") or _default_driver()
        if driver not in ("kvm", "qemu"):
            raise ValueError(f"vagrant provider option libvirt_driver={driver!r}: use kvm or qemu")
        for key in ("storage_pool", "netns"):
            value = options.get(key)
            if value is not None and not _NAME_RE.match(value):
                raise ValueError(f"vagrant provider option {key}={value!r}: letters, digits, _ . - only")
        port = int(_number(options, "guest_port", 5000, integer=True))
        if port > 65535:
            raise ValueError(f"vagrant provider option guest_port={port}: not a port")
        host_port = int(_number(options, "host_port", 1, integer=True)) if "host_port" in options else None
        if host_port is not None and host_port > 65535:
            raise ValueError(f"vagrant provider option host_port={host_port}: not a port")
        default_cache = (
            Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-osworld" / "vagrant"
        )
        return cls(
            cache_dir=Path(options.get("cache_dir") or default_cache).expanduser(),
            vagrant_dir=Path(options.get("vagrant_dir") or DEFAULT_VAGRANT_DIR).expanduser(),
            box=box,
            box_file=box_file,
            build=build,
            memory=int(_number(options, "memory", 2048, integer=True)),
            cpus=int(_number(options, "cpus", 2, integer=True)),
            vagrant_provider=vagrant_provider,
            libvirt_uri=uri,
            libvirt_driver=driver,
            storage_pool=options.get("storage_pool") or "default",
            netns=options.get("netns") or None,
            keep_vms=_flag(options, "keep_vms"),
            provision=_flag(options, "provision"),
            minimal=_flag(options, "minimal"),
            vagrant_home=Path(options["vagrant_home"]).expanduser() if options.get("vagrant_home") else None,
            guest_port=port,
            host_port=host_port,
            up_timeout=_number(options, "up_timeout", 1800.0),
            ready_timeout=_number(options, "ready_timeout", 300.0),
        )


def machine_name(worker_id: str) -> str:
    """The VM of a worker: ``osworld-gw0``, ``osworld-main``."""
    safe = re.sub(r"[^A-Za-z0-9-]", "-", worker_id).strip("-") or "main"
    return f"osworld-{safe}"


def vagrant_env(
    options: VagrantOptions,
    *,
    name: str,
    box: str,
    dotfile_dir: Path,
    console_log: Path,
    package: Path | None,
    token_file: Path | None,
    screen: tuple[int, int],
    host_port: int | None,
    base: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment of every ``vagrant`` command: what ``vagrant/Vagrantfile`` reads."""
    env = dict(os.environ if base is None else base)
    env.update(
        {
            "VAGRANT_DOTFILE_PATH": str(dotfile_dir),
            "VAGRANT_DEFAULT_PROVIDER": options.vagrant_provider,
            "VAGRANT_CHECKPOINT_DISABLE": "1",
            "VAGRANT_BOX_UPDATE_CHECK_DISABLE": "1",
            "VAGRANT_NO_COLOR": "1",
            "OSWORLD_VM_NAME": name,
            "OSWORLD_BOX": box,
            "OSWORLD_MEMORY": str(options.memory),
            "OSWORLD_CPUS": str(options.cpus),
            "OSWORLD_LIBVIRT_URI": options.libvirt_uri,
            "OSWORLD_LIBVIRT_DRIVER": options.libvirt_driver,
            "OSWORLD_STORAGE_POOL": options.storage_pool,
            "OSWORLD_CONSOLE_LOG": str(console_log),
            "OSWORLD_SCREEN": f"{screen[0]}x{screen[1]}",
            "OSWORLD_GUEST_PORT": str(options.guest_port),
            "OSWORLD_PROVISION": "1" if options.provision else "0",
            "OSWORLD_MINIMAL": "1" if options.minimal else "0",
            "OSWORLD_BOOT_TIMEOUT": str(int(options.up_timeout)),
        }
    )
    if options.vagrant_home is not None:
        env["VAGRANT_HOME"] = str(options.vagrant_home)
    optional = {"OSWORLD_PACKAGE": package, "OSWORLD_TOKEN_FILE": token_file, "OSWORLD_HOST_PORT": host_port}
    for key, value in optional.items():
        env.pop(key, None)
        if value is not None:
            env[key] = str(value)
    return env


def vagrant_command(netns: str | None, args: list[str], vagrant: str = "vagrant") -> list[str]:
    """A ``vagrant`` command line, run inside ``netns`` when one is given."""
    prefix = ["ip", "netns", "exec", netns] if netns else []
    return [*prefix, vagrant, *args]


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


def clean_output(text: str) -> str:
    """Terminal output as a log: colours dropped, ``\\r``-redrawn progress lines collapsed."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    lines = []
    for line in text.split("\n"):
        parts = [part for part in line.split("\r") if part.strip()]
        lines.append(parts[-1] if parts else "")
    return "\n".join(lines)


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a text file (empty when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, io.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 200_000))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(clean_output(text).splitlines()[-lines:])


#: What libvirt's ``domstate --reason`` reasons mean for a VM that should be running.
_DOMSTATE_REASONS = {
    ("shut off", "destroyed"): "powered off during the task",
    ("shut off", "shutdown"): "shut down from inside the guest during the task",
    ("shut off", "crashed"): "stopped by a crash during the task",
    ("shut off", "failed"): "QEMU failed during the task",
    ("crashed", "panicked"): "the guest kernel panicked",
}


def explain_domstate(text: str) -> str:
    """``virsh domstate --reason`` output (``shut off (destroyed)``) as a phrase for errors."""
    match = re.match(r"^\s*([a-z ]+?)\s*(?:\(([^)]*)\))?\s*$", text.splitlines()[0] if text else "")
    if match is None:
        return text.strip()
    state, reason = match.group(1), (match.group(2) or "").strip()
    meaning = _DOMSTATE_REASONS.get((state, reason))
    if meaning is not None:
        return f"{state} ({meaning}; libvirt reason: {reason})"
    if reason:
        return f"{state} (libvirt reason: {reason})"
    return state


class VagrantProvider(Provider):
    """One Vagrant VM per worker; a restore is ``vagrant snapshot restore``."""

    name = "vagrant"

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self.options = VagrantOptions.parse(config.options)
        self.machine = machine_name(config.worker_id)
        self._box = self.options.box or ""
        self._box_file = self.options.box_file
        self._work: Path | None = None
        self._machine_dir = self.options.cache_dir / "machines" / self.machine
        self._relay: subprocess.Popen[bytes] | None = None
        self._client: GuestClient | None = None
        self._address: tuple[str, int] | None = None
        self._lock: Any = None
        self._token = ""
        self._env: dict[str, str] = {}
        self.timings: dict[str, float] = {}

    # -- Provider API ------------------------------------------------------------------------

    @classmethod
    def check_options(cls, options: dict[str, str]) -> None:
        """Raise ``ValueError`` naming a bad ``--provider-arg`` before the run starts."""
        VagrantOptions.parse(options)

    def describe(self) -> str:
        """Provider, box, hypervisor and screen, for the report header."""
        width, height = self.config.screen_size
        where = self.options.vagrant_provider
        if where == "libvirt":
            where += f" {self.options.libvirt_driver} {self.options.libvirt_uri}"
        box = self._box or f"<built {self.options.build}>"
        return f"vagrant ({self.machine}, box {box}, {where}, {width}x{height})"

    @property
    def console_log(self) -> Path:
        """The VM's serial console, written by libvirt (or VirtualBox)."""
        return self._machine_dir / "console.log"

    @property
    def vagrant_log(self) -> Path:
        """Everything the ``vagrant`` commands printed this session."""
        return self._machine_dir / "vagrant.log"

    def logs(self) -> str:
        """The tails of the VM's serial console and of Vagrant's output."""
        parts = []
        console = tail(self.console_log, CONSOLE_LINES)
        if console:
            parts.append(f"--- serial console ({self.console_log}) ---\n{console}")
        output = tail(self.vagrant_log, VAGRANT_LINES)
        if output:
            parts.append(f"--- vagrant ({self.vagrant_log}) ---\n{output}")
        return "\n".join(parts)

    def diagnose(self) -> str:
        """The VM's state when it is no longer running (powered off, paused, gone), else ''.

        Asked after the guest stopped answering during a task. A guest shutting itself
        down drops its server a moment before the domain stops, so a running domain is
        polled for up to five seconds before it is called alive.
        """
        if self._work is None:
            return ""
        deadline = time.monotonic() + 5.0
        while True:
            state = self.vm_state()
            if state is None or not state.startswith("running") or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if state is None or state.startswith("running"):
            return ""
        return f"the VM {self.machine} is {state}"

    def vm_state(self) -> str | None:
        """The domain's state and what it means, e.g. ``shut off (powered off ...)``.

        Asked of libvirt (``virsh domstate --reason``, inside ``netns``) for libvirt
        machines, else of ``vagrant status``; ``None`` when neither could say.
        """
        if self.options.vagrant_provider == "libvirt" and shutil.which("virsh"):
            args = ["virsh", "-c", self.options.libvirt_uri, "domstate", "--reason", self.machine]
            argv = [*(["ip", "netns", "exec", self.options.netns] if self.options.netns else []), *args]
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
            except (OSError, subprocess.TimeoutExpired):
                return None
            if proc.returncode == 0 and proc.stdout.strip():
                return explain_domstate(proc.stdout.strip())
            if "failed to get domain" in proc.stderr or "Domain not found" in proc.stderr:
                return "gone (its libvirt domain no longer exists)"
            return None
        try:
            status = self._vagrant(["status", "--machine-readable"], timeout=120, check=False)
        except VagrantError:
            return None
        match = re.search(r",state,([A-Za-z_]+)", status)
        if match is None:
            return None
        state = match.group(1)
        return "running" if state == "running" else f"{state} (vagrant status)"

    def _start_impl(self) -> None:
        from filelock import FileLock, Timeout

        if shutil.which("vagrant") is None:
            raise VagrantError("vagrant is not installed; run scripts/install-vagrant.sh")
        if self.options.netns and shutil.which("socat") is None:
            raise VagrantError("the netns option needs socat; run scripts/install-vagrant.sh")
        if not (self.options.vagrant_dir / "Vagrantfile").is_file():
            raise VagrantError(
                f"no Vagrantfile in {self.options.vagrant_dir}; set --provider-arg vagrant_dir=DIR"
            )
        started = time.monotonic()
        self._machine_dir.mkdir(parents=True, exist_ok=True)
        # One session at a time per machine: a second run with the same worker id waits
        # briefly, then errors instead of fighting over the VM.
        self._lock = FileLock(str(self._machine_dir.parent / f"{self.machine}.lock"))
        try:
            self._lock.acquire(timeout=30)
        except Timeout:
            raise VagrantError(
                f"VM {self.machine} is in use by another pytest session (lock {self._lock.lock_file})"
            ) from None
        try:
            self._start_locked(started)
        except BaseException:
            self._release()
            raise

    def _start_locked(self, started: float) -> None:
        self._work = self._machine_dir / "run"
        shutil.rmtree(self._work, ignore_errors=True)
        self._work.mkdir(parents=True)
        self.vagrant_log.write_bytes(b"")
        self._token = secrets.token_urlsafe(32)
        token_file = self._work / "token"
        token_file.write_text(self._token)
        token_file.chmod(0o600)
        package = package_tarball(self._work / "pytest_osworld.tar.gz")
        if self.options.build:
            self._box = self._build_box()
        self.timings["build_box"] = round(time.monotonic() - started, 1)
        host_port = self.options.host_port
        if self.options.vagrant_provider == "virtualbox" and host_port is None:
            digits = re.sub(r"\D", "", self.config.worker_id) or "0"
            host_port = 15000 + int(digits)
        self._env = vagrant_env(
            self.options,
            name=self.machine,
            box=self._box,
            dotfile_dir=self._machine_dir / "dotvagrant",
            console_log=self.console_log,
            package=package,
            token_file=token_file,
            screen=self.config.screen_size,
            host_port=host_port,
        )
        self._ensure_box()
        self._up()
        self._address = self._guest_address(host_port)
        self._open_relay()
        self._client = self._wait_ready(self.options.up_timeout, "after vagrant up")
        with contextlib.suppress(VagrantError):
            self._vagrant(["snapshot", "delete", SNAPSHOT], timeout=300, check=False)
        t0 = time.monotonic()
        self._vagrant(["snapshot", "save", SNAPSHOT], timeout=600)
        self.timings["snapshot_save"] = round(time.monotonic() - t0, 1)
        self.timings["start"] = round(time.monotonic() - started, 1)

    def _restore_impl(self, snapshot: str) -> Environment:
        if self._work is None or self._address is None:
            raise VagrantError("vagrant provider: restore() called before start()")
        started = time.monotonic()
        if self._client is not None:
            self._client.close()
            self._client = None
        self._vagrant(["snapshot", "restore", "--no-provision", SNAPSHOT], timeout=self.options.ready_timeout)
        restored = time.monotonic() - started
        client = self._wait_ready(self.options.ready_timeout, f"after restoring snapshot {SNAPSHOT!r}")
        self._client = client
        self._sync_clock(client)
        width, height = self.config.screen_size
        return Environment(
            guest=client,
            name=self.machine,
            description=self.describe(),
            image=f"vagrant box {self._box}" if self._box else "",
            client_password="password",
            screen_size=(width, height),
            extra={
                "snapshot": snapshot,
                "vagrant_snapshot": SNAPSHOT,
                "box": self._box,
                "console_log": str(self.console_log),
                "restore_seconds": round(restored, 3),
                "ready_seconds": round(time.monotonic() - started, 3),
            },
        )

    def _stop_impl(self) -> None:
        try:
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._work is not None and not self.options.keep_vms:
                t0 = time.monotonic()
                self._vagrant(["destroy", "-f"], timeout=600)
                self.timings["destroy"] = round(time.monotonic() - t0, 1)
        finally:
            self._close_relay()
            if self._work is not None:
                shutil.rmtree(self._work, ignore_errors=True)
                self._work = None
            self._release()

    # -- vagrant -----------------------------------------------------------------------------

    def _vagrant(self, args: list[str], *, timeout: float, check: bool = True) -> str:
        """Run one ``vagrant`` command (output appended to the log); return its output."""
        argv = vagrant_command(self.options.netns, args)
        started = time.monotonic()
        with self.vagrant_log.open("a", encoding="utf-8") as log:
            log.write(f"\n$ {' '.join(argv)}   [{time.strftime('%H:%M:%S')}]\n")
            log.flush()
            proc = subprocess.Popen(
                argv,
                cwd=str(self.options.vagrant_dir),
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                out, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                out, _ = proc.communicate()
                log.write(clean_output(out.decode("utf-8", "replace")))
                raise self._failure(f"`vagrant {' '.join(args)}` timed out after {timeout:g} s") from None
            text = clean_output(out.decode("utf-8", "replace"))
            log.write(text)
            log.write(f"[exit {proc.returncode} after {time.monotonic() - started:.1f} s]\n")
        if check and proc.returncode != 0:
            raise self._failure(f"`vagrant {' '.join(args)}` failed (exit {proc.returncode})")
        return text

    def _failure(self, message: str) -> VagrantError:
        logs = self.logs()
        return VagrantError(f"{self.machine}: {message}" + (f"\n{logs}" if logs else ""))

    def _build_box(self) -> str:
        """Run ``vagrant/build_box.sh`` (content-cached, locked by the script) for its box."""
        script = self.options.vagrant_dir / "build_box.sh"
        argv = [str(script), "--cache", str(self.options.cache_dir)]
        if self.options.build == "minimal":
            argv.append("--minimal")
        log_path = self._machine_dir / "build_box.log"
        with log_path.open("wb") as log:
            try:
                proc = subprocess.run(
                    argv, stdout=subprocess.PIPE, stderr=log, timeout=self.options.up_timeout, check=False
                )
            except subprocess.TimeoutExpired:
                raise VagrantError(
                    f"building the {self.options.build} box timed out; see {log_path}"
                ) from None
        values = dict(line.split("=", 1) for line in proc.stdout.decode().splitlines() if "=" in line)
        if proc.returncode != 0 or "BOX_NAME" not in values:
            raise VagrantError(f"vagrant/build_box.sh failed (exit {proc.returncode}):\n{tail(log_path, 30)}")
        self._box_file = Path(values["BOX_FILE"])
        return values["BOX_NAME"]

    def _ensure_box(self) -> None:
        """Import ``box_file`` as the box when Vagrant does not list it (under a lock)."""
        from filelock import FileLock

        box_file = self._box_file
        if box_file is None:
            return
        key = hashlib.sha256(str(self.options.vagrant_home or "~").encode()).hexdigest()[:8]
        with FileLock(str(self.options.cache_dir / f"box-import-{key}.lock")):
            listed = self._vagrant(["box", "list", "--machine-readable"], timeout=300)
            names = {
                fields[3]
                for fields in (line.split(",") for line in listed.splitlines())
                if len(fields) >= 4 and fields[2] == "box-name"
            }
            if self._box in names:
                return
            if not box_file.is_file():
                raise VagrantError(f"box file {box_file} does not exist")
            t0 = time.monotonic()
            self._vagrant(["box", "add", "--force", "--name", self._box, str(box_file)], timeout=1200)
            self.timings["box_add"] = round(time.monotonic() - t0, 1)

    def _up(self) -> None:
        """``vagrant up`` (first boot of a box under a lock: it uploads the box volume)."""
        from filelock import FileLock

        status = self._vagrant(["status", "--machine-readable"], timeout=300, check=False)
        exists = re.search(r",state,(?!not_created)", status) is not None
        booted_marker = (
            self.options.cache_dir
            / "booted"
            / hashlib.sha256(
                f"{self._box}|{self.options.libvirt_uri}|{self.options.storage_pool}".encode()
            ).hexdigest()[:16]
        )
        if exists and SNAPSHOT in self._vagrant(["snapshot", "list"], timeout=300, check=False):
            # A kept VM is dirty from its last session: back to the clean desktop first, so
            # the snapshot re-taken after redeploying (new token, this package) is clean too.
            restore = ["snapshot", "restore", "--no-provision", SNAPSHOT]
            self._vagrant(restore, timeout=self.options.up_timeout)
        args = ["up", "--provision"] if exists else ["up"]
        t0 = time.monotonic()
        if booted_marker.exists() or self.options.vagrant_provider != "libvirt":
            self._vagrant(args, timeout=self.options.up_timeout)
        else:
            booted_marker.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(booted_marker) + ".lock"):
                self._vagrant(args, timeout=self.options.up_timeout)
                booted_marker.write_text(self._box)
        self.timings["up"] = round(time.monotonic() - t0, 1)

    def _guest_address(self, host_port: int | None) -> tuple[str, int]:
        """Where the guest server listens, as seen from inside the namespace (or host)."""
        if self.options.vagrant_provider == "virtualbox":
            return ("127.0.0.1", host_port or 15000)
        config = self._vagrant(["ssh-config", self.machine], timeout=300)
        match = re.search(r"^\s*HostName\s+(\S+)", config, re.MULTILINE)
        if match is None:
            raise self._failure("`vagrant ssh-config` gave no HostName for the VM")
        return (match.group(1), self.options.guest_port)

    # -- reaching the guest ------------------------------------------------------------------

    @property
    def relay_socket(self) -> Path:
        """The unix socket relayed into the namespace to the guest's TCP port."""
        return self._machine_dir / "guest.sock"

    def _open_relay(self) -> None:
        if not self.options.netns or self._address is None:
            return
        self._close_relay()
        self.relay_socket.unlink(missing_ok=True)
        host, port = self._address
        argv = [
            "ip",
            "netns",
            "exec",
            self.options.netns,
            "socat",
            f"UNIX-LISTEN:{self.relay_socket},fork,mode=600",
            f"TCP:{host}:{port},connect-timeout=10",
        ]
        self._relay = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while not self.relay_socket.exists():
            if self._relay.poll() is not None or time.monotonic() > deadline:
                raise self._failure(f"the guest relay (socat in netns {self.options.netns}) did not start")
            time.sleep(0.05)

    def _close_relay(self) -> None:
        relay, self._relay = self._relay, None
        if relay is not None and relay.poll() is None:
            relay.terminate()
            try:
                relay.wait(timeout=5)
            except subprocess.TimeoutExpired:
                relay.kill()
                relay.wait()
        self.relay_socket.unlink(missing_ok=True)

    def _new_client(self, timeout: float = 30.0, retries: int = 3) -> GuestClient:
        if self.options.netns:
            return GuestClient(
                unix_socket=str(self.relay_socket), token=self._token, timeout=timeout, retries=retries
            )
        if self._address is None:
            raise VagrantError("vagrant provider: the guest address is unknown")
        host, port = self._address
        return GuestClient(url=f"http://{host}:{port}", token=self._token, timeout=timeout, retries=retries)

    def _wait_ready(self, timeout: float, when: str) -> GuestClient:
        """Poll ``/health`` until the desktop is ready; a new client for the session."""
        deadline = time.monotonic() + timeout
        # Under software emulation the first /health (it starts the pyautogui worker) is slow.
        probe = self._new_client(timeout=60.0, retries=1)
        last = "no answer"
        try:
            while time.monotonic() < deadline:
                if self._relay is not None and self._relay.poll() is not None:
                    self._open_relay()
                try:
                    state = probe.health()
                except GuestError as exc:
                    last = str(exc)
                    probe.close()
                else:
                    if state.get("ready"):
                        return self._new_client()
                    last = f"not ready: {state}"
                time.sleep(0.5)
        finally:
            probe.close()
        raise self._failure(f"the guest server was not ready {timeout:g} s {when}: {last}")

    def _sync_clock(self, client: GuestClient) -> None:
        """A restored VM's clock is the snapshot's; set it to now (best effort, as root)."""
        with contextlib.suppress(GuestError):
            client.execute(
                f"echo password | sudo -S -p '' date -u -s @{time.time():.3f} >/dev/null",
                shell=True,
                timeout=20,
            )

    def _release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()
