"""Rescoring saved evaluator inputs: new scores, untouched originals, missing inputs reported."""

from __future__ import annotations

import json
from pathlib import Path

from report_tree import metric, record_task, write_task_file

from pytest_osworld.report.rescore import RESCORED_NAME, rescore, rescore_task

EVALUATOR = {
    "func": ["compare_text_file", "exact_match"],
    "conj": "and",
    "result": [
        {"type": "vm_file", "path": "/home/user/a.txt", "dest": "a.txt"},
        {"type": "vm_command_line", "command": "echo"},
    ],
    "expected": [
        {"type": "cloud_file", "path": "gold.txt", "dest": "gold.txt"},
        {"type": "rule", "rules": {"expected": "hello\n"}},
    ],
}
INPUTS = [
    {
        "func": "compare_text_file",
        "options": {},
        "result": {"file": "a.txt"},
        "expected": {"file": "gold.txt"},
    },
    {"func": "exact_match", "options": {}, "result": "hello\n", "expected": {"expected": "hello\n"}},
]
PASSED_METRICS = [
    metric(
        "compare_text_file",
        1.0,
        "a.txt equals the expected text",
        result="vm_file(/home/user/a.txt)",
        expected="cloud_file(gold.txt)",
    ),
    metric(
        "exact_match", 1.0, "got 'hello' as expected", result="vm_command_line(echo)", expected="rule(rules)"
    ),
]


def passed_task(root: Path, tasks: Path, task_id: str = "t1", evaluator: dict | None = None) -> Path:
    task_file = write_task_file(tasks, task_id, "os", "Write hello", evaluator or EVALUATOR)
    return record_task(
        root,
        "os",
        task_id,
        task_file=task_file,
        metrics=PASSED_METRICS,
        evaluator_inputs=INPUTS,
        eval_files={"a.txt": "same text", "gold.txt": "same text"},
        reason="compare_text_file: a.txt equals the expected text",
    )


def test_unchanged_inputs_rescore_to_the_same_score(tmp_path: Path) -> None:
    folder = passed_task(tmp_path / "results", tmp_path / "tasks")
    [task] = rescore(tmp_path / "results")
    assert task.status == "rescored" and task.old_score == task.new_score == 1.0
    assert not task.changed and task.task_file_changed is False
    assert [m.status for m in task.metrics] == ["evaluated", "evaluated"]
    written = json.loads((folder / RESCORED_NAME).read_text())
    assert written["score"] == 1.0 and written["rescore"]["status"] == "rescored"


def test_changed_input_changes_the_score_and_keeps_the_original(tmp_path: Path) -> None:
    folder = passed_task(tmp_path / "results", tmp_path / "tasks")
    original = (folder / "result.json").read_bytes()
    (folder / "eval_inputs" / "a.txt").write_text("other text")
    [task] = rescore(tmp_path / "results")
    assert (folder / "result.json").read_bytes() == original
    assert task.status == "rescored" and task.changed
    assert (task.old_score, task.new_score) == (1.0, 0.0)
    assert (task.old_outcome, task.new_outcome) == ("passed", "failed")
    assert task.metrics[1].status == "not_evaluated"  # 'and' short-circuits at 0
    written = json.loads((folder / RESCORED_NAME).read_text())
    assert written["outcome"] == "failed" and written["score"] == 0.0
    assert written["reason"].startswith("compare_text_file: texts differ")
    assert written["rescore"]["old_score"] == 1.0 and written["rescore"]["old_outcome"] == "passed"
    assert written["task_id"] == "t1" and written["provenance"] == json.loads(original)["provenance"]


def test_missing_input_file_is_reported(tmp_path: Path) -> None:
    folder = passed_task(tmp_path / "results", tmp_path / "tasks")
    (folder / "eval_inputs" / "gold.txt").unlink()
    task = rescore_task(folder)
    assert task.status == "missing_inputs" and task.new_score is None
    assert "eval_inputs/gold.txt is missing" in task.reason
    written = json.loads((folder / RESCORED_NAME).read_text())
    assert written["score"] == 1.0 and written["rescore"]["status"] == "missing_inputs"


def test_inputs_never_saved_because_of_a_short_circuit(tmp_path: Path) -> None:
    evaluator = dict(EVALUATOR, conj="or")
    task_file = write_task_file(tmp_path / "tasks", "t2", "os", "x", evaluator)
    folder = record_task(
        tmp_path / "results",
        "os",
        "t2",
        task_file=task_file,
        metrics=[
            PASSED_METRICS[0],
            metric(
                "exact_match",
                None,
                "not evaluated: 'or' decided at compare_text_file",
                status="not_evaluated",
            ),
        ],
        evaluator_inputs=INPUTS[:1],
        eval_files={"a.txt": "x", "gold.txt": "x"},
    )
    (folder / "eval_inputs" / "a.txt").write_text("y")
    task = rescore_task(folder)
    assert task.status == "missing_inputs"
    assert "no saved inputs for metric 2 (exact_match): it was not evaluated in the run" in task.reason


