"""OSWorld's own VM image as a vagrant-libvirt box, made once per image content.

OSWorld distributes its Ubuntu desktop as ``Ubuntu.qcow2`` (about 23 GB), zipped on its
Hugging Face repository. :func:`prepare_image` turns either file into a box Vagrant can
boot, without copying the 23 GB:

1. the file's SHA-256 (remembered per path, size and modification time, so a second
   session does not read the file again) names everything made from it;
2. a zip is unpacked once, into the cache (the only full copy, and only for a zip);
3. the box's disk is a small qcow2 **overlay** whose backing file is the image (absolute
   path), so vagrant-libvirt uploads a few hundred kilobytes into its storage pool and the
   VM reads the image through the chain (box volume, then the image; the image is never
   written). The image must stay where it is and be readable by libvirt's QEMU user;
4. the box is ``osworld/ubuntu-image-<sha12>``, built under a file lock, with a progress
   bar for the slow steps (hash, unzip).

The box itself says nothing about users or servers; the provider's Vagrantfile logs in as
OSWorld's ``user``/``password`` and either deploys our guest server (``server=ours``) or
talks to the image's own (``server=osworld``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pytest_osworld.providers.vagrant_config import VagrantError

#: The box name prefix; the image's hash follows.
BOX_PREFIX = "osworld/ubuntu-image-"
#: Bytes read per step when hashing or unpacking.
CHUNK = 8 << 20


@dataclass(frozen=True)
class ImportedImage:
    """An OSWorld image made into a box: the source file, its hash, the box."""

    source: Path
    sha256: str
    disk: Path
    box: str
    box_file: Path

    def describe(self) -> str:
        """The provenance line: file name and hash."""
        return f"OSWorld image {self.source.name} (sha256 {self.sha256})"


def _progress(total: int, desc: str, stream: TextIO | None) -> object:
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=desc,
        file=stream if stream is not None else sys.__stderr__,
        mininterval=2.0,
        leave=False,
    )


def file_sha256(path: Path, cache_dir: Path, progress: TextIO | None = None) -> str:
    """SHA-256 of ``path``, read once per (path, size, mtime) and remembered in ``cache_dir``."""
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    memo = cache_dir / "hashes.json"
    known: dict[str, str] = {}
    if memo.is_file():
        try:
            loaded = json.loads(memo.read_text())
            known = {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            known = {}
    if key in known:
        return known[key]
    digest = hashlib.sha256()
    bar = _progress(stat.st_size, f"hashing {path.name}", progress)
    with path.open("rb") as source, bar:  # type: ignore[attr-defined]
        while chunk := source.read(CHUNK):
            digest.update(chunk)
            bar.update(len(chunk))  # type: ignore[attr-defined]
    value = digest.hexdigest()
    known[key] = value
    temporary = memo.with_suffix(".tmp")
    temporary.write_text(json.dumps(known, indent=1))
    os.replace(temporary, memo)
    return value


def unpack_zip(archive: Path, target_dir: Path, progress: TextIO | None = None) -> Path:
    """The ``.qcow2`` inside ``archive``, unpacked once into ``target_dir`` (atomically)."""
    try:
        with zipfile.ZipFile(archive) as bundle:
            members = [info for info in bundle.infolist() if info.filename.endswith(".qcow2")]
            if not members:
                raise VagrantError(
                    f"{archive} holds no .qcow2 file; give OSWorld's Ubuntu.qcow2.zip or the .qcow2 itself"
                )
            member = max(members, key=lambda info: info.file_size)
            target = target_dir / Path(member.filename).name
            if target.is_file() and target.stat().st_size == member.file_size:
                return target
            target_dir.mkdir(parents=True, exist_ok=True)
            partial = target.with_suffix(".qcow2.part")
            bar = _progress(member.file_size, f"unpacking {member.filename}", progress)
            with bundle.open(member) as source, partial.open("wb") as sink, bar:  # type: ignore[attr-defined]
                while chunk := source.read(CHUNK):
                    sink.write(chunk)
                    bar.update(len(chunk))  # type: ignore[attr-defined]
            os.replace(partial, target)
            return target
    except zipfile.BadZipFile as exc:
        raise VagrantError(f"{archive} is not a readable zip ({exc}); download it again") from exc


def qcow2_virtual_size(disk: Path) -> int:
    """The virtual size in bytes of a qcow2 image, from ``qemu-img info``."""
    try:
        proc = subprocess.run(
            ["qemu-img", "info", "--output=json", str(disk)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except FileNotFoundError:
        raise VagrantError("qemu-img is not installed; run scripts/install-vagrant.sh") from None
    if proc.returncode != 0:
        raise VagrantError(f"qemu-img cannot read {disk}: {proc.stderr.strip()}")
    info = json.loads(proc.stdout)
    if info.get("format") != "qcow2":
        raise VagrantError(f"{disk} is a {info.get('format')} image, not qcow2")
    return int(info["virtual-size"])


def make_box(disk: Path, sha256: str, boxes_dir: Path) -> tuple[str, Path]:
    """A ``.box`` whose disk is an overlay backed by ``disk``: its name and file."""
    name = BOX_PREFIX + sha256[:12]
    box_file = boxes_dir / f"ubuntu-image-{sha256[:12]}.box"
    if box_file.is_file():
        return name, box_file
    size = qcow2_virtual_size(disk)
    work = boxes_dir / f".ubuntu-image-{sha256[:12]}.work"
    work.mkdir(parents=True, exist_ok=True)
    overlay = work / "box.img"
    overlay.unlink(missing_ok=True)
    proc = subprocess.run(
        ["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(disk.resolve()), str(overlay)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise VagrantError(f"qemu-img could not make an overlay on {disk}: {proc.stderr.strip()}")
    metadata = {"provider": "libvirt", "format": "qcow2", "virtual_size": math.ceil(size / (1 << 30))}
    (work / "metadata.json").write_text(json.dumps(metadata))
    (work / "Vagrantfile").write_text(
        "# OSWorld's image, made by pytest-osworld (disk: an overlay on "
        f"{disk.resolve()}, sha256 {sha256})\n"
        'Vagrant.configure("2") do |config|\n'
        "  config.vm.provider :libvirt do |lv|\n"
        '    lv.disk_bus = "virtio"\n'
        "  end\n"
        "end\n"
    )
    partial = box_file.with_suffix(".box.part")
    with tarfile.open(partial, "w") as tar:
        for member in ("metadata.json", "Vagrantfile", "box.img"):
            tar.add(str(work / member), arcname=member)
    os.replace(partial, box_file)
    shutil.rmtree(work)
    return name, box_file


def prepare_image(image_file: Path, cache_dir: Path, progress: TextIO | None = None) -> ImportedImage:
    """Hash, unpack (zip) and box OSWorld's image once; later calls reuse what was made."""
    from filelock import FileLock

    if not image_file.is_file():
        raise VagrantError(
            f"image_file {image_file} does not exist; download it with "
            "`pytest-osworld-image download --dest DIR` or give the path of Ubuntu.qcow2(.zip)"
        )
    if image_file.suffix not in (".qcow2", ".zip"):
        raise VagrantError(f"image_file {image_file}: expected a .qcow2 file or OSWorld's .zip of one")
    root = cache_dir / "osworld-image"
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / "import.lock")):
        sha256 = file_sha256(image_file, root, progress)
        disk = image_file
        if image_file.suffix == ".zip":
            disk = unpack_zip(image_file, root / sha256[:12], progress)
        box, box_file = make_box(disk, sha256, root / "boxes")
    return ImportedImage(source=image_file, sha256=sha256, disk=disk.resolve(), box=box, box_file=box_file)
