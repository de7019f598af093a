"""pytest-osworld-fetch against a local stand-in of the Hugging Face Hub.

The stand-in is a real HTTP server answering what ``hf_hub_download`` asks for: ``HEAD``
on ``/datasets/<repo>/resolve/<rev>/<path>`` gets a 302 to a "CDN" on another origin
(``localhost`` instead of ``127.0.0.1``) carrying ``X-Repo-Commit``, ``X-Linked-Etag`` and
``X-Linked-Size``, as the real Hub answers for LFS files; ``GET`` on the CDN serves the
bytes, honouring ``Range``. A missing file is a 404 with ``X-Error-Code: EntryNotFound``.
"""

from __future__ import annotations

import hashlib
import http.server
import importlib.metadata
import io
import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_osworld.commands import fetch_assets as hub
from pytest_osworld.commands.fetch_assets import (
    FetchUsageError,
    HubFile,
    fetch_urls,
    parse_hub_url,
    task_urls,
)
from pytest_osworld.task.assets import AssetCache

REPO = "xlangai/ubuntu_osworld_file_cache"
BASE = f"https://huggingface.co/datasets/{REPO}/resolve/main"
COMMIT = "0123456789abcdef0123456789abcdef01234567"

#: Files of the stand-in's dataset (path in the repo -> bytes); names with a space and a '#'.
FILES = {
    "libreoffice_calc/t1/Order_Sales_Serial#.xlsx": b"xlsx " * 3000,
    "libreoffice_calc/t1/Order_Sales_Serial#_gold.xlsx": b"gold " * 2000,
    "vlc/t2/Ch4 Video Effect.mp4": bytes(range(256)) * 400,
}
#: A URL for each file, percent-encoded as OSWorld's tasks write them.
URLS = {path: f"{BASE}/{urllib.parse.quote(path)}" for path in FILES}
OTHER = "https://www.bbc.co.uk/"


@dataclass
class StandIn:
    """The stand-in hub's files, its scripted faults, and every request it saw."""

    files: dict[str, bytes]
    #: First GET of a path sends only this many bytes, then drops the connection.
    drop_after: dict[str, int] = field(default_factory=dict)
    #: First GET of a path answers 500.
    fail_once: set[str] = field(default_factory=set)
    #: First GET of a path sends only this many bytes, then stalls until the client goes.
    stall_after: dict[str, int] = field(default_factory=dict)
    #: When set, every /resolve request answers this status (the hub down).
    resolve_status: int | None = None
    #: The dataset the stand-in serves.
    repo: str = REPO
    #: (method, request path, Range header, Authorization header) per request.
    seen: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    port: int = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def gets(self) -> list[tuple[str, str | None]]:
        return [(path, rng) for method, path, rng, _ in self.seen if method == "GET"]


