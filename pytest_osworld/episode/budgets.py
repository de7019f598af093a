"""Scores at smaller step budgets from one run: the episode's first k steps replayed.

With ``--budgets 15,50`` a task is run once, at its ``--max-steps``; the score it would have had
at a smaller budget k is then found without asking the agent again:

- an episode that ended (DONE, FAIL, or its time budget) at or before step k has its final
  score at k (``ended_before``);
- an episode that went past step k is replayed: a fresh :class:`~pytest_osworld.episode.task_run.TaskRun`
  restores the desktop and runs the task's setup (with its settle wait), the actions of the
  first k steps run again as recorded (pausing between two steps as the run did, at most
  :data:`MAX_PAUSE`), and the task is evaluated as if the episode had been cut at step k: the
  FAIL and infeasible rules see the last action of step k (``cut``). An infeasible task cut at
  k scores 0 whatever the desktop shows (its last action was not FAIL), so it is not replayed.

The replay is checked against the run, tile by tile, a tile that differs only faintly (a scrollbar
fading, a hover highlight) counting as the same
(:func:`~pytest_osworld.episode.screen_match.changed_tiles`). After the setup and after each
replayed step j, the replay's screen is compared with the run's at the same point (``step_0.png``,
the screen the agent first saw; ``step_j.png``, :attr:`StepRecord.screenshot` of step j, the
screen right after step j, which the agent saw at step j+1) and with the run's later ones: the run
looked at once after each step's actions, and what its desktop was still drawing shows only at a
later look. Up to :data:`TOLERANCE` changed tiles are the same screen (a caret blinking in another
phase); while a screen differs by more it is looked at again, within the step's pause, or up to
:data:`LOOK_AGAIN` at the budget's last step. The top bar's clock is left out where the provider's
desktop shows one (:attr:`Provider.top_bar_clock`). A replay whose screen, from some step on to
its last, is none the run showed then or later has parted from the run there, as has one whose
action failed where the run's did not (or the other way): the budget is ``diverged`` at that step,
it is not evaluated and is no score. A difference that ends before the last step is not a parting.
Whether a desktop has drawn a tooltip or a suggestion list before the next input is a matter of
timing, so a replay that parts is made once more (:data:`REPLAY_TRIES`): a budget is ``diverged``
when every replay parted. A replay the desktop broke under is ``error``, no score either. The
score at ``max_steps`` is the run's own.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pytest_osworld.agent.actions import Action
from pytest_osworld.episode.loop import EndReason, Episode, StepRecord
from pytest_osworld.episode.screen_match import Screen, changed_tiles, screen_of
from pytest_osworld.episode.task_run import TaskRun
from pytest_osworld.errors import OSWorldError
from pytest_osworld.evaluators.evaluate import Evaluation, infeasible_evaluation
from pytest_osworld.providers.base import Provider
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.model import Task

#: The longest pause between two replayed steps, in seconds (the run's own when shorter).
MAX_PAUSE = 1.0
#: Changed screen tiles a replay may show against the run and still count as the same screen
#: (measured on our tasks, docs/report.md "Scores at several step budgets").
TOLERANCE = 3
#: How long the replay's screen after the budget's last step is looked at again while it
#: differs from the run's (the run took its screenshot at once after the step's actions; the
#: replay's desktop may be slower: in CI, at three workers on two cores, a terminal drew its
#: echo of the last step's typing more than 1 s late). A real parting costs this much more;
#: one that is late drawing is forgiven. After an earlier step, the screen is looked at
#: again within the step's pause only.
LOOK_AGAIN = 5.0
#: How often it is looked at again.
LOOK_INTERVAL = 0.2
#: How many times a budget is replayed while its replays part from the run. Whether a
#: replay's desktop draws a tooltip or a suggestion list before the next step's input is a
#: matter of timing: of the same 17 replays, 12 parted in one run and 7 in an identical one
#: (docs/report.md), so a replay that parts is made once more on a fresh desktop.
REPLAY_TRIES = 2
#: Where a budget's getters put their files, under the task's ``eval_inputs/``.
INPUTS_FOLDER = "budgets"

#: The reason of a replay whose screen parted from the run's.
SCREEN_PARTED = (
    "the replay's screen differs from the run's from {where} on: in {changed} of {tiles} tiles "
    "there ({original}), in {last} at step {budget}, the budget's last (at most {tolerance} may "
    "differ)"
)
#: The reason of a replay whose action failed where the run's did not, or the other way.
ACTION_PARTED = "step {step}'s actions {replay} in the replay but {original} in the run{detail}"
#: The reason of a replay that could not run.
REPLAY_BROKE = "the replay of the first {budget} steps could not run: {error}"


class BudgetEnd(StrEnum):
    """How a task's score at one budget came about."""

    ENDED_BEFORE = "ended_before"
    CUT = "cut"
    DIVERGED = "diverged"
    ERROR = "error"


