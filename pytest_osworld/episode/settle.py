"""Settling: after a task's setup, wait until the desktop shows what the agent is meant to see.

OSWorld's runner sleeps a fixed 60 s after a reset, so its agents' first screenshot shows the
apps that setup launched. Setup steps such as ``launch`` and ``open`` return as soon as the
program is started, so without a wait the first observation here came before the app's
window (an empty desktop, where a real agent's recorded first click meets nothing).

:func:`settle` waits, bounded by :data:`SETTLE_TIMEOUT`, until

- a window appeared that was not there before setup, when setup started a program
  (:data:`WINDOW_STEPS`),
- for :data:`QUIET_SECONDS` the window list has not changed,
- for :data:`QUIET_SECONDS` no part of the screen has changed, apart from what keeps changing
  by itself: the screen is judged in tiles (:mod:`pytest_osworld.episode.screen_tiles`), and a
  tile that went back and forth between two images (a blinking caret), one that changed in
  every :data:`RESTLESS_SLICE` of the last :data:`RESTLESS_SECONDS` (a playing video, a
  spinner that never stops) and the top bar's clock turning a minute are left out, and
- for :data:`QUIET_SECONDS` the programs that setup started have used or waited for less than
  :data:`IDLE_CORES` of a CPU (:mod:`pytest_osworld.episode.desktop_load`; the desktop's own
  processes, there before setup, do not count): a program still
  starting is busy between the bursts in which it draws (LibreOffice loading a document,
  GIMP its plug-ins behind its splash), and is waited for. A picture that keeps changing
  by itself over at least a 2x2 square of tiles (a video:
  :meth:`~pytest_osworld.episode.screen_tiles.TileHistory.has_square`) keeps its player busy:
  then the programs' load does not count. What keeps changing in lines and spots (a splash's
  status text and progress bar, four tiles in GIMP's) is no video, and its program's load
  still counts. A video is a rectangle: a tile within the bounding rectangle of a video's
  restless tiles (:meth:`~pytest_osworld.episode.screen_tiles.TileHistory.video_area`) is
  the video's too, though it changes only now and then (a still background a shape moves
  over, as in the vlc tasks' slideshow played full screen). While the programs are idle, a
  change of at most :data:`IDLE_TILES` tiles (a caret before it has blinked twice) is not
  drawing.

The quiet time is short because the load tells a program that has drawn all it will from one
that pauses between two bursts (docs/desktop.md, "The settle wait", has the measurements).

A setup of none of :data:`CHANGING_STEPS` leaves the desktop as restored, and is not waited for.
It asks only what every guest server offers (``wmctrl -l`` through ``/execute``, and
screenshots), so it works on OSWorld's own image too. A guest without ``wmctrl`` is judged
by the screen alone. Timing out is not an error: the task goes on, and :class:`Settled`
says which condition did not hold (``result.json``'s ``timings.settle``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from pytest_osworld.episode.desktop_load import DemandProbe
from pytest_osworld.episode.screen_tiles import TileHistory, clock_tick, tile_signature
from pytest_osworld.errors import GuestError
from pytest_osworld.guest_client.api import Guest
from pytest_osworld.task.timings import TaskTimings

#: The longest wait for a desktop to settle (OSWorld waits a fixed 60 s).
SETTLE_TIMEOUT = 30.0
#: How long the windows, the screen (apart from what changes by itself) and the programs' load
#: must stay quiet.
QUIET_SECONDS = 0.5
#: How long a tile must keep changing to count as changing by itself (a video, a spinner).
RESTLESS_SECONDS = 2.0
#: Such a tile changed in every slice of this many seconds of :data:`RESTLESS_SECONDS`.
RESTLESS_SLICE = 0.5
#: How long to wait between two looks at the windows and the screen.
POLL_SECONDS = 0.2
#: Programs that use or wait for less than this share of one CPU over the quiet time are idle.
IDLE_CORES = 0.15
#: While the programs are idle, a change of at most this many tiles is not drawing (a caret's
#: first blink, a clock): what an idle program draws is what it shows.
IDLE_TILES = 2
#: Setup step types that start a program, whose window is waited for.
WINDOW_STEPS = frozenset({"launch", "open"})
#: Setup step types after which the screen may still be changing.
CHANGING_STEPS = WINDOW_STEPS | {
    "execute",
    "command",
    "chrome_open_tabs",
    "chrome_close_tabs",
    "activate_window",
}


@dataclass(frozen=True)
class Settled:
    """How a settle ended: its seconds, the windows it saw, and what did not hold on a timeout."""

    seconds: float
    windows: int
    new_windows: int
    timed_out: bool
    waiting_for: str = ""
    #: Screen tiles left out because they kept changing by themselves (a video, a spinner).
    moving_tiles: int = 0
    #: Screen tiles left out because they blinked between two images (a caret).
    blinking_tiles: int = 0
    #: Seconds spent waiting for each condition (:class:`_Look`'s ``waiting_for``).
    waited: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``timings.settle`` object of ``result.json``."""
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        data["waited"] = {reason: round(seconds, 3) for reason, seconds in self.waited.items()}
        return data


