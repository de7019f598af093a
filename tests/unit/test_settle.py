"""Settling after setup: the first observation waits for the programs setup started."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from pytest_osworld.episode.settle import QUIET_SECONDS, run_and_settle, settle, settle_plan
from pytest_osworld.episode.timings import TaskTimings
from pytest_osworld.guest_client.api import CommandResult


@dataclass
class ScriptedGuest:
    """A guest whose windows and screen follow a script indexed by the fake clock's time."""

    windows: list[tuple[float, str | None]]  # (from time, wmctrl -l output or None: no wmctrl)
    screens: list[tuple[float, bytes]]  # (from time, screenshot bytes)
    now: list[float] = field(default_factory=lambda: [0.0])

    def _at(self, script: list[tuple[float, object]]) -> object:
        return [value for start, value in script if start <= self.now[0]][-1]

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        listing = self._at(self.windows)  # type: ignore[arg-type]
        if listing is None:
            return CommandResult(127, "", "wmctrl: not found")
        return CommandResult(0, str(listing), "")

    def screenshot(self) -> bytes:
        return self._at(self.screens)  # type: ignore[arg-type,return-value]

    def clock(self) -> float:
        return self.now[0]

    def sleep(self, seconds: float) -> None:
        self.now[0] += seconds


DESKTOP = "0x01 0 host Desktop\n"
GIMP = DESKTOP + "0x02 0 host GNU Image Manipulation Program\n"


def run(guest: ScriptedGuest, *, before: frozenset[str] | None, expect: bool, timeout: float = 30.0):
    return settle(
        guest, before, expect_new_window=expect, timeout=timeout, clock=guest.clock, sleep=guest.sleep
    )


def test_waits_for_the_new_window_then_for_the_quiet_time() -> None:
    guest = ScriptedGuest(windows=[(0, DESKTOP), (4.0, GIMP)], screens=[(0, b"empty"), (4.0, b"gimp")])
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out
    assert settled.new_windows == 1 and settled.windows == 2
    assert 4.0 + QUIET_SECONDS - 0.25 <= settled.seconds <= 4.0 + QUIET_SECONDS + 0.5


def test_a_blinking_caret_is_a_still_screen() -> None:
    blink = [(t / 4, b"on" if int(t / 2) % 2 else b"off") for t in range(0, 200)]
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=blink)
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out and settled.seconds <= QUIET_SECONDS + 0.5


def test_a_screen_that_keeps_changing_times_out_and_says_so() -> None:
    drawing = [(t / 4, str(t).encode()) for t in range(0, 400)]
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=drawing)
    settled = run(guest, before=frozenset({"0x01"}), expect=True, timeout=5.0)
    assert settled.timed_out and settled.waiting_for == "the screen to stop changing"
    assert 5.0 <= settled.seconds < 5.5


def test_no_new_window_times_out_and_says_what_it_waited_for() -> None:
    guest = ScriptedGuest(windows=[(0, DESKTOP)], screens=[(0, b"empty")])
    settled = run(guest, before=frozenset({"0x01"}), expect=True, timeout=3.0)
    assert settled.timed_out and settled.waiting_for == "a window of a program that setup started"


def test_windows_that_keep_changing_are_waited_for() -> None:
    flicker = [(t / 4, GIMP if t % 2 else DESKTOP + "0x03 0 host Splash\n") for t in range(0, 400)]
    guest = ScriptedGuest(windows=flicker, screens=[(0, b"same")])
    settled = run(guest, before=frozenset({"0x01"}), expect=True, timeout=4.0)
    assert settled.timed_out and settled.waiting_for == "the window list to stop changing"


def test_without_wmctrl_the_screen_alone_decides() -> None:
    loading = [(t / 4, f"loading {t}".encode()) for t in range(8)]
    guest = ScriptedGuest(windows=[(0, None)], screens=[*loading, (2.0, b"ready")])
    settled = run(guest, before=None, expect=True)
    assert not settled.timed_out and settled.seconds >= 2.0 + QUIET_SECONDS - 0.25


@pytest.mark.parametrize(
    ("types", "plan"),
    [
        (["launch", "sleep"], (True, True)),
        (["open"], (True, True)),
        (["execute"], (True, False)),
        (["chrome_open_tabs"], (True, False)),
        (["download", "sleep", "upload_file"], (False, False)),
        ([], (False, False)),
    ],
)
def test_the_plan_follows_the_step_types(types: list[str], plan: tuple[bool, bool]) -> None:
    assert settle_plan(types) == plan


def test_a_setup_that_starts_nothing_is_not_waited_for() -> None:
    guest = ScriptedGuest(windows=[(0, DESKTOP)], screens=[(0, b"x")])
    ran: list[bool] = []
    timings = TaskTimings()
    assert run_and_settle(guest, ["download"], lambda: ran.append(True), timings) is None
    assert ran == [True] and timings.settle is None and timings.phases["settle"] == 0.0
    assert "settle" in timings.to_json()["phases"]
