"""The session caches a first untouched desktop leaves for every later one (the shader cache,
GStreamer's registry)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from pytest_osworld.guest_client.api import CommandResult
from pytest_osworld.providers.local_caches import PACKED, harvest_caches, missing_caches

CACHE = ".cache/mesa_shader_cache"
GST = ".cache/gstreamer-1.0"


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
    """A guest whose home has the caches of ``blob`` (or none), whole unless named in
    ``partial``, and packs what ``tar`` asks for."""

    def __init__(self, blob: bytes | None, partial: tuple[str, ...] = ()) -> None:
        self.blob = blob
        self.partial = partial
        self.commands: list[list[str]] = []

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        assert isinstance(command, list)
        self.commands.append(command)
        if command[0] == "sh":  # is the cache there, whole?
            whole = self.blob is not None and not any(f'/{path}"' in command[2] for path in self.partial)
            return CommandResult(0 if whole else 2, "", "")
        return CommandResult(0, "", "")

    def read_file(self, path: str) -> bytes:
        assert path == PACKED and self.blob is not None
        return self.blob


def test_an_untouched_desktops_caches_go_into_the_template(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    blob = pack(
        {
            ".cache": None,
            CACHE: None,
            f"{CACHE}/index": b"i",
            f"{CACHE}/57/abc": b"shader",
            GST: None,
            f"{GST}/registry.x86_64.bin": b"plugins",
        }
    )
    guest = PackingGuest(blob)
    assert missing_caches(template) == [CACHE, GST]
    assert harvest_caches(template, guest) == [CACHE, GST]
    assert (template / CACHE / "57" / "abc").read_bytes() == b"shader"
    assert (template / GST / "registry.x86_64.bin").read_bytes() == b"plugins"
    assert missing_caches(template) == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".caches-")]  # no staging left
    asked = len(guest.commands)
    assert harvest_caches(template, guest) == [] and len(guest.commands) == asked  # not asked again


def test_a_cache_not_yet_written_whole_is_left_for_the_next_run(tmp_path: Path) -> None:
    """GStreamer's registry is written after its scan: a folder without it is not taken, so a
    later warm-up takes it whole instead of every desktop scanning again."""
    template = tmp_path / "template"
    template.mkdir()
    blob = pack({CACHE: None, f"{CACHE}/index": b"i"})  # what tar packs: the whole ones
    guest = PackingGuest(blob, partial=(GST,))
    assert harvest_caches(template, guest) == [CACHE]
    assert missing_caches(template) == [GST]
    assert not (template / GST).exists()
    tar = next(command for command in guest.commands if command[0] == "tar")
    assert GST not in tar


def test_a_pack_with_a_link_or_a_stray_name_adds_nothing(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    for blob in (
        pack({CACHE: None}, link=f"{CACHE}/passwd"),
        pack({CACHE: None, ".bashrc": b"evil"}),
        pack({CACHE: None, f"{CACHE}/../../.profile": b"evil"}),
    ):
        assert harvest_caches(template, PackingGuest(blob, partial=(GST,))) == []
        assert missing_caches(template) == [CACHE, GST]
    assert not (template / ".bashrc").exists() and not (template / ".profile").exists()


def test_a_desktop_without_the_cache_gives_nothing(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    assert harvest_caches(template, PackingGuest(None)) == []
    assert missing_caches(template) == [CACHE, GST]
