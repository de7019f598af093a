"""``pytest-osworld-fetch``: fill the asset cache from Hugging Face datasets, for given tasks.

OSWorld's tasks download their files from the dataset ``xlangai/ubuntu_osworld_file_cache``.
This command reads task files, collects every ``http(s)`` URL in their ``config`` and
``evaluator``, downloads the ones that name a file of a Hugging Face dataset with
``huggingface_hub.hf_hub_download`` (its retries, its resume of a broken transfer, its token
handling, its per-file progress bars), and places each file where the asset cache looks for
that URL (:meth:`~pytest_osworld.task.assets.AssetCache.path_for`), so that a later run works with
``--offline``. Files already in the asset cache are skipped; other URLs are listed, not fetched.

A file goes through huggingface_hub's own cache first (``--hf-cache``, else its default) and
is then hard-linked into the asset cache (copied when the two are on different filesystems),
under a temporary name renamed into place: the asset cache never holds half a file.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sys
import urllib.parse
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_osworld.errors import OSWorldError
from pytest_osworld.task.assets import AssetCache, AssetError, default_cache_dir
from pytest_osworld.task.model import looks_like_task

#: Hugging Face's public endpoint, used when neither ``--endpoint`` nor ``HF_ENDPOINT`` is set.
DEFAULT_ENDPOINT = "https://huggingface.co"
#: The host whose dataset URLs are fetched with huggingface_hub (whatever the endpoint).
HUB_HOST = "huggingface.co"

#: A task path that holds no task file.
NO_TASKS = "no OSWorld task file found in {paths}; give task files or folders of them"
#: A file named on the command line that is not a task.
NOT_A_TASK = "{path} is not an OSWorld task (a JSON object with an instruction and an evaluator)"
#: The summary lines.
SUMMARY_FETCHED = "fetched {count} file(s) ({size})"
SUMMARY_CACHED = "already cached {count} file(s)"
SUMMARY_FAILED = "failed {count} file(s):"
SUMMARY_OTHER = "not from the hub {count} URL(s) (not fetched; a run downloads them, or pre-seed them):"
#: The reason given for a file left out once the hub proved unreachable.
NOT_TRIED = "not tried: the hub at {endpoint} could not be reached for an earlier file; run again later"
#: Printed on Ctrl-C.
STOPPING = "\nstopping: no new file starts; the files being downloaded finish first"


class FetchUsageError(OSWorldError):
    """The command's arguments are unusable: no tasks, a bad task file or manifest."""


@dataclass(frozen=True)
class HubFile:
    """A file of a Hugging Face dataset, as a task's URL names it."""

    url: str
    repo_id: str
    revision: str
    filename: str


@dataclass
class FetchReport:
    """What a fetch did: fetched {url: bytes}, cached URLs, failed {url: reason}, other URLs."""

    fetched: dict[str, int] = field(default_factory=dict)
    cached: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    other: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no file failed."""
        return not self.failed


def parse_hub_url(url: str) -> HubFile | None:
    """The dataset file a ``https://huggingface.co/datasets/<owner>/<repo>/resolve/<rev>/<path>``
    URL names, or None for any other URL.

    Only ``/resolve/`` URLs serve the file itself (``/blob/`` is the web page showing it), and
    a query string or fragment is not part of a file's name, so such URLs are not hub files.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.netloc != HUB_HOST or parts.query or parts.fragment:
        return None
    segments = parts.path.split("/")
    # "", "datasets", owner, repo, "resolve", revision, path...
    if len(segments) < 7 or segments[1] != "datasets" or segments[4] != "resolve":
        return None
    names = [urllib.parse.unquote(s) for s in segments[2:]]
    if any(not name for name in names):
        return None
    owner, repo, _, revision, *path = names
    return HubFile(url=url, repo_id=f"{owner}/{repo}", revision=revision, filename="/".join(path))


