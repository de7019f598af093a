"""OmniACT's dataset figures as its released scorer reports them, from plain data.

This module stands in ``report/`` so that the summary and the HTML report can compute the
figures from ``result.json`` data without knowing OmniACT's scorings; the scorings
(:mod:`pytest_osworld.omniact`) reduce every sample to a :class:`SampleFigures` and use the
same sums (:mod:`pytest_osworld.omniact.figures` re-exports them).

A sample of either scoring is reduced to :class:`SampleFigures` (its weight, its two
scores, its three penalties as fractions of the sample); :func:`dataset_figures` sums
them into a :class:`DatasetFigures` the way OmniACT's released ``eval.py`` does:

* **ideal score** ``Σ weight``, every sample counted (weight = gold lines - 0.9);
* **sequence score** ``Σ sequence · weight / Σ weight``; **action score** likewise;
* **penalty totals** ``Σ penalty · weight`` over the samples whose sequence matches only
  (a sample with a wrong sequence is charged every penalty but none reaches the totals),
  reported, as the official script returns them, divided by the ideal score.

:func:`by_domain` gives them for all samples, desktop and web apart. Everything here is
plain data (it crosses to the xdist controller and into ``result.json``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: The numbers of :meth:`SampleFigures.to_row`.
ROW_FIELDS = ("weight", "sequence_score", "action_score", "click_penalty", "press_penalty", "write_penalty")
#: The domains the figures are given for, besides ``all``.
DOMAINS = ("desktop", "web")
ALL = "all"


@dataclass(frozen=True)
class SampleFigures:
    """One sample's scores in the official form, whichever scoring made them."""

    key: str
    #: ``desktop`` or ``web``.
    domain: str
    #: Gold lines - 0.9 (the paper's ``beta1 + beta2 * (s - 1)`` is the same number).
    weight: float
    #: 1 when the sequence matches, else 0.
    sequence_score: float
    #: ``max(sequence - penalties, 0)``, in [0, 1].
    action_score: float
    #: The penalties, as fractions of the sample (the official's, already divided by the
    #: number of gold lines; the paper's, divided by the weight).
    click_penalty: float = 0.0
    press_penalty: float = 0.0
    write_penalty: float = 0.0

    def to_json(self) -> dict[str, object]:
        """Plain data: the sample's two scores (what ``omniact-score --json`` prints per sample)."""
        return {"sequence_score": self.sequence_score, "action_score": self.action_score}

    def to_row(self) -> dict[str, float]:
        """Plain data: everything the dataset figures sum (what ``result.json`` keeps)."""
        return {
            "weight": self.weight,
            "sequence_score": self.sequence_score,
            "action_score": self.action_score,
            "click_penalty": self.click_penalty,
            "press_penalty": self.press_penalty,
            "write_penalty": self.write_penalty,
        }

    @classmethod
    def from_row(cls, key: str, domain: str, row: object) -> SampleFigures | None:
        """A sample's figures from :meth:`to_row`'s data; None when ``row`` is not such data."""
        if not isinstance(row, dict):
            return None
        values = [row.get(name, 0.0 if name.endswith("_penalty") else None) for name in ROW_FIELDS]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            return None
        weight, sequence, action, click, press, write = (float(v) for v in values)  # type: ignore[arg-type]
        return cls(key, domain, weight, sequence, action, click, press, write)


@dataclass(frozen=True)
class DatasetFigures:
    """Sums over samples, and the ratios OmniACT reports."""

    samples: int = 0
    #: ``Σ weight``.
    ideal_score: float = 0.0
    #: ``Σ sequence · weight`` and ``Σ action · weight``.
    sequence_total: float = 0.0
    action_total: float = 0.0
    #: ``Σ penalty · weight`` over the samples whose sequence matches.
    click_total: float = 0.0
    press_total: float = 0.0
    write_total: float = 0.0

    def _ratio(self, total: float) -> float:
        return total / self.ideal_score if self.ideal_score else 0.0

    @property
    def sequence_score(self) -> float:
        """``Σ sequence · weight / Σ weight`` (0 for no samples)."""
        return self._ratio(self.sequence_total)

    @property
    def action_score(self) -> float:
        """``Σ action · weight / Σ weight``."""
        return self._ratio(self.action_total)

    @property
    def click_penalty(self) -> float:
        """The click penalty total divided by the ideal score, as the official script returns it."""
        return self._ratio(self.click_total)

    @property
    def press_penalty(self) -> float:
        """The press and hotkey penalty total divided by the ideal score."""
        return self._ratio(self.press_total)

    @property
    def write_penalty(self) -> float:
        """The write penalty total divided by the ideal score."""
        return self._ratio(self.write_total)

    def to_json(self) -> dict[str, object]:
        """Plain data: the ratios, the ideal score and the raw sums."""
        return {
            "samples": self.samples,
            "sequence_score": self.sequence_score,
            "action_score": self.action_score,
            "click_penalty": self.click_penalty,
            "press_penalty": self.press_penalty,
            "write_penalty": self.write_penalty,
            "ideal_score": self.ideal_score,
            "click_penalty_total": self.click_total,
            "press_penalty_total": self.press_total,
            "write_penalty_total": self.write_total,
        }


