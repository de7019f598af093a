"""The comparison page of two results folders, and the report's command line."""

from __future__ import annotations

import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from report_tree import record_task

from pytest_osworld.report.compare import COMPARISON_NAME, ComparisonError, write_comparison
from pytest_osworld.report.html import write_report

HOSTILE = '"><img src=x onerror=alert(1)>'


class Rows(HTMLParser):
    """The comparison table's rows (change, cells' text) and every link of the page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: dict[str, tuple[str, list[str]]] = {}
        self.links: list[str] = []
        self._row: tuple[str, list[str]] | None = None
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if attr.get("href"):
            self.links.append(str(attr["href"]))
        if tag == "tr" and attr.get("data-change"):
            self._row = (str(attr["data-change"]), [])
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row[1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows[self._row[1][2]] = self._row  # keyed by task id
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "agent-a", tmp_path / "agent-b"
    record_task(a, "os", "fixed", outcome="failed", score=0.0)
    record_task(b, "os", "fixed")
    record_task(a, "os", "broken")
    record_task(b, "os", "broken", outcome="failed", score=0.0)
    record_task(a, "libreoffice_calc", "partial", outcome="failed", score=0.25)
    record_task(b, "libreoffice_calc", "partial", outcome="failed", score=0.75)
    record_task(a, "libreoffice_calc", "same")
    record_task(b, "libreoffice_calc", "same")
    record_task(a, "chrome", "gone")
    record_task(b, "chrome", HOSTILE, outcome="failed", score=0.0)
    return a, b


def test_changes_per_task_and_per_domain(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path)
    write_report(a)  # A has task pages, B has not: links go to B's result.json
    page = write_comparison(a, b, tmp_path / "out")
    assert page == tmp_path / "out" / COMPARISON_NAME
    html = page.read_text()
    parsed = Rows(html)
    kinds = {task: kind for task, (kind, _) in parsed.rows.items()}
    assert kinds == {
        "fixed": "fixed",
        "broken": "broken",
        "partial": "score_up",
        "same": "same",
        "gone": "only_a",
        HOSTILE: "only_b",
    }
    cells = parsed.rows["partial"][1]
    assert cells[0] == "score up" and cells[4] == "0.25" and cells[6] == "0.75" and cells[7] == "+0.50"
    assert parsed.rows["fixed"][1][3:8] == ["failed", "0.00", "passed", "1.00", "+1.00"]
    # the table lists changes first: fixed, broken, score up, ..., unchanged last
    assert [kind for kind, _ in parsed.rows.values()] == [
        "fixed",
        "broken",
        "score_up",
        "only_a",
        "only_b",
        "same",
    ]
    # per domain: os 1/2 -> 1/2 (+0.0), calc 1/2 -> 1/2, chrome 1/1 -> 0/1 (-100.0)
    assert '50.0% (1/2)</td><td class="n">50.0% (1/2)</td><td class="n">+0.0 pts' in html
    assert '100.0% (1/1)</td><td class="n">0.0% (0/1)</td><td class="n delta-down">-100.0 pts' in html
    # overall 3/5 -> 2/5
    assert '<div class="v">-20.0 pts</div>' in html
    assert "<img src=x" not in html
    for link in parsed.links:
        assert (page.parent / unquote(link)).resolve().is_file(), link
    assert any(link.endswith("fixed/report.html") for link in parsed.links)
    assert any(link.endswith("fixed/result.json") for link in parsed.links)


def test_comparison_charts_pair_the_two_sides(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path)
    html = write_comparison(a, b, tmp_path / "cmp.html").read_text()
    assert 'id="chart-cmp-domain"' in html and 'id="chart-cmp-category"' in html
    assert "chrome (agent-a): 100.0% passed (1 of 1)" in html
    assert "chrome (agent-b): 0.0% passed (0 of 1)" in html


def test_errors_for_missing_or_empty_folders(tmp_path: Path) -> None:
    a, _ = two_runs(tmp_path)
    with pytest.raises(ComparisonError, match="is not a results folder"):
        write_comparison(a, tmp_path / "nope", tmp_path / "x.html")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ComparisonError, match="holds no task results"):
        write_comparison(tmp_path / "empty", a, tmp_path / "x.html")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_osworld.report", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_command_line(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path)
    out = tmp_path / "reports" / "a-vs-b.html"
    done = run_cli("compare", str(a), str(b), "--out", str(out), "--label-a", "baseline", "--label-b", "new")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    assert "<h1>baseline vs new</h1>" in out.read_text()
    built = run_cli("build", str(a), "--title", "Run A")
    assert built.returncode == 0 and (a / "index.html").is_file()
    assert "<h1>Run A</h1>" in (a / "index.html").read_text()
    missing = run_cli("compare", str(a), str(tmp_path / "missing"))
    assert missing.returncode == 2 and "is not a results folder" in missing.stderr
    assert run_cli("build", str(tmp_path / "missing")).returncode == 2
