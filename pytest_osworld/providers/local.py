"""The ``local`` provider: an isolated Xvfb desktop per xdist worker, inside bubblewrap.

Each environment is one bubblewrap sandbox: uid 1000 (``user``) in its own user, PID,
IPC and UTS namespaces, private tmpfs ``/home`` and ``/tmp``, no network unless
``ProviderConfig.network`` is set, and inside it Xvfb (1920x1080x24), openbox, a D-Bus
session with the AT-SPI bus, and the guest server on a unix socket in a bind-mounted
control directory. A snapshot is a home-directory template built once per run (under a
file lock, in a cache directory) by ``local_desktop/build_template.sh``; restoring kills
the whole sandbox (its PID namespace goes with it) and starts a fresh one from the
template. Readiness is the guest's ``/health``, never a fixed sleep.

A pytest process that dies without cleaning up (SIGKILL, a crashed xdist worker) takes its
sandboxes with it (``--die-with-parent``) but leaves its work folder (control sockets,
token, logs). Each provider therefore records its work folder under
``<cache_dir>/runs/`` with its own PID, and every start sweeps the records whose pytest is
gone: it kills any sandbox process still naming their folder and removes the folder.

Options read from ``ProviderConfig.options`` (all strings):

``cache_dir``
    where templates are built and kept, and running providers record their work folders
    (``runs/``) (default ``$XDG_CACHE_HOME/pytest-osworld/local``);
``ready_timeout``
    seconds to wait for ``/health`` after a restore (default 60);
``template_timeout``
    seconds allowed for the one-off template build (default 600);
``rebuild_template``
    ``1`` to rebuild the template even when a built one exists;
``python``
    the interpreter that runs the guest server inside the sandbox (default: this one).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pytest_osworld.client import GuestClient
from pytest_osworld.errors import EnvironmentFailure, GuestError
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig

#: The desktop's support files: session script, template build, wrappers, openbox rc.
DESKTOP_DIR = Path(__file__).resolve().parent / "local_desktop"
#: Bump to invalidate every built template (also keyed on the build script's content).
TEMPLATE_VERSION = "1"
#: Inside the sandbox: the control dir (socket, token) and the template.
SANDBOX_CTL = "/run/osworld/ctl"
#: The longest path a unix socket may have (``sun_path`` is 108 bytes with its NUL).
UNIX_PATH_MAX = 107
SANDBOX_TEMPLATE = "/run/osworld/template"
SANDBOX_HOME = "/home/user"
SANDBOX_UID = 1000

#: Host programs the desktop cannot start without.
REQUIRED_PROGRAMS = ("bwrap", "Xvfb", "openbox", "dbus-daemon", "socat", "wmctrl")

T = TypeVar("T")

#: Under ``cache_dir``: one record per running provider (``<work folder name>.json``).
RUNS_DIR = "runs"
#: Every work folder's name starts with this (the sweep removes nothing else).
WORK_PREFIX = "osworld-local-"


@dataclass(frozen=True)
class LocalOptions:
    """The provider's settings, parsed from ``ProviderConfig.options``."""

    cache_dir: Path
    ready_timeout: float = 60.0
    template_timeout: float = 600.0
    rebuild_template: bool = False
    python: str = sys.executable

    @classmethod
    def parse(cls, options: dict[str, str]) -> LocalOptions:
        """Validate the options; a bad value raises ``ValueError`` naming the option."""
        default_cache = (
            Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-osworld" / "local"
        )
        unknown = set(options) - {
            "cache_dir",
            "ready_timeout",
            "template_timeout",
            "rebuild_template",
            "python",
        }
        if unknown:
            raise ValueError(f"unknown local provider option(s): {', '.join(sorted(unknown))}")

        def seconds(key: str, default: float) -> float:
            raw = options.get(key)
            if raw is None:
                return default
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"local provider option {key}={raw!r}: not a number") from None
            if value <= 0:
                raise ValueError(f"local provider option {key}={raw!r}: must be positive")
            return value

        return cls(
            cache_dir=Path(options.get("cache_dir") or default_cache).expanduser(),
            ready_timeout=seconds("ready_timeout", 60.0),
            template_timeout=seconds("template_timeout", 600.0),
            rebuild_template=options.get("rebuild_template", "0").lower() in ("1", "true", "yes"),
            python=options.get("python") or sys.executable,
        )


