"""Per-phase timings end to end: result.json's ``timings`` and the JUnit properties.

A fake provider that spends a known time in every call (restore, screenshot, action,
command, recording) and an agent that thinks for a known time make every phase
measurable, so a phase left untimed shows up twice: its figure stays below the time
spent in it, and the phases no longer add up to the task's total.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.task.timings import PHASES

pytestmark = pytest.mark.usefixtures("fake_ini")

TASK_ID = "11111111-0000-0000-0000-0000000000e1"
FOLDER = Path("results/run/pyautogui/screenshot/slow_env_SlowAgent/os") / TASK_ID

#: Seconds each call of the slow environment takes (see SLOW_ENV).
RESTORE, SHOT, ACTION, COMMAND, RECORD, THINK = 0.12, 0.03, 0.06, 0.05, 0.05, 0.1

SLOW_ENV = f'''
import time
from dataclasses import replace

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep
from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.fake import FakeGuest, FakeProvider


class SlowGuest(FakeGuest):
    def screenshot(self):
        time.sleep({SHOT})
        return super().screenshot()

    def run_python(self, code, timeout=30.0):
        time.sleep({ACTION})
        return super().run_python(code, timeout)

    def execute(self, command, shell=False, timeout=120.0):
        time.sleep({COMMAND})
        return super().execute(command, shell, timeout)

    def start_recording(self):
        time.sleep({RECORD})

    def end_recording(self):
        time.sleep({RECORD})
        return b"not really a video"


class SlowProvider(FakeProvider):
    name = "slowfake"

    def _restore_impl(self, snapshot):
        time.sleep({RESTORE})
        env = super()._restore_impl(snapshot)
        guest = SlowGuest(env.guest.files, env.guest.fail_at_action, env.guest.screen)
        return replace(env, guest=guest)


PROVIDERS.register("slowfake", SlowProvider)


class SlowAgent:
    """Replays the solution, thinking {THINK} s per call."""

    def __init__(self, config):
        self.steps = []

    def reset(self, task):
        self.steps = list(task.solution)

    def act(self, instruction, observation):
        time.sleep({THINK})
        step = self.steps.pop(0)
        if step == "# boom":
            raise RuntimeError("the model API is down")
        return AgentStep([Action("DONE") if step == "DONE" else Action("code", code=step)])
'''

CONFIG = [
    {"type": "execute", "parameters": {"command": ["echo", "setting up"]}},
    {"type": "sleep", "parameters": {"seconds": 0.2}},
]
POSTCONFIG = [
    {"type": "execute", "parameters": {"command": ["echo", "saving"]}},
    {"type": "sleep", "parameters": {"seconds": 0.1}},
]
EVALUATOR = {
    "func": "exact_match",
    "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
    "expected": {"type": "rule", "rules": {"expected": "hello"}},
    "postconfig": POSTCONFIG,
}
SOLUTION = ["# fake: write /home/user/out.txt hel", "# fake: write /home/user/out.txt hello", "DONE"]


@pytest.fixture
def slow_run(pytester: pytest.Pytester, write_task: Any) -> Any:
    """Run one task on the slow environment; give back (pytester result, result.json, JUnit xml)."""
    pytester.makepyfile(slow_env=SLOW_ENV)
    pytester.makeconftest("import slow_env  # registers the slowfake provider\n")

    def run(*args: str, **task: Any) -> tuple[Any, dict[str, Any], ET.Element]:
        task.setdefault("config", CONFIG)
        task.setdefault("evaluator", EVALUATOR)
        task.setdefault("solution", SOLUTION)
        write_task(task_id=TASK_ID, **task)
        outcome = pytester.runpytest(
            "tasks",
            "--agent=slow_env:SlowAgent",
            "--provider=slowfake",
            "--junitxml=junit.xml",
            "-p",
            "no:cacheprovider",
            *args,
        )
        data = json.loads((pytester.path / FOLDER / "result.json").read_text())
        return outcome, data, ET.parse(pytester.path / "junit.xml").getroot()

    return run


def _properties(junit: ET.Element) -> dict[str, str]:
    (case,) = junit.iter("testcase")
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def _check_contract(data: dict[str, Any], junit: ET.Element) -> dict[str, float]:
    """What every result with timings must satisfy; returns the phases."""
    timings = data["timings"]
    phases = timings["phases"]
    assert list(phases) == list(PHASES)
    assert all(isinstance(v, float) and v >= 0.0 for v in phases.values()), phases
    total = timings["total"]
    assert total == data["duration_s"] and total > 0.0
    assert sum(phases.values()) == pytest.approx(total, rel=0.05), (phases, total)
    expected_overhead = total - phases["agent"] - phases["setup_sleep"] - phases["settle"]
    assert timings["fixed_overhead"] == pytest.approx(expected_overhead, abs=0.003)
    props = _properties(junit)
    for name in PHASES:
        assert float(props[f"time_{name}"]) == pytest.approx(phases[name], abs=0.0011), name
    assert float(props["fixed_overhead"]) == pytest.approx(timings["fixed_overhead"], abs=0.0011)
    return dict(phases)


def test_every_phase_is_timed_and_they_add_up(slow_run: Any) -> None:
    outcome, data, junit = slow_run("--record")
    outcome.assert_outcomes(passed=1)
    phases = _check_contract(data, junit)
    timings = data["timings"]
    # Each phase holds at least the time the slow environment spent in it.
    floor = {
        "restore": RESTORE,
        "setup": COMMAND,  # the execute step (and the asset check)
        "setup_sleep": 0.2 + 0.1,  # the config's and the postconfig's sleep steps
        "observe": 4 * SHOT,  # before step 1 and after each of the 3 steps
        "agent": 3 * THINK,
        "actions": 2 * ACTION,  # DONE runs nothing
        "postconfig": COMMAND,
        "evaluation": COMMAND,  # vm_command_line
        "record": 2 * RECORD + SHOT,  # the recording, and step_0.png's screenshot
    }
    for name, seconds in floor.items():
        assert phases[name] >= seconds * 0.95, (name, phases[name], seconds)
    # ...and none swallowed another's time.
    assert phases["setup_sleep"] < 0.3 + 0.15
    assert phases["agent"] < 3 * THINK + 0.15
    assert timings["fixed_overhead"] >= RESTORE + 4 * SHOT + 2 * ACTION + 3 * COMMAND
    steps = [(s["index"], s["type"], s["phase"]) for s in timings["setup_steps"]]
    assert steps == [
        (1, "execute", "setup"),
        (2, "sleep", "setup"),
        (1, "execute", "postconfig"),
        (2, "sleep", "postconfig"),
    ]
    assert [s["index"] for s in timings["step_times"]] == [1, 2, 3]
    for step in timings["step_times"]:
        assert step["agent"] >= THINK * 0.95 and step["observe"] >= SHOT * 0.95
    assert [s["actions"] >= ACTION * 0.95 for s in timings["step_times"]] == [True, True, False]
    assert [g["name"] for g in timings["getters"]] == ["vm_command_line", "rule"]
    assert [m["name"] for m in timings["metrics"]] == ["exact_match"]
    assert timings["getters"][0]["seconds"] >= COMMAND * 0.95


def test_a_failed_task_has_timings_too(slow_run: Any) -> None:
    outcome, data, junit = slow_run(solution=["# fake: write /home/user/out.txt bye", "DONE"])
    outcome.assert_outcomes(failed=1)
    assert data["outcome"] == "failed"
    phases = _check_contract(data, junit)
    assert phases["evaluation"] >= COMMAND * 0.95 and phases["record"] >= SHOT * 0.95


def test_an_agent_error_keeps_the_phases_that_ran(slow_run: Any) -> None:
    outcome, data, junit = slow_run(solution=["# fake: write /home/user/out.txt hel", "# boom", "DONE"])
    outcome.assert_outcomes(errors=1)
    assert data["outcome"] == "error" and "model API is down" in data["reason"]
    phases = _check_contract(data, junit)
    assert phases["agent"] >= 2 * THINK * 0.95 and phases["actions"] >= ACTION * 0.95
    assert phases["postconfig"] == phases["evaluation"] == 0.0


def test_a_broken_setup_step_is_timed_until_it_broke(slow_run: Any) -> None:
    config = [*CONFIG, {"type": "open", "parameters": {"path": "/home/user/missing.docx"}}]
    outcome, data, junit = slow_run(config=config)
    outcome.assert_outcomes(errors=1)
    phases = _check_contract(data, junit)
    assert phases["restore"] >= RESTORE * 0.95 and phases["setup_sleep"] >= 0.2 * 0.95
    assert phases["agent"] == phases["observe"] == 0.0
    assert [s["type"] for s in data["timings"]["setup_steps"]] == ["execute", "sleep", "open"]


def test_a_skip_after_the_restore_has_timings(slow_run: Any) -> None:
    config = [*CONFIG, {"type": "googledrive", "parameters": {"settings_file": "x", "operation": []}}]
    outcome, data, junit = slow_run(config=config)
    outcome.assert_outcomes(skipped=1)
    assert data["outcome"] == "skipped"
    phases = _check_contract(data, junit)
    assert phases["restore"] >= RESTORE * 0.95
