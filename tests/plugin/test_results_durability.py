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
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")

SLOW_AGENT = '''
import time
from pathlib import Path
from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep


class SlowAgent:
    """Replays the solution, but a 'slow' task hangs at its third step (after saying so),
    the first time only."""

    def __init__(self, config):
        self.steps = []
        self.slow = False
        self.calls = 0

    def reset(self, task):
        self.steps = list(task.solution)
        self.slow = "slow" in task.instruction
        self.calls = 0

    def act(self, instruction, observation):
        self.calls += 1
        if self.slow and self.calls == 3 and not Path("hanging").exists():
            Path("hanging").write_text("step 3")
            time.sleep(120)
        step = self.steps.pop(0)
        return AgentStep([Action("DONE") if step == "DONE" else Action("code", code=step)])
'''

SLOW_ID = "11111111-0000-0000-0000-00000000000b"


def test_killed_run_keeps_its_steps_and_resumes(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="11111111-0000-0000-0000-00000000000a")
    write_task(
        task_id=SLOW_ID,
        instruction="A slow task: write hello.",
        solution=["# fake: write /home/user/out.txt hel", "# fake: write /home/user/out.txt hello", "DONE"],
    )
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
    folder = pytester.path / "results/run/pyautogui/screenshot/slow_agent_SlowAgent/os" / SLOW_ID
    marker = pytester.path / "hanging"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not marker.exists() and process.poll() is None:
            time.sleep(0.1)
        assert marker.exists(), "the slow task never reached its third step"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    # killed mid-task, while the agent thinks about step 3: steps 1 and 2 are on disk
    lines = [json.loads(line) for line in (folder / "traj.jsonl").read_text().splitlines()]
    assert [line["step_num"] for line in lines] == [1, 2]
    assert all((folder / line["screenshot_file"]).is_file() for line in lines)
    assert not (folder / "result.json").exists()
    done = folder.parent / "11111111-0000-0000-0000-00000000000a" / "result.json"
    before = done.read_bytes()
    assert json.loads(before)["outcome"] == "passed"
    # the rerun skips the finished task and runs only the unfinished one
    pytester.syspathinsert()
    result = pytester.runpytest("tasks", "--agent=slow_agent:SlowAgent", "--skip-done", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*1 deselected*", f"*os/{SLOW_ID} PASSED*"])
    assert done.read_bytes() == before
    assert json.loads((folder / "result.json").read_text())["outcome"] == "passed"


def test_rescore_reproduces_the_original_scores(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="11111111-0000-0000-0000-000000000001")
    write_task(task_id="11111111-0000-0000-0000-000000000002", solution=["DONE"])
    pytester.runpytest("tasks", "--agent=replay")
    result = pytester.runpytest("--rescore", "results/run")
    result.stdout.fnmatch_lines(["re-scored 2 task(s)*", "0 score(s) changed"])
    root = pytester.path / "results/run/pyautogui/screenshot/replay/os"
    scores = {
        folder.name: (
            json.loads((folder / "result.json").read_text())["score"],
            json.loads((folder / "result.rescored.json").read_text())["score"],
        )
        for folder in root.iterdir()
    }
    assert scores == {
        "11111111-0000-0000-0000-000000000001": (1.0, 1.0),
        "11111111-0000-0000-0000-000000000002": (0.0, 0.0),
    }
    folder = root / "11111111-0000-0000-0000-000000000001"
    data = json.loads((folder / "result.json").read_text())
    data["evaluator_inputs"][0]["expected"] = {"expected": "goodbye"}
    (folder / "result.json").write_text(json.dumps(data))
    result = pytester.runpytest("--rescore", "results/run")
    result.stdout.fnmatch_lines(["*rescored 1.00 -> 0.00*", "1 score(s) changed"])
    assert json.loads((folder / "result.rescored.json").read_text())["score"] == 0.0
    assert json.loads((folder / "result.json").read_text())["score"] == 1.0


def _broken_links(page) -> list[str]:  # type: ignore[no-untyped-def]
    """Every link and image source of the page, resolved by the browser, that names no file."""
    urls = page.eval_on_selector_all("a[href], img[src], video[src]", "els => els.map(e => e.href || e.src)")
    broken = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme != "file":
            broken.append(f"not a local file: {url}")
        elif not Path(url2pathname(parts.path)).exists():
            broken.append(url)
    return broken


def _wait_for_images(page) -> list[int]:  # type: ignore[no-untyped-def]
    """Scroll every step screenshot into view (they load lazily), then their natural widths."""
    images = page.locator(".step img")
    for index in range(images.count()):
        image = images.nth(index)
        image.scroll_into_view_if_needed()
        image.evaluate("i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })")
    return images.evaluate_all("imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")


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
        page = browser.new_page(viewport={"width": 1280, "height": 600})
        page.goto(index.as_uri())
        # the index: one row per task, with its outcome
        rows = {
            page.locator("#tasks tbody tr").nth(i).locator("td.tid a").inner_text(): (
                page.locator("#tasks tbody tr").nth(i).get_attribute("data-outcome"),
                page.locator("#tasks tbody tr").nth(i).inner_text(),
            )
            for i in range(page.locator("#tasks tbody tr").count())
        }
        assert set(rows) == {"11111111-0000-0000-0000-000000000001", "11111111-0000-0000-0000-000000000002"}
        assert rows["11111111-0000-0000-0000-000000000001"][0] == "passed"
        assert "passed" in rows["11111111-0000-0000-0000-000000000001"][1]
        assert rows["11111111-0000-0000-0000-000000000002"][0] == "failed"
        assert "failed" in rows["11111111-0000-0000-0000-000000000002"][1]
        assert _broken_links(page) == []
        # a task page, reached by its link: step screenshots load, the metric's reason is there
        for task_id, steps, reason in (
            ("11111111-0000-0000-0000-000000000001", 2, "got 'hello' as expected"),
            ("11111111-0000-0000-0000-000000000002", 1, "got '', expected 'hello'"),
        ):
            page.get_by_role("link", name=task_id).click()
            page.wait_for_load_state("load")
            assert page.url.endswith(f"/os/{task_id}/report.html")
            assert page.locator("h2", has_text="Evaluator").count() == 1
            assert reason in page.locator("table").filter(has_text="exact_match").inner_text()
            # one screenshot before each step and the final screen
            widths = _wait_for_images(page)
            assert len(widths) == steps + 1
            assert all(w > 0 for w in widths), widths
            assert _broken_links(page) == []
            page.get_by_role("link", name="← all tasks").click()
            page.wait_for_load_state("load")
            assert page.url == index.as_uri()
        browser.close()