def test_escaping_input_paths_are_refused(tmp_path: Path) -> None:
    task_file = write_task_file(tmp_path / "tasks", "t3", "os", "x", {"func": "compare_text_file"})
    folder = record_task(
        tmp_path / "results",
        "os",
        "t3",
        task_file=task_file,
        metrics=PASSED_METRICS[:1],
        evaluator_inputs=[
            {
                "func": "compare_text_file",
                "options": {},
                "result": {"file": "../../x"},
                "expected": {"file": "g"},
            }
        ],
    )
    task = rescore_task(folder)
    assert task.status == "missing_inputs" and "outside eval_inputs" in task.reason


def test_infeasible_fail_on_feasible_and_errors_keep_their_score(tmp_path: Path) -> None:
    root = tmp_path / "results"
    record_task(
        root,
        "chrome",
        "inf",
        infeasible=True,
        end_reason="fail",
        steps=[{"special": "FAIL"}],
        metrics=[metric("infeasible", 1.0, "the agent said FAIL on an infeasible task")],
    )
    record_task(
        root,
        "os",
        "said-fail",
        outcome="failed",
        score=0.0,
        end_reason="fail",
        steps=[{"special": "FAIL"}],
        metrics=[
            metric("exact_match", None, "the agent said FAIL on a feasible task", status="not_evaluated")
        ],
    )
    record_task(root, "gimp", "err", outcome="error", score=None)
    record_task(root, "vlc", "crashed", outcome=None)  # no result.json: not rescored
    by_id = {t.task_id: t for t in rescore(root)}
    assert set(by_id) == {"inf", "said-fail", "err"}
    assert (
        by_id["inf"].status == "kept"
        and by_id["inf"].new_score == 1.0
        and "infeasible" in by_id["inf"].reason
    )
    assert by_id["said-fail"].status == "kept" and by_id["said-fail"].new_score == 0.0
    assert by_id["err"].status == "kept" and by_id["err"].new_score is None


def test_changed_task_file_is_flagged(tmp_path: Path) -> None:
    folder = passed_task(tmp_path / "results", tmp_path / "tasks")
    task_file = tmp_path / "tasks" / "os" / "t1.json"
    task_file.write_text(task_file.read_text() + "\n")
    task = rescore_task(folder)
    assert task.status == "rescored" and task.task_file_changed is True
    assert "changed since the run" in task.reason


def test_gone_task_file_infers_conj_from_saved_outcomes(tmp_path: Path) -> None:
    folder = passed_task(tmp_path / "results", tmp_path / "tasks")
    (tmp_path / "tasks" / "os" / "t1.json").unlink()
    # 'and' and 'or' agree on two metrics scoring 1: the conj cannot be told
    task = rescore_task(folder)
    assert task.status == "error" and "cannot tell how the metrics combine" in task.reason
    data = json.loads((folder / "result.json").read_text())
    data["metrics"][1] = metric(
        "exact_match", None, "not evaluated: 'and' decided at compare_text_file", status="not_evaluated"
    )
    data["score"], data["outcome"] = 0.0, "failed"
    (folder / "result.json").write_text(json.dumps(data))
    task = rescore_task(folder)
    assert task.status == "rescored" and task.new_score == 1.0 and "inferred" in task.reason
    assert "is gone" in task.reason and task.task_file_changed is None


def test_getter_error_stays_an_evaluation_error(tmp_path: Path) -> None:
    task_file = write_task_file(tmp_path / "tasks", "t4", "os", "x", EVALUATOR)
    folder = record_task(
        tmp_path / "results",
        "os",
        "t4",
        task_file=task_file,
        outcome="eval_error",
        score=0.0,
        metrics=[
            metric("compare_text_file", 0.0, "vm_file: /home/user/a.txt not found", status="error"),
            metric(
                "exact_match",
                None,
                "not evaluated: 'and' decided at compare_text_file",
                status="not_evaluated",
            ),
        ],
        evaluator_inputs=[{"func": "compare_text_file", "options": {}}],
    )
    task = rescore_task(folder)
    assert task.status == "rescored" and task.new_outcome == "eval_error" and not task.changed
    assert task.metrics[0].reason == "vm_file: /home/user/a.txt not found"


def test_unreadable_result_json(tmp_path: Path) -> None:
    folder = record_task(tmp_path / "results", "os", "bad")
    (folder / "result.json").write_text("{not json")
    [task] = rescore(tmp_path / "results")
    assert task.status == "unreadable" and "cannot read result.json" in task.reason
    assert not (folder / RESCORED_NAME).exists()
