"""``pytest-osworld-image``: get OSWorld's VM image and make it a Vagrant box ahead of a run.

``download`` fetches ``Ubuntu.qcow2.zip`` (about 12 GB; 23 GB unpacked) from OSWorld's
Hugging Face dataset into ``--dest``, with a progress bar, retries that continue where a
broken transfer stopped, and resume across runs (run the command again after an
interruption: the part already on disk is kept and only the rest is requested).
``--endpoint`` (or ``$HF_ENDPOINT``) points at a mirror; ``$HF_TOKEN`` is used as
huggingface_hub uses it.

``prepare`` does what the vagrant provider's ``image=osworld`` does at its first use
(hash, unzip, overlay box; :mod:`pytest_osworld.providers.osworld_image`), so a run can
start at once.

    pytest-osworld-image download --dest ~/osworld-image
    pytest-osworld-image prepare ~/osworld-image/Ubuntu.qcow2.zip
    pytest tasks --provider=vagrant --provider-arg image=osworld \\
        --provider-arg image_file=~/osworld-image/Ubuntu.qcow2.zip --agent=...
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import os
import re
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pytest_osworld.commands.fetch_assets import resolve_endpoint
from pytest_osworld.errors import EnvironmentFailure

#: Where OSWorld publishes its Ubuntu image (a Hugging Face dataset).
IMAGE_REPO = "xlangai/ubuntu_osworld"
IMAGE_FILE = "Ubuntu.qcow2.zip"
#: Bytes per read of the transfer.
CHUNK = 1 << 20
#: Tries of one transfer within a run (each continues where the last stopped).
TRANSFER_ATTEMPTS = 5


def download(
    dest: Path,
    endpoint: str | None,
    repo: str = IMAGE_REPO,
    filename: str = IMAGE_FILE,
    progress: TextIO | None = None,
) -> Path:
    """Download (or finish downloading) the image into ``dest``; its path.

    huggingface_hub resolves the file (endpoint, revision, token, the CDN redirect, size and
    ETag); the bytes go into ``dest/.<file>.<etag>.part``, which a later run continues with a
    ``Range`` request (huggingface_hub itself restarts from zero in each new process), and
    which is renamed into place once complete and, for an LFS file, its SHA-256 checked.
    """
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]

    endpoint = resolve_endpoint(endpoint)
    url = hf_hub_url(repo, filename, repo_type="dataset", endpoint=endpoint)
    meta = get_hf_file_metadata(url, endpoint=endpoint)
    target = dest / Path(filename).name
    etag = (meta.etag or "no-etag").strip('"')
    if target.is_file() and meta.size is not None and target.stat().st_size == meta.size:
        return target
    dest.mkdir(parents=True, exist_ok=True)
    partial = dest / f".{target.name}.{etag[:16]}.part"
    same_origin = urllib.parse.urlsplit(meta.location).netloc == urllib.parse.urlsplit(endpoint).netloc
    headers = dict(build_hf_headers()) if same_origin else {}
    for attempt in range(1, TRANSFER_ATTEMPTS + 1):
        try:
            _transfer(meta.location, headers, partial, meta.size, progress)
            break
        except (OSError, http.client.HTTPException) as exc:
            if attempt == TRANSFER_ATTEMPTS:
                raise
            print(f"transfer broken ({exc}); resuming (attempt {attempt + 1})", file=progress or sys.stderr)
            time.sleep(min(2.0 * attempt, 10.0))
    if meta.size is not None and partial.stat().st_size != meta.size:
        raise OSError(f"{partial} has {partial.stat().st_size} bytes, the hub says {meta.size}")
    if re.fullmatch(r"[0-9a-f]{64}", etag) and _sha256(partial) != etag:
        partial.unlink()
        raise OSError(f"{filename}: SHA-256 differs from the hub's ({etag}); the part was removed")
    os.replace(partial, target)
    return target


def _transfer(
    url: str, headers: dict[str, str], partial: Path, size: int | None, progress: TextIO | None
) -> None:
    """Append the bytes past ``partial``'s end; start over when the server ignores Range."""
    from tqdm import tqdm

    have = partial.stat().st_size if partial.exists() else 0
    if size is not None and have >= size:
        return
    request = urllib.request.Request(
        url, headers={**headers, **({"Range": f"bytes={have}-"} if have else {})}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        if have and response.status != 206:
            have = 0  # the server sent the whole file
        with (
            partial.open("ab" if have else "wb") as sink,
            tqdm(
                total=size,
                initial=have,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=partial.name.lstrip(".").rsplit(".", 2)[0],
                file=progress or sys.stderr,
                mininterval=1.0,
            ) as bar,
        ):
            while chunk := response.read1(CHUNK):
                sink.write(chunk)
                bar.update(len(chunk))
            if size is not None and sink.tell() < size:
                raise ConnectionError(f"the connection closed at {sink.tell()} of {size} bytes")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pytest-osworld-image", description="OSWorld's VM image for --provider=vagrant image=osworld"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    fetch = commands.add_parser("download", help="download Ubuntu.qcow2.zip from Hugging Face (resumable)")
    fetch.add_argument("--dest", type=Path, required=True, help="folder for the image")
    fetch.add_argument("--endpoint", help="Hub endpoint (default $HF_ENDPOINT, else huggingface.co)")
    fetch.add_argument("--repo", default=IMAGE_REPO, help=f"dataset (default {IMAGE_REPO})")
    fetch.add_argument("--file", default=IMAGE_FILE, help=f"file in the dataset (default {IMAGE_FILE})")
    prepare = commands.add_parser("prepare", help="hash, unzip and make the Vagrant box now")
    prepare.add_argument("image_file", type=Path, help="Ubuntu.qcow2 or the zip of it")
    prepare.add_argument(
        "--cache-dir",
        type=Path,
        help="the vagrant provider's cache_dir (default $XDG_CACHE_HOME/pytest-osworld/vagrant)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; 0 on success, 1 on failure (message on stderr)."""
    args = _parser().parse_args(argv)
    if args.command == "download":
        try:
            path = download(args.dest, args.endpoint, args.repo, args.file)
        except Exception as exc:  # huggingface_hub's errors have no common base worth naming
            print(
                f"pytest-osworld-image: download of {args.repo}/{args.file} failed: "
                f"{type(exc).__name__}: {exc}\n"
                "Run the same command again to resume; what is on disk is kept.",
                file=sys.stderr,
            )
            return 1
        print(path)
        print(f"next: pytest-osworld-image prepare {path}", file=sys.stderr)
        return 0
    from pytest_osworld.providers.osworld_image import prepare_image
    from pytest_osworld.providers.vagrant_config import VagrantOptions

    options = {"image": "osworld", "image_file": str(args.image_file)}
    if args.cache_dir:
        options["cache_dir"] = str(args.cache_dir)
    try:
        cache_dir = VagrantOptions.parse(options).cache_dir
        imported = prepare_image(args.image_file.expanduser().resolve(), cache_dir, progress=sys.stderr)
    except (ValueError, EnvironmentFailure) as exc:
        print(f"pytest-osworld-image: {exc}", file=sys.stderr)
        return 1
    print(f"{imported.describe()}\nbox {imported.box} ({imported.box_file}); disk {imported.disk}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
