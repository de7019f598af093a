"""Several "hosts" on one machine: network namespaces joined to a controller, with sshd.

Used by the distributed-run tests. :class:`NetLab` makes a controller namespace and, per
host, a namespace linked to it by a veth pair (controller ``10.77.N.1``, host
``10.77.N.2``) with its own OpenSSH server: a test-made host key, a test-made client key
as the only authorized key, and a config file of its own (the machine's sshd service and
its config are never used). Commands of the controller run inside its namespace, so all
traffic to the private addresses stays in namespaces the test made. Every host shares the
machine's filesystem. :meth:`NetLab.close` stops the servers, kills what still runs in
the namespaces and deletes them and the keys.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Programs the lab needs (``sshd`` lives in ``/usr/sbin``, often not on a user's PATH).
TOOLS = ("ip", "sshd", "ssh", "ssh-keygen")
SBIN_PATH = os.pathsep.join((os.environ.get("PATH", ""), "/usr/local/sbin", "/usr/sbin", "/sbin"))
#: The privilege-separation directory sshd insists on (Debian's service creates it).
PRIVSEP_DIR = Path("/run/sshd")

SSHD_CONFIG = """\
ListenAddress {address}
Port 22
HostKey {host_key}
AuthorizedKeysFile {authorized_keys}
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 50
"""

SSH_CONFIG = """\
Host *
  User root
  IdentityFile {client_key}
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  BatchMode yes
  ConnectTimeout 10
"""


def skip_reason() -> str | None:
    """Why the lab cannot run here (not root, a program missing), or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, sshd)"
    missing = [tool for tool in TOOLS if shutil.which(tool, path=SBIN_PATH) is None]
    if missing:
        return f"missing {', '.join(missing)}: install iproute2 and openssh-server (scripts/install.sh)"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"`ip netns` is unavailable: {probe.stderr.strip()}"
    return None


def _run(*argv: str) -> None:
    subprocess.run(list(argv), check=True, capture_output=True, timeout=60)


@dataclass
class Host:
    """One namespace host: its network namespace, address and sshd process."""

    netns: str
    address: str
    sshd: subprocess.Popen[bytes]
    log: Path


@dataclass
class NetLab:
    """A controller namespace and hosts reachable from it over SSH (see the module doc)."""

    workdir: Path
    prefix: str
    hosts: list[Host] = field(default_factory=list)
    _netns: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.controller = f"{self.prefix}-c"
        self.client_key = self.workdir / "client_key"
        self.host_key = self.workdir / "host_key"
        self.ssh_config = self.workdir / "ssh_config"
        self.ssh_command = self.workdir / "ssh"
        try:
            self._setup()
        except BaseException:
            self.close()
            raise

    def _setup(self) -> None:
        _run("ip", "netns", "add", self.controller)
        _run("ip", "-n", self.controller, "link", "set", "lo", "up")
        for key in (self.client_key, self.host_key):
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "osworld-test", "-f", str(key))
        (self.workdir / "authorized_keys").write_text(self.client_key.with_suffix(".pub").read_text())
        self.ssh_config.write_text(SSH_CONFIG.format(client_key=self.client_key))
        # For tools that run ``ssh`` themselves (libvirt's ``command=``): this lab's config,
        # so nothing is added to the user's known_hosts.
        real_ssh = shutil.which("ssh") or "/usr/bin/ssh"
        self.ssh_command.write_text(f'#!/bin/sh\nexec {real_ssh} -F {self.ssh_config} "$@"\n')
        self.ssh_command.chmod(0o755)
        # Left in place at the end: another lab's sshd may still need it.
        PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)

    def new_netns(self) -> str:
        """A new network namespace for a host, deleted by :meth:`close`."""
        name = f"{self.prefix}-{len(self._netns) + 1}"
        _run("ip", "netns", "add", name)
        _run("ip", "-n", name, "link", "set", "lo", "up")
        self._netns.append(name)
        return name

    def add_host(self, netns: str | None = None, mount_pid: int | None = None) -> Host:
        """A new host ``10.77.N.2`` (N = 1, 2, ...) in a new namespace or in ``netns``.

        ``mount_pid``: run its sshd in that process's mount namespace too (a host whose
        ``/run`` is private, so its daemons' sockets are reachable only over SSH).
        """
        index = len(self.hosts) + 1
        name = netns or self.new_netns()
        # Interface names are at most 15 bytes; the host side lives in its own namespace.
        outer, inner = f"{self.prefix[-10:]}c{index}", f"osw{index}"
        _run(
            "ip",
            "link",
            "add",
            outer,
            "netns",
            self.controller,
            "type",
            "veth",
            "peer",
            "name",
            inner,
            "netns",
            name,
        )
        address = f"10.77.{index}.2"
        _run("ip", "-n", self.controller, "addr", "add", f"10.77.{index}.1/24", "dev", outer)
        _run("ip", "-n", self.controller, "link", "set", outer, "up")
        _run("ip", "-n", name, "addr", "add", f"{address}/24", "dev", inner)
        _run("ip", "-n", name, "link", "set", inner, "up")
        config = self.workdir / f"sshd-{index}.conf"
        config.write_text(
            SSHD_CONFIG.format(
                address=address, host_key=self.host_key, authorized_keys=self.workdir / "authorized_keys"
            )
        )
        log = self.workdir / f"sshd-{index}.log"
        sshd = shutil.which("sshd", path=SBIN_PATH) or "sshd"
        # -D: stay in the foreground, so the test owns the process; -e -E: log to a file.
        enter = ["ip", "netns", "exec", name]
        if mount_pid is not None:
            enter = ["nsenter", "-t", str(mount_pid), "-m", "--net=/run/netns/" + name]
        process = subprocess.Popen(
            [*enter, sshd, "-D", "-e", "-f", str(config), "-E", str(log)], stdin=subprocess.DEVNULL
        )
        host = Host(netns=name, address=address, sshd=process, log=log)
        self.hosts.append(host)
        self._wait_ssh(host)
        return host

    def _wait_ssh(self, host: Host, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            probe = self.run(["ssh", "-F", str(self.ssh_config), host.address, "true"], timeout=15)
            if probe.returncode == 0:
                return
            if host.sshd.poll() is not None or time.monotonic() > deadline:
                log = host.log.read_text(errors="replace") if host.log.exists() else ""
                raise RuntimeError(f"sshd in {host.netns} did not answer: {probe.stderr}\n{log}")
            time.sleep(0.2)

    def run(
        self,
        argv: list[str],
        timeout: float = 60.0,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` in the controller's namespace (output captured, never raises on rc)."""
        return subprocess.run(
            ["ip", "netns", "exec", self.controller, *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=cwd,
            check=False,
        )

    def close(self) -> None:
        """Stop the sshd servers, kill what is left in the namespaces, delete them and the keys."""
        for host in self.hosts:
            if host.sshd.poll() is None:
                host.sshd.terminate()
                try:
                    host.sshd.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    host.sshd.kill()
                    host.sshd.wait()
        for name in [self.controller, *self._netns]:
            # Worker processes started over SSH die with their session; this catches stragglers.
            pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, check=False)
            for pid in pids.stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), 9)
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
        # Deleting the controller namespace removed the veth pairs, joined namespaces too.
        for path in self.workdir.glob("*_key*"):
            path.unlink()