def urls_in(value: Any) -> Iterator[str]:
    """Every string in a JSON value that is a whole ``http(s)://`` URL, in document order."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith(("http://", "https://")) and not any(c.isspace() for c in text):
            yield text
    elif isinstance(value, dict):
        for item in value.values():
            yield from urls_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from urls_in(item)


def find_task_files(paths: Sequence[Path]) -> list[Path]:
    """The task files among ``paths``: files as given, folders searched for ``*.json`` tasks.

    Other JSON files inside folders (such as OSWorld's ``test_all.json``) are left out; a file
    named directly that is not a task is a :class:`FetchUsageError`.
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(p for p in sorted(path.rglob("*.json")) if _task_json(p) is not None)
        elif path.is_file():
            if _task_json(path) is None:
                raise FetchUsageError(NOT_A_TASK.format(path=path))
            found.append(path)
        else:
            raise FetchUsageError(f"{path}: no such file or folder")
    if not found:
        raise FetchUsageError(NO_TASKS.format(paths=", ".join(str(p) for p in paths)))
    return sorted(set(found))


def _task_json(path: Path) -> dict[str, Any] | None:
    """The parsed task file, or None if it is not one (not JSON, or not a task object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and looks_like_task(data) else None


def task_urls(task_files: Sequence[Path], manifest: Path | None = None) -> list[str]:
    """The URLs in the tasks' ``config`` and ``evaluator``, each once, in first-seen order.

    With ``manifest`` (OSWorld's ``{domain: [task id, ...]}`` format, as ``--manifest`` reads
    it), only the tasks it lists count; a task's domain is its folder's name, as in the
    plugin. Task files are read, not validated: fetching needs only their URLs, and the
    run reports what else is wrong with them.
    """
    wanted = _read_manifest(manifest) if manifest is not None else None
    urls: dict[str, None] = {}
    for path in task_files:
        data = _task_json(path)
        if data is None:
            raise FetchUsageError(NOT_A_TASK.format(path=path))
        if wanted is not None and (path.parent.name, str(data.get("id"))) not in wanted:
            continue
        for key in ("config", "evaluator"):
            urls.update(dict.fromkeys(urls_in(data.get(key))))
    return list(urls)


def _read_manifest(path: Path) -> set[tuple[str, str]]:
    import pytest

    from pytest_osworld.plugin.selection import load_manifest

    try:
        return load_manifest(path)
    except pytest.UsageError as exc:
        raise FetchUsageError(str(exc)) from exc


def resolve_endpoint(endpoint: str | None) -> str:
    """``endpoint``, else ``$HF_ENDPOINT``, else Hugging Face's public endpoint (no trailing /)."""
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def place(source: Path, target: Path) -> int:
    """Put ``source``'s bytes at ``target`` atomically; return the size.

    A hard link when both are on one filesystem, else a copy, written under a temporary name
    in ``target``'s folder and renamed over ``target``, so ``target`` is never half a file.
    """
    source = source.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.parent / f".part-{secrets.token_hex(8)}"
    try:
        try:
            os.link(source, temporary)
        except OSError:  # another filesystem, or links not allowed there
            shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return target.stat().st_size


def fetch_hub_file(file: HubFile, target: Path, endpoint: str, hf_cache: Path | None) -> int:
    """Download one dataset file with huggingface_hub and place it at ``target``; its size."""
    from huggingface_hub import hf_hub_download

    downloaded = hf_hub_download(
        repo_id=file.repo_id,
        filename=file.filename,
        repo_type="dataset",
        revision=file.revision,
        endpoint=endpoint,
        cache_dir=hf_cache,
    )
    return place(Path(downloaded), target)


def fetch_urls(
    urls: Sequence[str],
    cache: AssetCache,
    endpoint: str | None = None,
    hf_cache: Path | None = None,
    workers: int = 4,
    progress: TextIO | None = None,
) -> FetchReport:
    """Fetch the hub files among ``urls`` into ``cache``; list the others.

    Up to ``workers`` files download at once. An overall progress bar (files, and bytes so
    far) goes to ``progress`` (stderr by default), beside huggingface_hub's per-file bars. A
    file that fails is recorded with its reason and the others go on.
    """
    from tqdm import tqdm

    endpoint = resolve_endpoint(endpoint)
    report = FetchReport()
    todo = _plan(urls, cache, report)
    if not todo:
        return report
    stream = progress if progress is not None else sys.stderr
    total_bytes = 0
    with (
        tqdm(total=len(todo), unit="file", desc="hub files", file=stream, disable=False) as bar,
        ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="hub-fetch") as pool,
    ):
        futures: dict[Future[int], HubFile] = {
            pool.submit(fetch_hub_file, file, target, endpoint, hf_cache): file for file, target in todo
        }
        try:
            for future in as_completed(futures):
                file = futures[future]
                if future.cancelled():
                    report.failed[file.url] = NOT_TRIED.format(endpoint=endpoint)
                    bar.update(1)
                    continue
                try:
                    size = future.result()
                except Exception as exc:  # one file's failure, whatever it is, must not stop the rest
                    report.failed[file.url] = _reason(exc)
                    if _hub_unreachable(exc):  # each further file would spend its retries in vain
                        for pending in futures:
                            pending.cancel()
                else:
                    report.fetched[file.url] = size
                    total_bytes += size
                bar.set_postfix_str(format_size(total_bytes), refresh=False)
                bar.update(1)
        except KeyboardInterrupt:
            print(STOPPING, file=stream)
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return report