def settle_plan(step_types: Iterable[str]) -> tuple[bool, bool]:
    """For a setup of these step types: whether to settle at all, and whether to wait for a
    new window (see :data:`CHANGING_STEPS` and :data:`WINDOW_STEPS`)."""
    types = set(step_types)
    return bool(types & CHANGING_STEPS), bool(types & WINDOW_STEPS)


def open_windows(guest: Guest) -> frozenset[str] | None:
    """The ids of the windows the window manager has mapped (``wmctrl -l``), or None when the
    guest cannot say (no ``wmctrl`` there)."""
    try:
        listed = guest.execute(["wmctrl", "-l"], timeout=10.0)
    except GuestError:
        return None
    if listed.returncode != 0:
        return None
    return frozenset(line.split()[0] for line in listed.output.splitlines() if line.strip())


def settle(
    guest: Guest,
    before: frozenset[str] | None,
    *,
    expect_new_window: bool,
    timeout: float = SETTLE_TIMEOUT,
    quiet: float = QUIET_SECONDS,
    interval: float = POLL_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    wall_clock: Callable[[], float] = time.time,
    before_processes: frozenset[str] | None = None,
) -> Settled:
    """Wait until the desktop is settled (see the module's docstring), at most ``timeout``.

    ``before`` is :func:`open_windows` as it was before setup; ``expect_new_window`` says
    whether setup started programs (:func:`settle_plan`); ``before_processes`` the
    processes there were before setup (:meth:`DemandProbe.processes`), whose load does not
    count (None: those there are when the wait starts).
    """
    started = clock()
    history = TileHistory(keep=max(quiet, RESTLESS_SECONDS) + 1.0)
    listings: list[tuple[float, frozenset[str] | None]] = []
    load = DemandProbe(guest)
    load.before = before_processes if before_processes is not None else load.processes()
    demands: list[tuple[float, float]] = []
    previous_wall: float | None = None
    waited: dict[str, float] = {}
    last_look: tuple[float, str] | None = None
    while True:
        windows = open_windows(guest)
        signature = tile_signature(guest.screenshot())
        demand = load.sample()
        now, wall = clock(), wall_clock()
        history.add(now, signature, clock_tick(previous_wall, wall))
        previous_wall = wall
        listings.append((now, windows))
        if demand is not None:
            demands.append((now, demand))
        new = len(windows - before) if windows is not None and before is not None else 0
        need_new = expect_new_window and windows is not None and before is not None
        look = _look(
            history, listings, now, quiet, need_new, new, load.available, _busy_cores(demands, now, quiet)
        )
        if last_look is not None and last_look[1]:
            waited[last_look[1]] = waited.get(last_look[1], 0.0) + now - last_look[0]
        last_look = (now, look.waiting_for)
        if not look.waiting_for or now - started >= timeout:
            return Settled(
                now - started,
                len(windows or ()),
                new,
                timed_out=bool(look.waiting_for),
                waiting_for=look.waiting_for,
                moving_tiles=look.moving,
                blinking_tiles=look.blinking,
                waited=waited,
            )
        sleep(interval)


