"""Reference solutions kept beside task files instead of inside them (``--solutions FILE``).

OSWorld's task files have no ``solution`` and must stay unchanged, so their solutions live
in one JSON object: keys are task paths relative to an examples folder
(``"os/<id>.json"``: the task file's folder name and file name), values are solution lists
as in our own task files. ``--agent=replay`` then plays them. A solution from the file
replaces one written in the task file, so alternative solutions can be tried without
editing tasks. Keys that match no collected task are ignored (a run may select a few).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.errors import TaskFileError
from pytest_osworld.task.model import Task, validate_solution

#: Solutions of the run: {"<domain>/<file name>": solution}.
SOLUTIONS_KEY = pytest.StashKey[dict[str, tuple[str | dict[str, Any], ...]]]()

#: A key of the solutions file: one folder and a ``.json`` file name.
_KEY = re.compile(r"[^/\\]+/[^/\\]+\.json")


def solution_key(task: Task) -> str:
    """The key a task's solution has in a solutions file: ``<folder>/<file name>``."""
    return f"{task.path.parent.name}/{task.path.name}"


def load_solutions(
    path: Path | None, flag: str = "--solutions"
) -> dict[str, tuple[str | dict[str, Any], ...]]:
    """Read and check a solutions file; a :class:`pytest.UsageError` says what and where
    (naming the option ``flag`` that gave the file)."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise pytest.UsageError(f"{flag} {path}: cannot read it as JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise pytest.UsageError(
            f'{flag} {path}: expected a JSON object {{"<domain>/<task file>.json": [actions...]}}, '
            f"got {type(data).__name__}"
        )
    solutions: dict[str, tuple[str | dict[str, Any], ...]] = {}
    for key, value in data.items():
        if not _KEY.fullmatch(key):
            raise pytest.UsageError(
                f"{flag} {path}: key {key!r} is not '<domain>/<task file>.json' "
                "(a task path relative to the examples folder, such as 'os/<id>.json')"
            )
        try:
            solutions[key] = validate_solution(value, str(path), f"$[{json.dumps(key)}]")
        except TaskFileError as exc:
            raise pytest.UsageError(f"{flag} {exc}") from exc
    return solutions


def with_solution(task: Task, solutions: dict[str, tuple[str | dict[str, Any], ...]]) -> Task:
    """``task`` with its solution from the solutions file, where the file has one."""
    found = solutions.get(solution_key(task))
    return task if found is None else replace(task, solution=found)


def record_solution(path: Path, task: Task, entries: list[str]) -> None:
    """Write ``entries`` as ``task``'s solution into the solutions file ``path``.

    The file is created when missing; another task's solution in it is kept, this task's
    is replaced. The write is atomic and under a lock, so parallel workers and a crash
    never leave half a file.
    """
    from filelock import FileLock

    validate_solution(entries, str(path), f"$[{json.dumps(solution_key(task))}]")
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        data: dict[str, Any] = {}
        if path.exists():
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise TaskFileError(str(path), "$", f"not a solutions file ({exc})") from exc
            if not isinstance(loaded, dict):
                raise TaskFileError(str(path), "$", "not a solutions file (not a JSON object)")
            data = loaded
        data[solution_key(task)] = entries
        staging = path.with_name(f".{path.name}.tmp")
        staging.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        staging.replace(path)