@dataclass
class BudgetScore:
    """A task's score at one step budget (``result.json``'s ``scores_at`` entry)."""

    budget: int
    end: BudgetEnd
    #: None when diverged or broken: no score.
    score: float | None
    passed: bool | None
    #: The steps the score covers: the episode's own when it ended before, else the budget.
    steps: int
    reason: str = ""
    #: ``passed``, ``failed`` or ``eval_error`` when scored; None otherwise.
    outcome: str | None = None
    #: How the episode ended, for ``ended_before`` (``done``, ``fail``, ``timeout``).
    end_reason: str | None = None
    #: Whether the steps were replayed for this score (False: the run's own, or decided
    #: without a desktop).
    replayed: bool = False
    #: The step after which the replay's screen (or an action) parted from the run's; 0 is
    #: the screen after setup.
    diverged_at: int | None = None
    #: The most tiles that differed between the replay's screen and the closest of the run's,
    #: over the replay's steps.
    changed_tiles: int | None = None
    #: The replay's desktop time.
    seconds: float | None = None
    metrics: list[dict[str, Any]] = field(default_factory=list)
    evaluator_inputs: list[dict[str, Any]] = field(default_factory=list)
    #: The replay's screen where it parted (PNG), for the results folder; not in the JSON.
    parted_screen: bytes | None = field(default=None, repr=False)
    #: The file the results folder keeps :attr:`parted_screen` in (set by the writer).
    screen_file: str | None = None
    #: How many replays were made (:data:`REPLAY_TRIES` at most; 0 when none was).
    tries: int = 0

    @classmethod
    def no_score(cls, budget: int, end: BudgetEnd, reason: str, **details: Any) -> BudgetScore:
        """A replayed budget that has no score (``diverged`` or ``error``); ``details`` fill
        the fields that say where and how (``diverged_at``, ``changed_tiles``, ...)."""
        return cls(
            budget=budget,
            end=end,
            score=None,
            passed=None,
            steps=budget,
            reason=reason,
            replayed=True,
            **details,
        )

    @property
    def counted(self) -> bool:
        """Whether this is a score (not diverged, not broken)."""
        return self.end in (BudgetEnd.ENDED_BEFORE, BudgetEnd.CUT)

    def to_json(self) -> dict[str, Any]:
        """The ``scores_at`` entry: plain data, fields that do not apply left out."""
        data: dict[str, Any] = {
            "score": None if self.score is None else round(self.score, 6),
            "passed": self.passed,
            "end": self.end.value,
            "steps": self.steps,
        }
        optional = {
            "outcome": self.outcome,
            "end_reason": self.end_reason,
            "diverged_at": self.diverged_at,
            "changed_tiles": self.changed_tiles,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "screen": self.screen_file,
            "tries": self.tries if self.tries > 1 else None,
        }
        data.update({key: value for key, value in optional.items() if value is not None})
        if self.end is BudgetEnd.CUT:
            data["replayed"] = self.replayed
        if self.reason:
            data["reason"] = self.reason
        if self.metrics:
            data["metrics"] = self.metrics
            data["evaluator_inputs"] = self.evaluator_inputs
        return data


