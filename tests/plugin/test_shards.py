"""--shard K/N end to end: usage errors, every task in one shard, stability, durations, provenance."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_osworld.plugin.settings import NO_RESULTS_FOLDER, SHARD_DURATIONS_ALONE, SHARD_PROBLEM

pytestmark = pytest.mark.usefixtures("fake_ini")

#: domain -> task ids (a few domains of different sizes)
SUITE = {
    "chrome": ["c1", "c2", "c3", "c4"],
    "os": ["o1", "o2", "o3"],
    "gimp": ["g1", "g2"],
}
INI = """
[pytest]
osworld_provider = fake
osworld_asset_cache = .assets
osworld_results_dir = results/run
filterwarnings = ignore::pytest.PytestAssertRewriteWarning
"""


@pytest.fixture
def write_suite(write_task):
    """Write :data:`SUITE` under ``tasks/``; ``write_suite(root, order)`` copies it, file by
    file in ``order``, to ``root/tasks``."""

    def write(root: Path | None = None, order: list[tuple[str, str]] | None = None) -> None:
        pairs = order or [(d, t) for d, ids in SUITE.items() for t in ids]
        for domain, task_id in pairs:
            path = write_task(domain, task_id=task_id)
            if root is not None:
                target = root / "tasks" / domain / path.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(path.read_bytes())

    return write


def _selected(pytester: pytest.Pytester, *args: str) -> list[str]:
    """The node ids a run with ``args`` would run (``--collect-only -q``)."""
    result = pytester.runpytest("tasks", "--collect-only", "-q", "--agent=replay", *args)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), result.stdout.str()
    return [line for line in result.stdout.lines if "::" in line]


BAD_SHARDS = ["0/3", "4/3", "1of3", "a/b", "1/0", "-1/2", "2"]


@pytest.mark.parametrize("value", BAD_SHARDS)
def test_bad_shard_names_value_and_source(pytester: pytest.Pytester, value: str) -> None:
    result = pytester.runpytest("--collect-only", f"--shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--shard='{value}' (command line --shard): {SHARD_PROBLEM}"])
    pytester.makeini(INI + f"osworld_shard = {value}\n")
    result = pytester.runpytest("--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--shard='{value}' (ini osworld_shard): {SHARD_PROBLEM}"])


def test_shard_durations_needs_a_shard_and_a_folder(pytester: pytest.Pytester) -> None:
    pytester.mkdir("earlier")
    result = pytester.runpytest("--collect-only", "--shard-durations=earlier")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--shard-durations='earlier' (command line --shard-durations): {SHARD_DURATIONS_ALONE}"]
    )
    pytester.makeini(INI + "osworld_shard_durations = nowhere\n")
    result = pytester.runpytest("--collect-only", "--shard=1/2")
    result.stderr.fnmatch_lines(
        [f"*--shard-durations='nowhere' (ini osworld_shard_durations): {NO_RESULTS_FOLDER}"]
    )


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_every_task_is_in_exactly_one_shard(pytester: pytest.Pytester, count: int, write_suite) -> None:
    write_suite()
    everything = _selected(pytester, "--repeat=2")
    assert len(everything) == 18
    shards = [_selected(pytester, "--repeat=2", f"--shard={k}/{count}") for k in range(1, count + 1)]
    seen = [nodeid for shard in shards for nodeid in shard]
    assert sorted(seen) == sorted(everything)  # each run of each task once, in one shard
    for shard in shards:  # a task's repeats stay together
        files = {nodeid.split("::")[0] for nodeid in shard}
        assert all(sum(n.startswith(f + "::") for n in shard) == 2 for f in files)
    sizes = [len(shard) // 2 for shard in shards]
    assert max(sizes) - min(sizes) <= 1


def test_shards_do_not_depend_on_file_order_folder_or_hash_seed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, write_suite
) -> None:
    pairs = [(d, t) for d, ids in SUITE.items() for t in ids]
    found: list[list[list[str]]] = []
    for name, order in (("one", pairs), ("two", pairs[::-1])):
        root = pytester.mkdir(name)
        (root / "pytest.ini").write_text(INI)
        write_suite(root, order)
        monkeypatch.chdir(root)
        found.append([_selected(pytester, f"--shard={k}/3") for k in (1, 2, 3)])
    assert found[0] == found[1]
    for seed in ("1", "2"):  # another process with another hash seed: the same shard
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        result = pytester.runpytest_subprocess(
            "tasks", "--collect-only", "-q", "--agent=replay", "--shard=2/3"
        )
        assert [line for line in result.stdout.lines if "::" in line] == found[0][1]


def test_count_split_spreads_each_domain(pytester: pytest.Pytester, write_suite) -> None:
    write_suite()
    first = _selected(pytester, "--shard=1/2")
    # domains sorted, ids sorted, one counter: chrome c1 c3, gimp g1, os o1 o3
    assert [n.split("::")[0] for n in first] == [
        "tasks/chrome/c1.json",
        "tasks/chrome/c3.json",
        "tasks/gimp/g1.json",
        "tasks/os/o1.json",
        "tasks/os/o3.json",
    ]


def test_durations_from_an_earlier_run_balance_the_shards(pytester: pytest.Pytester, write_suite) -> None:
    write_suite()
    earlier = pytester.path / "earlier"
    known = {("chrome", "c1"): 100.0, ("os", "o1"): 60.0, ("os", "o2"): 50.0, ("gimp", "g1"): 10.0}
    for (domain, task_id), seconds in known.items():
        folder = earlier / "pyautogui/screenshot/replay" / domain / task_id
        folder.mkdir(parents=True)
        result = {"domain": domain, "task_id": task_id, "duration_s": seconds, "outcome": "passed"}
        (folder / "result.json").write_text(json.dumps(result))
    # unknown tasks weigh the median (55): c1 100 -> 1; c2 c3 c4 g2 o3 55 each; o1 60; o2 50; g1 10
    # order: c1 100 (1), o1 60 (2), c2 55 (2: 115), c3 55 (1: 155), c4 55 (2: 170), g2 55 (1: 210),
    #        o3 55 (2: 225), o2 50 (1: 260), g1 10 (2: 235)
    first = {n.split("::")[0] for n in _selected(pytester, "--shard=1/2", "--shard-durations=earlier")}
    second = {n.split("::")[0] for n in _selected(pytester, "--shard=2/2", "--shard-durations=earlier")}
    assert first == {f"tasks/{p}.json" for p in ("chrome/c1", "chrome/c3", "gimp/g2", "os/o2")}
    assert second == {f"tasks/{p}.json" for p in ("os/o1", "chrome/c2", "chrome/c4", "os/o3", "gimp/g1")}


def test_a_shard_names_itself_in_header_provenance_and_junit(pytester: pytest.Pytester, write_suite) -> None:
    write_suite()
    result = pytester.runpytest("tasks", "--agent=replay", "--shard=2/3", "--junitxml=junit.xml")
    result.stdout.fnmatch_lines(["osworld: agent=replay * shard=2/3"])
    result.assert_outcomes(passed=3)
    results = sorted((pytester.path / "results/run").rglob("result.json"))
    assert len(results) == 3
    provenances = [json.loads(path.read_text())["provenance"] for path in results]
    assert {p["shard"] for p in provenances} == {"2/3"}
    assert len({p["shard_tasks_sha256"] for p in provenances}) == 1
    root = ET.parse(pytester.path / "junit.xml").getroot()
    shards = [p.get("value") for p in root.iter("property") if p.get("name") == "shard"]
    assert shards == ["2/3"] * 3
    index = (pytester.path / "results/run/index.html").read_text()
    assert "shard: 2/3" in index


def test_an_empty_shard_runs_nothing_without_a_usage_error(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "--agent=replay", "--shard=2/2")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "no OSWorld task found" not in result.stderr.str()


def test_unsharded_results_have_no_shard_keys(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    pytester.runpytest("tasks", "--agent=replay").assert_outcomes(passed=1)
    (path,) = (pytester.path / "results/run").rglob("result.json")
    assert "shard" not in json.loads(path.read_text())["provenance"]
    assert os.path.exists(path)