def dataset_figures(samples: Iterable[SampleFigures]) -> DatasetFigures:
    """Sum samples, in the order given, as the official scorer does."""
    count, ideal, sequence, action = 0, 0.0, 0.0, 0.0
    click = press = write = 0.0
    for sample in samples:
        count += 1
        ideal += sample.weight
        sequence += sample.sequence_score * sample.weight
        action += sample.action_score * sample.weight
        if sample.sequence_score:
            click += sample.click_penalty * sample.weight
            press += sample.press_penalty * sample.weight
            write += sample.write_penalty * sample.weight
    return DatasetFigures(count, ideal, sequence, action, click, press, write)


def by_domain(samples: Iterable[SampleFigures]) -> dict[str, DatasetFigures]:
    """The figures of all samples (``all``), and of the desktop and web samples apart."""
    items = list(samples)
    found = {ALL: dataset_figures(items)}
    for domain in DOMAINS:
        found[domain] = dataset_figures(s for s in items if s.domain == domain)
    return found


# --------------------------------------------------------------------------- a run's OmniACT items

#: The scorings whose figures ``result.json``'s ``omniact`` object holds.
SCORINGS = ("official", "paper")
#: The summary's lines (tests match them).
FIGURES_HEAD = (
    "  dataset figures (sum of score x weight / sum of weights; weight = gold lines - 0.9), "
    "{decides} decides pass/fail:"
)
FIGURES_ROW = "    {name:<8}{samples:>5} samples  {official}  |  {paper}"
FIGURES_PART = "{scoring} sequence {sequence:.3f} action {action:.3f}{partial}"
FIGURES_NONE = "{scoring} -"
PARTIAL = " ({count} of them)"
PAPER_DECIDES = " (paper for {count} sample(s) whose gold the official scoring cannot read)"


def blocks_of(values: Iterable[object]) -> list[dict[str, Any]]:
    """The ``omniact`` objects among ``values`` (``result.json`` data or report data)."""
    return [value for value in values if isinstance(value, dict) and isinstance(value.get("paper"), dict)]


def sample_order(block: dict[str, Any]) -> tuple[int, str, int, str]:
    """Samples in split order: by split file, then position, then key (JSON samples first)."""
    index = block.get("index")
    position = index if isinstance(index, int) and not isinstance(index, bool) else -1
    return (
        block.get("layout") == "release",
        str(block.get("split_file") or ""),
        position,
        str(block.get("key")),
    )


def sample_rows(blocks: Iterable[dict[str, Any]], scoring: str) -> list[SampleFigures]:
    """The samples' figures of one scoring, in split order (samples without them left out)."""
    found = []
    for block in sorted(blocks, key=sample_order):
        figures = SampleFigures.from_row(str(block.get("key")), str(block.get("domain")), block.get(scoring))
        if figures is not None:
            found.append(figures)
    return found


def run_figures(blocks: Iterable[dict[str, Any]]) -> dict[str, dict[str, DatasetFigures]]:
    """``{scoring: {"all" | "desktop" | "web": DatasetFigures}}`` of a run's OmniACT samples."""
    items = list(blocks)
    return {scoring: by_domain(sample_rows(items, scoring)) for scoring in SCORINGS}


def deciding_text(blocks: Iterable[dict[str, Any]]) -> str:
    """Which scoring decided the samples: ``official``, or ``official (paper for N ...)``."""
    items = list(blocks)
    asked = sorted({str(b.get("scoring")) for b in items if b.get("scoring")}) or ["official"]
    text = " and ".join(asked)
    fallback = sum(1 for b in items if b.get("decided_by") and b.get("decided_by") != b.get("scoring"))
    return text + (PAPER_DECIDES.format(count=fallback) if fallback else "")


def figure_lines(blocks: Iterable[dict[str, Any]]) -> list[str]:
    """The summary's lines of a run's OmniACT samples: both scorings, all, desktop and web."""
    items = list(blocks)
    if not items:
        return []
    figures = run_figures(items)
    lines = [FIGURES_HEAD.format(decides=deciding_text(items))]
    for name in (ALL, *DOMAINS):
        count = max(figures[s][name].samples for s in SCORINGS)
        if not count:
            continue
        parts = {}
        for scoring in SCORINGS:
            found = figures[scoring][name]
            partial = PARTIAL.format(count=found.samples) if found.samples != count else ""
            parts[scoring] = (
                FIGURES_PART.format(
                    scoring=scoring, sequence=found.sequence_score, action=found.action_score, partial=partial
                )
                if found.samples
                else FIGURES_NONE.format(scoring=scoring)
            )
        lines.append(FIGURES_ROW.format(name=name, samples=count, **parts))
    return lines


def figures_json(blocks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``{"decides": ..., "official": {"all": {...}, "desktop": ..., "web": ...}, "paper": ...}``."""
    items = list(blocks)
    found: dict[str, Any] = {"decides": deciding_text(items)}
    for scoring, groups in run_figures(items).items():
        found[scoring] = {name: figures.to_json() for name, figures in groups.items()}
    return found


def html_rows(blocks: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The report's OmniACT table: one row per scoring and domain that has samples."""
    rows = []
    for scoring, groups in run_figures(blocks).items():
        for name in (ALL, *DOMAINS):
            figures = groups[name]
            if figures.samples:
                rows.append({"scoring": scoring, "domain": name, **figures.to_json()})
    return rows
