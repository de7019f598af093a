"""Recording a person's X input on a real Xvfb, and replaying it with pyautogui.

Input is injected with XTest from a second connection (a click, a double click, typing,
Enter, ctrl+a, a scroll, a drag); the recorder's actions are then run by pyautogui on a
fresh Xvfb while recording again, and the second recording must equal the first.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
from Xlib import XK, X, display
from Xlib.ext import xtest

from pytest_osworld.guest.input_record import InputRecorder, RecordedEvent, to_actions

pytestmark = pytest.mark.desktop

SCREEN = (1280, 800)
EXPECTED = [
    "pyautogui.click(100, 200)",
    "pyautogui.doubleClick(300, 300)",
    "pyautogui.write('Hello world')",
    "pyautogui.press('enter')",
    "pyautogui.hotkey('ctrl', 'a')",
    "pyautogui.scroll(-3, x=500, y=500)",
    "pyautogui.moveTo(50, 50)",
    "pyautogui.dragTo(200, 150, duration=0.5, button='left')",
]
REPLAY = """
import json, sys, time
import pyautogui
pyautogui.FAILSAFE = False
for action in json.load(sys.stdin):
    time.sleep(action["wait_before"])
    exec(action["code"])
"""


class Injector:
    """Fake input through XTest on its own connection."""

    def __init__(self, name: str) -> None:
        self.display = display.Display(name)

    def close(self) -> None:
        self.display.close()

    def _fake(self, kind: int, detail: int = 0, x: int = 0, y: int = 0) -> None:
        xtest.fake_input(self.display, kind, detail, root=self.display.screen().root, x=x, y=y)
        self.display.sync()
        time.sleep(0.01)

    def move(self, x: int, y: int) -> None:
        self._fake(X.MotionNotify, x=x, y=y)

    def click(self, x: int, y: int, button: int = 1) -> None:
        self.move(x, y)
        self._fake(X.ButtonPress, button)
        self._fake(X.ButtonRelease, button)

    def key(self, name: str, press: bool = True, release: bool = True) -> None:
        keysym = XK.string_to_keysym(name) if len(name) > 1 else ord(name.lower())
        code = self.display.keysym_to_keycode(keysym)
        assert code, f"no keycode for {name!r}"
        if press:
            self._fake(X.KeyPress, code)
        if release:
            self._fake(X.KeyRelease, code)

    def type(self, text: str) -> None:
        for char in text:
            shifted = char.isupper()
            if shifted:
                self.key("Shift_L", release=False)
            self.key("space" if char == " " else char)
            if shifted:
                self.key("Shift_L", press=False)


def record_person(name: str) -> list[RecordedEvent]:
    """The gestures of the test, injected while an InputRecorder listens."""
    recorder = InputRecorder(name)
    recorder.start()
    person = Injector(name)
    try:
        person.click(100, 200)
        time.sleep(0.3)
        first = recorder.take()
        time.sleep(0.4)
        person.click(300, 300)
        time.sleep(0.1)
        person.click(300, 300)
        time.sleep(0.7)
        person.type("Hello world")
        person.key("Return")
        person.key("Control_L", release=False)
        person.key("a")
        person.key("Control_L", press=False)
        for _ in range(3):
            person.click(500, 500, 5)
        person.move(400, 400)
        person.move(50, 50)
        person._fake(X.ButtonPress, 1)
        for step in range(1, 6):
            person.move(50 + 30 * step, 50 + 20 * step)
        person._fake(X.ButtonRelease, 1)
        time.sleep(0.3)
    finally:
        person.close()
        rest = recorder.stop()
    assert [event.kind for event in first] == ["motion", "button_press", "button_release"]
    return first + rest


def test_record_then_replay_with_pyautogui(xvfb: Callable[[], str]) -> None:
    events = record_person(xvfb())
    actions = to_actions(events, SCREEN)
    assert [action.code for action in actions] == EXPECTED
    assert actions[1].wait_before >= 0.6
    assert actions[2].wait_before >= 0.6
    assert all(earlier.time <= later.time for earlier, later in itertools.pairwise(events))

    replay_display = xvfb()
    recorder = InputRecorder(replay_display)
    recorder.start()
    try:
        subprocess.run(
            [sys.executable, "-c", REPLAY],
            input=json.dumps([action.as_dict() for action in actions]).encode(),
            env={**os.environ, "DISPLAY": replay_display},
            check=True,
            timeout=60,
        )
        time.sleep(0.3)
    finally:
        replayed = recorder.stop()
    assert [action.code for action in to_actions(replayed, SCREEN)] == EXPECTED


def test_stop_is_prompt_without_events(xvfb: Callable[[], str]) -> None:
    recorder = InputRecorder(xvfb())
    recorder.start()
    assert recorder.running
    started = time.monotonic()
    assert recorder.stop() == []
    assert time.monotonic() - started < 1.0
    assert not recorder.running


def test_a_stop_right_after_the_input_keeps_all_of_it(xvfb: Callable[[], str]) -> None:
    # Stopped at once after a Ctrl press and release, a recording lost the release in 9 of
    # 100 stops before it drained (the server records an XTest event when it processes it).
    name = xvfb()
    injector = Injector(name)
    lost = []
    try:
        for attempt in range(40):
            recorder = InputRecorder(name)
            recorder.start()
            code = injector.display.keysym_to_keycode(XK.string_to_keysym("Control_L"))
            xtest.fake_input(injector.display, X.KeyPress, code)
            xtest.fake_input(injector.display, X.KeyRelease, code)
            injector.display.sync()
            kinds = [event.kind for event in recorder.stop()]
            if kinds != ["key_press", "key_release"]:
                lost.append((attempt, kinds))
    finally:
        injector.close()
    assert lost == []


def test_guest_routes(xvfb: Callable[[], str], monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_osworld.guest.server import GuestApp, Request

    name = xvfb()
    monkeypatch.setenv("DISPLAY", name)
    app = GuestApp("secret")

    def post(path: str, body: dict[str, object] | None = None) -> tuple[int, Any]:
        headers = {"authorization": "Bearer secret", "content-type": "application/json"}
        response = app.handle(Request("POST", path, headers, json.dumps(body or {}).encode()))
        return response.status, json.loads(response.body)

    assert post("/input/take")[0] == 409
    assert post("/input/stop")[0] == 409
    started = time.monotonic()
    assert post("/input/start")[0] == 200
    assert post("/input/start")[0] == 409

    def wait_until_pending(count: int) -> None:
        # A take holds what the recorder has been sent so far, which under load trails the
        # input by more than any fixed sleep (CI once took 1 of 4 events right after them).
        # With quiet=5 a burst is kept whole until 5 s pass without input: nothing is taken.
        deadline = time.monotonic() + 3.0
        while True:
            status, kept = post("/input/take", {"quiet": 5})
            assert status == 200 and kept["actions"] == []
            if kept["pending"] >= count or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert kept["pending"] == count

    person = Injector(name)
    try:
        person.click(10, 20)
        person.key("Control_L", release=False)  # a gesture still going on at the take
        wait_until_pending(4)  # the move, the click's press and release, Ctrl down
        since_start = time.monotonic() - started
        status, taken = post("/input/take")
        assert status == 200 and taken["pending"] == 1
        assert [a["code"] for a in taken["actions"]] == ["pyautogui.click(10, 20)"]
        # Counted from /input/start: no longer than the test has waited since (a fixed bound
        # failed under CI's load, the click coming 1.2 s after the start), rounded to 0.1 s.
        assert 0.0 <= taken["actions"][0]["wait_before"] <= round(since_start, 1) + 0.1
        time.sleep(0.3)  # the hotkey's wait below counts to its c
        person.key("c")
        person.key("Control_L", press=False)
        wait_until_pending(4)  # Ctrl down kept back, c down and up, Ctrl up
        time.sleep(0.3)
        assert post("/input/take", {"quiet": "soon"})[0] == 400
    finally:
        person.close()
    status, stopped = post("/input/stop")
    assert status == 200 and [a["code"] for a in stopped["actions"]] == ["pyautogui.hotkey('ctrl', 'c')"]
    assert stopped["actions"][0]["wait_before"] >= 0.3  # counted from the click taken before
    assert post("/input/stop")[0] == 409
