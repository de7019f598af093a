"""Scores at smaller step budgets (``episode/budgets.py``): replays on in-memory desktops.

The desktops here draw their files on the screen (one 128-pixel tile per file, coloured by
its content), so a replay that does what the run did shows the run's screens, and one whose
desktop was changed between the run and the replay shows other tiles.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep, Observation, Usage
from pytest_osworld.episode.budgets import (
    LOOK_AGAIN,
    LOOK_INTERVAL,
    MAX_PAUSE,
    REPLAY_TRIES,
    BudgetEnd,
    BudgetPlan,
    BudgetScore,
    rebase_inputs,
    recorded_pauses,
    replay_budget,
    score_budgets,
)
from pytest_osworld.episode.loop import Budget, EndReason, Episode, StepRecord
from pytest_osworld.episode.screen_match import changed_tiles, screen_of
from pytest_osworld.episode.task_run import TaskRun
from pytest_osworld.errors import GuestError
from pytest_osworld.evaluators.evaluate import Evaluation
from pytest_osworld.providers.base import Environment, ProviderConfig
from pytest_osworld.providers.fake import FakeGuest, FakeProvider
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.model import Task, load_task

WIDTH, HEIGHT, TILE = 1024, 512, 128


def _drawn(files: dict[str, bytes]) -> bytes:
    """A screen with one tile per file, coloured by the file's content."""
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    for index, (path, data) in enumerate(sorted(files.items())):
        colour = tuple(hashlib.sha256(path.encode() + data).digest()[:3])
        left, top = (index % (WIDTH // TILE)) * TILE, (index // (WIDTH // TILE)) * TILE
        image.paste(colour, (left, top, left + TILE, top + TILE))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


class ScreenGuest(FakeGuest):
    """A fake guest whose screenshot shows its files."""

    def screenshot(self) -> bytes:
        """The files, drawn."""
        return _drawn(self.files)


class ScreenProvider(FakeProvider):
    """Gives :class:`ScreenGuest` desktops; ``drift`` files are added from restore ``drift_from`` on,
    up to restore ``drift_until`` when given (the desktop changed between the run and its
    replays); ``fail_from`` breaks restores."""

    def __init__(
        self,
        drift: dict[str, bytes] | None = None,
        drift_from: int = 2,
        fail_from: int = 0,
        drift_until: int | None = None,
    ) -> None:
        super().__init__(ProviderConfig(worker_id="t"))
        self.drift = drift or {}
        self.drift_from = drift_from
        self.drift_until = drift_until
        self.fail_from = fail_from
        self.guests: list[ScreenGuest] = []

    def _restore_impl(self, snapshot: str) -> Environment:
        env = super()._restore_impl(snapshot)
        if self.fail_from and self.restores >= self.fail_from:
            raise GuestError("the desktop did not come back (injected)")
        files = dict(env.guest.files)
        if self.drift_from <= self.restores <= (self.drift_until or self.restores):
            files.update(self.drift)
        guest = ScreenGuest(files)
        self.guests.append(guest)
        return replace(env, guest=guest)


def _task(tmp_path: Path, **extra: Any) -> Task:
    data: dict[str, Any] = {
        "id": "budget-task",
        "instruction": "write hello into ~/out.txt",
        "config": [],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
    }
    data.update(extra)
    path = tmp_path / "os" / "t.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return load_task(path)


def _write(text: str, path: str = "/home/user/out.txt") -> Action:
    return Action("code", code=f"# fake: write {path} {text}")


class Scripted:
    """Plays a list of actions, one per step; counts its calls."""

    def __init__(self, actions: list[Action]) -> None:
        self.actions = list(actions)
        self.calls = 0

    def reset(self, task: Task) -> None:
        """Nothing to forget."""

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """The next action."""
        self.calls += 1
        return AgentStep([self.actions.pop(0) if self.actions else Action("DONE")])


def _run(task: Task, provider: ScreenProvider, actions: list[Action], max_steps: int, tmp_path: Path):
    """One run of ``actions`` at ``max_steps``: its episode, its evaluation, its first screen."""
    run = TaskRun(task, provider, AssetCache(tmp_path / "cache"))
    run.restore()
    ctx = run.set_up(work_dir=tmp_path / "run-inputs")
    first = ctx.guest.screenshot()
    agent = Scripted(actions)
    episode = run.run_episode(agent, Budget(max_steps=max_steps))
    return episode, run.evaluate(episode.last_action), first, agent


class Clock:
    """A clock that moves only when slept on; keeps every sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _plan(task: Task, provider: ScreenProvider, episode: Episode, first: bytes, tmp_path: Path, **extra: Any):
    clock = Clock()
    plan = BudgetPlan(
        task=task,
        provider=provider,
        assets=AssetCache(tmp_path / "cache"),
        episode=episode,
        threshold=1.0,
        inputs_root=tmp_path / "eval_inputs",
        initial_screen=first,
        sleep=clock.sleep,
        clock=clock,
        **extra,
    )
    return plan, clock.sleeps


SOLUTION = [_write("h"), _write("he"), _write("hello"), _write("hello", "/tmp/x"), Action("DONE")]


def test_each_budget_scores_what_a_separate_run_of_that_many_steps_scores(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider()
    episode, own, first, agent = _run(task, provider, SOLUTION, 10, tmp_path)
    assert len(episode.steps) == 5 and episode.end_reason is EndReason.DONE
    plan, _ = _plan(task, provider, episode, first, tmp_path)
    scores = score_budgets(plan, (1, 2, 3, 5, 7), 10, own, more_restores=False)
    assert [s.budget for s in scores] == [1, 2, 3, 5, 7, 10]
    for score in scores:
        _, alone, _, _ = _run(task, ScreenProvider(), list(SOLUTION), score.budget, tmp_path)
        assert score.score == alone.score, score
        assert score.passed == (alone.score >= 1.0)
    ends = [s.end for s in scores]
    assert ends == [BudgetEnd.CUT] * 3 + [BudgetEnd.ENDED_BEFORE] * 3
    assert [s.replayed for s in scores[:3]] == [True] * 3
    assert scores[3].end_reason == "done" and scores[-1].steps == 5
    # No agent call for a budget: the agent answered the run's five steps only.
    assert agent.calls == 5
    # Three replays, each on a desktop of its own, and the same screens as the run.
    assert provider.restores == 4
    assert all(s.changed_tiles == 0 for s in scores[:3])


def test_the_max_steps_entry_is_the_runs_own_and_says_whether_the_episode_was_cut(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider()
    episode, own, first, _ = _run(task, provider, [_write("h")] * 6, 4, tmp_path)
    assert episode.end_reason is EndReason.MAX_STEPS
    plan, _ = _plan(task, provider, episode, first, tmp_path)
    (mine,) = score_budgets(plan, (), 4, own)
    assert (mine.budget, mine.end, mine.score, mine.replayed) == (4, BudgetEnd.CUT, own.score, False)
    assert provider.restores == 1


def test_a_replay_evaluates_with_the_last_action_of_its_last_step(tmp_path: Path) -> None:
    # An infeasible task cut before the agent's FAIL scores 0; it ends with FAIL at step 3.
    task = _task(tmp_path, evaluator={"func": "infeasible"})
    provider = ScreenProvider()
    episode, own, first, _ = _run(task, provider, [_write("a"), _write("b"), Action("FAIL")], 5, tmp_path)
    plan, _ = _plan(task, provider, episode, first, tmp_path)
    cut, ended, mine = score_budgets(plan, (2, 3), 5, own)
    assert (cut.score, cut.end, cut.replayed) == (0.0, BudgetEnd.CUT, False)
    assert "last action was code" in cut.reason
    assert (ended.score, ended.end, ended.end_reason) == (1.0, BudgetEnd.ENDED_BEFORE, "fail")
    assert mine.score == 1.0
    assert provider.restores == 1  # an infeasible task's cut score needs no desktop


def test_a_desktop_changed_before_the_replay_is_diverged_where_the_screens_parted(tmp_path: Path) -> None:
    task = _task(tmp_path)
    # From the second restore on, two files the run never had: two more tiles.
    provider = ScreenProvider(drift={"/a/1": b"x", "/a/2": b"y"})
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    plan, _ = _plan(task, provider, episode, first, tmp_path, tolerance=1)
    score = replay_budget(plan, 3)
    assert score.end is BudgetEnd.DIVERGED and not score.counted
    assert (score.score, score.passed) == (None, None)
    assert score.diverged_at == 0  # the screen after setup already differs
    assert score.changed_tiles is not None and score.changed_tiles >= 2
    assert score.reason.startswith("the replay's screen differs from the run's from setup on: in ")
    assert "(step_0.png)" in score.reason and "at step 3, the budget's last" in score.reason
    assert score.parted_screen is not None
    assert changed_tiles(screen_of(score.parted_screen), screen_of(first)) >= 2
    # The three steps were replayed (the difference lasted to the last), then not evaluated.
    assert provider.guests[-1].actions == [a.code for a in SOLUTION[:3]]


def test_a_replay_that_parts_is_made_again_and_the_one_that_does_not_counts(tmp_path: Path) -> None:
    task = _task(tmp_path)
    # Only the first replay's desktop (restore 2) has the files the run never had.
    provider = ScreenProvider(drift={"/a/1": b"x", "/a/2": b"y"}, drift_until=2)
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    plan, _ = _plan(task, provider, episode, first, tmp_path, tolerance=1)
    score = replay_budget(plan, 3)
    assert (score.end, score.score, score.tries) == (BudgetEnd.CUT, 1.0, 2)
    assert score.to_json()["tries"] == 2 and provider.restores == 3
    assert score.seconds is not None and score.seconds > 0
    # Every replay parting: no third try.
    provider = ScreenProvider(drift={"/a/1": b"x", "/a/2": b"y"})
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    plan, _ = _plan(task, provider, episode, first, tmp_path, tolerance=1)
    score = replay_budget(plan, 3)
    assert (score.end, score.tries, provider.restores) == (BudgetEnd.DIVERGED, REPLAY_TRIES, 1 + REPLAY_TRIES)


def test_a_change_within_the_tolerance_is_the_same_screen(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider(drift={"/a/1": b"x"})
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    plan, _ = _plan(task, provider, episode, first, tmp_path, tolerance=3)
    score = replay_budget(plan, 3)
    assert score.end is BudgetEnd.CUT and score.score == 1.0
    assert score.changed_tiles is not None and 1 <= score.changed_tiles <= 3


def _other_screen(tag: str) -> bytes:
    return _drawn({"/o": b"1", "/m": b"2", "/x": tag.encode()})


def test_a_difference_that_ends_before_the_last_step_is_not_a_parting(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider()
    episode, own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    # The run's screenshot after step 2 caught something the replay does not show (a screen
    # still being drawn when the run looked): its screen after step 3 is the replay's again.
    episode.steps[1] = replace(episode.steps[1], screenshot=_other_screen("2"))
    plan, sleeps = _plan(task, provider, episode, first, tmp_path, tolerance=0)
    scores = score_budgets(plan, (1, 2, 3), 10, own)
    # At 2 the difference is there at the budget's last step: diverged. At 3 it has ended.
    assert [s.end for s in scores[:3]] == [BudgetEnd.CUT, BudgetEnd.DIVERGED, BudgetEnd.CUT]
    assert scores[1].diverged_at == 2 and "from step 2 on" in scores[1].reason
    assert "(step_2.png)" in scores[1].reason
    assert scores[2].score == 1.0 and scores[2].changed_tiles is not None and scores[2].changed_tiles > 0
    # At the last step of each of the budget's two replays, the differing screen was looked
    # at again for LOOK_AGAIN seconds before it counted.
    assert scores[1].tries == REPLAY_TRIES == 2 and scores[0].tries == scores[2].tries == 1
    looks = [x for x in sleeps if x > LOOK_INTERVAL / 2]
    assert len(looks) == 2 * round(LOOK_AGAIN / LOOK_INTERVAL)
    assert sum(looks) == pytest.approx(2 * LOOK_AGAIN)


def test_a_difference_that_lasts_to_the_last_step_parted_where_it_began(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider()
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    for index in (1, 2):  # the run's screens after steps 2 and 3
        episode.steps[index] = replace(episode.steps[index], screenshot=_other_screen(str(index)))
    plan, _ = _plan(task, provider, episode, first, tmp_path, tolerance=0)
    cut3, cut4 = replay_budget(plan, 3), replay_budget(plan, 4)
    assert (cut3.end, cut3.diverged_at) == (BudgetEnd.DIVERGED, 2)
    assert cut4.end is BudgetEnd.CUT  # after step 4 the run's screen is the replay's again


def test_the_runs_next_screen_counts_as_the_same_step(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider()
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    # The run looked after step 1 before its desktop showed step 1: it shows the screen after setup.
    episode.steps[0] = replace(episode.steps[0], screenshot=first)
    plan, _ = _plan(task, provider, episode, first, tmp_path, tolerance=0)
    score = replay_budget(plan, 1)
    # The replay's screen after step 1 is the run's after step 2 but for out.txt's content: a tile.
    assert score.end is BudgetEnd.DIVERGED and score.changed_tiles == 1
    plan.tolerance = 1
    assert replay_budget(plan, 1).end is BudgetEnd.CUT


class LateGuest(ScreenGuest):
    """A desktop a little slower than the run's: after an action, the first look at it still
    shows the screen before."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__(files)
        self.before: bytes | None = None

    def run_python(self, code: str, timeout: float = 30.0) -> Any:
        """Keep the screen before the action for the next look."""
        self.before = _drawn(self.files)
        return super().run_python(code, timeout)

    def screenshot(self) -> bytes:
        """The screen before the latest action once, then the screen now."""
        late, self.before = self.before, None
        return late if late is not None else super().screenshot()


class LateProvider(ScreenProvider):
    """Its replays' desktops are :class:`LateGuest`."""

    def _restore_impl(self, snapshot: str) -> Environment:
        env = super()._restore_impl(snapshot)
        if self.restores < 2:
            return env
        return replace(env, guest=LateGuest(dict(env.guest.files)))


def test_a_replay_slower_than_the_run_is_looked_at_again_and_matches(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = LateProvider()
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    plan, sleeps = _plan(task, provider, episode, first, tmp_path, tolerance=0)
    score = replay_budget(plan, 3)
    assert (score.end, score.score) == (BudgetEnd.CUT, 1.0)
    # The last step's first look showed the screen before it; the second the run's.
    assert sleeps.count(LOOK_INTERVAL) == 1


def test_an_action_that_fails_in_the_replay_but_ran_in_the_run_is_a_divergence(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider()
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    episode.steps[0] = replace(episode.steps[0], action_errors=["Traceback: it broke in the run"])
    plan, _ = _plan(task, provider, episode, first, tmp_path)
    score = replay_budget(plan, 2)
    assert (score.end, score.diverged_at) == (BudgetEnd.DIVERGED, 1)
    assert score.reason.startswith("step 1's actions ran in the replay but failed in the run")


def test_a_replay_the_desktop_broke_under_is_an_error_not_a_score(tmp_path: Path) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider(fail_from=2)
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    plan, _ = _plan(task, provider, episode, first, tmp_path)
    score = replay_budget(plan, 2)
    assert (score.end, score.score, score.counted) == (BudgetEnd.ERROR, None, False)
    assert score.reason.startswith("the replay of the first 2 steps could not run: ")
    assert "did not come back" in score.reason


def test_a_bug_in_a_replay_is_an_error_entry_that_names_it_and_the_runs_score_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = _task(tmp_path)
    provider = ScreenProvider()
    episode, own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    plan, _ = _plan(task, provider, episode, first, tmp_path)

    def broken_evaluate(self: TaskRun, last: Action | None) -> Evaluation:
        raise KeyError("metric")

    monkeypatch.setattr(TaskRun, "evaluate", broken_evaluate)
    broken, mine = score_budgets(plan, (2,), 10, own, more_restores=False)
    assert (broken.end, broken.score, broken.replayed) == (BudgetEnd.ERROR, None, True)
    assert broken.reason == "the replay of the first 2 steps could not run: KeyError: 'metric'"
    assert (mine.budget, mine.score) == (10, own.score)


def test_the_pause_between_replayed_steps_is_the_runs_but_at_most_a_second(tmp_path: Path) -> None:
    def step(index: int, started: float, duration: float) -> StepRecord:
        return StepRecord(index, started, duration, "", "", [_write(str(index))], [], None, Usage(), None)

    steps = [step(1, 100.0, 0.5), step(2, 100.7, 2.0), step(3, 110.0, 0.1)]
    step_times = [{"index": 2, "agent": 0.1}, {"index": 3, "agent": 4.0}]
    # after step 1: 100.5 -> 100.7 + 0.1 agent = 0.3; after step 2: 102.7 -> 110 + 4 = 11.3
    assert recorded_pauses(steps, step_times) == pytest.approx([0.3, 11.3])
    task = _task(tmp_path)
    provider = ScreenProvider()
    episode, _own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    episode.steps[:3] = [
        replace(s, screenshot=r.screenshot) for s, r in zip(steps, episode.steps, strict=False)
    ]
    plan, sleeps = _plan(task, provider, episode, first, tmp_path, step_times=step_times)
    assert replay_budget(plan, 3).end is BudgetEnd.CUT
    assert len(sleeps) == 2
    assert 0.0 <= sleeps[0] <= 0.3 and 0.3 < sleeps[1] <= MAX_PAUSE


def test_a_replays_saved_inputs_name_its_files_from_the_tasks_eval_inputs() -> None:
    inputs = [
        {
            "func": "f",
            "options": {"file": "kept"},
            "result": {"file": "a.txt"},
            "expected": [{"file": "/abs"}],
        }
    ]
    assert rebase_inputs(inputs, "budgets/5") == [
        {
            "func": "f",
            "options": {"file": "kept"},
            "result": {"file": "budgets/5/a.txt"},
            "expected": [{"file": "/abs"}],
        }
    ]


def test_the_json_entry_leaves_out_what_does_not_apply() -> None:
    ended = BudgetScore(5, BudgetEnd.ENDED_BEFORE, 1.0, True, 3, outcome="passed", end_reason="done")
    assert ended.to_json() == {
        "score": 1.0,
        "passed": True,
        "end": "ended_before",
        "steps": 3,
        "outcome": "passed",
        "end_reason": "done",
    }
    parted = BudgetScore(
        5, BudgetEnd.DIVERGED, None, None, 5, reason="r", diverged_at=2, changed_tiles=9, parted_screen=b"png"
    )
    data = parted.to_json()
    assert data["diverged_at"] == 2 and data["score"] is None and "parted_screen" not in data
    assert json.loads(json.dumps(data)) == data


def test_an_evaluation_error_at_a_budget_is_a_failed_score_with_its_reason(tmp_path: Path) -> None:
    task = _task(
        tmp_path,
        evaluator={
            "func": "exact_match",
            "result": {"type": "vm_file", "path": "/home/user/missing.txt", "dest": "m.txt"},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
    )
    provider = ScreenProvider()
    episode, own, first, _ = _run(task, provider, SOLUTION, 10, tmp_path)
    plan, _ = _plan(task, provider, episode, first, tmp_path)
    score = replay_budget(plan, 2)
    assert (score.end, score.score, score.outcome) == (BudgetEnd.CUT, 0.0, "eval_error")
    assert own.error and score.reason == Evaluation(0.0, error=own.error).first_reason()
