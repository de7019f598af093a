"""Collection of OmniACT samples: our JSON task files, and split files of OmniACT's release.

* A JSON task file (:func:`~pytest_osworld.omniact.task.looks_like_omniact`) yields one
  :class:`~pytest_osworld.omniact.item.OmniactItem`, ``omniact/<id>``.
* A split file of the release (:func:`~pytest_osworld.omniact.release.looks_like_split`:
  an object from key to ``{"task", "image", "box"}``), given to pytest or found in a
  folder, yields one item per sample, ``omniact/<split>/<key>``, in the split's order. A
  bad sample is one collection error of its own (a :class:`BadSample` collector named like
  the item it would have been), naming the key, the file at fault and what to do; the
  other samples run. A split file that cannot be read at all is one collection error.

The items run :func:`~pytest_osworld.omniact.item.run_omniact`
(:mod:`pytest_osworld.omniact.item`, re-exported here).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.errors import TaskFileError
from pytest_osworld.omniact.item import (
    FAIL_HEAD,
    MARKER_LINE,
    OmniactFailed,
    OmniactItem,
    answer_script,
    failure_text,
    prediction_text,
    rerun_command,
    run_omniact,
)
from pytest_osworld.omniact.release import (
    SPLIT_TEXT_RE,
    ReleaseSampleError,
    ReleaseSplitError,
    looks_like_split,
    read_split,
)
from pytest_osworld.omniact.sample import sample_of_release, sample_of_task
from pytest_osworld.omniact.task import load_omniact_task, looks_like_omniact

__all__ = [
    "FAIL_HEAD",
    "MARKER_LINE",
    "BadSample",
    "OmniactFailed",
    "OmniactFile",
    "OmniactItem",
    "SplitFile",
    "answer_script",
    "failure_text",
    "omniact_file_for",
    "prediction_text",
    "rerun_command",
    "run_omniact",
]

#: Message templates of collection errors (tests match them).
BAD_TASK_FILE = "invalid OmniACT task file {error}"
BAD_SPLIT = "invalid OmniACT split file {error}"
BAD_SAMPLE = "invalid OmniACT sample {error}"
#: Text of a file that does not parse but is meant to be an OmniACT task.
_OMNIACT_KEYS_RE = re.compile(
    r'"script"\s*:.*"(image|boxes)"\s*:|"(image|boxes)"\s*:.*"script"\s*:', re.DOTALL
)


def omniact_file_for(file_path: Path, parent: pytest.Collector) -> OmniactFile | SplitFile | None:
    """The collector of ``file_path`` if it is an OmniACT task file or a split file, else None.

    Call it from ``pytest_collect_file`` before OSWorld's own check (an OmniACT file has
    an ``instruction`` too). A file that is not valid JSON is claimed when its text has
    OmniACT's keys (or a split entry's), so that its error is reported rather than lost.
    """
    if file_path.suffix != ".json":
        return None
    try:
        text = file_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        if _OMNIACT_KEYS_RE.search(text):
            return OmniactFile.from_parent(parent, path=file_path)
        if SPLIT_TEXT_RE.search(text):
            return SplitFile.from_parent(parent, path=file_path)
        return None
    if looks_like_omniact(data):
        return OmniactFile.from_parent(parent, path=file_path)
    if looks_like_split(data):
        return SplitFile.from_parent(parent, path=file_path)
    return None


class OmniactFile(pytest.File):
    """One OmniACT task file; yields a single :class:`OmniactItem`."""

    def collect(self) -> list[OmniactItem]:
        """Load and validate the task; errors become a collection error naming the JSON path."""
        try:
            task = load_omniact_task(self.path)
        except TaskFileError as exc:
            raise self.CollectError(BAD_TASK_FILE.format(error=exc)) from exc
        sample = sample_of_task(task)
        return [OmniactItem.from_parent(self, name=sample.nodename, callobj=run_omniact, sample=sample)]


class SplitFile(pytest.File):
    """A split file of OmniACT's release; yields one item (or one :class:`BadSample`) per sample."""

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        """Read the split; an unreadable split is one collection error, a bad sample its own."""
        try:
            split = read_split(self.path)
        except ReleaseSplitError as exc:
            raise self.CollectError(BAD_SPLIT.format(error=exc)) from exc
        found: list[pytest.Item | pytest.Collector] = []
        fixtureinfo: Any = None
        for index, entry in enumerate(split.entries):
            name = f"omniact/{split.name}/{entry.key}"
            if isinstance(entry, ReleaseSampleError):
                found.append(BadSample.from_parent(self, name=name, error=entry))
                continue
            sample = sample_of_release(entry, index, self.path)
            # Every sample of a split runs the same function under the same conftests:
            # its fixture closure is computed once (pytest does the same for parametrize).
            item = OmniactItem.from_parent(
                self, name=name, callobj=run_omniact, sample=sample, fixtureinfo=fixtureinfo
            )
            fixtureinfo = item._fixtureinfo
            found.append(item)
        return found


class BadSample(pytest.Collector):
    """A sample of a split that cannot be read: collecting it is its collection error."""

    def __init__(self, *, error: ReleaseSampleError, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def collect(self) -> list[pytest.Item]:
        """Raise the sample's collection error (:data:`BAD_SAMPLE`)."""
        raise self.CollectError(BAD_SAMPLE.format(error=self.error))