def _handler(state: StandIn) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def _answer(self, body: bool) -> None:
            state.seen.append(
                (self.command, self.path, self.headers.get("Range"), self.headers.get("Authorization"))
            )
            path = urllib.parse.unquote(self.path)
            prefix = f"/datasets/{state.repo}/resolve/main/"
            by_sha = {hashlib.sha256(data).hexdigest(): name for name, data in state.files.items()}
            if path.startswith(prefix):
                self._resolve(path.removeprefix(prefix))
            elif path.startswith("/cdn/") and path.removeprefix("/cdn/") in by_sha:
                self._serve(by_sha[path.removeprefix("/cdn/")], body)
            else:
                self._empty(404)

        def _resolve(self, name: str) -> None:
            if state.resolve_status is not None:
                self._empty(state.resolve_status)
                return
            if name not in state.files:
                self._empty(404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT})
                return
            data = state.files[name]
            sha = hashlib.sha256(data).hexdigest()
            self._empty(
                302,
                {
                    "Location": f"http://localhost:{state.port}/cdn/{sha}",
                    "X-Repo-Commit": COMMIT,
                    "X-Linked-Etag": f'"{sha}"',
                    "X-Linked-Size": str(len(data)),
                    "ETag": '"pointer-etag"',
                },
            )

        def _serve(self, name: str, body: bool) -> None:
            data = state.files[name]
            if body and name in state.fail_once:
                state.fail_once.discard(name)
                self._empty(500)
                return
            start = 0
            match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
            if match:
                start = int(match.group(1))
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(data) - start))
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Disposition", f'attachment; filename="{name.rsplit("/", 1)[-1]}";')
            self.end_headers()
            if not body:
                return
            stall = state.stall_after.pop(name, None)
            if stall is not None:
                self.wfile.write(data[start:stall])
                self.wfile.flush()
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:  # until the client goes (EOF readable)
                    if select.select([self.connection], [], [], 0.2)[0]:
                        break
                self.close_connection = True
                return
            cut = state.drop_after.pop(name, None)
            if cut is not None:
                self.wfile.write(data[start:cut])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            self.wfile.write(data[start:])

        def _empty(self, status: int, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


@pytest.fixture(autouse=True)
def _hf_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing touches the real home, the real Hub or a real token."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    state = StandIn(files=dict(FILES))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True  # a stalled answer must not hold the teardown
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def write_task(folder: Path, task_id: str, downloads: list[str], gold: str | None, tabs: list[str]) -> Path:
    """A minimal OSWorld task: download steps, a chrome_open_tabs step, a cloud_file gold file."""
    config: list[dict[str, object]] = [
        {
            "type": "download",
            "parameters": {"files": [{"url": u, "path": f"/home/user/{i}"} for i, u in enumerate(downloads)]},
        },
    ]
    if tabs:
        config.append({"type": "chrome_open_tabs", "parameters": {"urls_to_open": tabs}})
    evaluator: dict[str, object] = {
        "func": "compare_table",
        "result": {"type": "vm_file", "path": "/x", "dest": "x"},
    }
    if gold is not None:
        evaluator["expected"] = {"type": "cloud_file", "path": gold, "dest": "gold"}
    path = folder / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"id": task_id, "instruction": "do it", "config": config, "evaluator": evaluator})
    )
    return path


@pytest.fixture
def two_tasks(tmp_path: Path) -> list[Path]:
    calc, vlc = list(FILES)[:2], list(FILES)[2]
    folder = tmp_path / "tasks" / "libreoffice_calc"
    return [
        write_task(folder, "t1", [URLS[calc[0]]], URLS[calc[1]], [OTHER]),
        write_task(tmp_path / "tasks" / "vlc", "t2", [URLS[vlc]], None, []),
    ]


def cli_args(tmp_path: Path, *tasks: Path) -> list[str]:
    """The command's task arguments, with the asset cache and huggingface_hub's cache in tmp_path."""
    return [*map(str, tasks), "--cache", str(tmp_path / "cache"), "--hf-cache", str(tmp_path / "hf")]


def run(
    stand_in: StandIn, cache_dir: Path, tmp_path: Path, urls: list[str], workers: int = 2
) -> hub.FetchReport:
    return fetch_urls(
        urls, AssetCache(cache_dir), stand_in.endpoint, tmp_path / "hf-cache", workers, progress=io.StringIO()
    )


# -- URLs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{BASE}/a/b.xlsx", HubFile(f"{BASE}/a/b.xlsx", REPO, "main", "a/b.xlsx")),
        (
            f"{BASE}/a/Serial%23%20x.xlsx",
            HubFile(f"{BASE}/a/Serial%23%20x.xlsx", REPO, "main", "a/Serial# x.xlsx"),
        ),
        (
            "http://huggingface.co/datasets/o/r/resolve/refs%2Fpr%2F1/f.txt",
            HubFile(
                "http://huggingface.co/datasets/o/r/resolve/refs%2Fpr%2F1/f.txt", "o/r", "refs/pr/1", "f.txt"
            ),
        ),
        (f"https://huggingface.co/datasets/{REPO}/blob/main/a.xlsx", None),  # the web page, not the file
        (f"{BASE}/a.xlsx?download=true", None),
        ("https://huggingface.co/o/model/resolve/main/a.bin", None),  # a model repo, not a dataset
        (f"https://huggingface.co/datasets/{REPO}/resolve/main/", None),
        ("https://example.com/datasets/o/r/resolve/main/a", None),
    ],
)
def test_parse_hub_url(url: str, expected: HubFile | None) -> None:
    assert parse_hub_url(url) == expected


def test_urls_are_collected_from_config_and_evaluator_only(tmp_path: Path) -> None:
    task = write_task(tmp_path / "d", "t", [URLS[next(iter(FILES))]], f"{BASE}/gold.xlsx", [OTHER])
    data = json.loads(task.read_text())
    data["source"] = "https://not-an-asset.example/page"  # outside config and evaluator
    data["config"].append({"type": "execute", "parameters": {"command": ["wget https://in.a/command"]}})
    data["evaluator"]["options"] = {"urls": [["https://nested.example/x"]]}
    task.write_text(json.dumps(data))
    assert task_urls([task]) == [
        URLS[next(iter(FILES))],
        OTHER,
        f"{BASE}/gold.xlsx",
        "https://nested.example/x",
    ]


