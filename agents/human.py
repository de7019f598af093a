"""``--agent=human``: a person does the task in the live view, and is recorded like an agent.

The person's mouse and keys reach the desktop through the live view (the agent takes over
for them at its first step) and are recorded inside the desktop (X's RECORD extension,
:mod:`pytest_osworld.guest.input_record`) as pyautogui statements. A step ends when the
person pauses for ``step_pause`` seconds (``--agent-arg step_pause=2``), or presses Done,
Fail or Infeasible on the live page; its actions go to ``traj.jsonl`` with a screenshot,
like any agent's, but are not run again (:attr:`AgentStep.performed`). Done ends with DONE,
Infeasible with FAIL (OSWorld's way of calling a task infeasible), and Fail (the person
gives up) with DONE as well: the evaluator then scores the desktop as it is.

:meth:`HumanAgent.solution` gives the episode as a reference solution: one entry per step,
each statement preceded by the wait the person needed, and the pause between their last
input and the verdict kept before the DONE or FAIL (the screen catching up with what they
typed, which they watched before pressing Done; at most :data:`LONGEST_FINAL_WAIT`), which
``--record-solutions FILE`` writes in the ``--solutions`` format.
"""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable
from typing import Any

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentConfig, AgentStep, Observation
from pytest_osworld.errors import AgentFailure
from pytest_osworld.task.model import Task

#: A wait shorter than this is not written into a recorded solution (seconds).
SHORTEST_WAIT = 0.5
#: The longest pause before the verdict that a recorded solution keeps (seconds).
LONGEST_FINAL_WAIT = 10.0
#: What each button of the live page ends the episode with.
TERMINAL_OF = {"DONE": "DONE", "FAIL": "DONE", "INFEASIBLE": "FAIL"}


class HumanAgent:
    """The person at the live view (see the module's docs)."""

    def __init__(self, config: AgentConfig, clock: Callable[[], float] = time.monotonic) -> None:
        raw = config.args.get("step_pause", "2")
        try:
            self.step_pause = float(raw)
        except ValueError:
            raise AgentFailure(f"--agent-arg step_pause={raw!r}: not a number of seconds") from None
        if self.step_pause <= 0:
            raise AgentFailure(f"--agent-arg step_pause={raw!r}: must be positive")
        self._verdicts: queue.Queue[str] = queue.Queue()
        self._guest: Any = None
        self._live: Any = None
        self._recording = False
        self._entries: list[str] = []
        self._clock = clock
        #: When the person's last recorded input happened (None before any).
        self._last_input: float | None = None

    def attach_desktop(self, guest: Any, live: Any) -> None:
        """Use ``guest`` (to record input) and ``live`` (the person's view) for the next task."""
        if live is None:
            raise AgentFailure("--agent=human needs the live view (the local provider has it)")
        self._guest, self._live = guest, live
        live.server.on_verdict = self._verdicts.put

    def reset(self, task: Task) -> None:
        """Forget the previous episode; the person's verdicts from before do not count."""
        while not self._verdicts.empty():
            self._verdicts.get_nowait()
        self._recording = False
        self._entries = []
        self._last_input = None

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        """Wait for the person's next burst of input, or their verdict."""
        guest, live = self._guest, self._live
        if guest is None or live is None:
            raise AgentFailure("--agent=human was not given the desktop (attach_desktop)")
        if not self._recording:
            live.take_over()
            guest.start_input_recording()
            self._recording = True
            live.server.update(verdicts=True, note="do the task, then press Done, Fail or Infeasible")
        while True:
            try:
                verdict: str | None = self._verdicts.get(timeout=0.25)
            except queue.Empty:
                verdict = None
            if verdict is not None:
                rest = guest.stop_input_recording()
                self._recording = False
                live.server.update(verdicts=False, note=f"you pressed {verdict.title()}")
                return self._step(rest, verdict)
            burst = guest.take_input_actions(quiet=self.step_pause)
            if burst:
                # A burst ends once the person has paused for step_pause.
                self._last_input = self._clock() - self.step_pause
                return self._step(burst, None)

    def _step(self, recorded: list[dict[str, Any]], verdict: str | None) -> AgentStep:
        actions = [Action(kind="code", code=str(item["code"])) for item in recorded]
        lines: list[str] = []
        for item in recorded:
            wait = float(item.get("wait_before") or 0.0)
            if wait >= SHORTEST_WAIT:
                lines.append(f"time.sleep({wait:.1f})")
            lines.append(str(item["code"]))
        if verdict is not None and not recorded and self._last_input is not None:
            final_wait = min(self._clock() - self._last_input, LONGEST_FINAL_WAIT)
            if final_wait >= SHORTEST_WAIT:
                lines.append(f"time.sleep({final_wait:.1f})")
        if lines:
            self._entries.append("\n".join(lines))
        response = "\n".join(action.code for action in actions)
        if verdict is not None:
            terminal = TERMINAL_OF[verdict]
            actions.append(Action(kind=terminal))  # type: ignore[arg-type]
            self._entries.append(terminal)
            response = f"{response}\n(the person pressed {verdict.title()})".strip()
        return AgentStep(actions=actions, response=response, thought="a person", performed=True)

    def solution(self) -> list[str]:
        """The last episode as a reference solution (one entry per step, then DONE or FAIL)."""
        return list(self._entries)

    def close(self) -> None:
        """Stop recording if an episode was cut short."""
        if self._recording and self._guest is not None:
            with contextlib.suppress(Exception):  # the desktop may already be gone
                self._guest.stop_input_recording()
            self._recording = False
