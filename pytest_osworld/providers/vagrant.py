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
``ready_timeout``   seconds for readiness after a restore (300);
``image``           ``osworld``: boot OSWorld's own VM image instead of a box
                    (:mod:`~pytest_osworld.providers.osworld_image`), with
``image_file``      its ``Ubuntu.qcow2`` or the zip of it as downloaded;
``server``          with ``image``: ``ours`` (default) deploys our guest server with a per-VM
                    token into the image (``vagrant/deploy_image.sh``); ``osworld`` talks
                    to the image's own server (no token: needs ``netns`` or
                    ``vm_network=host-only``);
``vm_network``      ``nat`` (default) or ``host-only``: the management network has no
                    route out (an isolated libvirt network). This, not the shared
                    ``network=`` option (refused here), sets the VM's network; steps and
                    getters that load a live page run on ``nat`` without ``netns``.
``session``         the desktop session in our boxes: ``openbox`` (default) or ``gnome``
                    (GNOME Shell as on Ubuntu 22.04, the local provider's default; only
                    the full box has it, so ``build=minimal`` or ``minimal=1`` refuse it).

An option that would be ignored in the mode given is refused with the options (a usage
error): ``box`` with ``build``; ``minimal`` without ``provision``; ``provision`` with
``image``; ``libvirt_uri``, ``libvirt_driver``, ``storage_pool``, ``vm_network=host-only``,
``image`` or ``build`` with ``vagrant_provider=virtualbox``; ``host_port`` with libvirt;
``guest_port`` other than 5000 with ``server=osworld``; ``session`` with ``image``.

This module owns the provider's lifecycle and its snapshot handling (start, the
``osworld-ready`` snapshot, restore before each task, destroy) and runs every ``vagrant``
command. Beside it: options, machine names and the Vagrantfile's environment in
:mod:`~pytest_osworld.providers.vagrant_config`; box build, import and first boot in
:mod:`~pytest_osworld.providers.vagrant_box`; reaching the guest (relay, readiness) in
:mod:`~pytest_osworld.providers.vagrant_guest`; log tails and libvirt diagnostics in
:mod:`~pytest_osworld.providers.vagrant_diagnostics`. Their public names are re-exported here.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_osworld.guest_client.client import GuestClient
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig
from pytest_osworld.providers.osworld_image import ImportedImage, prepare_image
from pytest_osworld.providers.vagrant_box import (
    VagrantRun,
    bring_up,
    build_box,
    ensure_box,
    package_tarball,
)
from pytest_osworld.providers.vagrant_config import (
    DEFAULT_VAGRANT_DIR,
    PACKAGE_DIR,
    SNAPSHOT,
    VagrantError,
    VagrantOptions,
    machine_name,
    vagrant_command,
    vagrant_env,
)
from pytest_osworld.providers.vagrant_diagnostics import (
    CONSOLE_LINES,
    VAGRANT_LINES,
    clean_output,
    explain_domstate,
    libvirt_state,
    tail,
    vagrant_status_state,
)
from pytest_osworld.providers.vagrant_guest import GuestLink, sync_clock

__all__ = [
    "CONSOLE_LINES",
    "DEFAULT_VAGRANT_DIR",
    "PACKAGE_DIR",
    "SNAPSHOT",
    "VAGRANT_LINES",
    "GuestLink",
    "VagrantError",
    "VagrantOptions",
    "VagrantProvider",
    "VagrantRun",
    "clean_output",
    "explain_domstate",
    "machine_name",
    "package_tarball",
    "tail",
    "vagrant_command",
    "vagrant_env",
]

#: Said before a run's first VM when its box must be built first.
BOX_BUILDING = (
    "building the {variant} Vagrant box (vagrant/build_box.sh: Debian from the host's mirror, "
    "the desktop's packages; several minutes, once per box content)"
)
#: Said when that build is done.
BOX_BUILT = "the Vagrant box {name} is built ({seconds:.0f} s); later runs reuse it"


