"""One OmniACT sample, whichever layout it came from, and both of its scorings.

An item runs a :class:`Sample`: one of our JSON samples (:mod:`~pytest_osworld.omniact.task`,
made by :func:`sample_of_task`) or a sample of a split of OmniACT's release
(:mod:`~pytest_osworld.omniact.release`, :func:`sample_of_release`). Each carries its gold
twice: as parsed actions with their boxes for the ``paper`` scoring
(:mod:`~pytest_osworld.omniact.score`), and prepared for the ``official`` scoring
(:mod:`~pytest_osworld.omniact.official`).

A JSON sample's official gold is its script in the release's form
(:mod:`~pytest_osworld.omniact.release_form`), each gold click given the box its
``# box:`` label names; when the form cannot hold the script the sample has no official
gold (``official_problem`` says why) and the paper scoring decides it. Replay answers with
the gold in the release's form when there is one, which both scorings score 1.

:func:`score_both` scores one prediction text by both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pytest_osworld.omniact.figures import SampleFigures
from pytest_osworld.omniact.official import GoldScriptError, OfficialGold, OfficialScore, prepare_gold, score
from pytest_osworld.omniact.penalties import Box
from pytest_osworld.omniact.release import ReleaseSample
from pytest_osworld.omniact.release_form import ReleaseFormError, release_lines, task_text
from pytest_osworld.omniact.score import ScriptAction, TaskScore, score_script, sequence_weight
from pytest_osworld.omniact.scorings import PaperGold, check_scoring, paper_figures, paper_gold
from pytest_osworld.omniact.task import NODE_PREFIX, OmniactTask, omniact_agent_task
from pytest_osworld.task.model import Task

#: The two layouts a sample comes from.
LAYOUTS = ("json", "release")
#: Message template: why a JSON sample has no official gold (tests match it).
NO_OFFICIAL = "the official scoring cannot read this sample's gold script: {problem}"
NO_PAPER_GOLD = "the sample has no gold script for the paper scoring"


@dataclass(frozen=True)
class Sample:
    """What an OmniACT item runs and both scorings need, for either layout."""

    #: ``json`` (our task files) or ``release`` (a split of OmniACT's release).
    layout: str
    #: The result's task id: the JSON sample's id, or ``<split>/<key>``.
    task_id: str
    #: The key predictions use: the JSON sample's id, or the split's key.
    key: str
    #: The split's name (``test``), None for a JSON sample.
    split: str | None
    #: ``desktop`` or ``web``.
    domain: str
    app: str | None
    instruction: str
    image: Path
    image_size: tuple[int, int]
    #: The file pytest collected: the JSON task file, or the split file.
    path: Path
    #: The file that holds the gold: the JSON task file, or the release's task file.
    source: Path
    sha256: str
    #: The official scoring's gold, or None with the reason in ``official_problem``.
    official: OfficialGold | None
    official_problem: str | None
    #: What ``--agent=replay`` answers.
    gold_script: str
    #: The sample's position in its split (None for a JSON sample).
    index: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    #: Where the paper scoring's gold comes from: the JSON task, or the release sample
    #: (whose script is parsed on first use, not at collection).
    task: OmniactTask | None = field(default=None, repr=False)
    release: ReleaseSample | None = field(default=None, repr=False)

    @cached_property
    def paper(self) -> PaperGold:
        """The paper scoring's gold: actions, boxes by box key, and why it cannot score."""
        if self.task is not None:
            return PaperGold(self.task.actions, self.task.boxes)
        if self.release is not None:
            return paper_gold(self.release)
        return PaperGold((), {}, NO_PAPER_GOLD)

    @property
    def paper_actions(self) -> tuple[ScriptAction, ...]:
        """The paper scoring's gold actions."""
        return self.paper.actions

    @property
    def paper_boxes(self) -> Mapping[str, Box]:
        """The boxes of the gold pointer actions, by box key."""
        return self.paper.boxes

    @property
    def paper_problem(self) -> str | None:
        """Why the paper scoring cannot score this sample, if it cannot."""
        return self.paper.problem

    @property
    def id(self) -> str:
        """The task id (the name the rest of the plugin uses)."""
        return self.task_id

    @property
    def nodename(self) -> str:
        """The test item's name: ``omniact/<id>`` or ``omniact/<split>/<key>``."""
        return f"{NODE_PREFIX}/{self.task_id}"

    @property
    def weight(self) -> float:
        """The sample's weight: gold lines (actions) - 0.9."""
        if self.official is not None:
            return self.official.weight
        return sequence_weight(len(self.paper.actions))

    def screenshot(self) -> bytes:
        """The sample's screenshot as PNG bytes."""
        return self.image.read_bytes()

    def agent_task(self) -> Task:
        """The sample as the agent contract's :class:`~pytest_osworld.task.model.Task`.

        No setup and no evaluator (scoring is offline); the ``solution`` is the gold
        script (:attr:`gold_script`) as one code action, then DONE, which is what
        ``--agent=replay`` plays.
        """
        return omniact_agent_task(
            self.task_id, self.instruction, self.app, self.gold_script, self.path, self.sha256, self.raw
        )