def _plan(urls: Sequence[str], cache: AssetCache, report: FetchReport) -> list[tuple[HubFile, Path]]:
    """The hub files to download with their cache paths; the rest goes into ``report``."""
    todo: list[tuple[HubFile, Path]] = []
    for url in urls:
        file = parse_hub_url(url)
        if file is None:
            report.other.append(url)
            continue
        try:
            target = cache.path_for(url)
        except AssetError as exc:
            report.failed[url] = str(exc)
            continue
        if target.is_file():
            report.cached.append(url)
        else:
            todo.append((file, target))
    return todo


def _hub_unreachable(exc: BaseException) -> bool:
    """True for huggingface_hub's "could not reach the file's metadata on the hub, and it is
    not in the local cache" (no connection, the hub down, or an endpoint that is not a hub)."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    return isinstance(exc, LocalEntryNotFoundError)


def _reason(exc: BaseException) -> str:
    """A one-line reason: the exception's type and message, and its cause's (huggingface_hub
    wraps a connection error into a generic "cannot locate the file" one)."""
    parts: list[str] = []
    current: BaseException | None = exc
    while current is not None and len(parts) < 2:
        text = " ".join(line.strip() for line in str(current).splitlines() if line.strip())
        parts.append(f"{type(current).__name__}: {text}" if text else type(current).__name__)
        current = current.__cause__
    return " (caused by ".join(parts) + ")" * (len(parts) - 1)


def format_size(size: int) -> str:
    """Bytes as a short human size: ``512 B``, ``1.5 kB``, ``12.0 MB``, ``3.2 GB``."""
    if size < 1000:
        return f"{size} B"
    value = size / 1000
    for unit in ("kB", "MB"):
        if value < 999.95:  # not "1000.0 kB"
            return f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def write_summary(report: FetchReport, out: TextIO) -> None:
    """The end-of-run summary: fetched, already cached, failed (with reasons), not from the hub."""
    size = format_size(sum(report.fetched.values()))
    lines = [
        SUMMARY_FETCHED.format(count=len(report.fetched), size=size),
        SUMMARY_CACHED.format(count=len(report.cached)),
    ]
    if report.failed:
        lines.append(SUMMARY_FAILED.format(count=len(report.failed)))
        for url, reason in sorted(report.failed.items()):
            lines += [f"  {url}", f"    {reason}"]
    if report.other:
        lines.append(SUMMARY_OTHER.format(count=len(report.other)))
        lines += [f"  {url}" for url in report.other]
    out.write("\n".join(lines) + "\n")


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``pytest-osworld-fetch``."""
    parser = argparse.ArgumentParser(
        prog="pytest-osworld-fetch",
        description="Download the Hugging Face dataset files the given OSWorld tasks use into the "
        "asset cache, so that they run with --offline.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="TASK_PATH", help="task files or folders")
    parser.add_argument(
        "--cache", type=Path, default=None, help=f"the asset cache (default: {default_cache_dir()})"
    )
    parser.add_argument(
        "--endpoint",
        default=None,
        help=f"the hub to download from (default: $HF_ENDPOINT or {DEFAULT_ENDPOINT})",
    )
    parser.add_argument("--workers", type=int, default=4, help="files downloaded at once (default: 4)")
    parser.add_argument(
        "--manifest",
        type=Path,
        default=None,
        help="only the tasks an OSWorld manifest lists (domain -> task ids)",
    )
    parser.add_argument(
        "--hf-cache",
        type=Path,
        default=None,
        help="huggingface_hub's own cache, where files land first (default: $HF_HUB_CACHE or $HF_HOME/hub)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; 0 when every hub file is cached, 1 if any failed, 2 for a usage error."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    try:
        urls = task_urls(find_task_files(args.paths), args.manifest)
    except FetchUsageError as exc:
        print(f"pytest-osworld-fetch: error: {exc}", file=sys.stderr)
        return 2
    cache = AssetCache(args.cache if args.cache is not None else default_cache_dir())
    try:
        report = fetch_urls(urls, cache, args.endpoint, args.hf_cache, args.workers)
    except KeyboardInterrupt:
        print("interrupted: files already placed are kept; run again to fetch the rest", file=sys.stderr)
        return 130
    write_summary(report, sys.stdout)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
