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
#: How far back the looks are kept (beyond the quiet time and the restless span).
KEEP_SECONDS = max(QUIET_SECONDS, RESTLESS_SECONDS) + 1.0
#: How long to wait between two looks at the windows and the screen.
POLL_SECONDS = 0.2
#: Programs that use or wait for less than this share of one CPU over the quiet time are idle.
IDLE_CORES = 0.15
#: While the programs are idle, a change of at most this many tiles is not drawing (a caret's
#: first blink, a clock): what an idle program draws is what it shows.
IDLE_TILES = 2
#: What a wait that has not yet looked for :data:`QUIET_SECONDS` waits for.
QUIET_TIME = "the quiet time to pass"
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


@dataclass
class Watch:
    """What the looks of a settle wait have seen so far: the screen's tiles, the window lists
    and the programs' load. A wait given the watch of one that ended at most
    :data:`QUIET_SECONDS` before goes on from it (a ``sleep`` step's wait, then the wait after
    setup), so a desktop that was settled then is settled at the first look."""

    #: The programs' load probe (its ``before``: the processes that do not count).
    load: DemandProbe
    history: TileHistory = field(default_factory=lambda: TileHistory(keep=KEEP_SECONDS))
    #: The window list at each look (None: the guest cannot say).
    listings: list[tuple[float, frozenset[str] | None]] = field(default_factory=list)
    #: The programs' demand between two looks, at the later one; the first look is the start
    #: (0.0), so a load over the quiet time is known at the second.
    demands: list[tuple[float, float]] = field(default_factory=list)
    #: The wall clock at the latest look (the top bar's clock, :func:`clock_tick`).
    previous_wall: float | None = None

    @property
    def last_look(self) -> float | None:
        """When the latest look was taken (the wait's clock), None before the first."""
        return self.listings[-1][0] if self.listings else None

    def go_on(self, now: float, quiet: float = QUIET_SECONDS) -> None:
        """Go on from the looks so far if the latest is at most ``quiet`` seconds before
        ``now``; else forget them (:meth:`restart`): a load or a window list read across a
        longer gap would blur what happened in it."""
        if self.last_look is None or now - self.last_look > quiet:
            self.restart()

    def restart(self) -> None:
        """Forget every look (the load's processes that do not count stay)."""
        self.history = TileHistory(keep=KEEP_SECONDS)
        self.listings.clear()
        self.demands.clear()
        self.previous_wall = None
        self.load.forget()

    def take(self, guest: Guest, clock: Callable[[], float], wall_clock: Callable[[], float]) -> float:
        """One look at the window list, the screen and the programs' load; its time."""
        windows = open_windows(guest)
        signature = tile_signature(guest.screenshot())
        demand = self.load.sample()
        now, wall = clock(), wall_clock()
        self.history.add(now, signature, clock_tick(self.previous_wall, wall))
        self.previous_wall = wall
        self.listings.append((now, windows))
        if demand is not None:
            self.demands.append((now, demand))
        elif self.load.available and not self.demands:
            self.demands.append((now, 0.0))
        for kept in (self.listings, self.demands):
            while len(kept) > 2 and kept[1][0] < now - KEEP_SECONDS:
                del kept[0]
        return now


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
    watch: Watch | None = None,
) -> Settled:
    """Wait until the desktop is settled (see the module's docstring), at most ``timeout``.

    ``before`` is :func:`open_windows` as it was before setup; ``expect_new_window`` says
    whether setup started programs (:func:`settle_plan`); ``before_processes`` the
    processes there were before setup (:meth:`DemandProbe.processes`), whose load does not
    count (None: those there are when the wait starts). ``watch`` is an earlier wait's
    (:class:`Watch`), gone on from when its last look is at most ``quiet`` seconds old, and
    kept up to date by this one.
    """
    started = clock()
    if watch is None:
        load = DemandProbe(guest)
        load.before = before_processes if before_processes is not None else load.processes()
        watch = Watch(load)
    else:
        watch.go_on(started, quiet)
    waited: dict[str, float] = {}
    last_look: tuple[float, str] | None = None
    while True:
        now = watch.take(guest, clock, wall_clock)
        windows = watch.listings[-1][1]
        new = len(windows - before) if windows is not None and before is not None else 0
        need_new = expect_new_window and windows is not None and before is not None
        look = _look(
            watch.history,
            watch.listings,
            now,
            quiet,
            need_new,
            new,
            watch.load.available,
            _busy_cores(watch.demands, now, quiet),
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
        pause = interval
        until_quiet = watch.history.times[0] + quiet - now
        if look.waiting_for == QUIET_TIME and 0.0 < until_quiet < interval:
            pause = until_quiet  # the next look is the first that can end the quiet time
        sleep(min(pause, max(started + timeout - now, 0.0)))


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


def _since(listings: list[tuple[float, frozenset[str] | None]], since: float) -> set[frozenset[str] | None]:
    """The window lists seen since ``since``, with the one it started from (the latest look at
    or before it)."""
    start = max((index for index, (at, _) in enumerate(listings) if at <= since), default=0)
    return {windows for _, windows in listings[start:]}


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
        return _Look(QUIET_TIME)
    if len(_since(listings, now - quiet)) > 1:
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


#: What setup is handed to wait its ``sleep`` steps: the step's seconds, and whether it may end
#: early, once the program that a ``launch`` or ``open`` just started has settled.
Sleeper = Callable[[float, bool], None]
#: A ``sleep`` that may not end early is spent looking at the desktop over its last this many
#: seconds (what tells a video, and the quiet time), so the wait after setup goes on from them.
WATCHED_SECONDS = RESTLESS_SECONDS + QUIET_SECONDS


def watch_while_sleeping(
    guest: Guest,
    watch: Watch,
    seconds: float,
    *,
    interval: float = POLL_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    wall_clock: Callable[[], float] = time.time,
) -> None:
    """Sleep ``seconds``, no less, looking at the desktop (:meth:`Watch.take`) every
    ``interval`` over the last :data:`WATCHED_SECONDS` of them; the latest look is at most two
    intervals before the end."""
    end = clock() + seconds
    sleep(max(seconds - WATCHED_SECONDS, 0.0))
    watch.go_on(clock())
    while end - clock() > interval:
        watch.take(guest, clock, wall_clock)
        sleep(min(interval, max(end - clock(), 0.0)))
    sleep(max(end - clock(), 0.0))


def run_and_settle(
    guest: Guest,
    step_types: Iterable[str],
    run_setup: Callable[[Sleeper | None], None],
    timings: TaskTimings | None = None,
) -> Settled | None:
    """Run a task's setup (``run_setup``), then settle as its step types ask (None when
    they leave the desktop as restored). The windows' listing before setup and the wait
    after it are timed as the ``settle`` phase; how it ended goes to ``timings.settle``.

    When the desktop is to be waited for, ``run_setup`` is given a :data:`Sleeper` for its
    ``sleep`` steps (:func:`pytest_osworld.setup_steps.run_steps`). A sleep that follows a
    ``launch`` or ``open`` gives the program time to come up (OSWorld's reason for it), and it
    ends once the program's window is there and the desktop is settled. Every other sleep
    lasts its seconds, looking at the desktop over the last of them
    (:func:`watch_while_sleeping`). The wait after setup goes on from a sleep's looks when the
    latest was at most :data:`QUIET_SECONDS` before (:class:`Watch`): a desktop settled then,
    and unchanged since, is not waited for again, and a video that played through the sleep
    is known for one.
    """
    wait, expect_new_window = settle_plan(step_types)
    if not wait:
        run_setup(None)
        return None
    with timings.phase("settle") if timings is not None else contextlib.nullcontext():
        before = open_windows(guest) if expect_new_window else None
        load = DemandProbe(guest)
        load.before = load.processes()
        watch = Watch(load)

    def sleeper(seconds: float, until_settled: bool) -> None:
        if until_settled:
            started = time.monotonic()
            settled = settle(guest, before, expect_new_window=True, timeout=seconds, watch=watch)
            if settled.timed_out:
                time.sleep(max(seconds - (time.monotonic() - started), 0.0))
        else:
            watch_while_sleeping(guest, watch, seconds)

    run_setup(sleeper)
    with timings.phase("settle") if timings is not None else contextlib.nullcontext():
        settled = settle(guest, before, expect_new_window=expect_new_window, watch=watch)
    if timings is not None:
        timings.settle = settled.to_json()
    return settled
