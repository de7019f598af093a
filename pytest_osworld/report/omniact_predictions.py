"""The predictions and figures files of a run's OmniACT items, beside its task folders.

Every run over OmniACT items (and every ``pytest-osworld merge`` of such runs) writes, at
the top of its results folder:

* ``omniact_predictions.json``: a JSON object from sample key to the script text the model
  wrote, in the split's order, the format ``pytest-osworld omniact-score SPLIT PREDICTIONS``
  reads (and that converts to the official ``eval.py``'s list by taking the values). The
  predictions are grouped by *prediction set*: each split file of the release is one set,
  our JSON samples (keyed by task id) another. A run with one set writes this one file; a
  run with several writes ``omniact_predictions.<set>.json`` for each instead, ``<set>``
  being the split's name (``test``; ``test-2`` for a second split file of that name) or
  ``samples`` for the JSON samples.
* ``omniact_figures.json``: the run's dataset figures, both scorings, all, desktop and web,
  over every OmniACT item and per set (with each set's predictions file and split file).

Everything is made from the plain ``omniact`` objects of the items' results (the
controller's reports under xdist, or ``result.json`` files), with
:mod:`pytest_osworld.report.omniact_figures`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_osworld.report.omniact_figures import figures_json, sample_order

#: The file names (tests match them).
PREDICTIONS_NAME = "omniact_predictions.json"
SET_PREDICTIONS_NAME = "omniact_predictions.{name}.json"
FIGURES_NAME = "omniact_figures.json"
#: The set of our JSON samples.
JSON_SET = "samples"


@dataclass
class PredictionSet:
    """One split file's samples (or the JSON samples): their predictions and results."""

    name: str
    #: The split file (None for the JSON samples).
    split_file: str | None
    blocks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def predictions(self) -> dict[str, str]:
        """Key -> script text, in the split's order (samples without a text left out)."""
        return {
            str(b["key"]): b["prediction"]
            for b in sorted(self.blocks, key=sample_order)
            if isinstance(b.get("prediction"), str)
        }


def prediction_sets(blocks: Iterable[dict[str, Any]]) -> list[PredictionSet]:
    """The ``omniact`` objects grouped into prediction sets, JSON samples first, then by split file."""
    by_file: dict[str | None, PredictionSet] = {}
    taken: set[str] = set()
    for block in sorted(blocks, key=sample_order):
        split_file = block.get("split_file") if block.get("layout") == "release" else None
        split_file = str(split_file) if split_file else None
        found = by_file.get(split_file)
        if found is None:
            base = JSON_SET if split_file is None else str(block.get("split") or Path(split_file).stem)
            name, number = base, 1
            while name in taken:
                number += 1
                name = f"{base}-{number}"
            taken.add(name)
            found = by_file[split_file] = PredictionSet(name, split_file)
        found.blocks.append(block)
    return list(by_file.values())


def predictions_file_names(sets: list[PredictionSet]) -> dict[str, str]:
    """Set name -> its predictions file name (one set: ``omniact_predictions.json``)."""
    if len(sets) == 1:
        return {sets[0].name: PREDICTIONS_NAME}
    return {s.name: SET_PREDICTIONS_NAME.format(name=s.name) for s in sets}


def write_predictions(results_dir: Path, blocks: Iterable[dict[str, Any]]) -> list[Path]:
    """Write the predictions files and ``omniact_figures.json``; return their paths (none
    when there is no OmniACT item)."""
    items = list(blocks)
    sets = prediction_sets(items)
    if not sets:
        return []
    results_dir.mkdir(parents=True, exist_ok=True)
    names = predictions_file_names(sets)
    written = []
    for found in sets:
        written.append(_write_json(results_dir / names[found.name], found.predictions))
    figures = {
        "figures": figures_json(items),
        "sets": {
            s.name: {
                "predictions": names[s.name],
                "split_file": s.split_file,
                "figures": figures_json(s.blocks),
            }
            for s in sets
        },
    }
    written.append(_write_json(results_dir / FIGURES_NAME, figures))
    return written


def _write_json(path: Path, data: object) -> Path:
    """Write ``data`` as JSON, atomically."""
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(data, stream, indent=1, ensure_ascii=False)
            stream.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
