"""The live line: with -v, each step of a running task prints its number, action kind and time."""

from __future__ import annotations

import json
import re

import pytest

from pytest_osworld.plugin.terminal import XDIST_STEP_NOTE, action_kind, step_line

pytestmark = pytest.mark.usefixtures("fake_ini")

SLOW_AGENT = """
import time

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep


class Slow:
    '''Thinks for 1.2 s at every step, then plays the task's solution.'''

    def __init__(self, config):
        self.steps = []

    def reset(self, task):
        self.steps = list(task.solution)

    def act(self, instruction, observation):
        time.sleep(1.2)
        step = self.steps.pop(0)
        return AgentStep([Action("DONE") if step == "DONE" else Action("code", code=step)])
"""


def test_each_step_shows_number_kind_and_actions(pytester: pytest.Pytester, write_task) -> None:
    write_task(
        solution=[
            "pyautogui.click(10, 20)\npyautogui.write('hi')",
            "# fake: write /home/user/out.txt hello",
            "DONE",
        ]
    )
    result = pytester.runpytest("tasks", "--agent=replay", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*.json::os/11111111-0000-0000-0000-000000000001 ",
            "    step 1/15 (click+write, *s): pyautogui.click(10, 20) | pyautogui.write('hi')",
            "    step 2/15 (code, *s): # fake: write /home/user/out.txt hello",
            "    step 3/15 (DONE, *s)",
            "*.json::os/11111111-0000-0000-0000-000000000001 PASSED*",
        ]
    )


def test_the_time_is_the_steps_own(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    pytester.makepyfile(slow_agent=SLOW_AGENT)
    pytester.syspathinsert()
    result = pytester.runpytest("tasks", "--agent=slow_agent:Slow", "-v", "--max-steps=5")
    result.assert_outcomes(passed=1)
    lines = [line for line in result.stdout.lines if line.startswith("    step ")]
    assert len(lines) == 2, lines
    # the time shown is the step's own duration as traj.jsonl records it, and each step slept 1.2 s
    (traj,) = (pytester.path / "results").rglob("traj.jsonl")
    recorded = [json.loads(entry)["duration_s"] for entry in traj.read_text().splitlines()]
    assert len(recorded) == len(lines)
    for line, duration in zip(lines, recorded, strict=True):
        match = re.fullmatch(r"    step \d/5 \((code|DONE), (\d+\.\d)s\).*", line)
        assert match, line
        assert abs(float(match.group(2)) - duration) <= 0.051, (line, duration)  # rounded to 0.1 s
        assert duration >= 1.2, line


def test_no_step_lines_without_verbose(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "--agent=replay")
    result.assert_outcomes(passed=1)
    assert not [line for line in result.stdout.lines if line.startswith("    step ")]


def test_under_xdist_the_header_says_where_the_steps_are(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "--agent=replay", "-v", "-n", "2")
    result.assert_outcomes(passed=1)
    assert not [line for line in result.stdout.lines if line.startswith("    step ")]
    # the header names the results folder as configured (relative, in this ini)
    result.stdout.fnmatch_lines([XDIST_STEP_NOTE.format(results="results/run")])


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        ("DONE", "DONE"),
        ("FAIL", "FAIL"),
        ("WAIT", "WAIT"),
        ("import pyautogui\npyautogui.hotkey('ctrl', 's')", "hotkey"),
        ("pyautogui.moveTo(1, 2); pyautogui.click(); pyautogui.click()", "moveTo+click"),
        ("pyautogui.a(); pyautogui.b(); pyautogui.c(); pyautogui.d()", "a+b+c+..."),
        ("import subprocess; subprocess.run(['ls'])", "code"),
        ({"action_type": "TYPING", "text": "hi"}, "TYPING"),
    ],
)
def test_action_kind(action: object, kind: str) -> None:
    assert action_kind(action) == kind


def test_step_line_shows_errors_and_long_times() -> None:
    step = {
        "step_num": 4,
        "actions": [{"action_type": "CLICK", "x": 1, "y": 2}],
        "duration_s": 312.4,
        "action_errors": ["the guest said: no such window"],
    }
    assert step_line(step, 15) == (
        '    step 4/15 (CLICK, 312s): {"action_type": "CLICK", "x": 1, "y": 2}  [the guest said: no such window]'
    )
    unparsable = {"step_num": 2, "actions": [], "duration_s": 3.04, "parse_error": "no code block"}
    assert step_line(unparsable, 15) == "    step 2/15 (no action, 3.0s)  [no code block]"
