"""The ``local`` provider: an isolated Xvfb desktop per xdist worker, inside bubblewrap.

Each environment is one bubblewrap sandbox: uid 1000 (``user``) in its own user, PID,
IPC and UTS namespaces, private tmpfs ``/home`` and ``/tmp``, no network unless
``ProviderConfig.network`` is set, and inside it Xvfb (1920x1080x24), the session's
window manager (GNOME Shell by default, or openbox), a D-Bus session with the AT-SPI
bus, and the guest server on a unix socket in a bind-mounted control directory. A
snapshot is a home-directory template built once per run (under a file lock, in a cache
directory) by ``local_desktop/build_template.sh``; restoring kills the whole sandbox
(its PID namespace goes with it) and starts a fresh one from the template. Readiness is
the guest's ``/health``, never a fixed sleep.

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
    the interpreter that runs the guest server inside the sandbox (default: this one);
``timezone``
    the desktop's time zone at every restore, an IANA name (default
    :data:`DEFAULT_TIMEZONE`, the same on every host so that scores do not depend on
    where the run happens). ``timedatectl`` in the desktop reports and changes it.
``session``
    ``gnome`` (default): GNOME Shell on X11 made to look like Ubuntu 22.04's session
    (top bar, a fixed dock on the left, Yaru), as OSWorld's image has it; or ``openbox``:
    a bare window manager that maximizes every window, lighter.

This module owns the options and the provider's lifecycle (start, restore, stop, one
sandbox session at a time). The pieces live beside it: the bwrap command line and session
environment in :mod:`~pytest_osworld.providers.local_sandbox`, process records, the sweep
and the spawner thread in :mod:`~pytest_osworld.providers.local_processes`, the home
template in :mod:`~pytest_osworld.providers.local_template`, the host port relays in
:mod:`~pytest_osworld.providers.local_relay`. Their public names are re-exported here.

A warm spare hides the start-up: right after a restore hands out its desktop, a second
sandbox starts from the same template and waits, untouched, while the task runs; the next
restore kills the used desktop and takes the spare, so it waits only for whatever is left
of the spare's start. GNOME Shell takes about 1.5 s from nothing to ready, which no task
should wait for. The spare waits at the lowest CPU weight (:data:`SPARE_NICE`), so its start
uses the CPU the running task leaves idle rather than slowing the task; it gets the normal
weight, and its ``ready_timeout`` starts, when it is taken. Only without network: sandboxes
that share the host's network share its abstract X sockets and ports, so two of them cannot
run at once.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_osworld.errors import EnvironmentFailure, GuestError
from pytest_osworld.guest_client.client import GuestClient
from pytest_osworld.providers.base import Environment, Provider, ProviderConfig, flag_option
from pytest_osworld.providers.local_caches import (
    WARM_UP_CODE,
    WARM_UP_SECONDS,
    harvest_caches,
    missing_caches,
)
from pytest_osworld.providers.local_processes import (
    RUNS_DIR,
    WORK_PREFIX,
    Spawner,
    children_of,
    describe_exit,
    kill_and_wait,
    process_start,
    sandbox_nice,
    set_sandbox_nice,
    sweep_stale_runs,
    write_run_record,
)
from pytest_osworld.providers.local_relay import UnixForward
from pytest_osworld.providers.local_sandbox import (
    DESKTOP_DIR,
    SANDBOX_CTL,
    SANDBOX_HOME,
    SANDBOX_TEMPLATE,
    SANDBOX_UID,
    bwrap_argv,
    passwd_files,
    sandbox_env,
)
from pytest_osworld.providers.local_template import (
    TEMPLATE_VERSION,
    build_template,
    ensure_template,
    local_image,
    template_key,
    template_ready,
)

__all__ = [
    "DESKTOP_DIR",
    "REQUIRED_PROGRAMS",
    "RUNS_DIR",
    "SANDBOX_CTL",
    "SANDBOX_HOME",
    "SANDBOX_TEMPLATE",
    "SANDBOX_UID",
    "TEMPLATE_VERSION",
    "UNIX_PATH_MAX",
    "WORK_PREFIX",
    "LocalOptions",
    "LocalProvider",
    "bwrap_argv",
    "describe_exit",
    "local_image",
    "passwd_files",
    "process_start",
    "sandbox_env",
    "sweep_stale_runs",
    "template_key",
    "write_run_record",
]

#: The longest path a unix socket may have (``sun_path`` is 108 bytes with its NUL).
UNIX_PATH_MAX = 107
#: Host programs the desktop cannot start without.
REQUIRED_PROGRAMS = ("bwrap", "Xvfb", "dbus-daemon", "socat", "wmctrl")
#: The desktop sessions (``session=``) and the programs each needs besides those.
SESSION_PROGRAMS: dict[str, tuple[str, ...]] = {
    "openbox": ("openbox",),
    "gnome": ("gnome-shell", "dconf"),
}
#: The warm spare's CPU weight while it waits (its sandbox's autogroup nice value; 0 once
#: taken): it starts on the CPU the running task leaves idle instead of slowing it down.
SPARE_NICE = 19
#: The desktop's time zone unless ``timezone`` says otherwise. Not UTC: OSWorld's
#: ``os/b6781586`` asks the agent to set UTC+0, which must not already hold.
DEFAULT_TIMEZONE = "Asia/Hong_Kong"
#: The desktop session unless ``session`` says otherwise: ``gnome``, OSWorld's look (GNOME
#: Shell with Ubuntu's dock and top bar). ``openbox`` is lighter: the main command at
#: ``-n 2`` takes 1.21 (quiet machine) to 1.56 (busy one) times as long on gnome (README).
DEFAULT_SESSION = "gnome"
#: Said before a run's first desktop when the home template must be built first.
TEMPLATE_BUILDING = (
    "building the local desktop's home template in {cache} (once per machine and desktop "
    "version: the apps start once to write their profiles; about a minute on 2 cores)"
)
#: Said when that build is done.
TEMPLATE_BUILT = "the local desktop's home template is built ({seconds:.0f} s); later runs reuse it"
#: Where the time zones a desktop can be set to are.
ZONEINFO = Path("/usr/share/zoneinfo")


@dataclass(frozen=True)
class LocalOptions:
    """The provider's settings, parsed from ``ProviderConfig.options``."""

    cache_dir: Path
    ready_timeout: float = 60.0
    template_timeout: float = 600.0
    rebuild_template: bool = False
    python: str = sys.executable
    timezone: str = DEFAULT_TIMEZONE
    session: str = DEFAULT_SESSION

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
            "timezone",
            "session",
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
            rebuild_template=flag_option(options, "rebuild_template", "local"),
            python=options.get("python") or sys.executable,
            timezone=_time_zone(options.get("timezone") or DEFAULT_TIMEZONE),
            session=_session(options.get("session") or DEFAULT_SESSION),
        )