def template_key() -> str:
    """Content key of the template: the build script and the version constant."""
    digest = hashlib.sha256(TEMPLATE_VERSION.encode())
    digest.update((DESKTOP_DIR / "build_template.sh").read_bytes())
    return digest.hexdigest()[:16]


def local_image() -> str:
    """The local desktop's image: its home template's key and the system its apps come from."""
    try:
        system = platform.freedesktop_os_release().get("PRETTY_NAME", "unknown system")
    except OSError:
        system = "unknown system"
    return f"home template {template_key()} on {system}"


def passwd_files() -> tuple[str, str]:
    """``/etc/passwd`` and ``/etc/group`` texts with ``user`` as uid/gid 1000."""

    def rewrite(path: str, line: str) -> str:
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            lines = []
        kept = [
            entry
            for entry in lines
            if entry.split(":")[0] != "user"
            and (len(entry.split(":")) < 3 or entry.split(":")[2] != str(SANDBOX_UID))
        ]
        return "\n".join([*kept, line]) + "\n"

    passwd = rewrite("/etc/passwd", f"user:x:{SANDBOX_UID}:{SANDBOX_UID}:user:{SANDBOX_HOME}:/bin/bash")
    group = rewrite("/etc/group", f"user:x:{SANDBOX_UID}:")
    return passwd, group


def _hidden_host_paths() -> list[str]:
    """Host paths the sandbox needs but its tmpfs mounts would hide (venv, package)."""
    needed = {os.path.realpath(sys.prefix), str(DESKTOP_DIR.parent.parent.parent)}
    return sorted(
        path
        for path in needed
        if any(path == top or path.startswith(top + "/") for top in ("/home", "/tmp", "/run"))
    )


def bwrap_argv(
    *,
    ctl_dir: str,
    home: str | None,
    template: str | None,
    network: bool,
    env: dict[str, str],
    etc_dir: str,
    command: list[str],
) -> list[str]:
    """The bubblewrap command line of one sandbox.

    ``home`` bind-mounts a host directory as the home (template builds); otherwise the
    home is the sandbox's tmpfs. ``etc_dir`` holds the generated passwd and group files.
    """
    argv = [
        "bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/dev/shm",
        "--tmpfs",
        "/tmp",
        "--tmpfs",
        "/run",
        "--tmpfs",
        "/home",
    ]
    if not network:
        argv.append("--unshare-net")
    else:
        resolv = os.path.realpath("/etc/resolv.conf")
        if resolv.startswith("/run/") and os.path.exists(resolv):
            argv += ["--ro-bind", resolv, resolv]
    for path in _hidden_host_paths():
        argv += ["--ro-bind", path, path]
    argv += [
        "--ro-bind",
        os.path.join(etc_dir, "passwd"),
        "/etc/passwd",
        "--ro-bind",
        os.path.join(etc_dir, "group"),
        "/etc/group",
        "--bind",
        ctl_dir,
        SANDBOX_CTL,
    ]
    if home is not None:
        argv += ["--bind", home, SANDBOX_HOME]
    else:
        argv += ["--dir", SANDBOX_HOME]
    if template is not None:
        argv += ["--ro-bind", template, SANDBOX_TEMPLATE]
    argv += ["--chdir", SANDBOX_HOME, "--clearenv"]
    for key, value in sorted(env.items()):
        argv += ["--setenv", key, value]
    return [*argv, *command]


