"""Refreshing the report during a run: a task page is rendered again only when what it shows changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_tree import record_task, write_task_file

from pytest_osworld.report import html
from pytest_osworld.report.html import write_report


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The templates rendered, in order."""
    seen: list[str] = []
    real = html.render

    def counting(template: str, **context: object) -> str:
        seen.append(template)
        return real(template, **context)

    monkeypatch.setattr(html, "render", counting)
    return seen


def test_unchanged_task_pages_are_not_rendered_again(tmp_path: Path, renders: list[str]) -> None:
    root = tmp_path / "results"
    task_file = write_task_file(tmp_path / "tasks", "a", "os", "first words", {"func": "exact_match"})
    first = record_task(
        root,
        "os",
        "a",
        task_file=task_file,
        eval_files={"sub/out.txt": "1"},
        evaluator_inputs=[{"func": "exact_match", "result": {"file": "sub/out.txt"}}],
    )
    record_task(root, "os", "b")
    write_report(root)
    assert renders.count("task.html") == 2
    renders.clear()
    write_report(root)
    assert renders == ["index.html"]  # the index always (it has the time it was made)

    record_task(root, "os", "c")  # a new task: only its page
    write_report(root)
    assert renders.count("task.html") == 1
    renders.clear()

    changes = [
        lambda: (first / "result.rescored.json").write_text(json.dumps({"score": 0.0})),
        lambda: (first / "eval_inputs" / "sub" / "out.txt").write_text("12"),
        lambda: task_file.write_text(json.dumps({"id": "a", "instruction": "other words"})),
        lambda: (first / "step_1.png").unlink(),
    ]
    for change in changes:
        change()
        write_report(root)
        assert renders.count("task.html") == 1, change
        renders.clear()
    page = (first / "report.html").read_text()
    assert "other words" in page and "(1 byte)" not in page and "(2 bytes)" in page


def test_a_deleted_page_is_written_again(tmp_path: Path, renders: list[str]) -> None:
    root = tmp_path / "results"
    folder = record_task(root, "os", "a")
    write_report(root)
    (folder / "report.html").unlink()
    write_report(root)
    assert (folder / "report.html").is_file()
    assert renders.count("task.html") == 2
