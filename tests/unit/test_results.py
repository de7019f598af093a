from __future__ import annotations

import json
from pathlib import Path

from pytest_osworld.episode.result import TaskResult
from pytest_osworld.report.results import TaskRecorder, safe_component
from pytest_osworld.report.summary import TaskRecord, summarize


def test_unsafe_ids_stay_inside_the_results_dir(tmp_path: Path) -> None:
    recorder = TaskRecorder(tmp_path, "pyautogui", "screenshot", "../../m", "../x", "../../../etc")
    assert recorder.dir.resolve().is_relative_to(tmp_path.resolve())
    assert safe_component("..") == "_" and "/" not in safe_component("a/b")


def test_result_files(tmp_path: Path) -> None:
    recorder = TaskRecorder(tmp_path, "pyautogui", "screenshot", "gpt-4o", "os", "abc")
    assert recorder.dir == tmp_path / "pyautogui/screenshot/gpt-4o/os/abc"
    result = TaskResult("abc", "os", "n", "passed", 1.0, 1.0, "done", 2, 15, 1.5, False)
    recorder.finish(result)
    assert (recorder.dir / "result.txt").read_text() == "1.0\n"
    assert json.loads((recorder.dir / "result.json").read_text())["outcome"] == "passed"


def test_summary_counts_errors_in_the_denominator() -> None:
    lines = summarize(
        [
            TaskRecord("a", "os", "passed", 1.0, False),
            TaskRecord("b", "os", "error", None, False),
            TaskRecord("c", "gimp", "skipped", None, False),
            TaskRecord("d", "chrome", "failed", 0.5, True),
        ]
    )
    text = "\n".join(lines)
    assert "overall                 33.3%  mean 0.500  (1/3 passed, 1 failed, 1 errors, 1 skipped)" in text
    # Every collected task in the denominator too: (1 + 0.5) / 4 tasks, the skip as 0.
    assert (
        "all 4 collected         25.0%  mean 0.375  (1/4 passed; skipped and xfail tasks count as 0)" in text
    )
    assert "Professional" in text and "Daily" in text


def test_omniact_is_summarised_apart_from_osworld() -> None:
    lines = summarize(
        [
            TaskRecord("a", "os", "passed", 1.0, False),
            TaskRecord("b", "omniact", "failed", 0.5, False),
            TaskRecord("c", "omniact", "passed", 1.0, False),
        ]
    )
    text = "\n".join(lines)
    assert "overall                100.0%  mean 1.000  (1/1 passed" in text
    assert "collected" not in text  # nothing skipped: the two rates would be the same
    assert "OmniACT, separately:" in text
    assert "OmniACT (action score)  50.0%  mean 0.750  (1/2 passed" in text