@dataclass(frozen=True)
class _Look:
    """What one look found: what the desktop has not done yet ('' when settled), and the
    tiles left out as changing by themselves."""

    waiting_for: str
    moving: int = 0
    blinking: int = 0


def _busy_cores(demands: list[tuple[float, float]], now: float, quiet: float) -> float | None:
    """The programs' load over the last ``quiet`` seconds, in CPUs (None until it is known)."""
    recent = [(at, seconds) for at, seconds in demands if at > now - quiet]
    earlier = [at for at, _ in demands if at <= now - quiet]
    if not recent or not earlier:
        return None
    return sum(seconds for _, seconds in recent) / max(now - earlier[-1], 1e-6)


def _look(
    history: TileHistory,
    listings: list[tuple[float, frozenset[str] | None]],
    now: float,
    quiet: float,
    need_new: bool,
    new: int,
    load_known: bool = False,
    busy_cores: float | None = None,
) -> _Look:
    if need_new and new == 0:
        return _Look("a window of a program that setup started")
    if history.span < quiet or (load_known and busy_cores is None):
        return _Look("the quiet time to pass")
    if len({windows for at, windows in listings if at >= now - quiet}) > 1:
        return _Look("the window list to stop changing")
    busy = history.changed_since(now - quiet)
    blinking = history.blinking(sorted(busy))
    restless = history.restless(sorted(busy - blinking), now - RESTLESS_SECONDS, RESTLESS_SLICE)
    video = history.video_area(restless)
    moving = restless | ((busy - blinking) & video)
    drawing = busy - blinking - moving
    idle = load_known and busy_cores is not None and busy_cores < IDLE_CORES
    if drawing and not (idle and len(drawing) <= IDLE_TILES):
        return _Look("the screen to stop changing", len(moving), len(blinking))
    if load_known and not idle and not video:
        return _Look("the programs to go idle", len(moving), len(blinking))
    return _Look("", len(moving), len(blinking))


#: What the setup is handed to wait in a ``sleep`` step that follows a ``launch`` or ``open``:
#: wait at most the step's seconds, less once what the step started has settled.
SleepUntilSettled = Callable[[float], None]


def run_and_settle(
    guest: Guest,
    step_types: Iterable[str],
    run_setup: Callable[[SleepUntilSettled | None], None],
    timings: TaskTimings | None = None,
) -> Settled | None:
    """Run a task's setup (``run_setup``), then settle as its step types ask (None when
    they leave the desktop as restored). The windows' listing before setup and the wait
    after it are timed as the ``settle`` phase; how it ended goes to ``timings.settle``.

    When setup starts programs, ``run_setup`` is given a :data:`SleepUntilSettled` for its
    ``sleep`` steps that follow a ``launch`` or ``open``
    (:func:`pytest_osworld.setup_steps.run_steps`): OSWorld's sleep gives the program time
    to come up, and it ends once the program's window is there and the desktop is settled.
    """
    wait, expect_new_window = settle_plan(step_types)
    before: frozenset[str] | None = None
    processes: frozenset[str] | None = None
    if wait:
        with timings.phase("settle") if timings is not None else contextlib.nullcontext():
            before = open_windows(guest) if expect_new_window else None
            processes = DemandProbe(guest).processes()

    def sleep_until_settled(seconds: float) -> None:
        started = time.monotonic()
        settled = settle(guest, before, expect_new_window=True, timeout=seconds, before_processes=processes)
        if settled.timed_out:
            time.sleep(max(seconds - (time.monotonic() - started), 0.0))

    run_setup(sleep_until_settled if expect_new_window else None)
    if not wait:
        return None
    with timings.phase("settle") if timings is not None else contextlib.nullcontext():
        settled = settle(guest, before, expect_new_window=expect_new_window, before_processes=processes)
    if timings is not None:
        timings.settle = settled.to_json()
    return settled
