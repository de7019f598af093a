"""Shards: ``--shard K/N`` runs part K of N of the collected tasks.

Every collected task goes to exactly one of the N shards, and the split depends only on
the tasks' node ids (their paths relative to the rootdir), their domains and, with
``--shard-durations``, on the durations an earlier run recorded: never on the order files
were found in, on the machine, or on hash randomisation. N machines that each run
``pytest --shard K/N`` (a CI matrix, an Indexed Job, an array job) therefore run every
task once between them, and ``pytest-osworld merge`` combines their results folders.

A *unit* is what cannot be split: one task file with all its ``--repeat`` runs (any
other item is a unit of its own). Two rules place the units:

- by count (the default): domain by domain in sorted order, each domain's units in
  node-id order, dealt round-robin onto the shards with one counter that runs on across
  domains, so each domain is spread evenly and shard sizes differ by at most one unit;
- by duration (``--shard-durations RESULTS``): longest first onto the shard with the least
  time so far (ties: node id, then the lower shard), the duration of a task being the mean
  ``duration_s`` of its runs in RESULTS times its runs here; a task RESULTS does not know
  counts as the median of the known ones. When RESULTS knows none of the tasks, the split
  is by count.

The shard's selection runs after ``--manifest`` (and after ``-k``/``-m``) and before
``--skip-done``, so resuming a shard never moves a task to another shard.
"""

from __future__ import annotations

import hashlib
import heapq
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from pytest_osworld.omniact.collect import OmniactItem
from pytest_osworld.plugin.collect import TaskItem
from pytest_osworld.report.model import number
from pytest_osworld.report.resume import read_result, task_folders
from pytest_osworld.task.settings import SETTINGS_KEY


@dataclass(frozen=True)
class Unit:
    """Items that always go to the same shard: one task file and its repeats."""

    #: The node id of the task file (of the item itself, for other items).
    key: str
    #: The domain the count split spreads evenly ("" for items that are not tasks).
    domain: str
    #: ``(domain, task id)`` as ``result.json`` records them, for durations; None if not a task.
    task: tuple[str, str] | None = None
    #: The task file's sha256 ("" for items that are not tasks).
    sha256: str = ""
    items: tuple[pytest.Item, ...] = field(default=(), compare=False)

    @property
    def size(self) -> int:
        """How many items (runs) the unit holds."""
        return max(len(self.items), 1)


def unit_of(item: pytest.Item) -> Unit:
    """The unit ``item`` belongs to (without its items)."""
    if isinstance(item, TaskItem):
        key = item.parent.nodeid if item.parent is not None else item.nodeid
        task = item.task
        return Unit(key, task.domain, (task.domain, task.id), task.sha256)
    if isinstance(item, OmniactItem):
        return Unit(item.nodeid, "omniact", ("omniact", item.task.id), item.task.sha256)
    return Unit(item.nodeid, "")


def units_of(items: Iterable[pytest.Item]) -> list[Unit]:
    """The units of ``items``, sorted by key, each with its items in collection order."""
    grouped: dict[str, tuple[Unit, list[pytest.Item]]] = {}
    for item in items:
        unit = unit_of(item)
        grouped.setdefault(unit.key, (unit, []))[1].append(item)
    return [replace(unit, items=tuple(members)) for unit, members in (grouped[k] for k in sorted(grouped))]


def split_by_count(units: Sequence[Unit], count: int) -> dict[str, int]:
    """Unit key -> shard (1-based): round-robin within each domain, one counter across domains."""
    shards: dict[str, int] = {}
    position = 0
    for domain in sorted({unit.domain for unit in units}):
        for unit in sorted((u for u in units if u.domain == domain), key=lambda u: u.key):
            shards[unit.key] = position % count + 1
            position += 1
    return shards


def split_by_duration(
    units: Sequence[Unit], count: int, durations: dict[tuple[str, str], float]
) -> dict[str, int]:
    """Unit key -> shard (1-based): longest first onto the lightest shard.

    A unit weighs the duration of one run of its task times its runs; tasks without a
    known duration weigh the median known duration. With none known, :func:`split_by_count`.
    """
    known = [durations[u.task] for u in units if u.task is not None and u.task in durations]
    if not known:
        return split_by_count(units, count)
    median = statistics.median(known)

    def weight(unit: Unit) -> float:
        each = durations.get(unit.task, median) if unit.task is not None else median
        return each * unit.size

    loads = [(0.0, shard) for shard in range(1, count + 1)]
    shards: dict[str, int] = {}
    for unit in sorted(units, key=lambda u: (-weight(u), u.key)):
        load, shard = heapq.heappop(loads)
        shards[unit.key] = shard
        heapq.heappush(loads, (load + weight(unit), shard))
    return shards


def load_durations(results_dir: Path) -> dict[tuple[str, str], float]:
    """``(domain, task id)`` -> mean seconds of one run, from the ``result.json`` files of an
    earlier run (results without timings and with a zero duration never ran: left out)."""
    runs: dict[tuple[str, str], list[float]] = {}
    for folder in task_folders(results_dir):
        result = read_result(folder)
        if result is None:
            continue
        seconds = number(result.get("duration_s"))
        domain, task_id = result.get("domain"), result.get("task_id")
        if seconds is None or not isinstance(domain, str) or not isinstance(task_id, str):
            continue
        if seconds > 0 or "timings" in result:
            runs.setdefault((domain, task_id), []).append(max(seconds, 0.0))
    return {task: sum(values) / len(values) for task, values in runs.items()}


def tasks_fingerprint(units: Iterable[Unit]) -> str:
    """The sha256 of every unit's key, task file hash and number of runs, in key order.

    Equal in all shards of one run; a changed task file, another selection or another
    ``--repeat`` gives another fingerprint (``merge`` refuses to combine those).
    """
    digest = hashlib.sha256()
    for unit in sorted(units, key=lambda u: u.key):
        digest.update(f"{unit.key}\t{unit.sha256}\t{unit.size}\n".encode())
    return digest.hexdigest()


def assign(units: Sequence[Unit], count: int, durations_dir: Path | None) -> dict[str, int]:
    """Unit key -> shard, by duration when ``durations_dir`` is given, else by count."""
    if durations_dir is not None:
        return split_by_duration(units, count, load_durations(durations_dir))
    return split_by_count(units, count)


def apply_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--shard K/N``: deselect every item outside shard K, and record the fingerprint
    of the whole run's tasks in the settings (it goes into each result's provenance)."""
    settings = config.stash[SETTINGS_KEY]
    if settings.shard is None:
        return
    index, count = settings.shard
    units = units_of(items)
    shards = assign(units, count, settings.shard_durations)
    outside = {id(item) for unit in units if shards[unit.key] != index for item in unit.items}
    drop = [item for item in items if id(item) in outside]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if id(item) not in outside]
    config.stash[SETTINGS_KEY] = replace(settings, shard_tasks_sha256=tasks_fingerprint(units))
