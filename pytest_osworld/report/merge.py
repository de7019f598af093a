"""``pytest-osworld merge RESULTS... --out DIR``: several runs' results folders as one run.

Made for the shards of one run (``pytest --shard K/N``), it also combines any runs that
did not overlap. DIR becomes one results folder in OSWorld's layout (each run's task
folders copied), with one ``junit.xml`` (the runs' own JUnit files merged, or one made
from their ``result.json`` files), one ``summary.txt`` (the text the terminal summary
prints), the HTML report and, for OmniACT items, the predictions and figures files
(:mod:`~pytest_osworld.report.omniact_predictions`). Its figures are those one run over all the tasks gives.

Like Inspect's logs, each result carries the settings it was made with, so runs that
cannot make one run are refused, one line per reason: another agent, model, observation
type, action space, step budget or ``--budgets``; shards cut from other task files (a file changed
between shards); the same task (domain, id, repeat) twice; a missing or doubled shard.
``--allow-mismatch`` merges anyway (of one task held twice, the run named last wins).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_osworld.report.junit import (
    JUNIT_NAME,
    JUnitError,
    Suite,
    junit_files,
    merged_junit,
    read_junit,
    suite_from_results,
    write_junit,
)
from pytest_osworld.report.omniact_figures import blocks_of
from pytest_osworld.report.omniact_predictions import write_predictions
from pytest_osworld.report.resume import read_result, task_folders
from pytest_osworld.report.summary import SUMMARY_TITLE, record_of_result, summary_lines

#: The flag that merges runs the checks refuse.
ALLOW_MISMATCH = "--allow-mismatch"
#: The summary file a merge writes beside the task folders.
SUMMARY_NAME = "summary.txt"

# One line per reason; tests import these.
NOT_A_FOLDER = "{run}: not a results folder (no such folder)"
NO_TASKS = "{run}: no task results in it (<action_space>/<observation_type>/<model>/<domain>/<task id>/)"
OUT_NOT_EMPTY = "--out {out}: not empty; merge into a new or empty folder"
OUT_OVERLAPS = "--out {out}: inside {run} (or holding it); merge into a folder of its own"
SETTING_DIFFERS = "the runs differ in {setting}: {values}"
TASKS_DIFFER = (
    "the shards were cut from different tasks (a task file changed between shards, or another "
    "selection or --repeat): task fingerprint {values}"
)
DUPLICATE_TASK = "{count} task run(s) are in more than one run, such as {task} in {runs}"
SHARD_SPLITS_DIFFER = "the runs are shards of different splits: {values}"
SHARD_TWICE = "shard {shard} is given twice: {runs}"
SHARDS_MISSING = "shard(s) {missing} missing: the merged figures would not be those of the whole run"
REFUSED_HINT = "{count} reason(s) to refuse; {flag} merges anyway"

#: The settings every result of a merge must share: (name in messages, provenance key).
SETTINGS: tuple[tuple[str, str], ...] = (
    ("agent", "agent"),
    ("model", "model"),
    ("observation type", "observation_type"),
    ("action space", "action_space"),
    ("max steps", "max_steps"),
    ("step budgets (--budgets)", "budgets"),
)


class MergeError(Exception):
    """A run that cannot be read, or an output folder that cannot be used."""


class MergeRefused(Exception):
    """Runs that do not make one run; ``reasons`` holds one line each."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass
class TaskRun:
    """One task folder of a run."""

    folder: Path
    rel: Path
    result: dict[str, Any] | None

    @property
    def key(self) -> tuple[str, str, str, int]:
        """``(configuration, domain, task id, repeat)``: what may be in one run only once."""
        config = "/".join(self.rel.parts[:3])
        if self.result is not None:
            repeat = self.result.get("repeat")
            return (
                config,
                str(self.result.get("domain", self.rel.parts[-2])),
                str(self.result.get("task_id", self.rel.parts[-1])),
                repeat if isinstance(repeat, int) and not isinstance(repeat, bool) else 1,
            )
        head, _, tail = self.rel.name.rpartition(".repeat-")
        name, repeat = (head, int(tail)) if head and tail.isdigit() else (self.rel.name, 1)
        return config, self.rel.parts[-2], name, repeat

    @property
    def provenance(self) -> dict[str, Any]:
        """The result's provenance (empty without a result)."""
        prov = (self.result or {}).get("provenance")
        return prov if isinstance(prov, dict) else {}