class VagrantProvider(Provider):
    """One Vagrant VM per worker; a restore is ``vagrant snapshot restore``."""

    name = "vagrant"
    network_modes: tuple[str, ...] = ()
    live_view = True
    network_instead = (
        "a VM's network is set by the vagrant provider's vm_network option: pass --provider-arg "
        "vm_network=host-only for an isolated libvirt network with no route out, or leave "
        "vm_network=nat (the default) for NAT with a route out through the hypervisor"
    )

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self.options = VagrantOptions.parse(config.options)
        self.machine = machine_name(config.worker_id)
        self._box = self.options.box or ""
        self._box_file = self.options.box_file
        self._work: Path | None = None
        self._machine_dir = self.options.cache_dir / "machines" / self.machine
        self._client: GuestClient | None = None
        self._guest = GuestLink(netns=self.options.netns, relay_socket=self.relay_socket, fail=self._failure)
        self._lock: Any = None
        self._env: dict[str, str] = {}
        self._image: ImportedImage | None = None
        self.timings: dict[str, float] = {}

    # -- Provider API ------------------------------------------------------------------------

    @classmethod
    def check_options(cls, options: dict[str, str]) -> None:
        """Raise ``ValueError`` naming a bad ``--provider-arg`` before the run starts."""
        VagrantOptions.parse(options)

    @classmethod
    def prepare(cls, config: ProviderConfig, say: Callable[[str], None]) -> None:
        """Build the box the run needs (``build=``) before any worker starts, passing on the
        build script's steps and its time; a box already built for the same inputs is
        found in a second and nothing is said."""
        options = VagrantOptions.parse(config.options)
        if not options.build:
            return
        started = time.monotonic()
        steps: list[str] = []

        def step(line: str) -> None:
            if not steps and not line.startswith("cached:"):
                say(BOX_BUILDING.format(variant=options.build))
            steps.append(line)
            if not line.startswith("cached:"):
                say(f"build_box: {line}")

        name, _ = build_box(options, options.cache_dir / "machines" / "prepare", progress=step)
        if not any(line.startswith("cached:") for line in steps):
            say(BOX_BUILT.format(name=name, seconds=time.monotonic() - started))

    @classmethod
    def check_live_view(cls, options: dict[str, str]) -> None:
        """The live view needs our guest server in the VM: not ``server=osworld``."""
        if options.get("server") == "osworld":
            raise ValueError(
                "the vagrant provider's server=osworld talks to the image's own server, which "
                "cannot bridge its screen to the live view: use server=ours (the default)"
            )

    @property
    def live_network(self) -> bool:
        """The VM reaches the live web on NAT (``vm_network=nat``) outside a ``netns``: a
        namespace made by ``vagrant/netns.sh`` has no route out, nor has ``host-only``."""
        return self.options.vm_network == "nat" and self.options.netns is None

    @property
    def top_bar_clock(self) -> bool:
        """OSWorld's Ubuntu image and our boxes' ``session=gnome`` show GNOME's top bar."""
        return self.options.image is not None or self.options.session == "gnome"

    def describe(self) -> str:
        """Provider, box, hypervisor and screen, for the report header."""
        width, height = self.config.screen_size
        where = self.options.vagrant_provider
        if where == "libvirt":
            where += f" {self.options.libvirt_driver} {self.options.libvirt_uri}"
        if self.options.image:
            source = self._image.describe() if self._image else f"OSWorld image {self.options.image_file}"
            return f"vagrant ({self.machine}, {source}, {self._server_note()}, {where}, {width}x{height})"
        box = self._box or f"<built {self.options.build}>"
        return f"vagrant ({self.machine}, box {box}, {where}, {width}x{height})"

    def _server_note(self) -> str:
        """Which server answers in an OSWorld image, and what guards it."""
        if self.options.server == "ours":
            return "server ours (per-VM token)"
        where = f"network namespace {self.options.netns}" if self.options.netns else "host-only network"
        return f"server osworld (the image's own: NO TOKEN, reachable only on a {where})"

    @property
    def console_log(self) -> Path:
        """The VM's serial console, written by libvirt (or VirtualBox)."""
        return self._machine_dir / "console.log"

    @property
    def vagrant_log(self) -> Path:
        """Everything the ``vagrant`` commands printed this session."""
        return self._machine_dir / "vagrant.log"

    @property
    def relay_socket(self) -> Path:
        """The unix socket relayed into the namespace to the guest's TCP port."""
        return self._machine_dir / "guest.sock"

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
            return libvirt_state(self.options, self.machine)
        try:
            status = self._vagrant(["status", "--machine-readable"], timeout=120, check=False)
        except VagrantError:
            return None
        return vagrant_status_state(status)

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
        token_file: Path | None = None
        package: Path | None = None
        if self.options.server == "ours":
            self._guest.token = secrets.token_urlsafe(32)
            token_file = self._work / "token"
            token_file.write_text(self._guest.token)
            token_file.chmod(0o600)
            package = package_tarball(self._work / "pytest_osworld.tar.gz")
        if self.options.build:
            self._box, self._box_file = build_box(self.options, self._machine_dir)
        if self.options.image_file is not None:
            self._image = prepare_image(self.options.image_file, self.options.cache_dir)
            self._box, self._box_file = self._image.box, self._image.box_file
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
        ensure_box(self._vagrant, self.options, box=self._box, box_file=self._box_file, timings=self.timings)
        bring_up(
            self._vagrant,
            self.options,
            box=self._box,
            box_record=self._machine_dir / "box",
            timings=self.timings,
        )
        self._guest.address = self._guest_address(host_port)
        self._guest.open_relay()
        self._client = self._guest.wait_ready(self.options.up_timeout, "after vagrant up")
        with contextlib.suppress(VagrantError):
            self._vagrant(["snapshot", "delete", SNAPSHOT], timeout=300, check=False)
        t0 = time.monotonic()
        self._vagrant(["snapshot", "save", SNAPSHOT], timeout=600)
        self.timings["snapshot_save"] = round(time.monotonic() - t0, 1)
        self.timings["start"] = round(time.monotonic() - started, 1)

    def _restore_impl(self, snapshot: str) -> Environment:
        if self._work is None or self._guest.address is None:
            raise VagrantError("vagrant provider: restore() called before start()")
        started = time.monotonic()
        if self._client is not None:
            self._client.close()
            self._client = None
        self._vagrant(["snapshot", "restore", "--no-provision", SNAPSHOT], timeout=self.options.ready_timeout)
        restored = time.monotonic() - started
        client = self._guest.wait_ready(self.options.ready_timeout, f"after restoring snapshot {SNAPSHOT!r}")
        self._client = client
        sync_clock(client)
        width, height = self.config.screen_size
        image = f"vagrant box {self._box}" if self._box else ""
        if self._image is not None:
            image = f"{self._image.describe()}, {self._server_note()}"
        return Environment(
            guest=client,
            name=self.machine,
            description=self.describe(),
            image=image,
            client_password="password",
            screen_size=(width, height),
            extra={
                "snapshot": snapshot,
                "vagrant_snapshot": SNAPSHOT,
                "box": self._box,
                "image_sha256": self._image.sha256 if self._image else None,
                "server": self.options.server,
                # VirtualBox forwards only the guest port.
                "chromium_cdp_url": self._guest.cdp_url()
                if self.options.vagrant_provider == "libvirt"
                else None,
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
            self._guest.close()
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

    def _guest_address(self, host_port: int | None) -> tuple[str, int]:
        """Where the guest server listens, as seen from inside the namespace (or host)."""
        if self.options.vagrant_provider == "virtualbox":
            return ("127.0.0.1", host_port or 15000)
        config = self._vagrant(["ssh-config", self.machine], timeout=300)
        match = re.search(r"^\s*HostName\s+(\S+)", config, re.MULTILINE)
        if match is None:
            raise self._failure("`vagrant ssh-config` gave no HostName for the VM")
        return (match.group(1), self.options.guest_port)

    def _release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()
