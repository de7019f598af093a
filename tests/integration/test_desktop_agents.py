"""Agents on the real local desktop: replay and noop through the plugin, random for a whole
episode, each observation type, and a Set-of-Marks tag that clicks the button it marks."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from pytest_osworld.agent.contract import AgentConfig
from pytest_osworld.agent.observe import filter_nodes, resolve_tags, set_of_marks
from pytest_osworld.agents.random_agent import RandomAgent
from pytest_osworld.episode.loop import Budget, EndReason, observe, run_episode
from pytest_osworld.task.model import load_task

pytestmark = pytest.mark.desktop

TASK = {
    "id": "0b4e6a52-5f0e-4d8c-9d55-5a1c6f0e2b11",
    "snapshot": "os",
    "instruction": "Make a folder called invoices in my home folder.",
    "config": [],
    "related_apps": ["os"],
    "evaluator": {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": "test -d ~/invoices && echo yes", "shell": True},
        "expected": {"type": "rule", "rules": {"expected": "yes\n"}},
    },
    "solution": ["import os\nos.makedirs(os.path.expanduser('~/invoices'))", "DONE"],
}

PAGE = """<!doctype html><html><head><title>Form</title></head><body>
<button style="position:absolute;left:600px;top:400px;width:300px;height:120px;font-size:40px"
 onclick="document.title='pressed';document.getElementById('out').textContent='was pressed'">Press me</button>
<p id="out" style="position:absolute;left:600px;top:600px;font-size:30px">not yet</p></body></html>"""


def _write_task(root: Path) -> Path:
    path = root / "tasks" / "os" / f"{TASK['id']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(TASK))
    return path


@pytest.mark.parametrize(("agent", "outcome"), [("replay", {"passed": 1}), ("noop", {"failed": 1})])
def test_replay_passes_and_noop_fails_on_the_local_desktop(pytester: pytest.Pytester, agent, outcome) -> None:
    _write_task(pytester.path)
    result = pytester.runpytest_subprocess(
        "tasks", f"--agent={agent}", "--results-dir=results", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(**outcome)
    result.stdout.fnmatch_lines(["*provider=local*"])


def test_random_agent_runs_15_steps_without_breaking_the_desktop(desktop, tmp_path: Path) -> None:
    task = load_task(_write_task(tmp_path))
    env = desktop.restore("os")
    agent = RandomAgent(AgentConfig(name="random", args={"seed": "11"}))
    episode = run_episode(task, env.guest, agent, Budget(max_steps=15))
    assert episode.end_reason is EndReason.MAX_STEPS
    assert len(episode.steps) == 15
    assert all(step.screenshot for step in episode.steps)
    assert env.guest.health()["ready"] is True


@pytest.mark.parametrize(
    ("observation_type", "screenshot", "tree"),
    [
        ("screenshot", True, False),
        ("a11y_tree", True, True),
        ("screenshot_a11y_tree", True, True),
        ("som", True, True),
    ],
)
def test_observation_types(desktop, observation_type, screenshot, tree) -> None:
    env = desktop.restore("os")
    observation = observe(env.guest, "look", observation_type)
    assert (
        observation.screenshot is not None and observation.screenshot[:8] == b"\x89PNG\r\n\x1a\n"
    ) is screenshot
    assert (
        observation.accessibility_tree is not None and "<desktop-frame" in observation.accessibility_tree
    ) is tree


def _wait(probe, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def test_som_tag_clicks_the_button_it_marks(desktop) -> None:
    env = desktop.restore("chrome")
    guest = env.guest
    guest.upload_file("/home/user/form.html", PAGE.encode())
    guest.launch(["google-chrome", "--new-window", "file:///home/user/form.html"])

    def button_on_screen() -> bool:
        return any(n.name == "Press me" for n in filter_nodes(guest.accessibility_tree()))

    _wait(button_on_screen, 90, "the page's button in the accessibility tree")
    marks = set_of_marks(guest.screenshot(), guest.accessibility_tree())
    index = next(i for i, n in enumerate(marks.nodes, start=1) if n.name == "Press me")
    code = resolve_tags(f"pyautogui.click(*tag_{index})", marks)
    result = guest.run_python(code)
    assert result.returncode == 0, result.error
    _wait(lambda: "was pressed" in guest.accessibility_tree(), 30, "the page to say it was pressed")


def test_recording_plays_for_the_length_of_the_run(pytester: pytest.Pytester) -> None:
    task = dict(TASK, solution=["import time\ntime.sleep(2)", "import time\ntime.sleep(2)", "DONE"])
    path = pytester.path / "tasks" / "os" / f"{TASK['id']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(task))
    result = pytester.runpytest_subprocess(
        "tasks", "--agent=replay", "--record", "--results-dir=results", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(failed=1)  # the folder is never made: the evaluator says so
    video = next((pytester.path / "results").rglob("recording.mp4"))
    probe = subprocess.run(
        [
            "ffprobe",
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=codec_type:format=duration",
            "-of",
            "json",
            str(video),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    info = json.loads(probe.stdout)
    assert info["streams"][0]["codec_type"] == "video"
    # The video spans the episode (every step, as the trajectory timed them; ffmpeg may start
    # a moment late) and nothing beyond the task (which also counts the evaluation).
    recorded = json.loads((video.parent / "result.json").read_text())
    steps = [json.loads(line) for line in (video.parent / "traj.jsonl").read_text().splitlines()]
    stepping = sum(step["duration_s"] for step in steps)
    length = float(info["format"]["duration"])
    assert stepping >= 4.0, steps  # the two 2 s sleeps
    assert stepping - 0.5 <= length <= recorded["duration_s"] + 1.0, (
        length,
        stepping,
        recorded["duration_s"],
    )
    # Every frame decodes.
    decode = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(video), "-f", "null", "-"], capture_output=True, text=True
    )
    assert decode.returncode == 0 and decode.stderr == "", decode.stderr
    # The result names the image the desktop came from.
    assert recorded["provenance"]["image"].startswith("home template "), recorded["provenance"]
