"""Per-phase timings of one task on the real local desktop, through the plugin.

Every phase runs for real here (restore, a setup command and a sleep step, screenshots,
actions, a postconfig step, a getter and a metric, the recording), so each must be timed
above zero and the phases must add up to the task's duration.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pytest_osworld.episode.settle import QUIET_SECONDS
from pytest_osworld.task.timings import PHASES

pytestmark = pytest.mark.desktop

TASK = {
    "id": "6a1d0c3e-7f55-4b2e-9a61-0d3c5e9b7a21",
    "snapshot": "os",
    "instruction": "Make a folder called receipts in my home folder.",
    "config": [
        {"type": "execute", "parameters": {"command": ["mkdir", "-p", "/home/user/Documents"]}},
        {"type": "sleep", "parameters": {"seconds": 0.5}},
    ],
    "related_apps": ["os"],
    "evaluator": {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": "test -d ~/receipts && echo yes", "shell": True},
        "expected": {"type": "rule", "rules": {"expected": "yes\n"}},
        "postconfig": [{"type": "execute", "parameters": {"command": ["sync"]}}],
    },
    "solution": [
        "import os\nos.makedirs(os.path.expanduser('~/receipts'))",
        "pyautogui.moveTo(300, 300)",
        "DONE",
    ],
}


def test_phases_of_a_real_task_add_up_to_its_duration(pytester: pytest.Pytester) -> None:
    path = pytester.path / "tasks" / "os" / f"{TASK['id']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(TASK))
    result = pytester.runpytest_subprocess(
        "tasks",
        "--agent=replay",
        "--record",
        "--results-dir=results",
        "--junitxml=junit.xml",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=1)
    data = json.loads(next((pytester.path / "results").rglob("result.json")).read_text())
    timings = data["timings"]
    phases = timings["phases"]
    assert list(phases) == list(PHASES)
    assert timings["total"] == data["duration_s"]
    assert sum(phases.values()) == pytest.approx(timings["total"], rel=0.05), phases
    for name in PHASES:
        # replay thinks in microseconds; sync is quick; no --budgets, no budget replays
        if name not in ("agent", "postconfig", "budgets"):
            assert phases[name] > 0.0, (name, phases)
    assert phases["budgets"] == 0.0
    assert phases["setup_sleep"] >= 0.5
    assert timings["fixed_overhead"] == pytest.approx(
        timings["total"] - phases["agent"] - phases["setup_sleep"] - phases["settle"], abs=0.003
    )
    # The setup's execute step may change the screen: the desktop settled (a quiet screen for
    # QUIET_SECONDS at least) before step 1.
    assert timings["settle"]["timed_out"] is False and timings["settle"]["seconds"] >= QUIET_SECONDS
    assert [(s["type"], s["phase"]) for s in timings["setup_steps"]] == [
        ("execute", "setup"),
        ("sleep", "setup"),
        ("execute", "postconfig"),
    ]
    assert len(timings["step_times"]) == 3
    assert [g["name"] for g in timings["getters"]] == ["vm_command_line", "rule"]
    (case,) = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    for name in PHASES:
        assert float(props[f"time_{name}"]) == pytest.approx(phases[name], abs=0.0011)
    assert float(props["fixed_overhead"]) == pytest.approx(timings["fixed_overhead"], abs=0.0011)
