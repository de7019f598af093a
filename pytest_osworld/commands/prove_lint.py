"""The lint of ``pytest-osworld prove``: what a task file can be checked for without a desktop.

Each task file is loaded and name-checked as collection does (:func:`~pytest_osworld.task.model.load_task`,
:func:`~pytest_osworld.plugin.collect.unknown_names`: every unknown setup step, getter or metric,
each with the registry's "did you mean"), then checked for what collection leaves to run
time: assets that do not exist, guest paths outside the user's home, and a missing reference
solution (a known-broken task may have none). Every :class:`Problem` names the JSON path and
says what to do.
"""

from __future__ import annotations

import json
import posixpath
import urllib.parse
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_osworld.errors import TaskFileError
from pytest_osworld.omniact.release import SPLIT_TEXT_RE, ReleaseSampleError, looks_like_split, read_split
from pytest_osworld.omniact.sample import sample_of_release
from pytest_osworld.omniact.task import load_omniact_task, looks_like_omniact
from pytest_osworld.plugin.collect import unknown_names
from pytest_osworld.task.assets import AssetCache, AssetError
from pytest_osworld.task.model import Task, load_task
from pytest_osworld.task.solutions import solution_key, with_solution

#: The user's home inside the environment: the only place tasks put and read files.
HOME = "/home/user"

# Problem texts; tests import these.
ASSET_MISSING = "asset {url!r} does not exist (looked at {where}); put the file there or fix the path"
ASSET_NOT_CACHED = (
    "asset {url!r} is not in the asset cache ({where}) and --offline forbids downloading it; "
    "run once online, or seed the cache (see docs/authoring.md)"
)
ASSET_BAD = "asset {url!r} cannot be used: {reason}"
OUTSIDE_HOME = (
    "path {path!r} is outside the user's home ({home}); keep the task's files under {home}/ "
    "so that every desktop can write and read them"
)
NO_SOLUTION = (
    "the task has no reference solution; add a 'solution' list ending with DONE (FAIL for an "
    "infeasible task), or give one in a --solutions FILE under the key {key!r}"
)

#: Getters whose ``path`` is a file inside the environment (``cloud_file`` and
#: ``pdf_from_url`` take URLs, ``cache_file`` a host file).
GUEST_PATH_GETTERS = frozenset({"vm_file", "list_directory", "vscode_config", "content_from_vm_file"})


@dataclass(frozen=True)
class Problem:
    """One lint finding: where in the task file (a JSON path) and what is wrong, what to do."""

    json_path: str
    text: str

    def __str__(self) -> str:
        return f"{self.json_path}: {self.text}"


@dataclass(frozen=True)
class Linted:
    """A task file's lint: the task (None when it does not load) and its problems."""

    path: Path
    task: Task | None
    problems: tuple[Problem, ...]
    #: An OmniACT task (scored offline from its gold script; no mutations).
    omniact: bool = False
    #: The test's name when the file holds several (a split's ``omniact/<split>/<key>``).
    label: str | None = None

    @property
    def name(self) -> str:
        """``domain/id``, or ``folder/file stem`` for a file that does not load."""
        if self.label is not None:
            return self.label
        return self.task.nodename if self.task else f"{self.path.parent.name}/{self.path.stem}"


def lint_file(
    path: Path,
    solutions: dict[str, tuple[str | dict[str, Any], ...]],
    assets: AssetCache,
    known_broken: Collection[str] = (),
) -> list[Linted]:
    """Lint a task file (one :class:`Linted`) or a split file of OmniACT's release (one per
    sample, a bad sample with its problem, as collection reads it)."""
    if not is_split_file(path):
        return [lint_task(path, solutions, assets, known_broken)]
    try:
        split = read_split(path)
    except TaskFileError as exc:
        return [Linted(path, None, (Problem(exc.json_path, exc.problem),), omniact=True)]
    found = []
    for index, entry in enumerate(split.entries):
        label = f"omniact/{split.name}/{entry.key}"
        if isinstance(entry, ReleaseSampleError):
            found.append(Linted(path, None, (Problem(entry.json_path, entry.problem),), True, label))
        else:
            task = sample_of_release(entry, index, path).agent_task()
            found.append(Linted(path, task, (), omniact=True, label=label))
    return found