def _session(name: str) -> str:
    """``name`` if it is a desktop session of :data:`SESSION_PROGRAMS`, else ``ValueError``."""
    if name not in SESSION_PROGRAMS:
        raise ValueError(
            f"local provider option session={name!r}: use one of {', '.join(sorted(SESSION_PROGRAMS))}"
        )
    return name


def _time_zone(name: str) -> str:
    """``name`` if it is an installed IANA time zone, else ``ValueError`` saying what to do."""
    path = ZONEINFO / name
    if name.startswith("/") or ".." in Path(name).parts or not path.is_file():
        raise ValueError(
            f"local provider option timezone={name!r}: not a time zone installed in {ZONEINFO} "
            "(use an IANA name such as Europe/Berlin or Etc/UTC; `timedatectl list-timezones` lists them)"
        )
    return name


@dataclass
class _Session:
    """One running sandbox and its host-side directory."""

    root: Path
    proc: subprocess.Popen[bytes]
    token: str
    #: When it was spawned, or taken as the spare (``time.monotonic()``); its
    #: ``ready_timeout`` counts from here.
    started: float

    @property
    def ctl(self) -> Path:
        return self.root / "ctl"

    @property
    def log(self) -> Path:
        return self.root / "session.log"


class LocalProvider(Provider):
    """One bubblewrap-sandboxed Xvfb desktop per worker; restore = fresh sandbox."""

    name = "local"
    live_view = True

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self.options = LocalOptions.parse(config.options)
        self._spawner: Spawner | None = None
        self._session: _Session | None = None
        self._spare: _Session | None = None
        #: Whether this provider has checked that the template has its session caches
        #: (:meth:`_warm_caches`).
        self._caches_tried = False
        self._template: Path | None = None
        self._image = ""
        self._work: Path | None = None
        self._counter = 0
        self._forwards: dict[str, UnixForward] = {}
        self._last_log = ""
        self._record: Path | None = None
        #: What the start-up sweep removed (work folders of dead runs), for tests and logs.
        self.swept: list[str] = []

    # -- Provider API ------------------------------------------------------------------------

    @classmethod
    def check_options(cls, options: dict[str, str]) -> None:
        """Raise ``ValueError`` naming a bad ``--provider-arg`` before the run starts."""
        LocalOptions.parse(options)

    @property
    def top_bar_clock(self) -> bool:
        """The ``gnome`` session shows GNOME's top bar (``openbox`` has no panel)."""
        return self.options.session == "gnome"

    def describe(self) -> str:
        """Provider, isolation and screen, for the report header."""
        width, height = self.config.screen_size
        net = "shared network" if self.config.network else "no network"
        return f"local (bubblewrap + Xvfb {width}x{height}, {self.options.session} session, {net})"

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

    @classmethod
    def prepare(cls, config: ProviderConfig, say: Callable[[str], None]) -> None:
        """Build the home template when this machine has none for this desktop version (a
        first run, or after an update of the desktop), saying so and how long it took."""
        options = LocalOptions.parse(config.options)
        if options.rebuild_template or template_ready(options.cache_dir):
            return
        say(TEMPLATE_BUILDING.format(cache=options.cache_dir / "templates"))
        started = time.monotonic()
        provider = cls(config)
        try:
            provider.start()
        finally:
            provider.stop()
        say(TEMPLATE_BUILT.format(seconds=time.monotonic() - started))

    def _start_impl(self) -> None:
        needed = REQUIRED_PROGRAMS + SESSION_PROGRAMS[self.options.session]
        missing = [prog for prog in needed if shutil.which(prog) is None]
        if missing:
            raise EnvironmentFailure(
                f"the local desktop ({self.options.session} session) needs {', '.join(missing)}; "
                "run scripts/install.sh"
            )
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
        self._spawner = Spawner(f"osworld-local-{self.config.worker_id}")
        self._template = self._ensure_template()
        self._image = f"{local_image()}, {self.options.session} session"
        for name in ("cdp", "vlc"):
            self._forwards[name] = UnixForward(self._ctl_getter(f"{name}.sock"))

    def _restore_impl(self, snapshot: str) -> Environment:
        if self._spawner is None or self._template is None or self._work is None:
            raise EnvironmentFailure("local provider: restore() called before start()")
        self._kill(self._session)
        self._session = None
        if not self._caches_tried:
            self._caches_tried = True
            self._warm_caches(self._template)
        started = time.monotonic()
        from_spare = self._ready_spare()
        if from_spare is not None:
            session, client = from_spare
        else:
            session = self._session = self._spawn_session()
            client = self._wait_ready(session)
        ready = time.monotonic() - started
        if not self.config.network and self.more_restores:
            self._spare = self._spawn_session()
            set_sandbox_nice(self._spare.proc.pid, SPARE_NICE)
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
                "ready_seconds": round(ready, 3),
                "warm_spare": from_spare is not None,
            },
        )

    def _stop_impl(self) -> None:
        for session in (self._spare, self._session):
            self._kill(session)
        self._session = self._spare = None
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
        work = self._work
        if work is None or self._spawner is None or self._template is None:
            raise EnvironmentFailure("local provider is not started")
        self._counter += 1
        root = work / f"session-{self._counter}"
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
            env=sandbox_env(
                self.options.python,
                self.config.screen_size,
                with_template=True,
                timezone=self.options.timezone,
                session=self.options.session,
            ),
            etc_dir=str(work / "etc"),
            command=["/bin/bash", str(DESKTOP_DIR / "session.sh")],
        )
        log = (root / "session.log").open("wb")
        try:
            proc = self._spawner.call(
                lambda: subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            )
        finally:
            log.close()
        return _Session(root, proc, token, time.monotonic())

    def _warm_caches(self, template: Path) -> None:
        """When the template lacks the session caches and this is the gnome session (the one
        that draws through Mesa), start a desktop for that alone, have it draw what tasks'
        windows draw, copy its caches into the template and discard it. A failure leaves the
        template as it was and is written to the template's build log (the run goes on, its
        desktops compile those shaders themselves; the next run tries again)."""
        if self.options.session != "gnome" or not missing_caches(template):
            return
        session = self._spawn_session()
        failure = ""
        try:
            client = self._wait_ready(session)
            done = client.run_python(WARM_UP_CODE, timeout=WARM_UP_SECONDS)
            if done.returncode == 0:
                harvest_caches(template, client)
            else:
                failure = (done.error or done.output).strip()
        except (EnvironmentFailure, GuestError) as exc:
            failure = str(exc)
        finally:
            self._kill(session)
        if failure:
            with self._template_log().open("a") as log:
                log.write(f"shader cache warm-up failed, the template keeps no shader cache: {failure}\n")

    def _ready_spare(self) -> tuple[_Session, GuestClient] | None:
        """Make the warm spare the current session and return it with its client once it is
        ready; None (the spare killed) when there is none or it broke while it waited, for a
        cold start."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        self._session = spare
        if not set_sandbox_nice(spare.proc.pid, 0) and sandbox_nice(spare.proc.pid) not in (None, 0):
            self._kill(spare)  # it would run the task at the spare's low weight
            self._session = None
            return None
        spare.started = time.monotonic()
        try:
            return spare, self._wait_ready(spare)
        except EnvironmentFailure:
            self._kill(spare)
            self._session = None
            return None

    def _wait_ready(self, session: _Session) -> GuestClient:
        """Poll the session's ``/health`` until ready (at least once, until ``ready_timeout``
        after its spawn or take); a client for it, or ``EnvironmentFailure`` saying what was not ready."""
        sock = session.ctl / "guest.sock"
        client = GuestClient(unix_socket=str(sock), token=session.token, timeout=10.0, retries=1)
        deadline = session.started + self.options.ready_timeout
        last = "the guest socket never appeared"
        while True:  # at least one look, even past the deadline
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
            if time.monotonic() >= deadline:
                break
            time.sleep(0.03)
        raise EnvironmentFailure(f"local desktop not ready after {self.options.ready_timeout:g} s: {last}")

    def _kill(self, session: _Session | None) -> None:
        """Kill a sandbox and everything in it, keep its log as the last one, remove its folder."""
        if session is None:
            return
        inner = children_of(session.proc.pid)
        if session.proc.poll() is None:
            # bwrap's PID 1 dies with it and the kernel kills the whole PID namespace.
            session.proc.send_signal(signal.SIGKILL)
        session.proc.wait()
        # The inner bwrap (PID 1 of the sandbox) dies of --die-with-parent a moment later;
        # kill it at once and wait for it, so nothing of the sandbox outlives this call.
        kill_and_wait(inner, timeout=5.0)
        if session.log.exists():
            self._last_log = session.log.read_text(errors="replace")
        shutil.rmtree(session.root, ignore_errors=True)

    # -- the template ------------------------------------------------------------------------

    def _template_log(self) -> Path:
        """Where the last template build's output is kept (beside the templates)."""
        return self.options.cache_dir / "templates" / f"{template_key()}.build.log"

    def _ensure_template(self) -> Path:
        return ensure_template(
            self.options.cache_dir,
            rebuild=self.options.rebuild_template,
            build=self._build_template,
            log=str(self._template_log()),
        )

    def _build_template(self, staging: Path) -> None:
        if self._spawner is None or self._work is None:
            raise EnvironmentFailure("local provider is not started")
        build_template(
            staging,
            spawner=self._spawner,
            work=self._work,
            python=self.options.python,
            screen=self.config.screen_size,
            timeout=self.options.template_timeout,
            log_path=self._template_log(),
        )