def recorded_pauses(steps: list[StepRecord], step_times: list[dict[str, Any]]) -> list[float]:
    """The pause the run left after each step but the last: from the end of the step's actions
    to the start of the next step's (its observation, recording and agent call), in seconds.

    ``step_times`` are the run's ``timings.step_times`` (each step's ``agent`` seconds); a step
    without an entry counts no agent time.
    """
    agent = {entry.get("index"): float(entry.get("agent") or 0.0) for entry in step_times}
    pauses = []
    for before, after in itertools.pairwise(steps):
        actions_end = before.started + before.duration
        next_actions = after.started + agent.get(after.index, 0.0)
        pauses.append(max(0.0, next_actions - actions_end))
    return pauses


@dataclass
class BudgetPlan:
    """What the replays of one task need from its run.

    ``inputs_root`` is the task's ``eval_inputs/`` folder: a replay's getters put their files in
    ``budgets/<k>/`` below it, and its saved evaluator inputs name them from there, as the run's
    own do (so ``--rescore`` finds them).
    """

    task: Task
    provider: Provider
    assets: AssetCache
    episode: Episode
    threshold: float
    inputs_root: Path
    #: The screen the agent first saw (``step_0.png``), or None when the run kept none.
    initial_screen: bytes | None = None
    step_times: list[dict[str, Any]] = field(default_factory=list)
    sleep_after_action: float = 0.0
    tolerance: int = TOLERANCE
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    #: The run's screens, by step (0: the first screen), decoded once.
    _screens: dict[int, Screen] = field(default_factory=dict, repr=False)

    def original_screen(self, step: int) -> Screen | None:
        """The run's screen after ``step`` (0: after setup), or None if it kept none."""
        if step not in self._screens:
            steps = self.episode.steps
            png = self.initial_screen if step == 0 else steps[step - 1].screenshot
            if not png:
                return None
            self._screens[step] = screen_of(png)
        return self._screens[step]

    def originals(self, step: int) -> list[tuple[int, Screen]]:
        """The run's screens a replay's screen after ``step`` may match: the run's after the
        same step or any later one (the run looked at once after each step's actions; a window
        it was still drawing shows only at a later look, and a replay on a desktop that has run
        the task once already is often quicker)."""
        found = [(at, self.original_screen(at)) for at in range(step, len(self.episode.steps) + 1)]
        return [(at, screen) for at, screen in found if screen is not None]


def score_budgets(
    plan: BudgetPlan,
    budgets: tuple[int, ...],
    max_steps: int,
    own: Evaluation,
    more_restores: bool = True,
) -> list[BudgetScore]:
    """The task's score at each of ``budgets`` (each below ``max_steps``), then at ``max_steps``
    (the run's own evaluation, ``own``), in that order.

    ``more_restores`` says whether another task restores the desktop after these replays (the
    provider's warm spare); a replay followed by another always says so.
    """
    episode = plan.episode
    taken = len(episode.steps)
    to_replay = [k for k in budgets if taken > k]
    scores = []
    for budget in sorted(budgets):
        if taken <= budget:
            scores.append(_own(budget, plan, own, BudgetEnd.ENDED_BEFORE))
            continue
        followed = more_restores or budget != to_replay[-1]
        scores.append(replay_budget(plan, budget, more_restores=followed))
    cut = episode.end_reason is EndReason.MAX_STEPS
    scores.append(_own(max_steps, plan, own, BudgetEnd.CUT if cut else BudgetEnd.ENDED_BEFORE))
    return scores


def _own(budget: int, plan: BudgetPlan, own: Evaluation, end: BudgetEnd) -> BudgetScore:
    """The run's own score, standing at ``budget``."""
    episode = plan.episode
    return BudgetScore(
        budget=budget,
        end=end,
        score=own.score,
        passed=own.score >= plan.threshold,
        steps=len(episode.steps),
        reason=own.first_reason(),
        outcome=_outcome(own, plan.threshold),
        end_reason=episode.end_reason.value if end is BudgetEnd.ENDED_BEFORE else None,
    )