def is_split_file(path: Path) -> bool:
    """Whether the file at ``path`` is a split file of OmniACT's release (collection's test too)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return False
    try:
        return looks_like_split(json.loads(text))
    except ValueError:
        return bool(SPLIT_TEXT_RE.search(text))


def lint_task(
    path: Path,
    solutions: dict[str, tuple[str | dict[str, Any], ...]],
    assets: AssetCache,
    known_broken: Collection[str] = (),
) -> Linted:
    """Lint the task file at ``path``; ``solutions`` are those of ``--solutions`` (may be
    empty), ``known_broken`` the ids of ``--known-broken`` (they need no solution). An
    OmniACT task file is only loaded: it has no setup, no evaluator and its own solution."""
    if is_omniact(path):
        try:
            return Linted(path, load_omniact_task(path).agent_task(), (), omniact=True)
        except TaskFileError as exc:
            return Linted(path, None, (Problem(exc.json_path, exc.problem),), omniact=True)
    try:
        task = with_solution(load_task(path), solutions)
    except TaskFileError as exc:
        return Linted(path, None, (Problem(exc.json_path, exc.problem),))
    unknown = [Problem(exc.json_path, exc.problem) for exc in unknown_names(task)]
    if unknown:
        return Linted(path, task, tuple(unknown))
    problems = list(asset_problems(task, assets))
    problems += home_problems(task)
    if task.solution is None and task.id not in known_broken:
        problems.append(Problem("$.solution", NO_SOLUTION.format(key=solution_key(task))))
    return Linted(path, task, tuple(problems))


def is_omniact(path: Path) -> bool:
    """Whether the file at ``path`` parses as an OmniACT task (collection's test too)."""
    try:
        return looks_like_omniact(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return False


def task_assets(task: Task) -> Iterator[tuple[str, str]]:
    """``(json path, url)`` of every file the task reads from the host: download and
    upload_file steps, cloud_file getters."""
    for step in task.config + task.evaluator.postconfig:
        if step.type == "download":
            for j, entry in enumerate(_list(step.parameters.get("files"))):
                if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                    yield f"{step.json_path}.parameters.files[{j}].url", entry["url"]
        elif step.type == "upload_file" and isinstance(step.parameters.get("local_path"), str):
            yield f"{step.json_path}.parameters.local_path", step.parameters["local_path"]
    for getter in task.evaluator.getters():
        if getter.type == "cloud_file":
            yield from _paths(getter.config.get("path"), f"{getter.json_path}.path")


def asset_problems(task: Task, assets: AssetCache) -> Iterator[Problem]:
    """Assets that do not exist (http(s) URLs only when the cache is offline)."""
    base = task.path.parent
    for json_path, url in task_assets(task):
        remote = urllib.parse.urlsplit(url).scheme in ("http", "https")
        if remote and not assets.offline:
            continue
        try:
            present = assets.is_cached(url, base)
            where = str(assets.path_for(url)) if remote else _local(url, base)
        except AssetError as exc:
            yield Problem(json_path, ASSET_BAD.format(url=url, reason=exc))
            continue
        if not present:
            template = ASSET_NOT_CACHED if remote else ASSET_MISSING
            yield Problem(json_path, template.format(url=url, where=where))


def guest_paths(task: Task) -> Iterator[tuple[str, str]]:
    """``(json path, path)`` of every environment file the task's steps and getters name."""
    for step in task.config + task.evaluator.postconfig:
        if step.type == "download":
            for j, entry in enumerate(_list(step.parameters.get("files"))):
                if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                    yield f"{step.json_path}.parameters.files[{j}].path", entry["path"]
        elif step.type in ("upload_file", "open") and isinstance(step.parameters.get("path"), str):
            yield f"{step.json_path}.parameters.path", step.parameters["path"]
    for getter in task.evaluator.getters():
        if getter.type in GUEST_PATH_GETTERS:
            yield from _paths(getter.config.get("path"), f"{getter.json_path}.path")


def home_problems(task: Task) -> Iterator[Problem]:
    """Environment paths outside :data:`HOME` (``~/...`` counts as inside)."""
    for json_path, path in guest_paths(task):
        if path.startswith("~/"):
            continue
        normal = posixpath.normpath(path)
        if not normal.startswith(HOME + "/"):
            yield Problem(json_path, OUTSIDE_HOME.format(path=path, home=HOME))


def _paths(value: Any, json_path: str) -> Iterator[tuple[str, str]]:
    """A getter's ``path``: one string, or a list of them."""
    if isinstance(value, str):
        yield json_path, value
    for i, item in enumerate(_list(value)):
        if isinstance(item, str):
            yield f"{json_path}[{i}]", item


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _local(url: str, base: Path) -> str:
    """Where a relative path or ``file://`` URL is looked for."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "file":
        return urllib.parse.unquote(parts.path)
    return str(base / url)
