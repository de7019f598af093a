"""The figures per step budget (``--budgets``): counting, the summary lines, JUnit, rescoring
and the HTML report, from results folders as a run writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from report_tree import metric, record_task, write_task_file

from pytest_osworld.report.budget_figures import BUDGETS_HEADING, budget_lines, budget_rows, summary_scores
from pytest_osworld.report.html import write_report
from pytest_osworld.report.junit import budget_properties, result_properties
from pytest_osworld.report.rescore import RESCORED_NAME, rescore
from pytest_osworld.report.stats import pass1_confidence_interval
from pytest_osworld.report.summary import record_of_result, summary_lines


def entry(score: float | None, end: str = "cut", **extra: Any) -> dict[str, Any]:
    """One ``scores_at`` entry."""
    passed = None if score is None else score >= 1.0
    return {"score": score, "passed": passed, "end": end, "steps": 5, **extra}


def with_budgets(folder: Path, scores_at: dict[str, Any]) -> dict[str, Any]:
    """Add ``scores_at`` to the result.json in ``folder``; return the result."""
    path = folder / "result.json"
    data = json.loads(path.read_text())
    data["scores_at"] = scores_at
    path.write_text(json.dumps(data))
    return data


def test_each_budget_counts_scores_leaves_out_diverged_and_fails_broken_tasks() -> None:
    tasks = [
        ("scored", {"5": entry(1.0), "15": entry(1.0, "ended_before")}),
        ("scored", {"5": entry(0.0), "15": entry(1.0)}),
        ("scored", {"5": entry(None, "diverged", diverged_at=3), "15": entry(0.5)}),
        ("scored", {"5": entry(None, "error"), "15": entry(0.0)}),
        ("broken", None),  # an ERROR: not passed at every budget
        ("not_run", None),  # skipped: in no budget
    ]
    five, fifteen = budget_rows(tasks)
    assert (five.budget, five.own, fifteen.own) == (5, False, True)
    assert (five.passed, five.ran, five.diverged, five.unscored) == (1, 3, 1, 1)
    assert five.mean == pytest.approx(1 / 3)
    assert (fifteen.passed, fifteen.ran, fifteen.diverged, fifteen.unscored) == (2, 5, 0, 0)
    assert fifteen.mean == pytest.approx(2.5 / 5)
    assert fifteen.interval == pass1_confidence_interval(2, 5)
    assert five.not_counted == "1 diverged, 1 not scored" and fifteen.not_counted == ""


def test_the_summary_lines_give_rate_mean_and_wilson_interval_per_budget() -> None:
    lines = budget_lines([("scored", {"1": entry(0.0), "15": entry(1.0)}), ("scored", {"1": entry(1.0)})])
    low, high = pass1_confidence_interval(1, 2)
    assert lines[0] == BUDGETS_HEADING
    assert lines[1].split() == [
        "1", "step", "50.0%", "mean", "0.500",
        "(1/2", "passed,", "95%", "CI", f"[{100 * low:.1f}%,", f"{100 * high:.1f}%])",
    ]  # fmt: skip
    assert lines[2].startswith("  15 steps (max)") and "1/1 passed" in lines[2] and "1 not scored" in lines[2]
    assert budget_lines([("scored", None)]) == []


def test_what_crosses_to_the_controller_is_score_passed_and_end_only() -> None:
    full = {"5": entry(0.5, metrics=[{"func": "x"}], reason="long"), "bad": "not an entry"}
    assert summary_scores(full) == {"5": {"score": 0.5, "passed": False, "end": "cut"}}


def test_junit_has_one_property_per_budget_after_the_verdicts(tmp_path: Path) -> None:
    folder = record_task(tmp_path, "os", "t1")
    result = with_budgets(
        folder,
        {
            "2": entry(0.25),
            "5": entry(None, "diverged", diverged_at=3),
            "9": entry(None, "error"),
            "15": entry(1.0),
        },
    )
    assert budget_properties(result["scores_at"]) == [
        ("score_at_2", "0.2500"),
        ("score_at_5", "diverged at step 3"),
        ("score_at_9", "error"),
        ("score_at_15", "1.0000"),
    ]
    props = [name for name, _ in result_properties(result)]
    assert props[-5:] == ["output_tokens", "score_at_2", "score_at_5", "score_at_9", "score_at_15"]
    assert budget_properties(None) == []


def test_a_results_folder_summary_counts_its_budgets(tmp_path: Path) -> None:
    results = [
        with_budgets(record_task(tmp_path, "os", "t1"), {"3": entry(0.0), "15": entry(1.0)}),
        with_budgets(record_task(tmp_path, "os", "t2"), {"3": entry(1.0), "15": entry(1.0)}),
    ]
    lines = summary_lines([record_of_result(r) for r in results])
    assert BUDGETS_HEADING in lines
    at = lines.index(BUDGETS_HEADING)
    assert "1/2 passed" in lines[at + 1] and lines[at + 1].startswith("  3 steps")
    assert "2/2 passed" in lines[at + 2] and "(max)" in lines[at + 2]


EVALUATOR = {
    "func": "exact_match",
    "result": {"type": "vm_command_line", "command": "cat out"},
    "expected": {"type": "rule", "rules": {"expected": "hello"}},
}


def test_rescore_reruns_a_replayed_budgets_metrics_and_moves_the_runs_own(tmp_path: Path) -> None:
    task_file = write_task_file(tmp_path / "tasks", "t1", "os", "write hello", EVALUATOR)
    inputs = [{"func": "exact_match", "options": {}, "result": "hello", "expected": {"expected": "hello"}}]
    folder = record_task(
        tmp_path / "results",
        "os",
        "t1",
        task_file=task_file,
        metrics=[metric("exact_match", 1.0, "got 'hello' as expected")],
        evaluator_inputs=inputs,
    )
    replayed = entry(
        0.0,
        outcome="failed",
        replayed=True,
        metrics=[metric("exact_match", 0.0, "got 'hel'")],
        evaluator_inputs=[{**inputs[0], "result": "hello"}],  # the replay's saved input scores 1 now
    )
    with_budgets(folder, {"2": replayed, "3": entry(1.0, "ended_before"), "15": entry(1.0, "ended_before")})
    # The run's own input changes: its score, and the budgets that are its own, go to 0.
    data = json.loads((folder / "result.json").read_text())
    data["evaluator_inputs"][0]["result"] = "bye"
    (folder / "result.json").write_text(json.dumps(data))
    (task,) = rescore(tmp_path / "results")
    assert (task.status, task.new_score) == ("rescored", 0.0)
    scores = json.loads((folder / RESCORED_NAME).read_text())["scores_at"]
    assert (scores["2"]["score"], scores["2"]["passed"], scores["2"]["rescore"]) == (1.0, True, "rescored")
    assert scores["2"]["reason"] == "got 'hello' as expected"
    assert [(scores[k]["score"], scores[k]["passed"]) for k in ("3", "15")] == [(0.0, False), (0.0, False)]
    assert json.loads((folder / "result.json").read_text())["scores_at"]["2"]["score"] == 0.0  # untouched


def test_rescore_keeps_budgets_it_cannot_rescore(tmp_path: Path) -> None:
    folder = record_task(tmp_path, "os", "t1", infeasible=True, end_reason="fail")
    kept = {"5": entry(0.0, replayed=False), "15": entry(1.0, "ended_before")}
    with_budgets(folder, kept)
    rescore(tmp_path)
    assert json.loads((folder / RESCORED_NAME).read_text())["scores_at"] == kept


def test_the_report_shows_the_budgets_table_chart_and_each_tasks_scores(tmp_path: Path) -> None:
    folder = with_budgets(
        record_task(tmp_path, "os", "t1"),
        {
            "5": entry(None, "diverged", diverged_at=1, screen="budget_5_step_1.png", reason="parted <b>"),
            "15": entry(1.0),
        },
    )
    del folder
    task_folder = next(tmp_path.rglob("result.json")).parent
    (task_folder / "budget_5_step_1.png").write_bytes(b"png")
    index = write_report(tmp_path).read_text()
    assert "<h2>Step budgets</h2>" in index and 'id="chart-by-budget"' in index
    assert "1 diverged" in index and "15 steps (max)" in index
    page = (task_folder / "report.html").read_text()
    assert "Scores at step budgets" in page and "diverged after step 1" in page
    assert 'href="budget_5_step_1.png"' in page and 'href="step_1.png"' in page
    assert "parted &lt;b&gt;" in page  # a reason is text, never markup


def test_a_report_without_budgets_has_no_budget_section(tmp_path: Path) -> None:
    record_task(tmp_path, "os", "t1")
    index = write_report(tmp_path).read_text()
    assert "Step budgets" not in index and "by-budget" not in index
