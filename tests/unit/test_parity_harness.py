"""The parity harness itself (parity/): documented names, case building, verdicts, exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from parity.aggregate import exit_code, table
from parity.documented import documented_names, parse_documented
from parity.metric_cases import build_cases
from parity.metric_cases_tasks import Case, _mutate, read_uses, value_candidates
from parity.metrics import compare

DOC = """# Parity

## Deliberate differences

- `compare_table`: OSWorld scores 1 for a missing sheet.
- `check_qt_bgcone`, `check_qt_max_volume`: commented lines.
  - `nested_not_a_name`: an indented sub-bullet details its parent
Text that mentions `not_a_bullet` in prose.

## Other section

- `outside_section`: must not count.
"""


def test_documented_names_come_only_from_bullets_of_the_section() -> None:
    names = parse_documented(DOC)
    assert {"compare_table", "check_qt_bgcone", "check_qt_max_volume"} <= names
    assert "not_a_bullet" not in names
    assert "nested_not_a_name" not in names
    assert "outside_section" not in names


def test_documented_names_of_a_repository_without_the_file_is_empty(tmp_path: Path) -> None:
    assert documented_names(tmp_path) == set()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "parity.md").write_text(DOC)
    assert "compare_table" in documented_names(tmp_path)


def _report(undocumented: int, documented: int = 0) -> dict[str, object]:
    row = {"name": "m", "cases": 3, "agree": 3 - undocumented - documented}
    row.update({"documented": documented, "undocumented": undocumented, "note": ""})
    return {"level": "metrics", "seconds": 1.0, "rows": [row], "not_compared": [], "disagreements": []}


def test_exit_code_is_1_on_an_undocumented_disagreement_only() -> None:
    assert exit_code({"metrics": _report(0)}) == 0
    assert exit_code({"metrics": _report(0, documented=2)}) == 0
    assert exit_code({"metrics": _report(1)}) == 1


def test_exit_code_is_1_when_a_level_failed() -> None:
    assert exit_code({"metrics": _report(0), "end_to_end": None}) == 1


def test_table_has_a_row_per_metric_and_totals() -> None:
    text = table({"metrics": _report(1, documented=1)})  # type: ignore[dict-item]
    lines = text.splitlines()
    assert lines[1].split()[:6] == ["metrics", "m", "3", "1", "1", "1"]
    assert "TOTAL" in lines[-1]


def _case(metric: str, case_id: str) -> Case:
    return Case(case_id, metric, "r", {}, None, False)


def test_compare_splits_documented_from_undocumented_and_skips_stubbed() -> None:
    cases = [_case("a", "1"), _case("a", "2"), _case("b", "3"), _case("c", "4")]
    ours = {key: {"score": 1.0, "error": ""} for key in "1234"}
    oracle = {
        "1": {"score": 1.0 + 1e-9, "error": ""},
        "2": {"score": 0.0, "error": ""},
        "3": {"score": 0.0, "error": ""},
        "4": {"score": 0.0, "error": "ImportError: librosa is stubbed in the parity oracle venv"},
    }
    report = compare(cases, ours, oracle, documented={"b"})
    rows = {row["name"]: row for row in report["rows"]}
    assert (rows["a"]["agree"], rows["a"]["undocumented"]) == (1, 1)
    assert (rows["b"]["agree"], rows["b"]["documented"]) == (0, 1)
    assert [item["name"] for item in report["not_compared"]] == ["c"]
    assert {d["case"] for d in report["disagreements"]} == {"2", "3"}


def test_mutate_changes_exactly_one_character_of_the_first_string() -> None:
    assert _mutate("abcd") == "abxd"
    assert _mutate(["", "xyz"]) == ["", "xxz"]
    assert _mutate({"n": 3}) == {"n": 4}


def test_value_candidates_include_rule_values_mutations_and_empty_values() -> None:
    values = [value for _, value in value_candidates({"expected": "hello"})]
    assert "hello" in values and "hexlo" in values
    assert None in values and "" in values
    assert len(values) == len({json.dumps(v, sort_keys=True) for v in values})


@pytest.fixture
def task_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks" / "calc"
    folder.mkdir(parents=True)
    evaluator = {
        "func": ["compare_table", "check_include_exclude"],
        "result": [
            {"type": "vm_file", "path": "/home/user/a.xlsx", "dest": "a.xlsx"},
            {"type": "vm_command_line", "command": "ls"},
        ],
        "expected": [
            {"type": "cloud_file", "path": "http://x/b.xlsx", "dest": "b.xlsx"},
            {"type": "rule", "rules": {"include": ["ok"], "exclude": []}},
        ],
        "options": [{"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}, {}],
    }
    (folder / "t1.json").write_text(json.dumps({"id": "t1", "evaluator": evaluator}))
    return tmp_path / "tasks"


def test_read_uses_pairs_each_func_with_its_result_expected_and_options(task_folder: Path) -> None:
    uses = read_uses(task_folder)
    assert [use.metric for use in uses] == ["compare_table", "check_include_exclude"]
    assert uses[0].options["rules"][0]["type"] == "sheet_data"
    assert uses[1].expected is not None and uses[1].expected["rules"]["include"] == ["ok"]


def test_build_cases_writes_real_files_and_identical_pairs(task_folder: Path, tmp_path: Path) -> None:
    cases = build_cases(task_folder, tmp_path / "files")
    table_cases = [case for case in cases if case.metric == "compare_table"]
    same = next(case for case in table_cases if case.id.endswith("s1/same-vs-base"))
    assert Path(same.result).read_bytes() == Path(same.expected).read_bytes()
    near = next(case for case in table_cases if case.id.endswith("s1/near-vs-base"))
    assert Path(near.result).read_bytes() != Path(near.expected).read_bytes()
    assert any(case.metric == "check_include_exclude" and case.result == "ok" for case in cases)
    # Metrics no task uses get a made-up use of their own.
    assert any(case.metric == "compare_docx_lines" and case.id.startswith("syntheti/") for case in cases)


def test_oracle_runner_scores_exceptions_0_and_flags_a_stub_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from parity.oracle_side.metrics_oracle import STUB_FLAG, score_one

    def raises(result: object, expected: object) -> float:
        raise ValueError("bad file")

    def uses_stub(result: object, expected: object) -> float:
        monkeypatch.setenv(STUB_FLAG, "easyocr")  # what a stub does when OSWorld calls it
        return 0.0

    metrics = SimpleNamespace(raises=raises, uses_stub=uses_stub)
    case = {"result": "r", "expected": "e", "has_expected": True, "options": {}}
    monkeypatch.delenv(STUB_FLAG, raising=False)
    failed = score_one(metrics, {**case, "metric": "raises"})
    assert failed["score"] == 0.0 and "ValueError: bad file" in failed["error"]
    stubbed = score_one(metrics, {**case, "metric": "uses_stub"})
    assert "stubbed in the parity oracle venv" in stubbed["error"]
    assert score_one(metrics, {**case, "metric": "absent"})["score"] is None
