"""Settling: after a task's setup, wait until the desktop shows what the agent is meant to see.

OSWorld's runner sleeps a fixed 60 s after a reset, so its agents' first screenshot shows the
apps that setup launched. Setup steps such as ``launch`` and ``open`` return as soon as the
program is started, so without a wait the first observation here came before the app's
window (an empty desktop, where a real agent's recorded first click meets nothing).

:func:`settle` waits, bounded by :data:`SETTLE_TIMEOUT`, until

- a window appeared that was not there before setup, when setup started a program
  (:data:`WINDOW_STEPS`), and
- for :data:`QUIET_SECONDS` the window list has not changed and the screen has shown at most
  two images (a blinking caret alternates between two; an app still drawing shows more).

A setup of none of :data:`CHANGING_STEPS` leaves the desktop as restored, and is not waited for.
It asks only what every guest server offers (``wmctrl -l`` through ``/execute``, and
screenshots), so it works on OSWorld's own image too. A guest without ``wmctrl`` is judged
by the screen alone. Timing out is not an error: the task goes on, and :class:`Settled`
says which condition did not hold (``result.json``'s ``timings.settle``).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from pytest_osworld.episode.timings import TaskTimings
from pytest_osworld.errors import GuestError
from pytest_osworld.guest_client.api import Guest

#: The longest wait for a desktop to settle (OSWorld waits a fixed 60 s).
SETTLE_TIMEOUT = 30.0
#: How long the windows and the screen must stay unchanged.
QUIET_SECONDS = 2.0
#: How often the windows and the screen are looked at.
POLL_SECONDS = 0.25
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
#: Most distinct screen images a still screen shows within the quiet time (a blinking caret).
STILL_IMAGES = 2


@dataclass(frozen=True)
class Settled:
    """How a settle ended: its seconds, the windows it saw, and what did not hold on a timeout."""

    seconds: float
    windows: int
    new_windows: int
    timed_out: bool
    waiting_for: str = ""

    def to_json(self) -> dict[str, Any]:
        """The ``timings.settle`` object of ``result.json``."""
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
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
) -> Settled:
    """Wait until the desktop is settled (see the module's docstring), at most ``timeout``.

    ``before`` is :func:`open_windows` as it was before setup; ``expect_new_window`` says
    whether setup started programs (:func:`settle_plan`).
    """
    started = clock()
    seen: list[tuple[float, frozenset[str] | None, str]] = []
    while True:
        windows = open_windows(guest)
        digest = hashlib.sha256(guest.screenshot()).hexdigest()
        now = clock()
        seen.append((now, windows, digest))
        new = len(windows - before) if windows is not None and before is not None else 0
        need_new = expect_new_window and windows is not None and before is not None
        waiting_for = _waiting_for(seen, now, quiet, need_new, new)
        if not waiting_for:
            return Settled(now - started, len(windows or ()), new, timed_out=False)
        if now - started >= timeout:
            return Settled(now - started, len(windows or ()), new, timed_out=True, waiting_for=waiting_for)
        sleep(interval)


def _waiting_for(
    seen: list[tuple[float, frozenset[str] | None, str]], now: float, quiet: float, need_new: bool, new: int
) -> str:
    """What the desktop has not done yet ('' when it is settled)."""
    if need_new and new == 0:
        return "a window of a program that setup started"
    if seen[0][0] > now - quiet:
        return "the quiet time to pass"
    recent = [entry for entry in seen if entry[0] >= now - quiet]
    if len({entry[1] for entry in recent}) > 1:
        return "the window list to stop changing"
    if len({entry[2] for entry in recent}) > STILL_IMAGES:
        return "the screen to stop changing"
    return ""


def run_and_settle(
    guest: Guest, step_types: Iterable[str], run_setup: Callable[[], None], timings: TaskTimings | None = None
) -> Settled | None:
    """Run a task's setup (``run_setup``), then settle as its step types ask (None when
    they leave the desktop as restored). The windows' listing before setup and the wait
    after it are timed as the ``settle`` phase; how it ended goes to ``timings.settle``."""
    wait, expect_new_window = settle_plan(step_types)
    before: frozenset[str] | None = None
    if expect_new_window:
        with timings.phase("settle") if timings is not None else contextlib.nullcontext():
            before = open_windows(guest)
    run_setup()
    if not wait:
        return None
    with timings.phase("settle") if timings is not None else contextlib.nullcontext():
        settled = settle(guest, before, expect_new_window=expect_new_window)
    if timings is not None:
        timings.settle = settled.to_json()
    return settled
