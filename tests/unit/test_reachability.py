"""Runs without a network say so once: which tasks need downloads, and the host probe."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from pytest_osworld.plugin.reachability import (
    NO_NETWORK,
    no_network_line,
    uncached_downloads,
    why_unreachable,
)
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.model import Task, load_task


def make_task(folder: Path, task_id: str, urls: list[str], cloud: list[str] | None = None) -> Task:
    """A task whose setup downloads ``urls`` and whose evaluator reads ``cloud`` files."""
    data: dict[str, Any] = {
        "id": task_id,
        "snapshot": "os",
        "instruction": "Look at the files.",
        "config": [
            {"type": "download", "parameters": {"files": [{"url": u, "path": f"/home/user/{i}"}]}}
            for i, u in enumerate(urls)
        ],
        "evaluator": {
            "func": "check_include_exclude",
            "result": {"type": "vm_command_line", "command": ["true"]},
            "expected": {"type": "rule", "rules": {"include": [], "exclude": []}},
        },
    }
    if cloud:
        data["evaluator"]["expected"] = {"type": "cloud_file", "path": cloud[0], "dest": "gold"}
        data["evaluator"]["func"] = "compare_text_file"
    path = folder / "os" / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return load_task(path)


def test_uncached_downloads_group_the_tasks_by_host(tmp_path: Path) -> None:
    cache = AssetCache(tmp_path / "cache")
    cached = "https://files.example.invalid/have.xlsx"
    cache.path_for(cached).parent.mkdir(parents=True)
    cache.path_for(cached).write_text("x")
    tasks = [
        make_task(tmp_path, "a", ["https://files.example.invalid/a.xlsx", "https://other.invalid/b"]),
        make_task(tmp_path, "b", [cached]),
        make_task(tmp_path, "c", [], cloud=["https://files.example.invalid/gold.txt"]),
        make_task(tmp_path, "d", ["relative/file.txt"]),
    ]
    needs = uncached_downloads(tasks, cache)
    assert needs.total == 4
    assert {host: ids for host, (_url, ids) in needs.by_host.items()} == {
        "files.example.invalid": {"os/a", "os/c"},
        "other.invalid": {"os/a"},
    }


def test_the_line_counts_the_tasks_and_names_the_way_out(tmp_path: Path) -> None:
    tasks = [make_task(tmp_path, str(i), [f"https://h{i % 2}.invalid/f{i}"]) for i in range(5)]
    tasks.append(make_task(tmp_path, "none", []))
    probed: list[str] = []

    def probe(url: str) -> str:
        probed.append(url)
        return f"{url.split('/')[2]} does not resolve"

    line = no_network_line(tasks, AssetCache(tmp_path / "cache"), probe=probe)
    assert line == NO_NETWORK.format(
        count=5, total=6, reason="h0.invalid does not resolve; h1.invalid does not resolve"
    )
    assert "--offline" in line and "pytest-osworld-fetch" in line
    assert len(probed) == 2  # one URL per host


def test_one_reachable_host_means_there_is_a_network(tmp_path: Path) -> None:
    tasks = [
        make_task(tmp_path, "a", ["https://a.invalid/x"]),
        make_task(tmp_path, "b", ["https://b.example/y"]),
    ]

    def probe(url: str) -> str | None:
        return None if "b.example" in url else "a.invalid does not resolve"

    assert no_network_line(tasks, AssetCache(tmp_path / "cache"), probe=probe) is None


def test_nothing_is_probed_offline_or_when_all_is_cached(tmp_path: Path) -> None:
    def probe(url: str) -> str:
        raise AssertionError("probed")

    tasks = [make_task(tmp_path, "a", ["https://a.invalid/x"])]
    assert no_network_line(tasks, AssetCache(tmp_path / "cache", offline=True), probe=probe) is None
    cache = AssetCache(tmp_path / "cache")
    cache.path_for("https://a.invalid/x").parent.mkdir(parents=True)
    cache.path_for("https://a.invalid/x").write_text("x")
    assert no_network_line(tasks, cache, probe=probe) is None


def test_a_name_that_does_not_resolve_is_unreachable() -> None:
    reason = why_unreachable("https://assets.osworld-test.invalid/file.xlsx")
    assert reason is not None and reason.startswith("assets.osworld-test.invalid does not resolve (")


def test_a_refused_connection_is_unreachable_and_a_listener_is_not(monkeypatch) -> None:
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert why_unreachable(f"http://127.0.0.1:{port}/f") is None
    # The port is closed now: nothing listens there.
    reason = why_unreachable(f"http://127.0.0.1:{port}/f")
    assert reason is not None and "127.0.0.1 cannot be reached (" in reason


def test_a_proxy_is_probed_instead_of_the_host(monkeypatch) -> None:
    monkeypatch.setenv("https_proxy", "http://proxy.osworld-test.invalid:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    reason = why_unreachable("https://files.example.invalid/x")
    assert reason is not None
    assert reason.startswith(
        "the proxy proxy.osworld-test.invalid:3128 for files.example.invalid does not resolve"
    )