def sample_of_task(task: OmniactTask) -> Sample:
    """One of our JSON samples as a :class:`Sample` (its official gold in the release's form)."""
    official: OfficialGold | None = None
    problem: str | None = None
    gold_script = task.script
    try:
        lines = release_lines(task.actions, task.boxes)
        click_boxes = {
            i: (str(line.box), _corners(task.boxes[line.box]))
            for i, line in enumerate(lines)
            if line.name == "click" and line.box is not None
        }
        official = prepare_gold(task_text(task.instruction, lines), {}, click_boxes)
        gold_script = "\n".join(line.text for line in lines)
    except (ReleaseFormError, GoldScriptError) as exc:
        problem = NO_OFFICIAL.format(problem=exc)
    return Sample(
        layout="json",
        task_id=task.id,
        key=task.id,
        split=None,
        domain=task.domain,
        app=task.app,
        instruction=task.instruction,
        image=task.image,
        image_size=task.image_size,
        path=task.path,
        source=task.path,
        sha256=task.sha256,
        official=official,
        official_problem=problem,
        gold_script=gold_script,
        raw=task.raw,
        task=task,
    )


def sample_of_release(
    sample: ReleaseSample, index: int | None = None, split_path: Path | None = None
) -> Sample:
    """A sample of a split of the release as a :class:`Sample`; ``split_path`` is its split file."""
    digest = hashlib.sha256()
    digest.update(sample.task_text.encode("utf-8", "surrogatepass"))
    for name, box in sample.boxes.items():
        digest.update(f"\0{name}\0{box.corners}".encode("utf-8", "surrogatepass"))
    return Sample(
        layout="release",
        task_id=f"{sample.split}/{sample.key}",
        key=sample.key,
        split=sample.split,
        domain=sample.domain,
        app=sample.app,
        instruction=sample.instruction,
        image=sample.image,
        image_size=sample.image_size,
        path=split_path if split_path is not None else sample.task_path,
        source=sample.task_path,
        sha256=digest.hexdigest(),
        official=sample.official,
        official_problem=None,
        gold_script=sample.gold_script,
        index=index,
        raw={"task": str(sample.task_path), "image": str(sample.image), "box": str(sample.box_path)},
        release=sample,
    )


def _corners(box: Box) -> tuple[tuple[float, float], tuple[float, float]]:
    return (box.x, box.y), (box.x + box.w, box.y + box.h)


@dataclass(frozen=True)
class BothScores:
    """One prediction scored by both scorings (the official one when the sample has its gold)."""

    official: OfficialScore | None
    paper: TaskScore
    #: Why there is no official score, when there is none.
    official_problem: str | None = None

    def deciding(self, scoring: str) -> str:
        """The scoring that decides: ``scoring``, or ``paper`` when there is no official score."""
        return "paper" if check_scoring(scoring) == "official" and self.official is None else scoring

    def sequence_score(self, scoring: str) -> float:
        """The deciding scoring's sequence score, in [0, 1]."""
        if self.deciding(scoring) == "official" and self.official is not None:
            return self.official.sequence_score
        return self.paper.sequence_score

    def action_score(self, scoring: str) -> float:
        """The deciding scoring's action score, in [0, 1]."""
        if self.deciding(scoring) == "official" and self.official is not None:
            return self.official.action_score
        return self.paper.action_score

    def reason(self, scoring: str) -> str:
        """The deciding scoring's main reason."""
        if self.deciding(scoring) == "official" and self.official is not None:
            return self.official.reason()
        return self.paper.first_reason()

    def figures(self, sample: Sample) -> dict[str, SampleFigures | None]:
        """Both scorings' figures (``official`` None without an official score)."""
        official = self.official.figures(sample.key, sample.domain) if self.official is not None else None
        return {"official": official, "paper": paper_figures(self.paper, sample.key, sample.domain)}


def score_both(sample: Sample, prediction: str) -> BothScores:
    """Score a prediction's script text by both scorings."""
    if sample.paper_problem is not None:
        weight = sequence_weight(len(sample.official.lines)) if sample.official else 0.0
        paper = TaskScore(0.0, 0.0, weight, (), (), (), sample.paper_problem)
    else:
        paper = score_script(prediction, sample.paper_actions, sample.paper_boxes)
    official = score(sample.official, prediction) if sample.official is not None else None
    return BothScores(official, paper, sample.official_problem)
