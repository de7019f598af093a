"""The session caches a first untouched desktop leaves for every later one (the shader cache)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from pytest_osworld.guest_client.api import CommandResult
from pytest_osworld.providers.local_caches import PACKED, harvest_caches, missing_caches

CACHE = ".cache/mesa_shader_cache"


def pack(entries: dict[str, bytes | None], link: str | None = None) -> bytes:
    """A tar of files (bytes) and folders (None), and optionally a symbolic link named ``link``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        if link is not None:
            info = tarfile.TarInfo(link)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            tar.addfile(info)
    return buffer.getvalue()


class PackingGuest:
    """A guest whose home has the shader cache (or not) and packs what ``tar`` asks for."""

    def __init__(self, blob: bytes | None) -> None:
        self.blob = blob
        self.commands: list[list[str]] = []

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        assert isinstance(command, list)
        self.commands.append(command)
        if command[0] == "test":
            return CommandResult(0 if self.blob is not None else 1, "", "")
        return CommandResult(0, "", "")

    def read_file(self, path: str) -> bytes:
        assert path == PACKED and self.blob is not None
        return self.blob


def test_an_untouched_desktops_shader_cache_goes_into_the_template(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    blob = pack({".cache": None, CACHE: None, f"{CACHE}/index": b"i", f"{CACHE}/57/abc": b"shader"})
    guest = PackingGuest(blob)
    assert missing_caches(template) == [CACHE]
    assert harvest_caches(template, guest) == [CACHE]
    assert (template / CACHE / "57" / "abc").read_bytes() == b"shader"
    assert missing_caches(template) == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".caches-")]  # no staging left
    asked = len(guest.commands)
    assert harvest_caches(template, guest) == [] and len(guest.commands) == asked  # not asked again


def test_a_pack_with_a_link_or_a_stray_name_adds_nothing(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    for blob in (
        pack({CACHE: None}, link=f"{CACHE}/passwd"),
        pack({CACHE: None, ".bashrc": b"evil"}),
        pack({CACHE: None, f"{CACHE}/../../.profile": b"evil"}),
    ):
        assert harvest_caches(template, PackingGuest(blob)) == []
        assert missing_caches(template) == [CACHE]
    assert not (template / ".bashrc").exists() and not (template / ".profile").exists()


def test_a_desktop_without_the_cache_gives_nothing(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    assert harvest_caches(template, PackingGuest(None)) == []
    assert missing_caches(template) == [CACHE]
