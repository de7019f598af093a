"""The image and box builds take their Debian mirrors from the host's apt sources.

``scripts/debian-mirrors.sh`` reads both formats (deb822 ``.sources`` and one-line
``.list``); the two build scripts are run against a fake ``/etc/apt`` (bind-mounted with
bubblewrap) with their bootstrap tools replaced by recorders, so the test sees the mirror
each build would fetch from without building anything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "debian-mirrors.sh"

DEB822 = """\
    # the site's mirror
    Types: deb deb-src
    URIs: http://mirror.site.example/debian
    Suites: bookworm bookworm-updates
    Components: main contrib
    Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

    Types: deb
    URIs: http://old.site.example/debian
    Suites: bookworm
    Components: main
    Enabled: no

    Types: deb
    URIs:
     http://security.site.example/debian-security
    Suites: bookworm-security
    Components: main
    """

ONE_LINE = """\
    # the site's proxy
    deb-src http://src.site.example/debian bookworm main
    deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://proxy.site.example:3142/debian/ bookworm main
    deb http://proxy.site.example:3142/debian-security bookworm-security main
    deb file:/srv/local bookworm main
    """


def apt_dir(tmp_path: Path, sources: dict[str, str]) -> Path:
    """A fake ``/etc/apt`` with the given files (paths relative to it)."""
    folder = tmp_path / "apt"
    (folder / "sources.list.d").mkdir(parents=True)
    for name, text in sources.items():
        (folder / name).write_text(textwrap.dedent(text))
    return folder


def mirrors(folder: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "OSWORLD_DEBIAN_MIRROR"} | env
    return subprocess.run(
        [str(SCRIPT), "--apt-dir", str(folder)], capture_output=True, text=True, env=environ, check=False
    )


def test_deb822_sources(tmp_path: Path) -> None:
    result = mirrors(apt_dir(tmp_path, {"sources.list.d/debian.sources": DEB822}))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "MIRROR=http://mirror.site.example/debian",
        "SECURITY_MIRROR=http://security.site.example/debian-security",
    ]


def test_one_line_sources_with_options(tmp_path: Path) -> None:
    result = mirrors(apt_dir(tmp_path, {"sources.list": ONE_LINE}))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "MIRROR=http://proxy.site.example:3142/debian",
        "SECURITY_MIRROR=http://proxy.site.example:3142/debian-security",
    ]


def test_sources_list_is_read_before_the_folder(tmp_path: Path) -> None:
    folder = apt_dir(tmp_path, {"sources.list": ONE_LINE, "sources.list.d/debian.sources": DEB822})
    assert mirrors(folder).stdout.splitlines()[0] == "MIRROR=http://proxy.site.example:3142/debian"


def test_the_variable_overrides_the_host(tmp_path: Path) -> None:
    folder = apt_dir(tmp_path, {"sources.list": ONE_LINE})
    one = mirrors(folder, OSWORLD_DEBIAN_MIRROR="http://given.example/debian/")
    assert one.stdout.splitlines() == [
        "MIRROR=http://given.example/debian",
        "SECURITY_MIRROR=http://given.example/debian-security",
    ]
    two = mirrors(folder, OSWORLD_DEBIAN_MIRROR="http://a.example/d http://b.example/s")
    assert two.stdout.splitlines() == ["MIRROR=http://a.example/d", "SECURITY_MIRROR=http://b.example/s"]


def test_no_source_is_a_clear_error(tmp_path: Path) -> None:
    disabled = "Types: deb\nURIs: http://x.example/debian\nSuites: bookworm\nEnabled: no\n"
    result = mirrors(
        apt_dir(
            tmp_path, {"sources.list": "deb file:/srv bookworm main\n", "sources.list.d/a.sources": disabled}
        )
    )
    assert result.returncode == 1
    assert "no apt source in" in result.stderr and "set OSWORLD_DEBIAN_MIRROR" in result.stderr
    assert result.stdout == ""


# -- the two builds use it ---------------------------------------------------------------------


def recorder(bin_dir: Path, name: str, record: Path, exit_code: int = 1) -> None:
    """A stand-in for the tool ``name`` that appends its arguments to ``record``."""
    path = bin_dir / name
    path.write_text(f'#!/bin/sh\necho "{name} $*" >>"{record}"\nexit {exit_code}\n')
    path.chmod(0o755)


def in_fake_etc_apt(
    folder: Path, argv: list[str], bin_dir: Path, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``folder`` bind-mounted over ``/etc/apt`` and ``bin_dir`` first on PATH."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    if os.geteuid() != 0:
        pytest.skip("the build scripts need root")
    env = {k: v for k, v in os.environ.items() if k != "OSWORLD_DEBIAN_MIRROR"}
    env |= {"PATH": f"{bin_dir}:{env['PATH']}", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    bwrap = ["bwrap", "--dev-bind", "/", "/", "--bind", str(folder), "/etc/apt", "--"]
    return subprocess.run(bwrap + argv, capture_output=True, text=True, env=env, timeout=120, check=False)


def test_the_container_build_bootstraps_from_the_hosts_mirrors(tmp_path: Path) -> None:
    folder = apt_dir(tmp_path, {"sources.list.d/debian.sources": DEB822})
    bin_dir, record = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    recorder(bin_dir, "podman", record)  # `image inspect` fails: no base image yet
    recorder(bin_dir, "mmdebstrap", record)
    result = in_fake_etc_apt(folder, [str(ROOT / "container" / "build.sh")], bin_dir, tmp_path)
    assert result.returncode == 1
    (call,) = [line for line in record.read_text().splitlines() if line.startswith("mmdebstrap")]
    assert "deb http://mirror.site.example/debian bookworm main" in call
    assert "deb http://mirror.site.example/debian bookworm-updates main" in call
    assert "deb http://security.site.example/debian-security bookworm-security main" in call


def test_the_box_build_bootstraps_from_the_hosts_mirror(tmp_path: Path) -> None:
    folder = apt_dir(tmp_path, {"sources.list": ONE_LINE})
    bin_dir, record = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    for tool in ("mkfs.ext4", "extlinux", "qemu-img"):
        recorder(bin_dir, tool, record, exit_code=0)
    recorder(bin_dir, "debootstrap", record)
    argv = [str(ROOT / "vagrant" / "build_box.sh"), "--minimal", "--cache", str(tmp_path / "boxes")]
    result = in_fake_etc_apt(folder, argv, bin_dir, tmp_path)
    assert result.returncode == 1
    (call,) = [line for line in record.read_text().splitlines() if line.startswith("debootstrap")]
    *_, suite, _target, mirror = call.split()
    assert (suite, mirror) == ("bookworm", "http://proxy.site.example:3142/debian")


def test_the_box_build_stops_without_a_mirror(tmp_path: Path) -> None:
    folder = apt_dir(tmp_path, {"sources.list": "deb cdrom:[Debian 12]/ bookworm main\n"})
    bin_dir, record = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    for tool in ("mkfs.ext4", "extlinux", "qemu-img", "debootstrap"):
        recorder(bin_dir, tool, record, exit_code=0)
    argv = [str(ROOT / "vagrant" / "build_box.sh"), "--minimal", "--cache", str(tmp_path / "boxes")]
    result = in_fake_etc_apt(folder, argv, bin_dir, tmp_path)
    assert result.returncode == 1
    assert "set OSWORLD_DEBIAN_MIRROR" in result.stderr
    assert not record.exists()