def _outcome(evaluation: Evaluation, threshold: float) -> str:
    """``passed``, ``failed`` or ``eval_error``, as a task's result has it."""
    if evaluation.score >= threshold:
        return "passed"
    return "eval_error" if evaluation.error else "failed"


def _last_action(steps: list[StepRecord]) -> Action | None:
    actions = [action for step in steps for action in step.actions]
    return actions[-1] if actions else None


def replay_budget(plan: BudgetPlan, budget: int, more_restores: bool = True) -> BudgetScore:
    """Replay the first ``budget`` steps of the run on a fresh desktop and evaluate the task
    there (see the module's docstring); a replay that parts from the run is made again, up to
    :data:`REPLAY_TRIES` in all, and the budget is ``diverged`` only when every one parted.
    Never raises: a desktop that breaks, or a bug in the replay, is an ``error`` entry, and
    the run's own score and results stand."""
    if plan.task.infeasible:
        evaluation = infeasible_evaluation(_last_action(plan.episode.steps[:budget]))
        return _scored(plan, budget, evaluation, replayed=False)
    seconds = 0.0
    for tries in range(1, REPLAY_TRIES + 1):
        score = _replay_once(plan, budget, more_restores)
        seconds += score.seconds or 0.0
        score.tries, score.seconds = tries, seconds
        if score.end is not BudgetEnd.DIVERGED:
            break
    return score


def _replay_once(plan: BudgetPlan, budget: int, more_restores: bool) -> BudgetScore:
    """One replay of the first ``budget`` steps on a fresh desktop, and its evaluation."""
    steps = plan.episode.steps[:budget]
    last = _last_action(steps)
    run = TaskRun(plan.task, plan.provider, plan.assets)
    started = plan.clock()
    seen = 0
    try:
        run.restore(more_restores=more_restores)
        work_dir = plan.inputs_root / INPUTS_FOLDER / str(budget)
        work_dir.mkdir(parents=True, exist_ok=True)
        run.set_up(work_dir=work_dir)
        pauses = recorded_pauses(plan.episode.steps, plan.step_times)
        #: Where the latest unbroken run of steps whose screens differ from the run's began.
        streak: tuple[int, int, bytes] | None = None
        for index in range(len(steps) + 1):
            actions_end = plan.clock()
            if index:  # step 0 is the screen after setup: nothing to replay before it
                step = steps[index - 1]
                errors = [
                    run.act(a, pause=plan.sleep_after_action) for a in step.actions if not a.is_terminal
                ]
                actions_end = plan.clock()
                failed = next((e for e in errors if e), None)
                if bool(failed) != bool(step.action_errors):
                    broke = _action_parted(budget, index, failed, step)
                    return _diverged(broke, seen, plan.clock() - started)
            pause = min(pauses[index - 1], MAX_PAUSE) if 0 < index < len(steps) else 0.0
            wait = LOOK_AGAIN if index == len(steps) else pause
            changed, png = _compare(plan, run, index, until=actions_end + wait)
            seen = max(seen, changed)
            if changed <= plan.tolerance or png is None:
                streak = None
            elif streak is None:
                streak = (index, changed, png)
            if pause:
                plan.sleep(max(0.0, actions_end + pause - plan.clock()))
        if streak is not None:
            parted = _screen_parted(plan, budget, streak, seen_last=changed)
            return _diverged(parted, seen, plan.clock() - started)
        evaluation = run.evaluate(last)
    except Exception as exc:  # the run's own score stands, whatever broke here
        error = str(exc).split("\n", 1)[0]
        if not isinstance(exc, OSWorldError):  # not the desktop: a bug, named as one
            error = f"{type(exc).__name__}: {error}"
        reason = REPLAY_BROKE.format(budget=budget, error=error)
        return BudgetScore.no_score(
            budget, BudgetEnd.ERROR, reason, changed_tiles=seen, seconds=plan.clock() - started
        )
    evaluation.inputs = rebase_inputs(evaluation.inputs, f"{INPUTS_FOLDER}/{budget}")
    score = _scored(plan, budget, evaluation, replayed=True)
    score.changed_tiles = seen
    score.seconds = plan.clock() - started
    return score


