"""Results people can look at and rely on: the report in a real browser, a killed run,
re-scoring that reproduces the original scores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")

SLOW_AGENT = '''
import time
from pytest_osworld.actions import Action
from pytest_osworld.agent import AgentStep


class SlowAgent:
    """Replays the solution, but the second step of a 'slow' task hangs."""

    def __init__(self, config):
        self.steps = []
        self.slow = False

    def reset(self, task):
        self.steps = list(task.solution)
        self.slow = "slow" in task.instruction

    def act(self, instruction, observation):
        step = self.steps.pop(0)
        if self.slow and not self.steps:
            time.sleep(120)
        return AgentStep([Action("DONE") if step == "DONE" else Action("code", code=step)])
'''


def test_killed_run_keeps_its_steps_and_resumes(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="11111111-0000-0000-0000-00000000000a")
    write_task(task_id="11111111-0000-0000-0000-00000000000b", instruction="A slow task: write hello.")
    pytester.makepyfile(slow_agent=SLOW_AGENT)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tasks",
        "--agent=slow_agent:SlowAgent",
        "-p",
        "no:cacheprovider",
    ]
    env = {**os.environ, "PYTHONPATH": str(pytester.path)}
    process = subprocess.Popen(
        command, cwd=pytester.path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    traj = (
        pytester.path
        / "results/run/pyautogui/screenshot/slow_agent_SlowAgent/os/11111111-0000-0000-0000-00000000000b/traj.jsonl"
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (traj.is_file() and traj.read_text().strip()):
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    lines = [json.loads(line) for line in traj.read_text().splitlines()]
    assert lines[0]["step_num"] == 1
    assert not (traj.parent / "result.json").exists()
    done = traj.parent.parent / "11111111-0000-0000-0000-00000000000a" / "result.json"
    assert json.loads(done.read_text())["outcome"] == "passed"
    result = pytester.runpytest("tasks", "--agent=replay", "--skip-done", "--results-dir=results/run")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 deselected*"])


def test_rescore_reproduces_the_original_scores(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="11111111-0000-0000-0000-000000000001")
    write_task(task_id="11111111-0000-0000-0000-000000000002", solution=["DONE"])
    pytester.runpytest("tasks", "--agent=replay")
    result = pytester.runpytest("--rescore", "results/run")
    result.stdout.fnmatch_lines(["re-scored 2 task(s)*", "0 score(s) changed"])
    folder = pytester.path / "results/run/pyautogui/screenshot/replay/os/11111111-0000-0000-0000-000000000001"
    data = json.loads((folder / "result.json").read_text())
    data["evaluator_inputs"][0]["expected"] = {"expected": "goodbye"}
    (folder / "result.json").write_text(json.dumps(data))
    result = pytester.runpytest("--rescore", "results/run")
    result.stdout.fnmatch_lines(["*rescored 1.00 -> 0.00*", "1 score(s) changed"])


def test_report_in_a_real_browser(pytester: pytest.Pytester, write_task) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    write_task(task_id="11111111-0000-0000-0000-000000000001")
    write_task(task_id="11111111-0000-0000-0000-000000000002", solution=["DONE"])
    pytester.runpytest("tasks", "--agent=replay")
    index = pytester.path / "results/run/index.html"
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page()
        page.goto(index.as_uri())
        rows = page.locator("table tbody tr").all_inner_texts()
        task_rows = [r for r in rows if "11111111-0000-0000-0000-00000000000" in r]
        assert len(task_rows) == 2
        assert any("passed" in r for r in task_rows) and any("failed" in r for r in task_rows)
        page.get_by_role("link", name="11111111-0000-0000-0000-000000000002").first.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("report.html")
        assert "got '', expected 'hello'" in page.content()
        images = page.locator("img")
        assert images.count() >= 1
        widths = images.evaluate_all("imgs => imgs.map(i => i.complete && i.naturalWidth)")
        assert all(w and w > 0 for w in widths)
        browser.close()
