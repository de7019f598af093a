from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from pytest_osworld.errors import AssetMissing
from pytest_osworld.task.assets import AssetCache, AssetError

HF = "https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/abc/file.xlsx"


def test_layout_mirrors_the_url(tmp_path: Path) -> None:
    cache = AssetCache(tmp_path)
    assert (
        cache.path_for(HF)
        == tmp_path
        / "huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/abc/file.xlsx"
    )
    assert cache.path_for("http://h:8080/a?b=1").name.startswith("a.q")


@pytest.mark.parametrize("url", ["https://h/../../etc/passwd", "https://h/a/%2e%2e/%2e%2e/x", "ftp://h/a"])
def test_urls_that_escape_or_are_odd_are_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(AssetError):
        AssetCache(tmp_path).path_for(url)


def test_offline_missing_is_asset_missing(tmp_path: Path) -> None:
    with pytest.raises(AssetMissing, match=r"https://h/x\.txt is not in the cache"):
        AssetCache(tmp_path, offline=True).fetch("https://h/x.txt")


def test_pre_seeded_asset_needs_no_network(tmp_path: Path) -> None:
    cache = AssetCache(tmp_path, offline=True)
    target = cache.path_for(HF)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"xlsx")
    assert cache.is_cached(HF) and cache.fetch(HF).read_bytes() == b"xlsx"


def test_relative_and_file_urls(tmp_path: Path) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "a.txt").write_text("A")
    cache = AssetCache(tmp_path / "cache", offline=True)
    assert cache.fetch("assets/a.txt", base_dir=tmp_path).read_text() == "A"
    assert cache.fetch((tmp_path / "assets" / "a.txt").as_uri()).read_text() == "A"
    with pytest.raises(AssetError, match="does not exist"):
        cache.fetch("assets/missing.txt", base_dir=tmp_path)


def test_download_from_a_local_server_is_cached(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    (served / "doc.txt").write_text("from server")
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(served), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/doc.txt"
        cache = AssetCache(tmp_path / "cache", attempts=1, timeout=5)
        assert cache.fetch(url).read_text() == "from server"
        (served / "doc.txt").unlink()
        assert cache.fetch(url).read_text() == "from server"  # from the cache now
        with pytest.raises(AssetError, match="after 1 attempts"):
            cache.fetch(url.replace("doc.txt", "gone.txt"))
    finally:
        server.shutdown()
