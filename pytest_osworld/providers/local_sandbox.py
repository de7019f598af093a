"""The local desktop's sandbox: the bubblewrap command line, the session's environment
and the generated ``/etc/passwd`` and ``/etc/group``.

Owns the paths inside the sandbox (home, control folder, template mount) and the
desktop support folder ``local_desktop/``; :mod:`pytest_osworld.providers.local` starts
sandboxes with what this module builds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The desktop's support files: session script, template build, wrappers, openbox rc.
DESKTOP_DIR = Path(__file__).resolve().parent / "local_desktop"
#: Inside the sandbox: the control dir (socket, token) and the template.
SANDBOX_CTL = "/run/osworld/ctl"
SANDBOX_TEMPLATE = "/run/osworld/template"
SANDBOX_HOME = "/home/user"
SANDBOX_UID = 1000


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


#: The desktop's time zone: a symlink into the zoneinfo folder that ``session.sh`` makes
#: and the ``timedatectl`` stand-in changes; the sandbox's ``/run`` is fresh at every restore.
SANDBOX_LOCALTIME = "/run/timezone/localtime"


def sandbox_env(
    python: str,
    screen: tuple[int, int],
    with_template: bool,
    timezone: str = "Etc/UTC",
    session: str = "openbox",
) -> dict[str, str]:
    """The environment variables of the desktop session (``openbox`` or ``gnome``), whose
    time zone is ``timezone``."""
    env = {
        "HOME": SANDBOX_HOME,
        "USER": "user",
        "LOGNAME": "user",
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # glibc reads the zone from this file (a leading colon means a path), so a zone set
        # with timedatectl holds for every program started after it, as on Ubuntu.
        "TZ": f":{SANDBOX_LOCALTIME}",
        "OSWORLD_TIMEZONE": timezone,
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
        "OSWORLD_SESSION": session,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if with_template:
        env["OSWORLD_TEMPLATE"] = SANDBOX_TEMPLATE
    return env
