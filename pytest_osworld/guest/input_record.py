"""Record a person's X input in the desktop (for ``--agent=human``).

:class:`InputRecorder` listens to the core input events of the whole X server with the
RECORD extension, on its own display connection and thread, and keeps each with a
monotonic time and the keysyms of its key. :func:`to_actions` (in
:mod:`pytest_osworld.guest.input_actions`, re-exported here) turns such a list into
pyautogui statements that replay it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any

from pytest_osworld.guest.input_actions import RecordedAction, RecordedEvent, to_actions

__all__ = ["InputRecorder", "RecordedAction", "RecordedEvent", "to_actions"]

_KINDS = {2: "key_press", 3: "key_release", 4: "button_press", 5: "button_release", 6: "motion"}
START_TIMEOUT = 5.0
STOP_TIMEOUT = 5.0
#: Before a recording ends, it goes on until no event came for this long (at most
#: :data:`DRAIN_TIMEOUT`): the X server records an XTest event when it processes it, not
#: when its request is answered, so the input a client has just sent may not be recorded
#: yet (measured: the key release of a Ctrl press lost in 9 of 100 stops that did not wait).
DRAIN_QUIET = 0.15
DRAIN_TIMEOUT = 2.0


class InputRecorder:
    """Core input events of an X display, recorded in a background thread.

    ``display`` defaults to the ``DISPLAY`` environment variable. Thread-safe: ``take`` and
    ``stop`` may be called from any thread.
    """

    def __init__(self, display: str | None = None) -> None:
        self._display_name = display or os.environ.get("DISPLAY", ":0")
        self._lock = threading.Lock()
        self._events: list[RecordedEvent] = []
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._record_display: Any = None
        self._control_display: Any = None
        self._context: int | None = None
        self._keysyms: dict[int, tuple[int, ...]] = {}
        self._anchor: tuple[int, float] | None = None
        #: When the latest reply with events arrived (monotonic), for :meth:`stop`'s drain.
        self._last_arrival = 0.0

    @property
    def running(self) -> bool:
        """Whether the recording thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Open the display connections, create the RECORD context and start listening."""
        from Xlib import X, display
        from Xlib.ext import record

        if self._thread is not None or self._started.is_set():
            raise RuntimeError("this recorder was already started")
        control = display.Display(self._display_name)
        try:
            if not control.has_extension("RECORD"):
                raise RuntimeError(f"X display {self._display_name} has no RECORD extension")
            first = control.display.info.min_keycode
            count = control.display.info.max_keycode - first + 1
            mapping = control.get_keyboard_mapping(first, count)
            self._keysyms = {first + i: tuple(int(k) for k in syms) for i, syms in enumerate(mapping)}
            recorder = display.Display(self._display_name)
        except BaseException:
            control.close()
            raise
        self._control_display, self._record_display = control, recorder
        self._context = recorder.record_create_context(
            0,
            [record.AllClients],
            [
                {
                    "core_requests": (0, 0),
                    "core_replies": (0, 0),
                    "ext_requests": (0, 0, 0, 0),
                    "ext_replies": (0, 0, 0, 0),
                    "delivered_events": (0, 0),
                    "device_events": (X.KeyPress, X.MotionNotify),
                    "errors": (0, 0),
                    "client_started": False,
                    "client_died": False,
                }
            ],
        )
        self._thread = threading.Thread(target=self._run, name="input-recorder", daemon=True)
        self._thread.start()
        if not self._started.wait(START_TIMEOUT):
            self.stop()
            raise RuntimeError(f"RECORD did not start on {self._display_name}")
        if self._error is not None:
            raise RuntimeError(f"RECORD failed on {self._display_name}: {self._error}")

    def _run(self) -> None:
        try:
            self._record_display.record_enable_context(self._context, self._on_reply)
        except BaseException as exc:  # reported by start(); the thread must not die loudly
            self._error = exc
        finally:
            self._started.set()

    def _on_reply(self, reply: Any) -> None:
        from Xlib.ext import record
        from Xlib.protocol import rq

        if reply.category == record.StartOfData:
            self._started.set()
            return
        if reply.category != record.FromServer or reply.client_swapped:
            return
        data = reply.data
        arrived = time.monotonic()
        parsed: list[RecordedEvent] = []
        while len(data) >= 32:
            event, data = rq.EventField(None).parse_binary_value(
                data, self._record_display.display, None, None
            )
            kind = _KINDS.get(event.type & 0x7F)
            if kind is None:
                continue
            detail = int(event.detail)
            parsed.append(
                RecordedEvent(
                    kind=kind,
                    time=self._event_time(int(event.time), arrived),
                    x=int(event.root_x),
                    y=int(event.root_y),
                    detail=detail,
                    keysyms=self._keysyms.get(detail, ()) if kind.startswith("key") else (),
                )
            )
        if parsed:
            with self._lock:
                self._events.extend(parsed)
                self._last_arrival = arrived

    def _event_time(self, server_ms: int, arrived: float) -> float:
        """A monotonic time for an event: server times, anchored at the first arrival."""
        if not server_ms:
            return arrived
        if self._anchor is None:
            self._anchor = (server_ms, arrived)
        base_ms, base = self._anchor
        return base + ((server_ms - base_ms) & 0xFFFFFFFF) / 1000.0

    def take(self) -> list[RecordedEvent]:
        """The events recorded since the last ``take``; recording goes on."""
        with self._lock:
            events, self._events = self._events, []
        return events

    def _drain(self) -> None:
        """Wait until the input sent before now is recorded: :data:`DRAIN_QUIET` seconds
        without an event, at most :data:`DRAIN_TIMEOUT`."""
        started = time.monotonic()
        while True:
            now = time.monotonic()
            with self._lock:
                quiet_since = max(self._last_arrival, started)
            if now - quiet_since >= DRAIN_QUIET or now - started >= DRAIN_TIMEOUT:
                return
            time.sleep(DRAIN_QUIET / 5)

    def stop(self) -> list[RecordedEvent]:
        """End the recording once the input already sent is in it (:meth:`_drain`), close
        the connections and return the events not yet taken."""
        if self.running:
            self._drain()
        thread, self._thread = self._thread, None
        control, recorder = self._control_display, self._record_display
        self._control_display = self._record_display = None
        try:
            if control is not None and self._context is not None:
                control.record_disable_context(self._context)
                control.flush()
            if thread is not None:
                thread.join(STOP_TIMEOUT)
            if control is not None and self._context is not None:
                control.record_free_context(self._context)
                control.sync()
        finally:
            self._context = None
            for conn in (control, recorder):
                if conn is not None:
                    with contextlib.suppress(Exception):
                        conn.close()
        return self.take()


class NoRecording(Exception):
    """Raised by :class:`InputSession` when a recording is asked for in the wrong state."""


class InputSession:
    """The guest's one input recording: started, taken in bursts, stopped. Thread-safe.

    Waits count across takes: the first action of a take waits from the end of the input
    taken before it, and the very first from :meth:`start` (what the person waited for).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recorder: InputRecorder | None = None
        self._pending: list[RecordedEvent] = []
        self._last_end: float | None = None

    def start(self) -> None:
        """Start recording; :class:`NoRecording` when one runs already."""
        with self._lock:
            if self._recorder is not None:
                raise NoRecording("an input recording is already running")
            recorder = InputRecorder()
            recorder.start()
            self._recorder, self._pending, self._last_end = recorder, [], time.monotonic()

    def take(self, screen: tuple[int, int], quiet: float = 0.0) -> tuple[list[RecordedAction], int]:
        """The actions of the input so far, and how many events are kept back.

        A gesture still going on (a key or button down) is kept for the next take; with
        ``quiet`` (seconds) so is all input until none came for that long, so a burst is
        converted whole (a double click is not cut in two).
        """
        from pytest_osworld.guest.input_actions import settled_length

        with self._lock:
            if self._recorder is None:
                raise NoRecording("no input recording is running")
            events = self._pending + self._recorder.take()
            settled = settled_length(events)
            if events and time.monotonic() - events[-1].time < quiet:
                settled = 0
            events, self._pending = events[:settled], events[settled:]
            previous_end, pending = self._last_end, len(self._pending)
            if events:
                self._last_end = events[-1].time
        return to_actions(events, screen, previous_end), pending

    def stop(self, screen: tuple[int, int]) -> list[RecordedAction]:
        """Stop recording; the actions not taken yet. :class:`NoRecording` when none runs."""
        with self._lock:
            recorder, self._recorder = self._recorder, None
            if recorder is None:
                raise NoRecording("no input recording is running")
            events, self._pending = self._pending + recorder.stop(), []
            previous_end, self._last_end = self._last_end, None
        return to_actions(events, screen, previous_end)