def test_folders_are_searched_and_manifests_inside_them_ignored(
    tmp_path: Path, two_tasks: list[Path]
) -> None:
    (tmp_path / "tasks" / "test_all.json").write_text(json.dumps({"vlc": ["t2"]}))
    (tmp_path / "tasks" / "notes.json").write_text("not json")
    assert hub.find_task_files([tmp_path / "tasks"]) == sorted(two_tasks)
    # a task the plugin would not accept (an OmniACT task has no evaluator) is read, not refused
    omniact = tmp_path / "tasks" / "omniact" / "click.json"
    omniact.parent.mkdir()
    omniact.write_text(json.dumps({"instruction": "click OK", "image": "click.png"}))
    found = hub.find_task_files([tmp_path / "tasks"])
    assert omniact in found
    assert task_urls(found) == task_urls(two_tasks)
    with pytest.raises(FetchUsageError, match=r"test_all\.json is not an OSWorld task"):
        hub.find_task_files([tmp_path / "tasks" / "test_all.json"])
    with pytest.raises(FetchUsageError, match="no OSWorld task file found"):
        hub.find_task_files([_empty_dir(tmp_path)])


def _empty_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def test_manifest_keeps_only_the_tasks_it_lists(tmp_path: Path, two_tasks: list[Path]) -> None:
    manifest = tmp_path / "small.json"
    manifest.write_text(json.dumps({"vlc": ["t2"]}))
    assert task_urls(two_tasks, manifest) == [URLS["vlc/t2/Ch4 Video Effect.mp4"]]
    manifest.write_text(json.dumps(["t2"]))
    with pytest.raises(FetchUsageError, match="expected an object of domain -> list of task ids"):
        task_urls(two_tasks, manifest)


# -- fetching -----------------------------------------------------------------------------


def test_fetches_the_hub_files_of_two_tasks_into_an_empty_cache(
    stand_in: StandIn, tmp_path: Path, two_tasks: list[Path]
) -> None:
    cache_dir = tmp_path / "cache"
    report = run(stand_in, cache_dir, tmp_path, task_urls(two_tasks))
    assert report.ok, report.failed
    assert report.fetched == {URLS[p]: len(data) for p, data in FILES.items()}
    assert report.other == [OTHER]
    offline = AssetCache(cache_dir, offline=True)
    for path, data in FILES.items():
        expected_at = cache_dir / "huggingface.co" / "datasets" / REPO / "resolve" / "main" / path
        assert offline.path_for(URLS[path]) == expected_at
        assert expected_at.read_bytes() == data
        assert offline.fetch(URLS[path]) == expected_at
        assert expected_at.stat().st_nlink == 2  # hard-linked to huggingface_hub's blob, not copied
    assert not list(cache_dir.rglob(".part-*"))


def test_a_second_run_fetches_nothing(stand_in: StandIn, tmp_path: Path, two_tasks: list[Path]) -> None:
    urls = task_urls(two_tasks)
    assert len(run(stand_in, tmp_path / "cache", tmp_path, urls).fetched) == 3
    stand_in.seen.clear()
    again = run(stand_in, tmp_path / "cache", tmp_path, urls)
    assert again.fetched == {}
    assert sorted(again.cached) == sorted(URLS.values())
    assert stand_in.seen == []


