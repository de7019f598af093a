"""The static HTML report: links resolve, hostile text is escaped, counts are right."""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from report_tree import metric, record_task, write_task_file

from pytest_osworld.report.html import write_report

HOSTILE = '<script>alert("x")</script>'


class Page(HTMLParser):
    """Collects links, images, scripts, table rows and the text of a page."""

    def __init__(self, path: Path) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.scripts: list[str] = []
        self.rows: list[dict[str, str | None]] = []
        self.videos: list[str] = []
        self.text: list[str] = []
        self._in_script = False
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        for key in ("href", "src"):
            if attr.get(key):
                self.links.append(str(attr[key]))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")
        if tag == "tr" and "data-outcome" in attr:
            self.rows.append(attr)
        if tag == "video":
            self.videos.append(str(attr.get("src")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data
        else:
            self.text.append(data)

    @property
    def all_text(self) -> str:
        return " ".join(self.text)


def assert_links_resolve(page_path: Path, page: Page) -> None:
    for link in page.links:
        parts = urlsplit(link)
        assert not parts.scheme and not parts.netloc, f"external link {link}"
        target = (page_path.parent / unquote(parts.path)).resolve()
        assert target.exists(), f"{page_path.name}: broken link {link}"


def build_tree(root: Path, tasks_dir: Path) -> dict[str, Path]:
    os_file = write_task_file(
        tasks_dir, "os-1", "os", "Turn on the Wi-Fi & <b>stay</b> online", {"func": "exact_match"}
    )
    calc_file = write_task_file(
        tasks_dir, HOSTILE, "libreoffice_calc", "Sum the column", {"func": "compare_table"}
    )
    folders = {
        "passed": record_task(root, "os", "os-1", task_file=os_file, recording=True),
        "hostile": record_task(
            root,
            "libreoffice_calc",
            HOSTILE,
            outcome="failed",
            score=0.0,
            reason=f"compare_table: cell B3 {HOSTILE}",
            metrics=[metric("compare_table", 0.0, f"B3: got {HOSTILE}", result="vm_file(/x.xlsx)")],
            evaluator_inputs=[
                {
                    "func": "compare_table",
                    "options": {},
                    "result": {"file": "x.xlsx"},
                    "expected": {"file": "gold.xlsx"},
                }
            ],
            eval_files={"x.xlsx": "not really", "gold.xlsx": "gold"},
            task_file=calc_file,
            steps=[
                {"code": f"print('{HOSTILE}')", "thought": HOSTILE, "action_errors": [HOSTILE]},
                {"special": "DONE"},
            ],
        ),
        "infeasible": record_task(
            root,
            "chrome",
            "ch-1",
            infeasible=True,
            end_reason="fail",
            steps=[{"special": "FAIL"}],
            metrics=[metric("infeasible", 1.0, "the agent said FAIL on an infeasible task")],
        ),
        "eval_error": record_task(
            root,
            "gimp",
            "g-1",
            outcome="eval_error",
            score=0.0,
            reason="vm_file: /home/user/a.png not found",
            metrics=[metric("check_brightness", 0.0, "vm_file: /home/user/a.png not found", status="error")],
        ),
        "incomplete": record_task(
            root, "vs_code", "vs-1", outcome=None, steps=[{"code": "pyautogui.write('x')"}]
        ),
    }
    with (folders["incomplete"] / "traj.jsonl").open("a") as handle:
        handle.write(json.dumps({"Error": f"guest died {HOSTILE}"}) + "\n")
        handle.write('{"step_num": 2, "actio')  # cut short by the crash
    return folders


def test_index_counts_links_and_escaping(tmp_path: Path) -> None:
    root = tmp_path / "results"
    build_tree(root, tmp_path / "tasks")
    index = write_report(root, title=f"Run {HOSTILE}")
    assert index == root / "index.html"
    page = Page(index)
    assert len(page.scripts) == 1 and "alert" not in page.scripts[0]
    assert HOSTILE in page.all_text  # shown as text, not markup
    assert_links_resolve(index, page)
    outcomes = sorted(str(row["data-outcome"]) for row in page.rows)
    assert outcomes == ["eval_error", "failed", "incomplete", "passed", "passed"]
    text = page.all_text
    # 2 passed of 5 that ran (incomplete and eval errors count as not passed)
    assert "40.0%" in text and "2 / 5" in text
    assert "unknown (incomplete)" in text and "infeasible" in text
    for category in ("OS", "Office", "Daily", "Professional"):
        assert category in text
    task_links = [link for link in page.links if link.endswith("report.html")]
    assert len(task_links) == 5
    assert "cdn" not in index.read_text().lower() and "http" not in "".join(page.links)


def test_index_gives_the_rate_over_all_tasks_when_some_were_skipped(tmp_path: Path) -> None:
    root = tmp_path / "results"
    record_task(root, "os", "os-pass")
    record_task(root, "os", "os-fail", outcome="failed", score=0.0, reason="wrong")
    card = '<div class="l">rate over all tasks</div>'
    assert card not in write_report(root).read_text()  # it would equal the success rate
    record_task(root, "chrome", "ch-skip", outcome="skipped", score=None, steps=[], reason="needs the web")
    index = write_report(root)
    text = Page(index).all_text
    # 1 passed of 2 that ran; of all 3 tasks, the skipped one counting as not passed
    assert "50.0%" in text and "1 / 2" in text
    assert '<div class="v">33.3%</div><div class="l">rate over all tasks</div>' in index.read_text()


def test_task_pages(tmp_path: Path) -> None:
    root = tmp_path / "results"
    folders = build_tree(root, tmp_path / "tasks")
    write_report(root)
    for folder in folders.values():
        page_path = folder / "report.html"
        page = Page(page_path)
        assert_links_resolve(page_path, page)
        assert "alert" not in "".join(page.scripts)
    passed = Page(folders["passed"] / "report.html")
    assert "Turn on the Wi-Fi & <b>stay</b> online" in passed.all_text
    assert passed.videos == ["recording.mp4"]
    images = [link for link in passed.links if link.endswith(".png")]
    assert {"step_0.png", "step_1.png", "step_2.png"} <= set(images)
    assert "../../../../../index.html" in passed.links

    hostile = Page(folders["hostile"] / "report.html")
    assert hostile.all_text.count(HOSTILE) >= 4  # id, reason, thought, action error, metric reason
    assert "eval_inputs/x.xlsx" in hostile.links
    assert "B3: got" in hostile.all_text

    incomplete = Page(folders["incomplete"] / "report.html")
    assert "Incomplete." in incomplete.all_text
    assert f"guest died {HOSTILE}" in incomplete.all_text
    assert "not valid JSON" in incomplete.all_text
    assert "eval error" in Page(folders["eval_error"] / "report.html").all_text


def test_instruction_falls_back_to_result_json(tmp_path: Path) -> None:
    root = tmp_path / "results"
    task_file = write_task_file(tmp_path / "tasks", "t", "os", "from the task file", {"func": "exact_match"})
    folder = record_task(root, "os", "t", task_file=task_file)
    task_file.unlink()
    write_report(root)
    assert "task file is gone" in Page(folder / "report.html").all_text
    data = json.loads((folder / "result.json").read_text())
    data["instruction"] = "kept in result.json"
    (folder / "result.json").write_text(json.dumps(data))
    write_report(root)
    assert "kept in result.json" in Page(folder / "report.html").all_text


def test_repeated_calls_are_idempotent_and_pick_up_new_tasks(tmp_path: Path) -> None:
    root = tmp_path / "results"
    first = record_task(root, "os", "a")
    write_report(root)
    page = first / "report.html"
    before = page.read_bytes()
    os.utime(page, (1, 1))
    write_report(root)
    assert page.read_bytes() == before and page.stat().st_mtime == 1  # unchanged page not rewritten
    record_task(root, "gimp", "b", outcome=None)
    write_report(root)
    assert len(Page(root / "index.html").rows) == 2
    leftovers = [p for p in root.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_empty_and_missing_results_dir(tmp_path: Path) -> None:
    index = write_report(tmp_path / "nothing-yet")
    assert "No task folders found yet" in index.read_text()


def test_provider_work_folders_are_not_tasks(tmp_path: Path) -> None:
    root = tmp_path / "results"
    record_task(root, "os", "a")
    junk = root / ".providers" / "gw0" / "x" / "y" / "z"
    junk.mkdir(parents=True)
    (junk / "traj.jsonl").write_text("")
    write_report(root)
    assert len(Page(root / "index.html").rows) == 1
