"""``--agent=human``'s recorded solution: each burst's waits, and the person's pause before
their verdict kept before the DONE (a replay that evaluates at once can beat the screen)."""

from __future__ import annotations

from typing import Any

from agents.human import LONGEST_FINAL_WAIT, HumanAgent
from pytest_osworld.agent.contract import AgentConfig, Observation


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Person:
    """The live view and the recording guest in one: a script of bursts, then a verdict."""

    def __init__(self, clock: Clock, script: list[tuple[float, list[dict[str, Any]] | str]]) -> None:
        self.clock, self.script = clock, script
        self.server = self
        self.on_verdict: Any = None

    def take_over(self) -> None:
        """The person takes over the desktop."""

    def update(self, **_: Any) -> None:
        """The live page's state."""

    def start_input_recording(self) -> None:
        """Recording starts."""

    def stop_input_recording(self) -> list[dict[str, Any]]:
        return []

    def take_input_actions(self, quiet: float) -> list[dict[str, Any]]:
        seconds, what = self.script.pop(0)
        self.clock.now += seconds
        if isinstance(what, str):
            self.on_verdict(what)
            return []
        return what


def episode(script: list[tuple[float, list[dict[str, Any]] | str]]) -> list[str]:
    clock = Clock()
    agent = HumanAgent(AgentConfig(name="human", args={"step_pause": "1.5"}), clock=clock)
    person = Person(clock, script)
    agent.attach_desktop(person, person)
    observation = Observation(instruction="do it", screenshot=b"", accessibility_tree=None)
    while True:
        step = agent.act("do it", observation)
        if any(action.kind in ("DONE", "FAIL") for action in step.actions):
            return agent.solution()


TYPED = [{"code": "pyautogui.write('chmod 600 secrets.env')", "wait_before": 3.3}]


def test_the_pause_before_done_is_kept_before_done() -> None:
    # The burst is returned 1.5 s (step_pause) after the last key; Done comes 1.5 s later.
    solution = episode([(4.8, TYPED), (1.5, "DONE")])
    assert solution == [
        "time.sleep(3.3)\npyautogui.write('chmod 600 secrets.env')",
        "time.sleep(3.0)",
        "DONE",
    ]


def test_a_long_pause_before_the_verdict_is_kept_up_to_its_limit() -> None:
    solution = episode([(4.8, TYPED), (600.0, "INFEASIBLE")])
    assert solution[1:] == [f"time.sleep({LONGEST_FINAL_WAIT:.1f})", "FAIL"]


def test_a_verdict_before_any_input_has_no_wait() -> None:
    assert episode([(5.0, "DONE")]) == ["DONE"]
