"""Which tasks of a results directory are already done, for a "skip tasks already done" run.

Also the walk over a results directory that the HTML report and ``rescore`` share: task
folders sit at ``<action_space>/<observation_type>/<model>/<domain>/<task_id>/`` and hold a
``traj.jsonl`` (from the first step on) and a ``result.json`` (once the task is scored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Outcomes that count as done: the task ran to a verdict. ``error`` and ``skipped`` do not.
DONE_OUTCOMES: frozenset[str] = frozenset({"passed", "failed", "eval_error"})

#: How deep task folders sit below the results directory.
TASK_DEPTH = 5


def task_folders(results_dir: Path) -> list[Path]:
    """Every task folder under ``results_dir`` (with a ``traj.jsonl`` or a ``result.json``), sorted.

    Folders whose path below ``results_dir`` has a part starting with ``.`` (such as the
    providers' ``.providers/`` work folders) are not task folders and are left out.
    """
    if not results_dir.is_dir():
        return []
    pattern = "/".join(["*"] * TASK_DEPTH)
    found: set[Path] = set()
    for name in ("traj.jsonl", "result.json"):
        for path in results_dir.glob(f"{pattern}/{name}"):
            folder = path.parent
            parts = folder.relative_to(results_dir).parts
            if any(part.startswith(".") for part in parts) or not folder.is_dir():
                continue
            found.add(folder)
    return sorted(found)


def read_result(folder: Path) -> dict[str, Any] | None:
    """The parsed ``result.json`` of a task folder, or None if it is absent or unreadable."""
    try:
        data = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def completed_tasks(
    results_dir: Path,
    *,
    action_space: str | None = None,
    observation_type: str | None = None,
    model: str | None = None,
) -> set[tuple[str, str]]:
    """``(domain, task_id)`` of every task whose ``result.json`` has a verdict.

    A verdict is outcome ``passed``, ``failed`` or ``eval_error``; tasks that errored, were
    skipped, have no ``result.json`` yet (crashed mid-task) or an unreadable one are not
    done and should run again. The ids are the ones inside ``result.json``, not the
    (sanitised) folder names. ``action_space``, ``observation_type`` and ``model``, when
    given, keep only results recorded with that setting (from the result's provenance),
    so one results directory can hold several configurations.
    """
    wanted = {"action_space": action_space, "observation_type": observation_type, "model": model}
    done: set[tuple[str, str]] = set()
    for folder in task_folders(results_dir):
        result = read_result(folder)
        if result is None or result.get("outcome") not in DONE_OUTCOMES:
            continue
        domain, task_id = result.get("domain"), result.get("task_id")
        if not isinstance(domain, str) or not isinstance(task_id, str):
            continue
        provenance = result.get("provenance")
        provenance = provenance if isinstance(provenance, dict) else {}
        if any(value is not None and provenance.get(key) != value for key, value in wanted.items()):
            continue
        done.add((domain, task_id))
    return done
