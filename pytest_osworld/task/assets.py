"""The asset cache: every URL a task fetches, resolved through a folder keyed by URL.

Layout (documented so a user can pre-seed it): an ``http(s)://host/a/b/c.xlsx`` URL is
stored at ``<cache>/<host>/a/b/c.xlsx``; a URL with a query string gets a short hash of
the query appended to its last path part. OSWorld's Hugging Face file cache therefore
maps onto ``<cache>/huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/``.
``file://`` URLs and paths relative to the task file are read in place.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_osworld.errors import AssetMissing, EnvironmentFailure, OSWorldError

if TYPE_CHECKING:
    from pytest_osworld.task.model import Task

#: The largest asset downloaded into the cache (OSWorld's biggest files are videos of a
#: few hundred MB); a larger answer is refused and nothing is kept.
MAX_ASSET_BYTES = 4 << 30
#: The longest path part (bytes) a cache file name may have (the filesystem's NAME_MAX).
MAX_NAME_BYTES = 255


class AssetError(EnvironmentFailure):
    """An asset could not be fetched (after retries) or its URL is not usable."""


class AssetTooLarge(AssetError):
    """A download is larger than the cache accepts; retrying does not help."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pytest-osworld/assets`` (``~/.cache/...`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-osworld" / "assets"


class AssetCache:
    """Resolves asset URLs to local files, downloading into the cache when allowed."""

    def __init__(
        self,
        root: Path,
        offline: bool = False,
        attempts: int = 3,
        timeout: float = 60.0,
        max_bytes: int = MAX_ASSET_BYTES,
    ) -> None:
        self.root = root
        self.offline = offline
        self.attempts = attempts
        self.timeout = timeout
        #: Downloads larger than this many bytes are refused (:class:`AssetTooLarge`).
        self.max_bytes = max_bytes

    def path_for(self, url: str) -> Path:
        """Where ``url`` lives in the cache (it may not exist yet)."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise AssetError(f"not a cacheable URL: {url!r}")
        segments = [urllib.parse.unquote(s) for s in parts.path.split("/") if s]
        if any(s in (".", "..") or "\x00" in s or "/" in s for s in segments) or ".." in parts.netloc:
            raise AssetError(f"asset URL {url!r} has a path that escapes the cache")
        if any(len(s.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for s in segments):
            raise AssetError(
                f"asset URL {url!r} has a path part longer than {MAX_NAME_BYTES} bytes, "
                "which cannot be a file name in the cache; shorten the URL or use a relative path"
            )
        if not segments:
            segments = ["index"]
        if parts.query:
            digest = hashlib.sha256(parts.query.encode()).hexdigest()[:12]
            segments[-1] = f"{segments[-1]}.q{digest}"
        host = parts.netloc.split("@")[-1].replace(":", "_")
        path = self.root.joinpath(host, *segments)
        if not path.resolve().is_relative_to(self.root.resolve()):
            raise AssetError(f"asset URL {url!r} escapes the cache")
        return path

    def is_cached(self, url: str, base_dir: Path | None = None) -> bool:
        """True if ``url`` can be resolved without the network."""
        local = self._local_path(url, base_dir)
        if local is not None:
            return local.is_file()
        return self.path_for(url).is_file()

    def fetch(self, url: str, base_dir: Path | None = None) -> Path:
        """The local file for ``url``: in place for local paths, else from the cache.

        Offline and not cached: :class:`AssetMissing` (the task is skipped).
        """
        local = self._local_path(url, base_dir)
        if local is not None:
            if not local.is_file():
                raise AssetError(f"asset {url!r} does not exist (looked at {local})")
            return local
        target = self.path_for(url)
        if target.is_file():
            return target
        if self.offline:
            raise AssetMissing(url, str(target))
        self._download(url, target)
        return target

    def _local_path(self, url: str, base_dir: Path | None) -> Path | None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme == "file":
            return Path(urllib.parse.unquote(parts.path))
        if parts.scheme in ("http", "https"):
            return None
        if parts.scheme:
            raise AssetError(f"unsupported URL scheme in {url!r}: use http(s), file:// or a relative path")
        path = Path(url)
        return path if path.is_absolute() or base_dir is None else base_dir / path

    def _download(self, url: str, target: Path) -> None:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AssetError(f"cannot create the cache folder for {url}: {exc}") from exc
        last: Exception | None = None
        for attempt in range(1, self.attempts + 1):
            try:
                with urllib.request.urlopen(url, timeout=self.timeout) as response:
                    self._copy_bounded(url, response, target)
                return
            except AssetTooLarge:
                raise
            except (urllib.error.URLError, OSError) as exc:
                last = exc
                if attempt < self.attempts:
                    time.sleep(min(2.0 * attempt, 5.0))
        raise AssetError(
            f"could not download {url} after {self.attempts} attempts: {last}; "
            f"pre-seed {target} or run with --offline to skip such tasks"
        ) from last

    def _copy_bounded(self, url: str, response: Any, target: Path) -> None:
        """Stream ``response`` into ``target`` through a temporary file, at most ``max_bytes``.

        The declared ``Content-Length`` is checked first, and the bytes actually received
        are counted (a server may send no length, or lie about it). On any failure the
        partial file is removed and ``target`` is left untouched.
        """
        too_large = (
            f"asset {url} is larger than the cache's limit of {self.max_bytes} bytes; "
            f"if it is genuine, pre-seed {target} by hand"
        )
        declared = response.headers.get("Content-Length") if hasattr(response, "headers") else None
        if declared is not None and declared.strip().isdigit() and int(declared) > self.max_bytes:
            raise AssetTooLarge(f"{too_large} (it declares {int(declared)} bytes)")
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as out:
                received = 0
                while chunk := response.read(1 << 20):
                    received += len(chunk)
                    if received > self.max_bytes:
                        raise AssetTooLarge(f"{too_large} (received more than that)")
                    out.write(chunk)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


__all__ = [
    "MAX_ASSET_BYTES",
    "AssetCache",
    "AssetError",
    "AssetMissing",
    "AssetTooLarge",
    "OSWorldError",
    "check_assets_available",
    "default_cache_dir",
    "task_asset_urls",
]


def task_asset_urls(task: Task) -> list[str]:
    """Every file ``task`` fetches through the asset cache: its ``download`` steps' URLs and
    its ``cloud_file`` getters' paths, in task order."""
    urls = [
        f["url"] for step in task.config if step.type == "download" for f in step.parameters.get("files", [])
    ]
    urls += [
        url
        for getter in task.evaluator.getters()
        if getter.type == "cloud_file"
        for url in (
            getter.config["path"]
            if isinstance(getter.config.get("path"), list)
            else [getter.config.get("path")]
        )
    ]
    return [url for url in urls if isinstance(url, str)]


def check_assets_available(task: Task, assets: AssetCache) -> None:
    """Offline runs skip a task whose assets are not cached, before touching the desktop.

    Raises :class:`~pytest_osworld.errors.AssetMissing` naming the first missing URL (a
    skip in pytest, an error from the envs' ``reset``). Online, nothing is checked: the
    setup steps download what they need.
    """
    if not assets.offline:
        return
    for url in task_asset_urls(task):
        if not assets.is_cached(url, task.path.parent):
            assets.fetch(url, task.path.parent)  # raises AssetMissing with the URL named
