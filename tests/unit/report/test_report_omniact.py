"""OmniACT in the report layer: figures from plain result data, the summary, the predictions
files, JUnit properties, the HTML report and merges (figures worked out by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.report.html import write_report
from pytest_osworld.report.junit import omniact_properties
from pytest_osworld.report.junit import testcase_from_result as case_of_result
from pytest_osworld.report.merge import merge
from pytest_osworld.report.omniact_figures import (
    FIGURES_HEAD,
    SampleFigures,
    blocks_of,
    deciding_text,
    figure_lines,
    run_figures,
)
from pytest_osworld.report.omniact_predictions import (
    FIGURES_NAME,
    PREDICTIONS_NAME,
    prediction_sets,
    write_predictions,
)
from pytest_osworld.report.summary import TaskRecord, record_of_result, summary_lines


def row(
    weight: float, sequence: float, action: float, click: float = 0.0, press: float = 0.0
) -> dict[str, Any]:
    return {
        "weight": weight,
        "sequence_score": sequence,
        "action_score": action,
        "click_penalty": click,
        "press_penalty": press,
        "write_penalty": 0.0,
        "reason": "",
    }


def block(
    key: str, domain: str, official: dict[str, Any] | None, paper: dict[str, Any], **more: Any
) -> dict[str, Any]:
    found = {
        "layout": "release",
        "split": "test",
        "split_file": "/data/omniact/test.json",
        "key": key,
        "index": int(key) if key.isdigit() else None,
        "domain": domain,
        "app": "calculator",
        "scoring": "official",
        "decided_by": "official" if official is not None else "paper",
        "prediction": f"pyautogui.click({key}, 1)",
        "official": official,
        "official_problem": None if official is not None else "the official scoring cannot read it",
        "paper": paper,
    }
    found.update(more)
    return found


# Three samples: weights 2.1, 1.1, 0.1. Official: 1 / 0.5 / 0 (sequence 1, 1, 0), the first with
# a click penalty of 0.2 of the sample. Paper: 1, 1, 0.
BLOCKS = [
    block("0", "desktop", row(2.1, 1.0, 0.8, click=0.2), row(2.1, 1.0, 1.0)),
    block("1", "web", row(1.1, 1.0, 0.5, press=0.5), row(1.1, 1.0, 1.0)),
    block("2", "desktop", row(0.1, 0.0, 0.0, press=1.0), row(0.1, 0.0, 0.0)),
]


def test_figures_are_ratios_of_weighted_sums() -> None:
    figures = run_figures(BLOCKS)
    official = figures["official"]
    assert official["all"].samples == 3
    assert official["all"].ideal_score == pytest.approx(3.3)
    assert official["all"].sequence_score == pytest.approx(3.2 / 3.3)
    assert official["all"].action_score == pytest.approx((2.1 * 0.8 + 1.1 * 0.5) / 3.3)
    assert official["all"].click_penalty == pytest.approx(2.1 * 0.2 / 3.3)
    # the third sample's sequence does not match: its press penalty is not in the totals
    assert official["all"].press_penalty == pytest.approx(1.1 * 0.5 / 3.3)
    assert official["desktop"].action_score == pytest.approx(2.1 * 0.8 / 2.2)
    assert official["web"].action_score == pytest.approx(0.5)
    assert figures["paper"]["all"].action_score == pytest.approx(3.2 / 3.3)


def test_the_summary_lines_give_both_scorings() -> None:
    lines = figure_lines(BLOCKS)
    assert lines[0] == FIGURES_HEAD.format(decides="official")
    official_all = (2.1 * 0.8 + 1.1 * 0.5) / 3.3
    assert lines[1] == (
        f"    all         3 samples  official sequence {3.2 / 3.3:.3f} action {official_all:.3f}  |  "
        f"paper sequence {3.2 / 3.3:.3f} action {3.2 / 3.3:.3f}"
    )
    assert lines[2].startswith("    desktop     2 samples  official sequence 0.955 action 0.764")
    assert lines[3].startswith("    web         1 samples  official sequence 1.000 action 0.500")


def test_a_sample_without_an_official_score_is_said() -> None:
    blocks = [*BLOCKS, block("json-one", "web", None, row(1.1, 1.0, 1.0), layout="json", split_file=None)]
    assert deciding_text(blocks) == (
        "official (paper for 1 sample(s) whose gold the official scoring cannot read)"
    )
    lines = figure_lines(blocks)
    assert lines[1].startswith("    all         4 samples  official sequence")
    assert "(3 of them)" in lines[1] and "paper sequence" in lines[1]


def test_rows_that_are_not_figures_are_left_out() -> None:
    assert SampleFigures.from_row("k", "web", {"weight": 1.1}) is None
    assert (
        SampleFigures.from_row("k", "web", {"weight": True, "sequence_score": 1, "action_score": 1}) is None
    )
    assert SampleFigures.from_row("k", "web", None) is None
    assert blocks_of([None, {"paper": "x"}, BLOCKS[0]]) == [BLOCKS[0]]


def test_summary_lines_from_records_and_from_results() -> None:
    records = [
        TaskRecord(
            f"n{b['key']}", "omniact", "passed" if b["key"] == "0" else "failed", 1.0, False, b["key"], b
        )
        for b in BLOCKS
    ]
    lines = summary_lines(records)
    assert lines[:2] == [
        "OmniACT, separately:",
        "  OmniACT (action score)  33.3%  mean 1.000  (1/3 passed, 2 failed, 0 errors, 0 skipped)",
    ]
    assert lines[2:] == figure_lines(BLOCKS)
    result = {
        "task_id": "test/0",
        "domain": "omniact",
        "outcome": "passed",
        "score": 0.8,
        "omniact": BLOCKS[0],
    }
    assert record_of_result(result).omniact == BLOCKS[0]


def test_prediction_sets_and_their_files(tmp_path: Path) -> None:
    other = block("0", "web", row(1.1, 1.0, 1.0), row(1.1, 1.0, 1.0), split_file="/other/test.json")
    sample = block("save", "desktop", row(1.1, 1.0, 1.0), row(1.1, 1.0, 1.0), layout="json", split_file=None)
    sets = prediction_sets([BLOCKS[2], other, BLOCKS[0], sample, BLOCKS[1]])
    assert [(s.name, s.split_file) for s in sets] == [
        ("samples", None),
        ("test", "/data/omniact/test.json"),
        ("test-2", "/other/test.json"),
    ]
    assert list(sets[1].predictions) == ["0", "1", "2"]  # the split's order, whatever the order given
    written = write_predictions(tmp_path, BLOCKS)
    assert [p.name for p in written] == [PREDICTIONS_NAME, FIGURES_NAME]
    assert json.loads((tmp_path / PREDICTIONS_NAME).read_text()) == {
        "0": "pyautogui.click(0, 1)",
        "1": "pyautogui.click(1, 1)",
        "2": "pyautogui.click(2, 1)",
    }
    figures = json.loads((tmp_path / FIGURES_NAME).read_text())
    assert figures["figures"]["official"]["all"]["sequence_score"] == pytest.approx(3.2 / 3.3)
    assert figures["sets"]["test"]["figures"] == figures["figures"]
    assert write_predictions(tmp_path / "none", []) == []


def result_of(b: dict[str, Any], outcome: str = "passed") -> dict[str, Any]:
    official = b["official"] or b["paper"]
    return {
        "task_id": f"test/{b['key']}",
        "domain": "omniact",
        "nodeid": f"omniact/test.json::omniact/test/{b['key']}",
        "outcome": outcome,
        "score": official["action_score"],
        "threshold": 1.0,
        "end_reason": "DONE",
        "steps": 1,
        "max_steps": 1,
        "duration_s": 0.5,
        "infeasible": False,
        "reason": "",
        "metrics": [
            {
                "func": "omniact",
                "sequence_score": official["sequence_score"],
                "action_score": official["action_score"],
            }
        ],
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "provenance": {"benchmark": "omniact", "agent": "replay", "task_file": "/nowhere.txt"},
        "instruction": "Do it",
        "omniact": b,
    }


def test_junit_properties_of_a_result() -> None:
    props = dict(omniact_properties(result_of(BLOCKS[0])))
    assert props["scoring"] == "official"
    assert (props["sequence_score"], props["action_score"], props["score"]) == ("1.0000", "0.8000", "0.8000")
    assert (props["official_action_score"], props["paper_action_score"]) == ("0.8", "1.0")
    assert (props["weight"], props["split"], props["sample_key"], props["domain"]) == (
        "2.1",
        "test",
        "0",
        "desktop",
    )
    case = case_of_result(result_of(BLOCKS[0]))
    assert [(p.get("name"), p.get("value")) for p in case.iter("property")] == [
        (name, str(value)) for name, value in omniact_properties(result_of(BLOCKS[0]))
    ]
    without = dict(omniact_properties(result_of(BLOCKS[2] | {"official": None})))
    assert "official_action_score" not in without


def write_results(folder: Path, blocks: list[dict[str, Any]]) -> None:
    for b in blocks:
        task = folder / "pyautogui" / "screenshot" / "replay" / "omniact" / f"test_{b['key']}"
        task.mkdir(parents=True)
        (task / "result.json").write_text(json.dumps(result_of(b, "passed" if b["key"] == "0" else "failed")))


def test_the_html_report_shows_both_scorings(tmp_path: Path) -> None:
    write_results(tmp_path, BLOCKS)
    write_predictions(tmp_path, BLOCKS)
    index = write_report(tmp_path).read_text()
    assert '<table class="groups" id="omniact">' in index
    assert "official decides pass/fail" in index
    assert "1 / 3 OmniACT items passed" in index
    assert f"{(2.1 * 0.8 + 1.1 * 0.5) / 3.3:.4f}" in index  # official action, all
    assert f"{3.2 / 3.3:.4f}" in index  # paper action, all
    assert f'<a href="{PREDICTIONS_NAME}">{PREDICTIONS_NAME}</a>' in index
    page = (tmp_path / "pyautogui/screenshot/replay/omniact/test_0/report.html").read_text()
    assert "OmniACT: official scoring" in page and "sequence 1.0000, action 0.8000" in page
    assert "OmniACT: paper scoring" in page and "key 0 of /data/omniact/test.json" in page


def test_a_report_without_omniact_items_has_no_omniact_section(tmp_path: Path) -> None:
    write_results(tmp_path, [])
    assert 'id="omniact"' not in write_report(tmp_path).read_text()


def test_a_merge_of_shards_writes_the_predictions_of_the_whole_run(tmp_path: Path) -> None:
    write_results(tmp_path / "shard-1", BLOCKS[:2])
    write_results(tmp_path / "shard-2", BLOCKS[2:])
    merged = merge([tmp_path / "shard-1", tmp_path / "shard-2"], tmp_path / "merged")
    assert json.loads((tmp_path / "merged" / PREDICTIONS_NAME).read_text()) == {
        b["key"]: b["prediction"] for b in BLOCKS
    }
    assert figure_lines(BLOCKS)[1] in merged.summary_text