@dataclass
class Run:
    """One results folder given to the merge."""

    path: Path
    label: str
    tasks: list[TaskRun] = field(default_factory=list)

    def values(self, key: str) -> set[str]:
        """The distinct values of a provenance key among this run's results that record it."""
        return {repr(t.provenance[key]) for t in self.tasks if key in t.provenance}


@dataclass
class Merged:
    """What a merge wrote."""

    out: Path
    runs: int
    tasks: int
    junit: Path
    summary: Path
    report: Path
    summary_text: str
    #: The reasons it would have been refused (merged anyway with ``--allow-mismatch``).
    overridden: list[str] = field(default_factory=list)


def read_run(path: Path) -> Run:
    """A results folder's task folders and results; :class:`MergeError` if it has none."""
    label = str(path)
    if not path.is_dir():
        raise MergeError(NOT_A_FOLDER.format(run=label))
    folders = task_folders(path)
    if not folders:
        raise MergeError(NO_TASKS.format(run=label))
    tasks = [TaskRun(folder, folder.relative_to(path), read_result(folder)) for folder in folders]
    return Run(path, label, tasks)


def _listing(by_value: dict[str, list[str]]) -> str:
    """``'a' in run1, run2; 'b' in run3``."""
    return "; ".join(f"{value} in {', '.join(runs)}" for value, runs in by_value.items())


def check_runs(runs: Sequence[Run]) -> list[str]:
    """Every reason the runs do not make one run (empty when they do)."""
    reasons: list[str] = []
    for name, key in SETTINGS:
        by_value: dict[str, list[str]] = {}
        for run in runs:
            for value in sorted(run.values(key)):
                by_value.setdefault(value, []).append(run.label)
        if len(by_value) > 1:
            reasons.append(SETTING_DIFFERS.format(setting=name, values=_listing(by_value)))
    fingerprints: dict[str, list[str]] = {}
    for run in runs:
        found = {str(t.provenance.get("shard_tasks_sha256") or "") for t in run.tasks} - {""}
        for value in sorted(found):
            fingerprints.setdefault(value[:12], []).append(run.label)
    if len(fingerprints) > 1:
        reasons.append(TASKS_DIFFER.format(values=_listing(fingerprints)))
    reasons += _shard_reasons(runs)
    owners: dict[tuple[str, str, str, int], list[str]] = {}
    for run in runs:
        for task in run.tasks:
            owners.setdefault(task.key, []).append(run.label)
    doubled = sorted(key for key, labels in owners.items() if len(labels) > 1)
    if doubled:
        _, domain, task_id, repeat = doubled[0]
        reasons.append(
            DUPLICATE_TASK.format(
                count=len(doubled),
                task=f"{domain}/{task_id} (repeat {repeat})",
                runs=", ".join(owners[doubled[0]]),
            )
        )
    return reasons


def _shard_reasons(runs: Sequence[Run]) -> list[str]:
    """Shards of different splits, a shard given twice, shards missing."""
    owners: dict[str, list[str]] = {}
    for run in runs:
        for shard in sorted({str(t.provenance["shard"]) for t in run.tasks if t.provenance.get("shard")}):
            owners.setdefault(shard, []).append(run.label)
    if not owners:
        return []
    splits: dict[str, list[str]] = {}
    for shard, labels in owners.items():
        splits.setdefault(f"of {shard.partition('/')[2]}", []).extend(labels)
    if len(splits) > 1:
        return [SHARD_SPLITS_DIFFER.format(values=_listing(splits))]
    reasons = [
        SHARD_TWICE.format(shard=shard, runs=", ".join(labels))
        for shard, labels in sorted(owners.items())
        if len(labels) > 1
    ]
    count = int(next(iter(owners)).partition("/")[2] or 0)
    missing = [f"{k}/{count}" for k in range(1, count + 1) if f"{k}/{count}" not in owners]
    if missing:
        reasons.append(SHARDS_MISSING.format(missing=", ".join(missing)))
    return reasons


