"""The local desktop's home template: its content key, its build, and its cache.

A template is the prepared ``/home/user`` that every sandbox starts from (the local
provider's only snapshot). It is built once per content key by
``local_desktop/build_template.sh`` inside a sandbox, under a file lock in
``<cache_dir>/templates/``, through a staging folder so a build killed half-way leaves
nothing that looks finished.
"""

from __future__ import annotations

import hashlib
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_osworld.errors import EnvironmentFailure
from pytest_osworld.providers.local_processes import Spawner
from pytest_osworld.providers.local_sandbox import DESKTOP_DIR, bwrap_argv, sandbox_env

#: Bump to invalidate every built template (also keyed on the build script's content).
TEMPLATE_VERSION = "1"


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


def ensure_template(cache_dir: Path, *, rebuild: bool, build: Callable[[Path], None]) -> Path:
    """The built template under ``cache_dir``, building it with ``build(staging)`` if needed.

    Runs under the key's file lock: stale staging folders are removed, a finished
    template is reused unless ``rebuild``, and a new build is renamed into place only
    when ``build`` returns.
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
            return target
        if rebuild:
            done.unlink(missing_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{key}.staging-", dir=root))
        try:
            build(staging)
            staging.rename(target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        done.write_text(time.strftime("%Y-%m-%dT%H:%M:%S"))
    return target


def build_template(
    staging: Path,
    *,
    spawner: Spawner,
    work: Path,
    python: str,
    screen: tuple[int, int],
    timeout: float,
) -> None:
    """Run ``build_template.sh`` in a sandbox (no network) whose home is ``staging``.

    ``work`` is the provider's work folder (generated ``etc/``, the build's control
    folder and log). Raises :class:`EnvironmentFailure` with the log's tail on failure.
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
    log_path = work / "template-build.log"
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
        raise EnvironmentFailure(f"building the local desktop template failed (exit {code}):\n{tail}")
