"""Chrome's profile getters read what the last action changed, as after OSWorld's 20 s sleep.

Chrome writes a changed setting to its profile files up to 10 s later; OSWorld's runner sleeps
20 s before it evaluates, and ours evaluates at once, so these getters wait out the rest of
that interval from the episode's last action.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_osworld.agent import Action, Usage
from pytest_osworld.episode.loop import Episode, StepRecord
from pytest_osworld.evaluators.getters import chrome
from pytest_osworld.task.context import TaskContext


class Clock:
    """A clock that a sleep moves on."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class LazyChrome:
    """A guest whose Preferences changes from dark to light 10 s after ``changed_at``."""

    def __init__(self, clock: Clock, changed_at: float) -> None:
        self.clock = clock
        self.changed_at = changed_at

    def read_file(self, path: str) -> bytes:
        written = self.clock() >= self.changed_at + chrome.PROFILE_COMMIT_SECONDS
        scheme = 1 if written else 2
        return json.dumps({"browser": {"theme": {"color_scheme2": scheme}}}).encode()


def _ctx(guest: Any, last_action_at: float | None) -> TaskContext:
    return TaskContext(
        task=SimpleNamespace(),  # type: ignore[arg-type]
        guest=guest,
        assets=SimpleNamespace(),  # type: ignore[arg-type]
        work_dir=Path("."),
        last_action_at=last_action_at,
    )


def test_waits_out_the_commit_interval_from_the_last_action() -> None:
    clock = Clock(1000.0)
    waited = chrome.await_profile_commit(_ctx(None, 997.0), clock, clock.sleep)
    assert waited == 997.0 + chrome.PROFILE_COMMIT_SECONDS + chrome.COMMIT_MARGIN_SECONDS - 1000.0
    assert clock.slept == [waited]


def test_no_wait_without_an_action_or_long_after_it() -> None:
    clock = Clock(1000.0)
    assert chrome.await_profile_commit(_ctx(None, None), clock, clock.sleep) == 0.0
    assert chrome.await_profile_commit(_ctx(None, 900.0), clock, clock.sleep) == 0.0
    assert clock.slept == []


def test_the_getter_reads_the_setting_chrome_wrote_late(monkeypatch: Any) -> None:
    clock = Clock(1000.0)
    monkeypatch.setattr(chrome.time, "time", clock)
    monkeypatch.setattr(chrome.time, "sleep", clock.sleep)
    guest = LazyChrome(clock, changed_at=999.0)
    assert chrome.get_chrome_appearance_mode_ui(_ctx(guest, 999.0), {}) == "light"
    # Read at once (as a rescore would, with no action to wait from) it is still the old one.
    assert chrome.get_chrome_appearance_mode_ui(_ctx(LazyChrome(clock, clock()), None), {}) == "dark"


def _step(index: int, started: float, duration: float, *actions: Action) -> StepRecord:
    return StepRecord(index, started, duration, "", "", list(actions), [], None, Usage(), None)


def test_an_episode_knows_when_it_last_acted() -> None:
    code = Action(kind="code", code="pass")
    done = Action(kind="DONE")
    episode = Episode(steps=[_step(1, 100.0, 2.0, code), _step(2, 102.0, 3.0, done)])
    assert episode.last_acted_at == 102.0
    assert Episode(steps=[_step(1, 100.0, 2.0, done)]).last_acted_at is None
