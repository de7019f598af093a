"""Our JSON samples written in OmniACT's release layout, each checked by reading it back.

:func:`write_release_layout` writes a split file (keys ``"0"``, ``"1"``, ... in the order
given), one task file per sample, and per screenshot its PNG and its box file, as the
release lays them out (:mod:`~pytest_osworld.omniact.release`), web samples with the
release's path quirk (the split names ``screen_<k>.png`` and ``screen_<k>.json``, the files
are ``screen<k>.png`` and ``screen<k>_boxes.json``). The gold scripts are written in the
release's form (:mod:`~pytest_osworld.omniact.release_form`) with every pointer action at
its box's exact centre, as the release's gold clicks are.

The split is then read back and every sample checked: it reads without error, its own gold
scores 1 under both scorings and an empty answer 0 (a write text with an apostrophe or of
one character cannot score 1 under the official scoring, so such a sample is refused).
The samples generator (``tasks/tools/make_omniact_samples.py --release``) calls it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_osworld.errors import OSWorldError
from pytest_osworld.omniact.penalties import Box
from pytest_osworld.omniact.release import ReleaseSample, read_split
from pytest_osworld.omniact.release_form import ReleaseFormError, release_lines, task_text
from pytest_osworld.omniact.sample import sample_of_release, score_both
from pytest_osworld.omniact.task import OmniactTask

#: Message templates (tests match them).
BOX_CONFLICT = "{first} and {second} give the box {name!r} of {image} different positions"
NOT_WRITABLE = "{task}: {problem}"
READ_BACK = "{key} ({task}): {problem}"
GOLD_NOT_ONE = "its gold scores {score:.3f}, not 1, under the {scoring} scoring ({reason})"
EMPTY_NOT_ZERO = "an empty answer scores {score:.3f}, not 0, under the {scoring} scoring"


class ReleaseWriteError(OSWorldError):
    """Samples that cannot be written in the release layout, or do not read back as written."""


@dataclass(frozen=True)
class ReleaseEntry:
    """One JSON sample to write, and the app (desktop) or site (web) folder it goes in."""

    task: OmniactTask
    folder: str


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _box_entry(name: str, box: Box) -> dict[str, object]:
    return {
        "top_left": [_number(box.x), _number(box.y)],
        "bottom_right": [_number(box.x + box.w), _number(box.y + box.h)],
        "label": name,
    }


def _paths(domain: str, folder: str, screen: int, number: int) -> tuple[dict[str, str], dict[str, str]]:
    """(the split's entry, where the files are): equal but for web screenshots and boxes."""
    entry = {
        "task": f"data/tasks/{domain}/{folder}/task_{screen}.{number}.txt",
        "image": f"data/data/{domain}/{folder}/screen_{screen}.png",
        "box": f"data/metadata/{domain}/boxes/{folder}/screen_{screen}.json",
    }
    files = dict(entry)
    if domain == "web":
        files["image"] = f"data/data/web/{folder}/screen{screen}.png"
        files["box"] = f"data/metadata/web/boxes/{folder}/screen{screen}_boxes.json"
    return entry, files


def write_release_layout(entries: Sequence[ReleaseEntry], root: Path, split: str = "test") -> Path:
    """Write ``entries`` in the release layout under ``root`` (its ``data/`` replaced);
    return the split file. Raises :class:`ReleaseWriteError` listing every problem."""
    problems: list[str] = []
    #: Per screenshot (domain, folder, image): its number in the folder, its tasks so far,
    #: its boxes (with the task that gave each first).
    screens: dict[tuple[str, str, Path], int] = {}
    tasks_on: dict[tuple[str, str, Path], int] = {}
    boxes: dict[tuple[str, str, Path], dict[str, tuple[Box, str]]] = {}
    split_data: dict[str, dict[str, str]] = {}
    texts: dict[str, str] = {}
    for key, item in enumerate(entries):
        task = item.task
        where = (task.domain, item.folder, task.image)
        if where not in screens:
            screens[where] = 1 + sum(1 for known in screens if known[:2] == where[:2])
        tasks_on[where] = tasks_on.get(where, 0) + 1
        entry, paths = _paths(task.domain, item.folder, screens[where], tasks_on[where])
        try:
            lines = release_lines(task.actions, task.boxes, centre=True)
        except ReleaseFormError as exc:
            problems.append(NOT_WRITABLE.format(task=task.path, problem=exc))
            continue
        known = boxes.setdefault(where, {})
        for name, box in task.boxes.items():
            if name in known and known[name][0] != box:
                problems.append(
                    BOX_CONFLICT.format(first=known[name][1], second=task.path, name=name, image=task.image)
                )
            known.setdefault(name, (box, str(task.path)))
        split_data[str(key)] = entry
        texts[paths["task"]] = task_text(task.instruction, lines)
    if problems:
        raise ReleaseWriteError("\n".join(problems))
    data = root / "data"
    if data.is_dir():
        shutil.rmtree(data)
    for relative, text in texts.items():
        _write(root / relative, text.encode("utf-8"))
    for where, number in screens.items():
        domain, folder, image = where
        _, paths = _paths(domain, folder, number, 1)
        _write(root / paths["image"], image.read_bytes())
        found = {name: _box_entry(name, box) for name, (box, _) in boxes.get(where, {}).items()}
        _write(root / paths["box"], (json.dumps(found, indent=1) + "\n").encode("utf-8"))
    split_path = root / f"{split}.json"
    _write(split_path, (json.dumps(split_data, indent=1) + "\n").encode("utf-8"))
    check_release(split_path, [e.task for e in entries])
    return split_path


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def check_release(split_path: Path, tasks: Sequence[OmniactTask] = ()) -> None:
    """Read a split back: no bad sample, each gold scores 1 under both scorings, an empty
    answer 0; raises :class:`ReleaseWriteError` listing the samples that do not."""
    split = read_split(split_path)
    problems = [str(error) for error in split.errors]
    names = {str(i): str(t.path) for i, t in enumerate(tasks)}
    for index, entry in enumerate(split.entries):
        if not isinstance(entry, ReleaseSample):
            continue
        sample = sample_of_release(entry, index, split_path)
        gold, empty = score_both(sample, sample.gold_script), score_both(sample, "")
        label = names.get(sample.key, str(sample.source))
        for scoring in ("official", "paper"):
            if gold.action_score(scoring) != 1.0:
                problem = GOLD_NOT_ONE.format(
                    score=gold.action_score(scoring), scoring=scoring, reason=gold.reason(scoring)
                )
                problems.append(READ_BACK.format(key=sample.key, task=label, problem=problem))
            if empty.action_score(scoring) != 0.0:
                problem = EMPTY_NOT_ZERO.format(score=empty.action_score(scoring), scoring=scoring)
                problems.append(READ_BACK.format(key=sample.key, task=label, problem=problem))
    if problems:
        raise ReleaseWriteError("\n".join(problems))
