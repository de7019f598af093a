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
import shutil
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from pytest_osworld.errors import AssetMissing, EnvironmentFailure, OSWorldError


class AssetError(EnvironmentFailure):
    """An asset could not be fetched (after retries) or its URL is not usable."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pytest-osworld/assets`` (``~/.cache/...`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-osworld" / "assets"


class AssetCache:
    """Resolves asset URLs to local files, downloading into the cache when allowed."""

    def __init__(self, root: Path, offline: bool = False, attempts: int = 3, timeout: float = 60.0) -> None:
        self.root = root
        self.offline = offline
        self.attempts = attempts
        self.timeout = timeout

    def path_for(self, url: str) -> Path:
        """Where ``url`` lives in the cache (it may not exist yet)."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise AssetError(f"not a cacheable URL: {url!r}")
        segments = [urllib.parse.unquote(s) for s in parts.path.split("/") if s]
        if any(s in (".", "..") or "\x00" in s for s in segments) or ".." in parts.netloc:
            raise AssetError(f"asset URL {url!r} has a path that escapes the cache")
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
        target.parent.mkdir(parents=True, exist_ok=True)
        last: Exception | None = None
        for attempt in range(1, self.attempts + 1):
            try:
                with urllib.request.urlopen(url, timeout=self.timeout) as response:
                    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
                    with os.fdopen(fd, "wb") as out:
                        shutil.copyfileobj(response, out)
                os.replace(tmp, target)
                return
            except (urllib.error.URLError, OSError) as exc:
                last = exc
                if attempt < self.attempts:
                    time.sleep(min(2.0 * attempt, 5.0))
        raise AssetError(
            f"could not download {url} after {self.attempts} attempts: {last}; "
            f"pre-seed {target} or run with --offline to skip such tasks"
        ) from last


__all__ = ["AssetCache", "AssetError", "AssetMissing", "OSWorldError", "default_cache_dir"]