@pytest.mark.parametrize("drop_at_chunks", [0.5, 1.5])
def test_a_dropped_connection_resumes_in_the_same_run(
    stand_in: StandIn, tmp_path: Path, drop_at_chunks: float
) -> None:
    """huggingface_hub retries a broken transfer with a Range request from the last whole
    chunk it wrote (``DOWNLOAD_CHUNK_SIZE``, 10 MiB); bytes after that chunk are fetched again."""
    from huggingface_hub import constants

    chunk = constants.DOWNLOAD_CHUNK_SIZE
    name = "vlc/big/video.mp4"
    stand_in.files[name] = hashlib.sha256(b"seed").digest() * (3 * chunk // 32 - 100)
    stand_in.drop_after[name] = int(drop_at_chunks * chunk)
    url = f"{BASE}/{name}"
    report = run(stand_in, tmp_path / "cache", tmp_path, [url])
    assert report.ok, report.failed
    resumed_from = int(drop_at_chunks) * chunk
    assert [rng for _, rng in stand_in.gets()] == [None, f"bytes={resumed_from}-" if resumed_from else None]
    assert AssetCache(tmp_path / "cache").path_for(url).read_bytes() == stand_in.files[name]


def test_a_failed_download_leaves_no_partial_file_and_the_next_run_fetches_it(
    stand_in: StandIn, tmp_path: Path
) -> None:
    """huggingface_hub (since 1.18) keeps no partial file between runs: the next run starts
    the file over. Nothing half-written is left in either cache."""
    name = "libreoffice_calc/t1/Order_Sales_Serial#.xlsx"
    stand_in.fail_once.add(name)
    cache = AssetCache(tmp_path / "cache")
    first = run(stand_in, tmp_path / "cache", tmp_path, [URLS[name]])
    assert list(first.failed) == [URLS[name]]
    assert "500" in first.failed[URLS[name]]
    assert not cache.path_for(URLS[name]).exists()
    leftovers = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    leftovers += list((tmp_path / "hf-cache").rglob("*.incomplete"))
    assert leftovers == []
    stand_in.seen.clear()
    second = run(stand_in, tmp_path / "cache", tmp_path, [URLS[name]])
    assert second.fetched == {URLS[name]: len(FILES[name])}
    assert [rng for _, rng in stand_in.gets()] == [None]
    assert cache.path_for(URLS[name]).read_bytes() == FILES[name]


def test_a_url_the_cache_cannot_hold_fails_without_a_download(stand_in: StandIn, tmp_path: Path) -> None:
    url = f"{BASE}/os/t/{'x' * 300}.txt"
    report = run(stand_in, tmp_path / "cache", tmp_path, [url])
    assert list(report.failed) == [url]
    assert "longer than 255 bytes" in report.failed[url]
    assert stand_in.seen == []


def test_a_copy_is_placed_when_hard_links_fail(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_link(src: object, dst: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    name = "libreoffice_calc/t1/Order_Sales_Serial#_gold.xlsx"
    assert run(stand_in, tmp_path / "cache", tmp_path, [URLS[name]]).ok
    placed = AssetCache(tmp_path / "cache").path_for(URLS[name])
    assert placed.read_bytes() == FILES[name]
    assert placed.stat().st_nlink == 1


def test_the_token_is_sent_to_the_hub_and_never_printed(
    stand_in: StandIn,
    tmp_path: Path,
    two_tasks: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_standinsecret")
    code = hub.main([*cli_args(tmp_path, *two_tasks), "--endpoint", stand_in.endpoint])
    assert code == 0
    heads = [auth for method, _, _, auth in stand_in.seen if method == "HEAD"]
    assert heads and all(auth == "Bearer hf_standinsecret" for auth in heads)
    cdn = [auth for method, path, _, auth in stand_in.seen if path.startswith("/cdn/")]
    assert cdn and all(auth is None for auth in cdn)  # not sent off the hub's origin
    out, err = capsys.readouterr()
    assert "hf_standinsecret" not in out + err


def test_an_unreachable_hub_stops_the_run_after_the_files_in_flight(
    stand_in: StandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """huggingface_hub retries each file for about 25 s before giving up; once one file says
    the hub cannot be reached, the files not started yet are not tried."""
    import time

    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # huggingface_hub's backoff
    stand_in.resolve_status = 503
    urls = [f"{BASE}/os/t{i}/file{i}.txt" for i in range(6)]
    report = run(stand_in, tmp_path / "cache", tmp_path, urls, workers=1)
    assert sorted(report.failed) == sorted(urls)
    tried = {urllib.parse.unquote(path).rsplit("/resolve/main/", 1)[-1] for _, path, _, _ in stand_in.seen}
    # the first file, and perhaps the next one, which the single worker may already have taken
    assert "os/t0/file0.txt" in tried
    assert tried <= {"os/t0/file0.txt", "os/t1/file1.txt"}, tried
    not_tried = [
        u for u, reason in report.failed.items() if reason == hub.NOT_TRIED.format(endpoint=stand_in.endpoint)
    ]
    assert len(not_tried) == 6 - len(tried)
    first = report.failed[urls[0]]
    # huggingface_hub's generic "cannot locate the file" error, with the HTTP error under it
    assert re.fullmatch(
        r"LocalEntryNotFoundError: .* \(caused by HfHubHTTPError: [^()]*503[^()]*\)", first
    ), first


# -- the command --------------------------------------------------------------------------


def test_a_missing_file_fails_with_its_url_and_exit_1_while_the_others_are_fetched(
    stand_in: StandIn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = f"{BASE}/gimp/t3/not_there.png"
    good = URLS["vlc/t2/Ch4 Video Effect.mp4"]
    task = write_task(tmp_path / "tasks" / "gimp", "t3", [missing, good], None, [])
    code = hub.main([*cli_args(tmp_path, task), "--endpoint", stand_in.endpoint])
    out, _ = capsys.readouterr()
    assert code == 1
    assert "fetched 1 file(s) (102.4 kB)" in out
    assert "failed 1 file(s):" in out
    failed_block = out.split("failed 1 file(s):", 1)[1]
    assert f"  {missing}\n" in failed_block
    assert "EntryNotFound" in failed_block
    assert AssetCache(tmp_path / "cache").path_for(good).read_bytes() == FILES["vlc/t2/Ch4 Video Effect.mp4"]


def test_progress_and_summary_of_the_command(
    stand_in: StandIn,
    tmp_path: Path,
    two_tasks: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", stand_in.endpoint)  # no --endpoint: the environment's hub
    argv = cli_args(tmp_path, tmp_path / "tasks")
    assert hub.main([*argv, "--workers", "1"]) == 0
    out, err = capsys.readouterr()
    assert re.search(r"hub files: 100%\|.*\| 3/3 .*kB", err), err
    total = sum(len(d) for d in FILES.values())
    assert out.splitlines()[:4] == [
        f"fetched 3 file(s) ({total / 1000:.1f} kB)",
        "already cached 0 file(s)",
        hub.SUMMARY_OTHER.format(count=1),
        f"  {OTHER}",
    ]
    assert hub.main(argv) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[:2] == ["fetched 0 file(s) (0 B)", "already cached 3 file(s)"]
    assert "hub files" not in err


def test_huggingface_hubs_own_per_file_bars_are_shown(
    stand_in: StandIn,
    tmp_path: Path,
    two_tasks: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # huggingface_hub shows its bars on a terminal only; TQDM_POSITION=-1 is its switch to force them
    monkeypatch.setenv("TQDM_POSITION", "-1")
    argv = cli_args(tmp_path, *two_tasks)
    assert hub.main([*argv, "--endpoint", stand_in.endpoint, "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"Order_Sales_Serial#_gold\.xlsx: 100%\|.*\| 10\.0k/10\.0k", err), err
    assert re.search(r"Ch4 Video Effect\.mp4: 100%\|.*\| 102k/102k", err), err
    assert re.search(r"hub files: 100%\|.*\| 3/3", err), err


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert hub.main([str(_empty_dir(tmp_path))]) == 2
    assert "no OSWorld task file found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        hub.main([str(tmp_path), "--workers", "0"])
    assert exc.value.code == 2


def test_the_console_script_runs_against_hf_endpoint(
    stand_in: StandIn, tmp_path: Path, two_tasks: list[Path]
) -> None:
    (script,) = importlib.metadata.entry_points(group="console_scripts", name="pytest-osworld-fetch")
    assert script.load() is hub.main
    env = {**os.environ, "HF_ENDPOINT": stand_in.endpoint, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_osworld.commands.fetch_assets", str(tmp_path / "tasks")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "fetched 3 file(s)" in done.stdout
    default_cache = tmp_path / "xdg" / "pytest-osworld" / "assets"  # default_cache_dir() under XDG_CACHE_HOME
    for path, data in FILES.items():
        assert AssetCache(default_cache).path_for(URLS[path]).read_bytes() == data
    # huggingface_hub's own cache went under the test's HF_HOME, not the real home
    assert (
        tmp_path / "hf-home" / "hub" / f"datasets--{REPO.replace('/', '--')}" / "snapshots" / COMMIT
    ).is_dir()


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1500, "1.5 kB"),
        (999_999, "1.0 MB"),
        (12_345_678, "12.3 MB"),
        (3_200_000_000, "3.2 GB"),
    ],
)
def test_format_size(size: int, text: str) -> None:
    assert hub.format_size(size) == text
