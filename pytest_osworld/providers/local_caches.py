"""What a desktop session computes as it draws, that every later session can reuse.

GNOME Shell draws through Mesa's software renderer, which compiles each of its shaders the
first time something needs it and keeps it in ``~/.cache/mesa_shader_cache``. Every restore
lays the home template down again, so every desktop paid for them: its start about 0.6 s of
CPU, and the first window, menu and overview a task opens a dozen shaders more (docs/desktop.md,
"CPU"). The cache is no state of a task: it is keyed by the shaders, and each of its entries
is written whole (Mesa renames it into place).

GStreamer is the other: GNOME Shell's screencast service starts with the shell, and its
first ``Gst.init`` in an empty home runs the plugin scanner over every installed plugin
(about 1 CPU-second a desktop) to write ``~/.cache/gstreamer-1.0``'s registry. The registry
records each plugin file's size and time, so a desktop given it checks them and scans
nothing; it is written to a temporary file and renamed into place.

Once per template, the provider starts a desktop that no task will get, has it draw a
terminal window, its menus and the overview (:data:`WARM_UP_CODE`,
:mod:`pytest_osworld.guest.shader_warm_up`), and :func:`harvest_caches` copies its cache
and its GStreamer registry into the template, so every desktop after it starts with those
shaders compiled and those plugins known. Only a desktop driven by that code alone is
harvested: one a task (an agent's code) has run in could have written entries for later
tasks' desktops to load. (The file indexer's database,
built in an empty home at each start too, is not taken: a database copied while its owner
may be writing it could be torn.) A cache is written into the template whole or not at all
(an atomic rename of a complete folder), so a sandbox copying the template at that moment
sees either.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from pytest_osworld.errors import GuestError
from pytest_osworld.guest_client.api import Guest

#: The home's folders (relative) that a started session fills and every session can reuse,
#: each with the file (a shell pattern) that is there once the folder holds a whole cache.
SESSION_CACHES = {
    ".cache/mesa_shader_cache": "index",
    ".cache/gstreamer-1.0": "registry.*.bin",
}
#: What the warm-up desktop runs (in its action worker) before its caches are taken.
WARM_UP_CODE = "from pytest_osworld.guest.shader_warm_up import exercise\nexercise()"
#: The warm-up's bound (it takes about 5 s on a quiet 2-core machine).
WARM_UP_SECONDS = 60.0
#: Where the guest packs them.
PACKED = "/tmp/.osworld-session-caches.tar"
#: The largest pack taken (the caches are a few MB; anything bigger is not what we asked for).
MAX_PACK_BYTES = 64 * 1024 * 1024


def missing_caches(template: Path) -> list[str]:
    """The :data:`SESSION_CACHES` the template does not hold yet."""
    return [path for path in SESSION_CACHES if not (template / path).is_dir()]


def harvest_caches(template: Path, guest: Guest, home: str = "/home/user") -> list[str]:
    """Copy the caches the template lacks from the desktop of ``guest`` (the warm-up's, never a
    task's) into ``template``; return the paths added. A failure leaves the template as it was and
    adds nothing (the next run's warm-up tries again)."""
    wanted = missing_caches(template)
    present = [path for path in wanted if _guest_has(guest, f"{home}/{path}", SESSION_CACHES[path])]
    if not present:
        return []
    try:
        packed = guest.execute(["tar", "-C", home, "-cf", PACKED, *present], timeout=60.0)
        if packed.returncode != 0:
            return []
        blob = guest.read_file(PACKED)
        guest.execute(["rm", "-f", PACKED], timeout=10.0)
    except GuestError:
        return []
    if len(blob) > MAX_PACK_BYTES:
        return []
    staging = Path(tempfile.mkdtemp(prefix=".caches-", dir=template.parent))
    try:
        if not _extract(blob, staging, present):
            return []
        added = []
        for path in present:
            target = template / path
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(staging / path, target)  # whole or not at all
            except OSError:
                continue  # another worker's harvest came first, or the pack lacked it
            added.append(path)
        return added
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _guest_has(guest: Guest, folder: str, whole: str) -> bool:
    """Whether the guest's ``folder`` holds a file matching ``whole`` (the cache is complete)."""
    try:
        return guest.execute(["sh", "-c", f'ls "{folder}"/{whole}'], timeout=10.0).returncode == 0
    except GuestError:
        return False


def _extract(blob: bytes, into: Path, prefixes: list[str]) -> bool:
    """Extract a pack of folders and plain files under ``prefixes`` only; False (nothing kept)
    for anything else: a link, a device, a name that leaves its folder."""
    with tarfile.open(fileobj=io.BytesIO(blob)) as pack:
        members = pack.getmembers()
        for member in members:
            name = PurePosixPath(member.name)
            inside = any(
                name == PurePosixPath(p)
                or PurePosixPath(p) in name.parents
                or (member.isdir() and name in PurePosixPath(p).parents)  # a folder above it
                for p in prefixes
            )
            plain = member.isfile() or member.isdir()
            if not inside or name.is_absolute() or ".." in name.parts or not plain:
                return False
        for member in members:
            member.mode = 0o755 if member.isdir() else 0o644
            pack.extract(member, into, set_attrs=False)
    return True
