"""Settling after setup: the first observation waits for the programs setup started, drawn
and idle, and not for what keeps changing by itself (a video, a caret, the clock)."""

from __future__ import annotations

import functools
import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep
from pytest_osworld.episode import settle as settle_module
from pytest_osworld.episode.desktop_load import PROBE, parse_probe
from pytest_osworld.episode.loop import Budget, EndReason, Episode, run_episode
from pytest_osworld.episode.screen_tiles import REDUCE, TILE, clock_tick, tile_signature
from pytest_osworld.episode.settle import (
    POLL_SECONDS,
    QUIET_SECONDS,
    RESTLESS_SECONDS,
    run_and_settle,
    settle,
    settle_plan,
)
from pytest_osworld.guest_client.api import CommandResult
from pytest_osworld.task.model import parse_task
from pytest_osworld.task.timings import TaskTimings

#: The fake screen: 8 x 4 tiles.
SIZE = (8 * TILE * REDUCE, 4 * TILE * REDUCE)
SIDE = TILE * REDUCE


@functools.cache
def screen(*boxes: tuple[int, int, str]) -> bytes:
    """A PNG of the fake screen, grey, with the tiles ``(column, row, colour)`` painted."""
    image = Image.new("RGB", SIZE, "grey")
    draw = ImageDraw.Draw(image)
    for column, row, colour in boxes:
        draw.rectangle(
            [column * SIDE, row * SIDE, (column + 1) * SIDE - 1, (row + 1) * SIDE - 1], fill=colour
        )
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(autouse=True)
def _decode_each_screen_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake screens repeat: decode each PNG once (the tests then take seconds, not a minute)."""
    monkeypatch.setattr(settle_module, "tile_signature", functools.lru_cache(maxsize=None)(tile_signature))


EMPTY = screen()
APP = screen((1, 1, "white"), (2, 1, "white"), (1, 2, "white"), (2, 2, "white"))


def frames(step: float, until: float, make: Callable[[int], bytes]) -> list[tuple[float, bytes]]:
    """Screens that change every ``step`` seconds from 0 to ``until``: ``make(k)`` for the k-th."""
    return [(k * step, make(k)) for k in range(int(until / step) + 1)]


@dataclass
class ScriptedGuest:
    """A guest whose windows, screen and programs' CPU follow scripts indexed by a fake clock.

    ``busy`` gives the programs' load (CPUs) from a time on; None answers the load probe with
    nothing (a guest that cannot say)."""

    windows: list[tuple[float, str | None]]  # (from time, wmctrl -l output or None: no wmctrl)
    screens: list[tuple[float, bytes]]  # (from time, screenshot PNG)
    busy: list[tuple[float, float]] | None = None  # (from time, CPUs busy)
    now: list[float] = field(default_factory=lambda: [0.0])
    cpu_seconds: float = 0.0
    last_probe: float = 0.0

    def _at(self, script: list[tuple[float, object]]) -> object:
        return [value for start, value in script if start <= self.now[0]][-1]

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        if command == ["sh", "-c", PROBE]:
            if self.busy is None:
                return CommandResult(0, "", "")
            self.cpu_seconds += float(self._at(self.busy)) * (self.now[0] - self.last_probe)  # type: ignore[arg-type]
            self.last_probe = self.now[0]
            return CommandResult(0, f"42\n/proc/7/schedstat:{int(self.cpu_seconds * 1e9)} 0 3\n", "")
        listing = self._at(self.windows)  # type: ignore[arg-type]
        if listing is None:
            return CommandResult(127, "", "wmctrl: not found")
        return CommandResult(0, str(listing), "")

    def screenshot(self) -> bytes:
        return self._at(self.screens)  # type: ignore[arg-type,return-value]

    def clock(self) -> float:
        return self.now[0]

    def wall(self) -> float:
        return 6_000_020.0 + self.now[0]  # 20 s into a minute at the start

    def sleep(self, seconds: float) -> None:
        self.now[0] += seconds


DESKTOP = "0x01 0 host Desktop\n"
GIMP = DESKTOP + "0x02 0 host GNU Image Manipulation Program\n"


def run(guest: ScriptedGuest, *, before: frozenset[str] | None, expect: bool, timeout: float = 30.0):
    return settle(
        guest,
        before,
        expect_new_window=expect,
        timeout=timeout,
        clock=guest.clock,
        sleep=guest.sleep,
        wall_clock=guest.wall,
        before_processes=frozenset(),  # the program (pid 7) started with setup
    )


def test_waits_for_the_new_window_then_for_the_quiet_time() -> None:
    guest = ScriptedGuest(windows=[(0, DESKTOP), (4.0, GIMP)], screens=[(0, EMPTY), (4.0, APP)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out
    assert settled.new_windows == 1 and settled.windows == 2
    assert 4.0 + QUIET_SECONDS - 0.15 <= settled.seconds <= 4.0 + QUIET_SECONDS + 0.35


def test_a_blinking_caret_is_a_still_screen() -> None:
    caret = frames(0.5, 30, lambda k: screen((3, 2, "black" if k % 2 else "grey")))
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=caret)
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out and settled.seconds <= 2.5
    assert settled.blinking_tiles == 1 and settled.moving_tiles == 0


def test_a_caret_that_blinks_where_a_window_was_just_drawn_is_a_still_screen() -> None:
    """The caret's tile showed other images while its window was drawn; the blinking since
    then is what counts."""
    drawn = [(0.0, screen()), (0.3, screen((3, 2, "blue"))), (0.6, screen((3, 2, "white")))]
    caret = [(0.6 + 0.5 * k, screen((3, 2, "black" if k % 2 else "white"))) for k in range(1, 60)]
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=drawn + caret)
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out and settled.blinking_tiles == 1
    assert settled.seconds <= 0.6 + 1.0 + QUIET_SECONDS + 0.3


def test_a_small_change_of_an_idle_desktop_is_not_drawing() -> None:
    """A caret's first blink (one tile) while the programs are idle does not hold the wait;
    the same change while a program is busy does."""
    blink = [(0.0, APP), (0.4, screen((1, 1, "white"), (2, 1, "white"), (1, 2, "white"), (2, 2, "black")))]
    idle = ScriptedGuest(windows=[(0, GIMP)], screens=blink, busy=[(0, 0.0)])
    assert (
        run(idle, before=frozenset({"0x01"}), expect=True).seconds <= QUIET_SECONDS + 2 * POLL_SECONDS + 0.05
    )
    busy = ScriptedGuest(windows=[(0, GIMP)], screens=blink, busy=[(0, 0.5), (2.0, 0.0)])
    assert run(busy, before=frozenset({"0x01"}), expect=True).seconds >= 2.0


def test_a_playing_video_is_left_out_after_it_kept_changing() -> None:
    """Four tiles show a new image at every look (a video): once they have kept changing for
    the restless time, the rest of the screen decides, even with the player busy."""
    shades = ["red", "green", "blue", "yellow", "cyan", "magenta", "orange", "purple"]
    video = frames(
        0.1,
        40,
        lambda k: screen(*[(c, r, shades[(k + c + r) % len(shades)]) for c in (4, 5) for r in (1, 2)]),
    )
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=video, busy=[(0, 0.3)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out
    assert settled.moving_tiles == 4
    assert RESTLESS_SECONDS <= settled.seconds <= RESTLESS_SECONDS + 0.6


def test_a_slow_video_is_left_out_too() -> None:
    """A video whose picture changes only every 0.4 s (most looks see the same frame) still
    changes in every half second: it keeps changing by itself."""
    shades = ["red", "green", "blue", "yellow", "cyan"]
    video = frames(
        0.4,
        40,
        lambda k: screen(*[(c, r, shades[(k + c + r) % len(shades)]) for c in (1, 2) for r in (2, 3)]),
    )
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=video, busy=[(0, 0.2)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out and settled.moving_tiles == 4
    assert settled.seconds <= RESTLESS_SECONDS + 1.0


def _video_with_still_parts(extras: list[tuple[int, int]]) -> list[tuple[float, bytes]]:
    """A video whose picture keeps changing in a square and along a diagonal (columns 1 to 6,
    rows 0 to 3), and at each of ``extras`` changes only every 1.2 s (three images in turn),
    each 0.3 s after the one before it: one of them changes every 0.3 s, none by itself."""
    shades = ["red", "green", "blue", "yellow", "cyan", "magenta", "orange", "purple"]
    restless = [(1, 0), (2, 0), (1, 1), (2, 1), (3, 1), (4, 2), (5, 3), (6, 3)]
    now_and_then = ["white", "black", "pink"]

    def frame(k: int) -> bytes:
        tiles = [(c, r, shades[(k + c + r) % len(shades)]) for c, r in restless]
        tiles += [(c, r, now_and_then[((k - 3 * i) // 12) % 3]) for i, (c, r) in enumerate(extras)]
        return screen(*tiles)

    return frames(0.1, 40, frame)


def test_a_video_s_still_parts_within_its_rectangle_are_the_video_s() -> None:
    """Tiles of a video that change only now and then (colour bars a shape moves over) lie
    within the rectangle of the video's restless tiles: they are left out with them, and the
    wait ends (VLC playing the vlc tasks' slideshow full screen timed out at 30 s before)."""
    inside = [(5, 0), (6, 0), (3, 3), (1, 3)]
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=_video_with_still_parts(inside), busy=[(0, 0.3)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out, settled
    assert settled.seconds <= RESTLESS_SECONDS + 2.0


def test_changes_now_and_then_outside_a_video_s_rectangle_are_waited_for() -> None:
    """The same changes beside the video's rectangle (columns 0 and 7) are something else
    drawing."""
    outside = [(7, 0), (7, 1), (0, 2), (0, 3)]
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=_video_with_still_parts(outside), busy=[(0, 0.3)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True, timeout=8.0)
    assert settled.timed_out and settled.waiting_for == "the screen to stop changing"


def test_drawing_that_moves_over_the_screen_is_waited_for_and_said() -> None:
    """Every quarter of a second one more tile is painted (a window being drawn): no tile keeps
    changing by itself, so nothing is left out and the wait runs out."""
    drawing = frames(0.25, 10, lambda k: screen(*[(j % 8, j // 8, "white") for j in range(k % 32)]))
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=drawing)
    settled = run(guest, before=frozenset({"0x01"}), expect=True, timeout=5.0)
    assert settled.timed_out and settled.waiting_for == "the screen to stop changing"
    assert 5.0 <= settled.seconds < 5.5


def test_busy_programs_are_waited_for_though_the_screen_is_still() -> None:
    """A program loading between two bursts of drawing keeps a CPU busy: the still screen
    does not end the wait until it is idle."""
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=[(0, APP)], busy=[(0, 1.2), (3.0, 0.0)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out
    assert 3.0 + QUIET_SECONDS - 0.15 <= settled.seconds <= 3.0 + QUIET_SECONDS + 0.35


def test_programs_that_stay_busy_time_out_and_say_so() -> None:
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=[(0, APP)], busy=[(0, 0.9)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True, timeout=3.0)
    assert settled.timed_out and settled.waiting_for == "the programs to go idle"


def test_a_splash_that_keeps_changing_while_its_program_loads_is_waited_for() -> None:
    """A small region that keeps changing (a splash's progress) while the CPU is busy is no
    video: the wait goes on until the program is idle."""
    splash = frames(
        0.1, 40, lambda k: screen((3, 1, "white" if k % 3 else "black"), (4, 1, f"#{(k % 7) * 30:02x}0000"))
    )
    guest = ScriptedGuest(
        windows=[(0, GIMP)], screens=[*splash[:60], (6.0, APP)], busy=[(0, 1.0), (6.0, 0.0)]
    )
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out and settled.seconds >= 6.0 + QUIET_SECONDS - 0.15


def test_a_splash_whose_text_and_progress_keep_changing_in_four_tiles_is_no_video() -> None:
    """GIMP's splash under load: its status line changes in three tiles of one row and its
    progress bar in one tile of the next, each at every look, for seconds. Four restless
    tiles with no 2x2 square among them are no video: the wait goes on until GIMP is idle
    (the replay of gimp/d52d6308 clicked an empty desktop when the splash counted as one)."""
    shades = ["red", "green", "blue", "yellow", "cyan", "magenta"]
    splash = frames(
        0.1,
        40,
        lambda k: screen(*[(c, 1, shades[(k + c) % len(shades)]) for c in (3, 4, 5)], (1, 2, shades[k % 6])),
    )
    guest = ScriptedGuest(
        windows=[(0, GIMP)], screens=[*splash[:80], (8.0, APP)], busy=[(0, 1.0), (8.0, 0.0)]
    )
    settled = run(guest, before=frozenset({"0x01"}), expect=True)
    assert not settled.timed_out and settled.seconds >= 8.0 + QUIET_SECONDS - 0.15


def test_the_clock_turning_a_minute_does_not_count() -> None:
    """A change of the top row of tiles at the start of a minute is the top bar's clock; the
    same change at any other second is drawing, and is waited for."""
    clock_face = [(0, screen((4, 0, "white"))), (0.3, screen((4, 0, "black")))]
    at_the_minute = ScriptedGuest(windows=[(0, GIMP)], screens=clock_face)
    at_the_minute.wall = lambda: 5_999_999.8 + at_the_minute.now[0]  # type: ignore[method-assign]
    settled = run(at_the_minute, before=frozenset({"0x01"}), expect=True)
    assert settled.seconds <= QUIET_SECONDS + 0.25
    mid_minute = ScriptedGuest(windows=[(0, GIMP)], screens=clock_face)
    assert run(mid_minute, before=frozenset({"0x01"}), expect=True).seconds >= 0.3 + QUIET_SECONDS - 0.05


@pytest.mark.parametrize(
    ("previous", "wall", "tick"),
    [(None, 60 * 100 + 0.5, True), (None, 60 * 100 + 2.0, False), (60 * 100 - 0.2, 60 * 100 + 1.9, True)],
)
def test_clock_ticks(previous: float | None, wall: float, tick: bool) -> None:
    assert clock_tick(previous, wall) is tick


def test_no_new_window_times_out_and_says_what_it_waited_for() -> None:
    guest = ScriptedGuest(windows=[(0, DESKTOP)], screens=[(0, EMPTY)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True, timeout=3.0)
    assert settled.timed_out and settled.waiting_for == "a window of a program that setup started"


def test_windows_that_keep_changing_are_waited_for() -> None:
    flicker = [(t / 4, GIMP if t % 2 else DESKTOP + "0x03 0 host Splash\n") for t in range(0, 400)]
    guest = ScriptedGuest(windows=flicker, screens=[(0, APP)])
    settled = run(guest, before=frozenset({"0x01"}), expect=True, timeout=4.0)
    assert settled.timed_out and settled.waiting_for == "the window list to stop changing"


def test_without_wmctrl_the_screen_alone_decides() -> None:
    loading = [(t / 4, screen((t % 8, 3, "white"))) for t in range(8)]
    guest = ScriptedGuest(windows=[(0, None)], screens=[*loading, (2.0, APP)])
    settled = run(guest, before=None, expect=True)
    assert not settled.timed_out and settled.seconds >= 2.0 + QUIET_SECONDS - 0.15


def test_the_tiles_see_a_single_pixel() -> None:
    image = Image.new("RGB", SIZE, "grey")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    before = tile_signature(buffer.getvalue())
    image.putpixel((SIDE * 2 + 5, SIDE + 7), (0, 0, 0))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    after = tile_signature(buffer.getvalue())
    assert before.columns == 8 and len(before.tiles) == 32
    assert [i for i, (a, b) in enumerate(zip(before.tiles, after.tiles, strict=True)) if a != b] == [8 + 2]


def test_the_probe_reads_cpu_and_wait_per_process_and_leaves_itself_out() -> None:
    output = "99\n/proc/12/schedstat:1500000000 500000000 7\n/proc/13/schedstat:0 0 0\n/proc/99/schedstat:5 5 1\nnoise\n"
    assert parse_probe(output) == {"12": 2.0, "13": 0.0}


def test_only_the_processes_setup_started_count() -> None:
    """A desktop process that was busy before setup (the shell, a VM's daemon) does not hold
    the wait; the same load from a process setup started does."""
    guest = ScriptedGuest(windows=[(0, GIMP)], screens=[(0, APP)], busy=[(0, 0.9)])
    settled = settle(
        guest,
        frozenset({"0x01"}),
        expect_new_window=True,
        timeout=3.0,
        clock=guest.clock,
        sleep=guest.sleep,
        wall_clock=guest.wall,
        before_processes=frozenset({"7"}),
    )
    assert not settled.timed_out and settled.seconds <= QUIET_SECONDS + 0.35


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
    guest = ScriptedGuest(windows=[(0, DESKTOP)], screens=[(0, EMPTY)])
    ran: list[bool] = []
    timings = TaskTimings()
    assert run_and_settle(guest, ["download"], lambda sleep: ran.append(sleep is None), timings) is None
    assert ran == [True] and timings.settle is None and timings.phases["settle"] == 0.0
    assert "settle" in timings.to_json()["phases"]


def test_a_sleep_after_a_launch_ends_once_the_desktop_settled() -> None:
    """Setup that starts a program gets a sleeper for its sleeps: with the program's window
    there and the screen still, a 5 s sleep ends after the quiet time (real seconds here)."""
    guest = ScriptedGuest(windows=[(0, DESKTOP)], screens=[(0, APP)])
    took: list[float] = []

    def launch_then_sleep(sleep: Callable[[float], None] | None) -> None:
        assert sleep is not None
        guest.windows = [(0, GIMP)]  # the launched program's window
        started = time.monotonic()
        sleep(5.0)
        took.append(time.monotonic() - started)

    settled = run_and_settle(guest, ["launch", "sleep"], launch_then_sleep)
    assert settled is not None and not settled.timed_out
    assert QUIET_SECONDS - 0.1 <= took[0] < 2.5


@dataclass
class ActingGuest(ScriptedGuest):
    """A scripted guest that also runs code actions (recording when) and answers the
    observation's calls."""

    acted_at: list[float] = field(default_factory=list)

    def execute(self, command: list[str] | str, shell: bool = False, timeout: float = 120.0) -> CommandResult:
        if command == ["sh", "-c", PROBE] and not self.acted_at:
            # the shell (pid 3) is there before; the app (pid 7) starts with the first click
            return CommandResult(0, "42\n/proc/3/schedstat:1000 0 3\n", "")
        return super().execute(command, shell, timeout)

    def run_python(self, code: str, timeout: float = 30.0) -> CommandResult:
        self.acted_at.append(self.now[0])
        return CommandResult(0, "", "")

    def accessibility_tree(self) -> str:
        return ""


class ClickTwice:
    """Two code actions, then DONE; each step asks (or not) to settle after it."""

    def __init__(self, settle: bool) -> None:
        self.settle = settle
        self.left = 2

    def reset(self, task: object) -> None:
        """Nothing to forget."""

    def act(self, instruction: str, observation: object) -> AgentStep:
        """A click while any are left, then DONE."""
        if not self.left:
            return AgentStep(actions=[Action(kind="DONE")])
        self.left -= 1
        return AgentStep(actions=[Action(kind="code", code="pyautogui.click(1, 1)")], settle=self.settle)


def _episode(tmp_path: Path, settle_after: bool) -> tuple[ActingGuest, Episode, TaskTimings]:
    # The first click starts an app that works a core from then to 4 s, drawing its
    # window from 1 s on.
    guest = ActingGuest(
        windows=[(0, DESKTOP)],
        busy=[(0, 1.0), (4.0, 0.0)],
        screens=[(0, EMPTY), *[(1.0 + t, shot) for t, shot in frames(0.3, 3.0, _drawing)]],
    )
    task = parse_task(
        {"id": "t", "instruction": "click", "evaluator": {"func": "exact_match"}},
        tmp_path / "t.json",
        "0" * 64,
        "os",
    )
    timings = TaskTimings()
    episode = run_episode(
        task,
        guest,
        ClickTwice(settle_after),
        Budget(),
        clock=guest.clock,
        sleep=guest.sleep,
        timings=timings,  # type: ignore[arg-type]
    )
    return guest, episode, timings


def _drawing(k: int) -> bytes:
    """The app's window as drawn by its k-th frame: one more tile each frame."""
    return screen(*[(i % 8, i // 8, "white") for i in range(k + 1)])


def test_a_step_that_asks_to_settle_is_followed_by_a_still_screen_before_the_next(tmp_path: Path) -> None:
    guest, episode, timings = _episode(tmp_path, settle_after=True)
    assert episode.end_reason == EndReason.DONE
    assert guest.acted_at[1] >= 4.0 + QUIET_SECONDS - 0.35  # the second click met the drawn app
    assert timings.step_times[0]["settle"] > 0


def test_a_step_that_does_not_ask_is_followed_at_once(tmp_path: Path) -> None:
    guest, episode, timings = _episode(tmp_path, settle_after=False)
    assert episode.end_reason == EndReason.DONE
    assert guest.acted_at[1] < 1.0
    assert "settle" not in timings.step_times[0]
