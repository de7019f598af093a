"""Where a task's time goes: per-phase wall-clock seconds, as ``result.json`` records them.

One :class:`TaskTimings` lives with each task from the start of its restore to the writing
of its result. The fixtures, the episode loop, the setup-step driver and the
evaluation each add the seconds of what they ran to one named phase; the phases are
disjoint, so they add up to the task's total (what falls between them is pytest's own
bookkeeping, a few milliseconds).

A task's *fixed overhead* is its total minus the agent's own time, minus OSWorld's
``sleep`` steps (part of the task's definition, reported apart as ``setup_sleep``) and minus
the wait for the programs its setup started to settle (``settle``, which stands in for
OSWorld's fixed 60 s after a reset): what the harness itself costs per task. The replays of
``--budgets`` (``budgets``, the desktop time of the scores at smaller step budgets) are an
extra the run asked for, reported apart and left out of it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

#: Every phase, in the order a task runs them (``result.json`` always has all of them).
PHASES = (
    "restore",
    "setup",
    "setup_sleep",
    "settle",
    "observe",
    "agent",
    "actions",
    "postconfig",
    "evaluation",
    "record",
    "budgets",
)

#: The JUnit property of a phase's total (``time_restore``...).
PROPERTY = "time_{phase}"
#: The JUnit property of the fixed overhead.
FIXED_OVERHEAD = "fixed_overhead"


class UnknownPhase(ValueError):
    """A phase name that is not one of :data:`PHASES`."""


@dataclass
class TaskTimings:
    """The seconds one task spent in each phase, and the details behind them.

    ``clock`` is monotonic (``time.perf_counter`` by default); the total runs from the
    moment the object is made (the start of the task's restore) to :meth:`stop`.
    """

    clock: Callable[[], float] = time.perf_counter
    started: float = field(init=False)
    stopped: float | None = field(default=None, init=False)
    #: When the latest phase ended (the start, before any).
    last_end: float = field(init=False)
    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    #: One entry per setup or postconfig step: ``index``, ``type``, ``phase``, ``seconds``.
    setup_steps: list[dict[str, Any]] = field(default_factory=list)
    #: One entry per agent step: ``index`` and the seconds of its ``observe``, ``agent``, ``actions``.
    step_times: list[dict[str, Any]] = field(default_factory=list)
    #: One entry per getter call: ``name``, ``seconds``.
    getters: list[dict[str, Any]] = field(default_factory=list)
    #: One entry per metric call: ``name``, ``seconds``.
    metrics: list[dict[str, Any]] = field(default_factory=list)
    #: How the desktop settled after setup (:class:`~pytest_osworld.episode.settle.Settled`), or None.
    settle: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.started = self.last_end = self.clock()

    def add(self, phase: str, seconds: float) -> None:
        """Add ``seconds`` to ``phase``."""
        if phase not in self.phases:
            raise UnknownPhase(f"unknown timing phase {phase!r}; phases are {', '.join(PHASES)}")
        self.phases[phase] += max(seconds, 0.0)
        self.last_end = self.clock()

    @contextmanager
    def phase(self, name: str, into: dict[str, Any] | None = None) -> Iterator[None]:
        """Time the ``with`` body into phase ``name`` (also when it raises).

        With ``into`` (a detail entry such as one of :attr:`step_times`), the seconds are
        also added to ``into[name]``, rounded to the millisecond.
        """
        if name not in self.phases:
            raise UnknownPhase(f"unknown timing phase {name!r}; phases are {', '.join(PHASES)}")
        start = self.clock()
        try:
            yield
        finally:
            seconds = self.clock() - start
            self.add(name, seconds)
            if into is not None:
                into[name] = round(float(into.get(name, 0.0)) + seconds, 3)

    def stop(self, at_last_phase: bool = False) -> float:
        """Freeze the total (idempotent) and return it.

        ``at_last_phase`` ends the task where its latest phase ended: a task that broke
        or was skipped is not charged for pytest's handling of the exception.
        """
        if self.stopped is None:
            self.stopped = self.last_end if at_last_phase else self.clock()
        return self.total

    @property
    def total(self) -> float:
        """Seconds from the start to :meth:`stop` (or to now, while running)."""
        end = self.stopped if self.stopped is not None else self.clock()
        return max(end - self.started, 0.0)

    @property
    def fixed_overhead(self) -> float:
        """The total minus the agent's own time, the task's own waits (its ``sleep`` steps and
        the settling of the programs its setup started) and the ``--budgets`` replays."""
        waits = self.phases["agent"] + self.phases["setup_sleep"] + self.phases["settle"]
        waits += self.phases["budgets"]
        return max(self.total - waits, 0.0)

    def to_json(self) -> dict[str, Any]:
        """The ``timings`` object of ``result.json`` (seconds rounded to the millisecond)."""
        return {
            "phases": {name: round(self.phases[name], 3) for name in PHASES},
            "total": round(self.total, 3),
            "fixed_overhead": round(self.fixed_overhead, 3),
            "setup_steps": list(self.setup_steps),
            "step_times": list(self.step_times),
            "getters": list(self.getters),
            "metrics": list(self.metrics),
            "settle": self.settle,
        }

    def properties(self) -> list[tuple[str, str]]:
        """The JUnit properties: one ``time_<phase>`` per phase, then ``fixed_overhead``."""
        props = [(PROPERTY.format(phase=name), f"{self.phases[name]:.3f}") for name in PHASES]
        props.append((FIXED_OVERHEAD, f"{self.fixed_overhead:.3f}"))
        return props
