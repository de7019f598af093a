"""The local desktop's home template: its content key, its build, and its cache.

A template is the prepared ``/home/user`` that every sandbox starts from (the local
provider's only snapshot). It is built once per content key by
``local_desktop/build_template.sh`` inside a sandbox, under a file lock in
``<cache_dir>/templates/``, through a staging folder so a build killed half-way leaves
nothing that looks finished.

A template is whole or not used: :data:`REQUIRED_FILES` lists what OSWorld's setup steps
and getters read from it (per application installed on this host), a build is checked
against that list before it is renamed into place (and retried a bounded number of times),
and a cached template that fails the same check (an older version, a copy cut short) is
rebuilt instead of used.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_osworld.errors import EnvironmentFailure
from pytest_osworld.providers.local_processes import Spawner
from pytest_osworld.providers.local_sandbox import DESKTOP_DIR, bwrap_argv, sandbox_env

#: Bump to invalidate every built template (also keyed on the build script's content).
TEMPLATE_VERSION = "3"
#: Builds tried before a template that keeps failing its check is an error.
BUILD_ATTEMPTS = 3
#: The error when every attempt built a template that is not whole.
TEMPLATE_INCOMPLETE = (
    "the local desktop's home template is incomplete after {attempts} builds: {missing}. "
    "The build's log is {log}; the host is probably too loaded to start {apps} within the "
    "build's waits: run again on a quieter machine, or with --provider-arg template_timeout=SECONDS"
)


@dataclass(frozen=True)
class Required:
    """Files a template must hold when ``program`` is installed (always, when it is None).

    ``tables`` names the SQLite files among ``paths`` and a table each must have;
    ``json`` the files that must parse as JSON objects.
    """

    program: str | None
    paths: tuple[str, ...]
    tables: tuple[tuple[str, str], ...] = ()
    json: tuple[str, ...] = ()


_CHROME = ".config/google-chrome"
_LO_USER = ".config/libreoffice/4/user"
#: What OSWorld's setup steps and getters read from a template, per application. The
#: Chromium databases are the ones a racing build used to leave out (History, Cookies and
#: Web Data are written by Chromium a moment after its start, not at once).
REQUIRED_FILES: tuple[Required, ...] = (
    Required(
        None,
        (
            ".config/mimeapps.list",
            ".config/vlc/vlcrc",
            ".config/pulse/default.pa",
            f"{_LO_USER}/registrymodifications.xcu",
            f"{_CHROME}/First Run",
            f"{_CHROME}/Default/Preferences",
        ),
        json=(f"{_CHROME}/Default/Preferences",),
    ),
    Required(
        "chromium",
        (
            f"{_CHROME}/Local State",
            f"{_CHROME}/Default/History",
            f"{_CHROME}/Default/Cookies",
            f"{_CHROME}/Default/Web Data",
        ),
        tables=(
            (f"{_CHROME}/Default/History", "urls"),
            (f"{_CHROME}/Default/Cookies", "cookies"),
            (f"{_CHROME}/Default/Web Data", "keywords"),
        ),
        json=(f"{_CHROME}/Local State",),
    ),
    Required("soffice", (f"{_LO_USER}/extensions",)),
    Required("gimp", (".config/GIMP/2.10/gimprc", ".config/GIMP/2.10/pluginrc")),
)


def missing_template_files(home: Path, *, installed: Callable[[str], bool] | None = None) -> list[str]:
    """What ``home`` lacks of :data:`REQUIRED_FILES`, as readable problems ([] when whole).

    ``installed(program)`` says whether an application's files are required (default: the
    program is on this host's ``PATH``, which the sandbox shares).
    """
    is_installed = installed or (lambda program: shutil.which(program) is not None)
    problems: list[str] = []
    for required in REQUIRED_FILES:
        if required.program is not None and not is_installed(required.program):
            continue
        for rel in required.paths:
            if not (home / rel).exists():
                problems.append(f"{rel} is missing")
        for rel, table in required.tables:
            if (home / rel).is_file():
                problem = _table_problem(home / rel, table)
                if problem:
                    problems.append(f"{rel} {problem}")
        for rel in required.json:
            if (home / rel).is_file() and not _is_json_object(home / rel):
                problems.append(f"{rel} is not a JSON object")
    return problems


def _table_problem(path: Path, table: str) -> str | None:
    """Why ``path`` cannot be read as a database with ``table`` by a reader that may not
    write (a getter's copy), or None. A hot journal left by an interrupted write is such a
    problem: reading it needs a rollback first."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
        finally:
            db.close()
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            return f"has no {table!r} table"
        return f"cannot be read without writing to it ({exc}): a write was interrupted"
    except sqlite3.DatabaseError:
        return f"has no {table!r} table"
    return None if row is not None else f"has no {table!r} table"


def _is_json_object(path: Path) -> bool:
    try:
        return isinstance(json.loads(path.read_bytes()), dict)
    except (OSError, ValueError):
        return False


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


def template_ready(cache_dir: Path) -> bool:
    """Whether ``cache_dir`` holds a finished, whole template for the current key (read
    without the lock: a hint for saying that a build is coming, not a guarantee)."""
    root = cache_dir / "templates"
    target = root / template_key()
    finished = (root / f"{template_key()}.done").exists() and target.is_dir()
    return finished and not missing_template_files(target)


def ensure_template(
    cache_dir: Path,
    *,
    rebuild: bool,
    build: Callable[[Path], None],
    check: Callable[[Path], list[str]] = missing_template_files,
    attempts: int = BUILD_ATTEMPTS,
    log: str = "the build log",
) -> Path:
    """The built template under ``cache_dir``, building it with ``build(staging)`` if needed.

    Runs under the key's file lock: stale staging folders are removed, a finished template
    that passes ``check`` is reused unless ``rebuild`` (one that fails it is rebuilt, and
    the reason is said on stderr), and a new build is renamed into place only when
    ``build`` returns and ``check`` finds nothing missing. A build that is not whole is
    tried again, up to ``attempts`` builds; then :class:`EnvironmentFailure` names what is
    missing and ``log`` (where the build's output is).
    """
    from filelock import FileLock

    key = template_key()
    root = cache_dir / "templates"
    root.mkdir(parents=True, exist_ok=True)
    target = root / key
    done = root / f"{key}.done"
    with FileLock(str(root / f"{key}.lock")):
        # Whoever held the lock before us is done or dead: a staging folder still here
        # is what a build killed half-way left.
        for stale in root.glob(f"{key}.staging-*"):
            shutil.rmtree(stale, ignore_errors=True)
        if done.exists() and target.is_dir() and not rebuild:
            problems = check(target)
            if not problems:
                return target
            _say(f"the cached desktop template {target} is not whole ({'; '.join(problems)}); rebuilding it")
        done.unlink(missing_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        problems = []
        for attempt in range(1, attempts + 1):
            staging = Path(tempfile.mkdtemp(prefix=f"{key}.staging-", dir=root))
            try:
                build(staging)
                problems = check(staging)
                if not problems:
                    staging.rename(target)
                    break
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            shutil.rmtree(staging, ignore_errors=True)
            if attempt < attempts:
                _say(
                    f"the desktop template build {attempt} is not whole ({'; '.join(problems)}); trying again"
                )
        else:
            apps = sorted({p.split("/")[1] for p in problems if p.startswith(".config/")}) or ["its apps"]
            raise EnvironmentFailure(
                TEMPLATE_INCOMPLETE.format(
                    attempts=attempts, missing="; ".join(problems), log=log, apps=", ".join(apps)
                )
            )
        done.write_text(time.strftime("%Y-%m-%dT%H:%M:%S"))
    return target


def _say(message: str) -> None:
    """One line on stderr: the template's state is worth a person's eye, not an error."""
    print(f"pytest-osworld: {message}", file=sys.stderr, flush=True)


def build_template(
    staging: Path,
    *,
    spawner: Spawner,
    work: Path,
    python: str,
    screen: tuple[int, int],
    timeout: float,
    log_path: Path,
) -> None:
    """Run ``build_template.sh`` in a sandbox (no network) whose home is ``staging``.

    ``work`` is the provider's work folder (generated ``etc/``, the build's control
    folder); the build's output goes to ``log_path``. Raises :class:`EnvironmentFailure`
    with the log's tail on failure.
    """
    ctl = work / "template-ctl"
    ctl.mkdir(exist_ok=True)
    argv = bwrap_argv(
        ctl_dir=str(ctl),
        home=str(staging),
        template=None,
        network=False,
        env=sandbox_env(python, screen, with_template=False),
        etc_dir=str(work / "etc"),
        command=["/bin/bash", str(DESKTOP_DIR / "build_template.sh")],
    )
    with log_path.open("wb") as log:
        proc = spawner.call(
            lambda: subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        )
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = -1
    if code != 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
        raise EnvironmentFailure(
            f"building the local desktop template failed (exit {code}):\n{tail}{sandbox_hint(tail)}"
        )


#: Files by which a process knows it runs in a Podman or Docker container.
CONTAINER_MARKERS = (Path("/run/.containerenv"), Path("/.dockerenv"))
#: What to add when bubblewrap itself failed inside a container: the engine's flags.
IN_A_CONTAINER = (
    "\nThis runs in a container, whose engine keeps bubblewrap from making the desktop's "
    "sandbox: run the container with --security-opt unmask=ALL --security-opt seccomp=unconfined "
    "(Podman), or --security-opt systempaths=unconfined --security-opt seccomp=unconfined (Docker; "
    "with AppArmor also apparmor=unconfined); README.md, section 'Any host: the container image'"
)


def sandbox_hint(log_tail: str, markers: tuple[Path, ...] = CONTAINER_MARKERS) -> str:
    """The container engine's flags, when bubblewrap failed (``bwrap:`` in the log) inside a
    container; '' otherwise."""
    if "bwrap:" in log_tail and any(marker.exists() for marker in markers):
        return IN_A_CONTAINER
    return ""