def sandbox_env(python: str, screen: tuple[int, int], with_template: bool) -> dict[str, str]:
    """The environment variables of the desktop session."""
    env = {
        "HOME": SANDBOX_HOME,
        "USER": "user",
        "LOGNAME": "user",
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": os.environ.get("TZ", "UTC"),
        "PATH": f"{DESKTOP_DIR / 'bin'}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "DISPLAY": ":0",
        "XDG_RUNTIME_DIR": f"/run/user/{SANDBOX_UID}",
        "XDG_SESSION_TYPE": "x11",
        "XDG_CONFIG_HOME": f"{SANDBOX_HOME}/.config",
        "NO_AT_BRIDGE": "0",
        "GTK_MODULES": "gail:atk-bridge",
        "QT_ACCESSIBILITY": "1",
        "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
        "ACCESSIBILITY_ENABLED": "1",
        "SAL_USE_VCLPLUGIN": "gtk3",
        # Thunderbird's window class as on OSWorld's Ubuntu, "Mail.thunderbird" (Debian's
        # build says "Mail.thunderbird-default"): tasks close it by exact class.
        "MOZ_APP_REMOTINGNAME": "thunderbird",
        "OSWORLD_CTL": SANDBOX_CTL,
        "OSWORLD_SCREEN": f"{screen[0]}x{screen[1]}",
        "OSWORLD_GUEST_PYTHON": python,
        "OSWORLD_DESKTOP_DIR": str(DESKTOP_DIR),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if with_template:
        env["OSWORLD_TEMPLATE"] = SANDBOX_TEMPLATE
    return env


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


def _processes_naming(folder: Path) -> list[int]:
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
            for victim in _processes_naming(work):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(victim, signal.SIGKILL)
                    killed += 1
            shutil.rmtree(work, ignore_errors=True)
        record.unlink(missing_ok=True)
        swept.append(f"{work} (left by pytest PID {pid}; {killed} process(es) killed)")
    return swept


def _children(pid: int) -> list[tuple[int, str]]:
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


def _kill_and_wait(processes: list[tuple[int, str]], timeout: float) -> None:
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


class _Spawner:
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


class _UnixForward:
    """A loopback TCP port on the host relayed to a unix socket of the current sandbox.

    Chromium's DevTools port and VLC's HTTP port live inside the sandbox's (possibly
    unshared) network; the session relays them to unix sockets in the control dir and
    this class makes each reachable on the host at ``127.0.0.1:<port>``.
    """

    def __init__(self, target: Callable[[], str | None]) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._closed = False
        threading.Thread(target=self._accept, name="osworld-forward", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            path = self._target()
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                if path is None:
                    raise ConnectionRefusedError("no sandbox")
                upstream.connect(path)
            except OSError:
                client.close()
                upstream.close()
                continue
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def close(self) -> None:
        """Stop accepting connections."""
        self._closed = True
        self._listener.close()


@dataclass
class _Session:
    """One running sandbox and its host-side directory."""

    root: Path
    proc: subprocess.Popen[bytes]
    token: str

    @property
    def ctl(self) -> Path:
        return self.root / "ctl"

    @property
    def log(self) -> Path:
        return self.root / "session.log"


class LocalProvider(Provider):
    """One bubblewrap-sandboxed Xvfb desktop per worker; restore = fresh sandbox."""

    name = "local"

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self.options = LocalOptions.parse(config.options)
        self._spawner: _Spawner | None = None
        self._session: _Session | None = None
        self._template: Path | None = None
        self._image = ""
        self._work: Path | None = None
        self._counter = 0
        self._forwards: dict[str, _UnixForward] = {}
        self._last_log = ""
        self._record: Path | None = None
        #: What the start-up sweep removed (work folders of dead runs), for tests and logs.
        self.swept: list[str] = []

    # -- Provider API ------------------------------------------------------------------------

    @classmethod
    def check_options(cls, options: dict[str, str]) -> None:
        """Raise ``ValueError`` naming a bad ``--provider-arg`` before the run starts."""
        LocalOptions.parse(options)

    def describe(self) -> str:
        """Provider, isolation and screen, for the report header."""
        width, height = self.config.screen_size
        net = "shared network" if self.config.network else "no network"
        return f"local (bubblewrap + Xvfb {width}x{height}, {net})"

    def logs(self) -> str:
        """The last 60 lines of the current (or last) session's log."""
        text = self._last_log
        if self._session is not None and self._session.log.exists():
            text = self._session.log.read_text(errors="replace")
        return "\n".join(text.splitlines()[-60:])

    def diagnose(self) -> str:
        """Whether the sandbox of the current task ended under it (and how), else ''.

        The guest's connection drops a moment before bwrap exits, so this waits up to
        two seconds for the exit before calling the sandbox alive.
        """
        session = self._session
        if session is None:
            return ""
        try:
            code = session.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return ""
        return f"the local desktop's sandbox ended during the task ({describe_exit(code)})"

    def _start_impl(self) -> None:
        missing = [prog for prog in REQUIRED_PROGRAMS if shutil.which(prog) is None]
        if missing:
            raise EnvironmentFailure(f"the local desktop needs {', '.join(missing)}; run scripts/install.sh")
        base = Path(self.config.work_dir) if self.config.work_dir else None
        prefix = f"{WORK_PREFIX}{self.config.worker_id}-"
        # The control sockets live under the work folder, and a unix socket's path may not
        # exceed 107 bytes: a deep folder (pytest's tmp paths, a long results path) moves
        # the work folder to the system's temporary folder instead.
        longest = len(prefix) + len("xxxxxxxx/session-99999/ctl/guest.sock") + 1
        if base is not None and len(str(base.resolve())) + longest > UNIX_PATH_MAX:
            base = None
        if base is not None:
            base.mkdir(parents=True, exist_ok=True)
        runs = self.options.cache_dir / RUNS_DIR
        self.swept = sweep_stale_runs(runs)
        self._work = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
        self._record = write_run_record(runs, self._work)
        etc = self._work / "etc"
        etc.mkdir()
        passwd, group = passwd_files()
        (etc / "passwd").write_text(passwd)
        (etc / "group").write_text(group)
        self._spawner = _Spawner(f"osworld-local-{self.config.worker_id}")
        self._template = self._ensure_template()
        self._image = local_image()
        for name in ("cdp", "vlc"):
            self._forwards[name] = _UnixForward(self._ctl_getter(f"{name}.sock"))

    def _restore_impl(self, snapshot: str) -> Environment:
        if self._spawner is None or self._template is None or self._work is None:
            raise EnvironmentFailure("local provider: restore() called before start()")
        self._kill_session()
        started = time.monotonic()
        session = self._spawn_session()
        client = self._wait_ready(session, started)
        width, height = self.config.screen_size
        return Environment(
            guest=client,
            name=f"local-{self.config.worker_id}",
            description=self.describe(),
            image=self._image,
            client_password="password",
            screen_size=(width, height),
            extra={
                "snapshot": snapshot,
                "control_dir": str(session.ctl),
                "chromium_cdp_url": f"http://127.0.0.1:{self._forwards['cdp'].port}",
                "vlc_url": f"http://127.0.0.1:{self._forwards['vlc'].port}",
                "network": self.config.network,
                "ready_seconds": round(time.monotonic() - started, 3),
            },
        )

    def _stop_impl(self) -> None:
        self._kill_session()
        for forward in self._forwards.values():
            forward.close()
        self._forwards.clear()
        if self._spawner is not None:
            self._spawner.stop()
            self._spawner = None
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None
        if self._record is not None:
            self._record.unlink(missing_ok=True)
            self._record = None

    # -- sessions ----------------------------------------------------------------------------

    def _ctl_getter(self, name: str) -> Callable[[], str | None]:
        return lambda: self._ctl_path(name)

    def _ctl_path(self, name: str) -> str | None:
        session = self._session
        return None if session is None else str(session.ctl / name)

    def _spawn_session(self) -> _Session:
        assert_work = self._work
        if assert_work is None or self._spawner is None or self._template is None:
            raise EnvironmentFailure("local provider is not started")
        self._counter += 1
        root = assert_work / f"session-{self._counter}"
        ctl = root / "ctl"
        ctl.mkdir(parents=True)
        os.chmod(root, 0o700)
        token = secrets.token_urlsafe(32)
        token_file = ctl / "token"
        token_file.write_text(token)
        os.chmod(token_file, 0o600)
        argv = bwrap_argv(
            ctl_dir=str(ctl),
            home=None,
            template=str(self._template),
            network=self.config.network,
            env=sandbox_env(self.options.python, self.config.screen_size, with_template=True),
            etc_dir=str(assert_work / "etc"),
            command=["/bin/bash", str(DESKTOP_DIR / "session.sh")],
        )
        log = (root / "session.log").open("wb")
        try:
            proc = self._spawner.call(
                lambda: subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            )
        finally:
            log.close()
        self._session = _Session(root, proc, token)
        return self._session

    def _wait_ready(self, session: _Session, started: float) -> GuestClient:
        sock = session.ctl / "guest.sock"
        client = GuestClient(unix_socket=str(sock), token=session.token, timeout=10.0, retries=1)
        deadline = started + self.options.ready_timeout
        last = "the guest socket never appeared"
        while time.monotonic() < deadline:
            if session.proc.poll() is not None:
                raise EnvironmentFailure(
                    f"local desktop exited with status {session.proc.returncode} while "
                    f"starting; see the log below"
                )
            if sock.exists():
                try:
                    state = client.health()
                except GuestError as exc:
                    last = str(exc)
                else:
                    if state.get("ready"):
                        client.close()
                        return GuestClient(unix_socket=str(sock), token=session.token)
                    last = f"not ready: {state}"
            time.sleep(0.03)
        raise EnvironmentFailure(f"local desktop not ready after {self.options.ready_timeout:g} s: {last}")

    def _kill_session(self) -> None:
        session, self._session = self._session, None
        if session is None:
            return
        inner = _children(session.proc.pid)
        if session.proc.poll() is None:
            # bwrap's PID 1 dies with it and the kernel kills the whole PID namespace.
            session.proc.send_signal(signal.SIGKILL)
        session.proc.wait()
        # The inner bwrap (PID 1 of the sandbox) dies of --die-with-parent a moment later;
        # kill it at once and wait for it, so nothing of the sandbox outlives this call.
        _kill_and_wait(inner, timeout=5.0)
        if session.log.exists():
            self._last_log = session.log.read_text(errors="replace")
        shutil.rmtree(session.root, ignore_errors=True)

    # -- the template ------------------------------------------------------------------------

    def _ensure_template(self) -> Path:
        from filelock import FileLock

        key = template_key()
        root = self.options.cache_dir / "templates"
        root.mkdir(parents=True, exist_ok=True)
        target = root / key
        done = root / f"{key}.done"
        with FileLock(str(root / f"{key}.lock")):
            # Whoever held the lock before us is done or dead: a staging folder still here
            # is what a build killed half-way left.
            for stale in root.glob(f"{key}.staging-*"):
                shutil.rmtree(stale, ignore_errors=True)
            if done.exists() and target.is_dir() and not self.options.rebuild_template:
                return target
            if self.options.rebuild_template:
                done.unlink(missing_ok=True)
            shutil.rmtree(target, ignore_errors=True)
            staging = Path(tempfile.mkdtemp(prefix=f"{key}.staging-", dir=root))
            try:
                self._build_template(staging)
                staging.rename(target)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            done.write_text(time.strftime("%Y-%m-%dT%H:%M:%S"))
        return target

    def _build_template(self, staging: Path) -> None:
        if self._spawner is None or self._work is None:
            raise EnvironmentFailure("local provider is not started")
        ctl = self._work / "template-ctl"
        ctl.mkdir(exist_ok=True)
        argv = bwrap_argv(
            ctl_dir=str(ctl),
            home=str(staging),
            template=None,
            network=False,
            env=sandbox_env(self.options.python, self.config.screen_size, with_template=False),
            etc_dir=str(self._work / "etc"),
            command=["/bin/bash", str(DESKTOP_DIR / "build_template.sh")],
        )
        log_path = self._work / "template-build.log"
        with log_path.open("wb") as log:
            proc = self._spawner.call(
                lambda: subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            )
            try:
                code = proc.wait(timeout=self.options.template_timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = -1
        if code != 0:
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
            raise EnvironmentFailure(f"building the local desktop template failed (exit {code}):\n{tail}")
