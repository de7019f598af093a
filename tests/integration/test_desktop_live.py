"""The live view in a real browser: noVNC shows the desktop, the secret guards it, view-only
holds until the person takes over; ``--pause-on-fail`` and ``--agent=human`` end to end.

A pytest run goes in a subprocess (its terminal is read and typed into); Playwright drives
Debian's Chromium as the person. The desktop's own evaluator is the judge of whether input
reached the desktop: typing the fix of ``os/ef9ea0c2`` (file modes) makes it score 1.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.integration.live_harness import (
    CHROMIUM,
    LINK,
    ROOT,
    Terminal,
    canvas_pixels,
    launch_browser,
    open_desktop,
    type_in_desktop,
    wait_connected,
)

pytestmark = [
    pytest.mark.skipif(shutil.which("x11vnc") is None, reason="x11vnc is not installed"),
    pytest.mark.skipif(not Path("/usr/share/novnc/vnc.html").exists(), reason="noVNC is not installed"),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed"),
]

TASK = ROOT / "tasks" / "os" / "ef9ea0c2-4f77-4017-9a2c-592f165ae51f.json"
FIX = "cd ~/project/deploy && chmod 700 *.sh && chmod 600 secrets.env"


def secret_free(where: Path, secret: str) -> list[str]:
    """Files at or under ``where`` that contain ``secret`` (there must be none)."""
    files = [where] if where.is_file() else [path for path in where.rglob("*") if path.is_file()]
    assert files, f"nothing to look into at {where}"
    return [str(path) for path in files if secret.encode() in path.read_bytes()]


def test_pause_on_fail_live_view_take_over_and_evaluate_again(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    websockets_client = pytest.importorskip("websockets.sync.client")
    results = tmp_path / "results"
    run = Terminal(
        [
            str(TASK),
            "--agent=noop",
            "--pause-on-fail",
            f"--results-dir={results}",
            f"--junitxml={tmp_path / 'junit.xml'}",
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=tmp_path,
    )
    try:
        link = run.wait_for(LINK.pattern, timeout=240)
        url = link.group(2)
        secret = url.split("?s=")[1]
        base = url.split("?")[0]
        prompt = run.wait_for(r"\[Enter\] go on", timeout=240)
        assert "did not pass; its desktop stays" in run.text
        assert "exact_match" in run.text[link.end() :]  # the evaluator's reason is shown
        # the report lists the view by its address; the secret stays in the terminal
        assert json.loads((results / "live.json").read_text()) == {"main": base}

        with sync_api.sync_playwright() as pw:
            browser = launch_browser(pw)
            try:
                anonymous = browser.new_page()
                for wrong in (base, f"{base}?s=wrong-{secret}", f"{base}novnc/vnc.html"):
                    answer = anonymous.goto(wrong)
                    assert answer is not None and answer.status == 403, wrong
                    assert "canvas" not in anonymous.content()
                with pytest.raises(Exception, match="403"):
                    websockets_client.connect(base.replace("http", "ws") + "vnc").close()

                page = browser.new_page()
                open_desktop(page, url)
                width, height, colours = canvas_pixels(page)
                assert (width, height) == (1920, 1080) and colours > 5, "noVNC shows no desktop"

                # View-only is the VNC server's: a client that sends input anyway (noVNC with
                # its own view_only off) does not reach the desktop.
                sneaky = browser.new_page()
                sneaky.goto(url)  # the cookie, then noVNC itself with input on
                sneaky.goto(f"{base}novnc/vnc.html#autoconnect=true&path=vnc&view_only=false&resize=scale")
                sneaky.locator("#noVNC_container canvas").wait_for(state="visible", timeout=30_000)
                time.sleep(2)
                canvas = sneaky.locator("#noVNC_container canvas")
                box = canvas.bounding_box()
                sneaky.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                sneaky.keyboard.type(FIX, delay=30)
                sneaky.keyboard.press("Enter")
                time.sleep(2)
                mark = len(run.text)
                run.type("e")
                again = run.wait_for(r"evaluated again: score (\S+)", timeout=120, after=mark)
                assert float(again.group(1)) == 0.0, "input reached the desktop in view-only mode"

                page.get_by_role("button", name="Take over").click()
                page.get_by_text("you have control").wait_for(timeout=30_000)
                wait_connected(page)
                time.sleep(1)
                type_in_desktop(page, FIX)
                time.sleep(2)
                mark = len(run.text)
                run.type("e")
                again = run.wait_for(r"evaluated again: score (\S+)", timeout=120, after=mark)
                assert float(again.group(1)) == 1.0, run.text[-2000:]
            finally:
                browser.close()
        run.type("")
        assert run.finish(timeout=120) == 1  # the outcome stays the agent's: failed
        assert prompt.start() > link.end()
    finally:
        run.kill()
    result = json.loads(next(results.rglob("result.json")).read_text())
    assert result["outcome"] == "failed" and result["score"] == 0.0
    assert (
        not (results / "live.json").exists() and "Watching live" not in (results / "index.html").read_text()
    )
    assert result["provenance"].get("person_took_over") is None  # only after the episode
    assert secret_free(results, secret) == [] and secret_free(tmp_path / "junit.xml", secret) == []


def test_agent_human_records_a_solution_that_replays(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    solutions = tmp_path / "solutions.json"
    results = tmp_path / "human"
    run = Terminal(
        [
            str(TASK),
            "--agent=human",
            f"--record-solutions={solutions}",
            f"--results-dir={results}",
            "--agent-arg",
            "step_pause=1.5",
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=tmp_path,
    )
    try:
        url = run.wait_for(LINK.pattern, timeout=240).group(2)
        with sync_api.sync_playwright() as pw:
            browser = launch_browser(pw)
            try:
                page = browser.new_page()
                open_desktop(page, url)
                page.get_by_role("button", name="Done").wait_for(timeout=60_000)
                page.get_by_text("you have control").wait_for(timeout=30_000)
                time.sleep(1)
                type_in_desktop(page, FIX)
                time.sleep(3)
                page.get_by_role("button", name="Done").click()
            finally:
                browser.close()
        assert run.finish(timeout=180) == 0, run.text[-3000:]
    finally:
        run.kill()
    result = json.loads(next(results.rglob("result.json")).read_text())
    assert result["outcome"] == "passed" and result["end_reason"] == "done"
    steps = [json.loads(line) for line in next(results.rglob("traj.jsonl")).read_text().splitlines()]
    codes = "\n".join(str(a) for step in steps for a in step.get("actions", []))
    assert "pyautogui.click(" in codes and "chmod 600 secrets.env" in codes and "DONE" in codes
    written = json.loads(solutions.read_text())
    key = f"os/{TASK.name}"
    assert list(written) == [key] and written[key][-1] == "DONE"

    replay = Terminal(
        [
            str(TASK),
            "--agent=replay",
            f"--solutions={solutions}",
            f"--results-dir={tmp_path / 'replay'}",
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=tmp_path,
    )
    try:
        assert replay.finish(timeout=240) == 0, replay.text[-3000:]
    finally:
        replay.kill()


def test_live_prints_one_link_per_xdist_worker(tmp_path: Path) -> None:
    results = tmp_path / "results"
    run = Terminal(
        [
            str(ROOT / "tasks" / "os"),
            "--agent=replay",
            "--live",
            "-n",
            "2",
            f"--results-dir={results}",
            f"--junitxml={tmp_path / 'junit.xml'}",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path,
    )
    try:
        assert run.finish(timeout=300) == 0, run.text[-3000:]
    finally:
        run.kill()
    links = dict(LINK.findall(run.text))
    assert sorted(links) == ["gw0", "gw1"], run.text[-3000:]
    assert len(set(links.values())) == 2 and all(run.text.count(url) == 1 for url in links.values())
    for url in links.values():
        secret = url.split("?s=")[1]
        assert secret_free(results, secret) == [] and secret_free(tmp_path / "junit.xml", secret) == []
    assert not (results / "live.json").exists()
