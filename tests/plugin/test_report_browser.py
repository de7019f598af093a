"""The report's pages in a real Chromium, from disk: charts drawn, tables sort, links open,
no console error and no request for anything but a local file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.report.compare import write_comparison

pytestmark = pytest.mark.usefixtures("fake_ini")

PASS_ID = "22222222-0000-0000-0000-000000000001"
FAIL_ID = "22222222-0000-0000-0000-000000000002"
HOSTILE_INSTRUCTION = "<script>alert(1)</script> write hello"


class Watched:
    """A page whose requests and console errors are recorded; only file:// is let through."""

    def __init__(self, browser: Any) -> None:
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 800})
        self.page.route("**/*", self._route)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: self.errors.append(f"dialog: {d.message}"))

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        if url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    def external(self) -> list[str]:
        return [url for url in self.requests if not url.startswith("file://")]


def chart_sizes(page: Any) -> dict[str, tuple[float, float]]:
    """Each chart's id and its drawn size; every chart must have an SVG <title>."""
    found = page.eval_on_selector_all(
        "figure.chart",
        """figs => figs.map(f => {
            const svg = f.querySelector('svg'); const box = svg.getBoundingClientRect();
            return [f.id, box.width, box.height, svg.querySelector(':scope > title') ? 1 : 0];
        })""",
    )
    assert all(has_title for *_, has_title in found), found
    return {key: (width, height) for key, width, height, _ in found}


def column(page: Any, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(
        f"{table} tbody tr", f"rows => rows.map(r => r.cells[{index}].getAttribute('data-v'))"
    )


def test_report_and_comparison_in_chromium(pytester: pytest.Pytester, write_task) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    write_task(task_id=PASS_ID, instruction=HOSTILE_INSTRUCTION)
    write_task(task_id=FAIL_ID, solution=["DONE"])
    pytester.runpytest("tasks", "--agent=replay").assert_outcomes(passed=1, failed=1)
    pytester.runpytest("tasks", "--agent=noop", "--results-dir=results/noop").assert_outcomes(failed=2)
    index = pytester.path / "results/run/index.html"
    comparison = write_comparison(
        pytester.path / "results/run", pytester.path / "results/noop", pytester.path / "cmp"
    )
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        watched = Watched(browser)
        page = watched.page
        page.goto(index.as_uri())
        sizes = chart_sizes(page)
        assert {"chart-by-category", "chart-by-domain", "chart-scores", "chart-steps"} <= set(sizes)
        assert all(w > 100 and h > 30 for w, h in sizes.values()), sizes
        # the os domain: 1 passed of 2, so a bar half as long as the axis
        bar = page.locator("#chart-by-domain rect.rate-bar").first
        assert bar.get_attribute("data-rate") == "0.500000"
        assert "50.0% passed (1 of 2)" in bar.locator("title").text_content()
        # sorting by score: ascending, then descending
        heading = page.locator("#tasks thead th", has_text="score")
        heading.click()
        assert column(page, "#tasks", 3) == ["0.0", "1.0"]
        heading.click()
        assert column(page, "#tasks", 3) == ["1.0", "0.0"]
        # a task page through its link: the hostile instruction is text, charts (if any) drawn
        page.get_by_role("link", name=PASS_ID).click()
        page.wait_for_load_state("load")
        assert page.url.endswith(f"/os/{PASS_ID}/report.html")
        assert page.locator(".instruction").inner_text() == HOSTILE_INSTRUCTION
        assert page.locator("h2", has_text="Evaluator").count() == 1
        assert all(w > 0 and h > 0 for w, h in chart_sizes(page).values())
        # the comparison page: one task went from pass to fail, the os rate from 50% to 0%
        page.goto(comparison.as_uri())
        assert chart_sizes(page).keys() == {"chart-cmp-category", "chart-cmp-domain"}
        assert all(w > 100 and h > 30 for w, h in chart_sizes(page).values())
        rows = page.locator("#changes tbody tr")
        assert rows.count() == 2
        assert rows.first.get_attribute("data-change") == "broken"
        assert "-50.0 pts" in page.locator("table.groups").last.inner_text()
        page.locator("#changes thead th", has_text="task").click()
        assert page.locator("#changes thead th", has_text="task").get_attribute("data-dir") == "asc"
        rows.first.locator("a").first.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/report.html") and "/results/run/" in page.url
        browser.close()
    assert watched.errors == []
    assert watched.external() == []
    assert any(url.endswith(".png") for url in watched.requests)  # screenshots were loaded, from disk
