"""The shard split as pure functions: every unit in one shard, balanced, order-independent."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from pytest_osworld.plugin.shards import (
    Unit,
    load_durations,
    split_by_count,
    split_by_duration,
    tasks_fingerprint,
)

DOMAINS = {"chrome": 5, "gimp": 2, "os": 4, "vlc": 1}


def _units() -> list[Unit]:
    return [
        Unit(f"tasks/{domain}/{n:02d}.json", domain, (domain, f"{n:02d}"), f"sha-{domain}-{n}")
        for domain, count in DOMAINS.items()
        for n in range(count)
    ]


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_count_split_puts_every_unit_in_one_shard_and_balances(count: int) -> None:
    units = _units()
    shards = split_by_count(units, count)
    assert set(shards) == {u.key for u in units}
    assert set(shards.values()) <= set(range(1, count + 1))
    sizes = Counter(shards.values())
    assert max(sizes.values()) - min(sizes[k] for k in range(1, count + 1)) <= 1
    for domain in DOMAINS:  # each domain spread evenly
        per = Counter(shards[u.key] for u in units if u.domain == domain)
        assert max(per.values()) - min(per[k] for k in range(1, count + 1)) <= 1


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_split_does_not_depend_on_order(count: int) -> None:
    units = _units()
    shuffled = list(units)
    random.Random(7).shuffle(shuffled)
    assert split_by_count(shuffled, count) == split_by_count(units, count)
    durations = {u.task: float(i % 5 + 1) for i, u in enumerate(units) if u.task}
    assert split_by_duration(shuffled, count, durations) == split_by_duration(units, count, durations)
    assert tasks_fingerprint(shuffled) == tasks_fingerprint(units)


def test_count_split_continues_across_domains() -> None:
    units = [Unit("a/1", "a"), Unit("a/2", "a"), Unit("a/3", "a"), Unit("b/1", "b"), Unit("b/2", "b")]
    assert split_by_count(units, 2) == {"a/1": 1, "a/2": 2, "a/3": 1, "b/1": 2, "b/2": 1}


def test_duration_split_is_longest_first_onto_the_lightest_shard() -> None:
    units = [Unit(k, "os", ("os", k)) for k in ("a", "b", "c", "d", "e")]
    durations = {("os", "a"): 10.0, ("os", "b"): 6.0, ("os", "c"): 5.0, ("os", "d"): 1.0}
    # e is unknown: the median of 10, 6, 5, 1 is 5.5 -> order a 10, b 6, e 5.5, c 5, d 1
    # a->1 (10) b->2 (6) e->2 (11.5) c->1 (15) d->2 (12.5)
    assert split_by_duration(units, 2, durations) == {"a": 1, "b": 2, "e": 2, "c": 1, "d": 2}


def test_duration_split_weighs_repeats_and_breaks_ties_by_key() -> None:
    one, two = object(), object()
    units = [
        Unit("x", "os", ("os", "x"), items=(one, two)),  # type: ignore[arg-type]
        Unit("y", "os", ("os", "y")),
        Unit("z", "os", ("os", "z")),
    ]
    durations = {("os", "x"): 3.0, ("os", "y"): 4.0, ("os", "z"): 4.0}
    # x weighs 6 (two runs of 3): x->1, then y and z tie at 4: y first (key order) -> 2, z -> 2
    assert split_by_duration(units, 2, durations) == {"x": 1, "y": 2, "z": 2}


def test_duration_split_without_known_durations_splits_by_count() -> None:
    units = _units()
    assert split_by_duration(units, 3, {}) == split_by_count(units, 3)


def test_fingerprint_changes_with_a_task_file_or_the_runs() -> None:
    units = _units()
    base = tasks_fingerprint(units)
    changed = [*units[:-1], Unit(units[-1].key, units[-1].domain, units[-1].task, "other")]
    assert tasks_fingerprint(changed) != base
    repeated = [Unit(u.key, u.domain, u.task, u.sha256, items=(object(), object())) for u in units]  # type: ignore[arg-type]
    assert tasks_fingerprint(repeated) != base


def test_load_durations_averages_runs_and_skips_tasks_that_never_ran(tmp_path: Path) -> None:
    def result(folder: str, task_id: str, seconds: float, **extra: object) -> None:
        path = tmp_path / "pyautogui/screenshot/m/os" / folder / "result.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"domain": "os", "task_id": task_id, "duration_s": seconds, **extra}))

    result("a", "a", 4.0)
    result("a.repeat-2", "a", 6.0)
    result("b", "b", 0.0)  # an error before the clock started: unknown
    result("c", "c", 0.0, timings={"phases": {}})  # ran, in no time
    assert load_durations(tmp_path) == {("os", "a"): 5.0, ("os", "c"): 0.0}