def _check_out(out: Path, runs: Sequence[Run]) -> None:
    """The output folder must be new or empty, and apart from every run."""
    target = out.resolve()
    for run in runs:
        source = run.path.resolve()
        if target == source or target.is_relative_to(source) or source.is_relative_to(target):
            raise MergeError(OUT_OVERLAPS.format(out=out, run=run.label))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise MergeError(OUT_NOT_EMPTY.format(out=out))


def merge(paths: Sequence[Path], out: Path, allow_mismatch: bool = False) -> Merged:
    """Merge the results folders ``paths`` into ``out``.

    Raises :class:`MergeError` for a folder that cannot be read or used, and
    :class:`MergeRefused` when the runs do not make one run (unless ``allow_mismatch``).
    """
    runs = [read_run(Path(path)) for path in paths]
    _check_out(out, runs)
    reasons = check_runs(runs)
    if reasons and not allow_mismatch:
        raise MergeRefused(reasons)
    suites: list[Suite] = []
    for run in runs:
        try:
            files = junit_files(run.path)
            if files:
                suites += [read_junit(path) for path in files]
                continue
        except JUnitError as exc:
            raise MergeError(str(exc)) from exc
        scored = [(t.folder / "result.json", t.result) for t in run.tasks if t.result is not None]
        suites.append(suite_from_results(scored))
    out.mkdir(parents=True, exist_ok=True)
    for run in runs:
        for task in run.tasks:
            target = out / task.rel
            if target.exists():
                shutil.rmtree(target)  # --allow-mismatch: the run named last wins
            shutil.copytree(task.folder, target)
    junit = write_junit(merged_junit(suites), out / JUNIT_NAME)
    results = [r for r in (read_result(folder) for folder in task_folders(out)) if r is not None]
    write_predictions(out, blocks_of(r.get("omniact") for r in results))
    from pytest_osworld.report.html import write_report

    report = write_report(out)
    repeats = [r.get("repeat") for r in results]
    repeat = max((n for n in repeats if isinstance(n, int) and not isinstance(n, bool)), default=1)
    lines = [
        SUMMARY_TITLE,
        *summary_lines([record_of_result(r) for r in results], repeat),
        f"results: {out.resolve()}",
        f"report:  {report.resolve().as_uri()}",
    ]
    text = "\n".join(lines) + "\n"
    summary = out / SUMMARY_NAME
    summary.write_text(text, encoding="utf-8")
    count = len(task_folders(out))
    return Merged(out, len(runs), count, junit, summary, report, text, reasons)


# --------------------------------------------------------------------------- command line


#: The one-line help of the ``merge`` command.
HELP = "merge results folders (the shards of one run) into one run's results folder"
#: The longer text of ``pytest-osworld merge --help``.
DESCRIPTION = (
    "Merge results folders (the shards of one run) into one results folder with one "
    "JUnit file, one summary and one HTML report; runs that do not make one run are refused."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``merge`` command's arguments (``pytest-osworld merge``, ``python -m
    pytest_osworld.report merge``)."""
    parser.add_argument("results", nargs="+", type=Path, help="the results folders to merge (the shards)")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write (new or empty)")
    parser.add_argument(
        ALLOW_MISMATCH,
        action="store_true",
        dest="allow_mismatch",
        help="merge even runs that do not make one run (other settings, task files or shards, "
        "or a task twice: the run named last wins); the figures are then not one run's",
    )


def run(args: argparse.Namespace) -> int:
    """Merge; print the summary. 0 when merged, 2 when refused or unreadable."""
    try:
        merged = merge(args.results, args.out, allow_mismatch=args.allow_mismatch)
    except MergeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except MergeRefused as exc:
        for reason in exc.reasons:
            print(f"refused: {reason}", file=sys.stderr)
        print(REFUSED_HINT.format(count=len(exc.reasons), flag=ALLOW_MISMATCH), file=sys.stderr)
        return 2
    for reason in merged.overridden:
        print(f"merged anyway ({ALLOW_MISMATCH}): {reason}", file=sys.stderr)
    print(f"merged {merged.runs} run(s), {merged.tasks} task folder(s), into {merged.out}")
    print(f"junit:   {merged.junit}")
    print(f"summary: {merged.summary}")
    print(merged.summary_text, end="")
    return 0