def _compare(plan: BudgetPlan, run: TaskRun, step: int, until: float) -> tuple[int, bytes | None]:
    """How many tiles of the replay's screen now differ from the closest of the run's screens it
    may match after ``step`` (:meth:`BudgetPlan.originals`), and the replay's screen (None and 0
    when the run kept no screen there or after). A screen that differs by more than the tolerance is
    looked at again every :data:`LOOK_INTERVAL` until ``until``; the closest look counts. The
    top bar's clock is not looked at, where the provider's desktop shows one."""
    originals = plan.originals(step)
    if not originals:
        return 0, None
    clock = plan.provider.top_bar_clock
    closest: tuple[int, bytes] | None = None
    while True:
        png = run.observe("screenshot").screenshot
        if png is None:
            return 0, None
        replay = screen_of(png)
        now = plan.clock()
        changed = min(changed_tiles(original, replay, clock=clock) for _, original in originals)
        if closest is None or changed < closest[0]:
            closest = (changed, png)
        if changed <= plan.tolerance or now >= until:
            break
        plan.sleep(min(LOOK_INTERVAL, until - now))
    return closest


def _screen_parted(
    plan: BudgetPlan, budget: int, streak: tuple[int, int, bytes], seen_last: int
) -> BudgetScore:
    """The diverged score of a replay whose screens differed from step ``streak[0]`` to the end."""
    step, changed, png = streak
    original = plan.original_screen(step)
    reason = SCREEN_PARTED.format(
        where="setup" if step == 0 else f"step {step}",
        original=f"step_{step}.png",
        changed=changed,
        tiles=len(original.signature.tiles) if original is not None else "?",
        last=seen_last,
        budget=budget,
        tolerance=plan.tolerance,
    )
    return BudgetScore.no_score(
        budget, BudgetEnd.DIVERGED, reason, diverged_at=step, changed_tiles=changed, parted_screen=png
    )


def _action_parted(budget: int, index: int, failed: str | None, step: StepRecord) -> BudgetScore:
    """The diverged score of a step whose actions failed in one of the replay and the run."""
    detail = f": {(failed or step.action_errors[0]).splitlines()[0][:200]}"
    reason = ACTION_PARTED.format(
        step=index,
        replay="failed" if failed else "ran",
        original="ran" if failed else "failed",
        detail=detail,
    )
    return BudgetScore.no_score(budget, BudgetEnd.DIVERGED, reason, diverged_at=index)


def _diverged(score: BudgetScore, changed: int, seconds: float) -> BudgetScore:
    score.changed_tiles = changed
    score.seconds = seconds
    return score


def _scored(plan: BudgetPlan, budget: int, evaluation: Evaluation, replayed: bool) -> BudgetScore:
    return BudgetScore(
        budget=budget,
        end=BudgetEnd.CUT,
        score=evaluation.score,
        passed=evaluation.score >= plan.threshold,
        steps=budget,
        reason=evaluation.first_reason(),
        outcome=_outcome(evaluation, plan.threshold),
        replayed=replayed,
        metrics=[o.to_json() for o in evaluation.outcomes],
        evaluator_inputs=evaluation.inputs,
    )


def rebase_inputs(inputs: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """Saved evaluator inputs whose ``{"file": name}`` values (relative to a budget's folder)
    name their files from the task's ``eval_inputs/`` instead (``prefix/name``)."""

    def rebase(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"file"} and isinstance(value["file"], str):
            name = value["file"]
            return value if Path(name).is_absolute() else {"file": f"{prefix}/{name}"}
        if isinstance(value, list):
            return [rebase(v) for v in value]
        if isinstance(value, dict):
            return {k: rebase(v) for k, v in value.items()}
        return value

    return [
        {key: rebase(value) if key in ("result", "expected") else value for key, value in entry.items()}
        for entry in inputs
    ]
