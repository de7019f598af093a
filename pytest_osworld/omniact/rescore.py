"""``pytest-osworld omniact-score SPLIT PREDICTIONS``: score predictions offline, as OmniACT does.

SPLIT is a split file of OmniACT's release (``test.json``, read by
:mod:`~pytest_osworld.omniact.release`), PREDICTIONS a JSON object from sample key to
script text or a list of script texts in the split's order
(:mod:`~pytest_osworld.omniact.predictions`; every pytest run over OmniACT items writes
``omniact_predictions.json`` in the first form). The command prints the dataset figures
of the chosen scoring (``--scoring official``, the default, or ``paper``): sequence score,
action score, the three penalty totals and the ideal score, for all samples and for
desktop and web apart (:mod:`~pytest_osworld.omniact.figures`); ``--json`` prints
``{"dataset": {...}, "samples": {key: {"sequence_score", "action_score"}}}`` instead.

Samples without a prediction are left out of the figures (and listed); bad samples of the
split are reported on stderr and left out. Exit status: 0; 1 when some samples of the
split could not be read; 2 when the split or the predictions cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_osworld.errors import OSWorldError
from pytest_osworld.omniact.figures import ALL, DOMAINS, DatasetFigures, SampleFigures, by_domain
from pytest_osworld.omniact.predictions import read_predictions
from pytest_osworld.omniact.release import ReleaseSampleError, ReleaseSplit, read_split
from pytest_osworld.omniact.scorings import DEFAULT_SCORING, SCORINGS, sample_figures

#: The subcommand's name, one-line help and longer description.
NAME = "omniact-score"
HELP = "score OmniACT predictions against a split of OmniACT's release, as OmniACT's scorer does"
DESCRIPTION = (
    "Score PREDICTIONS (a JSON object from sample key to script text, or a list of script texts in "
    "the split's order) against SPLIT (a split file of OmniACT's release, e.g. test.json) and print "
    "the dataset figures: sequence score, action score, the three penalty totals and the ideal "
    "score, for all samples and desktop and web apart. Exit status 1 when some samples of the split "
    "cannot be read (they are left out), 2 when the split or the predictions cannot be read."
)

#: Text of the output (tests match them).
HEADLINE = "OmniACT {scoring} scoring of {predictions} on {split}: {count} sample(s) scored"
COLUMNS = ("samples", "sequence", "action", "click", "press", "write", "ideal")
LEGEND = (
    "sequence, action: sum of score x weight / sum of weights (weight = gold lines - 0.9; "
    "the ideal score is the sum of weights)\n"
    "click, press, write: sum of penalty x weight over the samples whose sequence matches, "
    "/ the ideal score"
)
UNPREDICTED = "{count} sample(s) of the split have no prediction and are not scored: {shown}"
UNREADABLE = "{count} sample(s) of the split cannot be read and are not scored (errors above)"
#: How many keys a line shows.
SHOWN_KEYS = 10


@dataclass(frozen=True)
class Rescored:
    """A predictions file scored against a split."""

    split: ReleaseSplit
    predictions: str
    scoring: str
    #: Every scored sample's figures, by key, in the split's order.
    samples: Mapping[str, SampleFigures]
    #: The dataset figures: ``all``, ``desktop``, ``web``.
    dataset: Mapping[str, DatasetFigures]
    #: The readable samples with no prediction.
    unpredicted: tuple[str, ...]
    #: The bad samples of the split.
    errors: tuple[ReleaseSampleError, ...]


def rescore(
    split: ReleaseSplit, predictions: Mapping[str, str], scoring: str = DEFAULT_SCORING, source: str = ""
) -> Rescored:
    """Score ``predictions`` (key -> script text) against the readable samples of ``split``."""
    scored: dict[str, SampleFigures] = {}
    unpredicted: list[str] = []
    for sample in split.samples:
        if sample.key not in predictions:
            unpredicted.append(sample.key)
            continue
        scored[sample.key] = sample_figures(sample, predictions[sample.key], scoring)
    return Rescored(
        split=split,
        predictions=source,
        scoring=scoring,
        samples=scored,
        dataset=by_domain(scored.values()),
        unpredicted=tuple(unpredicted),
        errors=split.errors,
    )


def to_json(result: Rescored) -> dict[str, object]:
    """``{"dataset": {... all ..., "desktop": {...}, "web": {...}}, "samples": {key: {...}}}`` and context."""
    dataset: dict[str, object] = dict(result.dataset[ALL].to_json())
    for domain in DOMAINS:
        dataset[domain] = result.dataset[domain].to_json()
    return {
        "scoring": result.scoring,
        "split": str(result.split.path),
        "predictions": result.predictions,
        "dataset": dataset,
        "samples": {key: figures.to_json() for key, figures in result.samples.items()},
        "unpredicted": list(result.unpredicted),
        "errors": [str(error) for error in result.errors],
    }


def format_text(result: Rescored) -> str:
    """The figures as a small table, with the legend and what was left out."""
    lines = [
        HEADLINE.format(
            scoring=result.scoring,
            predictions=result.predictions or "the predictions",
            split=result.split.path,
            count=len(result.samples),
        ),
        f"{'':<8}" + "".join(f"{name:>10}" for name in COLUMNS),
    ]
    for name in (ALL, *DOMAINS):
        figures = result.dataset[name]
        values = (
            figures.sequence_score,
            figures.action_score,
            figures.click_penalty,
            figures.press_penalty,
            figures.write_penalty,
        )
        row = f"{name:<8}{figures.samples:>10}" + "".join(f"{v:>10.4f}" for v in values)
        lines.append(row + f"{figures.ideal_score:>10.2f}")
    lines.append(LEGEND)
    if result.unpredicted:
        shown = ", ".join(result.unpredicted[:SHOWN_KEYS]) + (
            ", ..." if len(result.unpredicted) > SHOWN_KEYS else ""
        )
        lines.append(UNPREDICTED.format(count=len(result.unpredicted), shown=shown))
    if result.errors:
        lines.append(UNREADABLE.format(count=len(result.errors)))
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``omniact-score`` command's arguments."""
    parser.add_argument("split", type=Path, help="a split file of OmniACT's release (test.json, ...)")
    parser.add_argument("predictions", type=Path, help="the predictions: {key: script text} or [script text]")
    parser.add_argument(
        "--scoring",
        choices=SCORINGS,
        default=DEFAULT_SCORING,
        help="official: OmniACT's released scorer (published numbers); paper: the paper's text "
        f"(default: {DEFAULT_SCORING})",
    )
    parser.add_argument(
        "--root", type=Path, default=None, help="the release's root (default: SPLIT's folder)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    """Run ``omniact-score``; returns the exit status (see the module's doc)."""
    try:
        split = read_split(args.split, getattr(args, "root", None))
        predictions = read_predictions(args.predictions, split.keys, str(args.split))
    except OSWorldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for error in split.errors:
        print(f"error: {error}", file=sys.stderr)
    try:
        result = rescore(split, predictions, args.scoring, str(args.predictions))
    except OSWorldError as exc:  # NLTK missing
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(to_json(result), indent=2))
    else:
        print(format_text(result), end="")
    return 1 if split.errors else 0
