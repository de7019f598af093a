"""OmniACT items: a screenshot and an instruction, one PyAutoGUI script, scored offline.

Kapoor et al. 2024, "OmniACT: A Dataset and Benchmark for Enabling Multimodal Generalist
Autonomous Agents for Desktop and Web". See ``docs/omniact.md``.
"""

from __future__ import annotations

from pytest_osworld.omniact.release import ReleaseSample, looks_like_split, read_split
from pytest_osworld.omniact.sample import BothScores, Sample, sample_of_release, sample_of_task, score_both
from pytest_osworld.omniact.score import (
    Box,
    DatasetScore,
    TaskScore,
    aggregate,
    bleu,
    parse_script,
    score_script,
)
from pytest_osworld.omniact.task import OmniactTask, load_omniact_task, looks_like_omniact

__all__ = [
    "BothScores",
    "Box",
    "DatasetScore",
    "OmniactTask",
    "ReleaseSample",
    "Sample",
    "TaskScore",
    "aggregate",
    "bleu",
    "load_omniact_task",
    "looks_like_omniact",
    "looks_like_split",
    "parse_script",
    "read_split",
    "sample_of_release",
    "sample_of_task",
    "score_both",
    "score_script",
]
