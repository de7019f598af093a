"""The trajectories parity level's pieces: solutions from recorded actions, the subsets,
documented causes and the agreement counts (the replay itself runs by hand and in CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parity.trajectories import (
    CI_FLOOR,
    PRELUDE,
    Replayed,
    Trajectory,
    as_solution,
    below_floor,
    cause_label,
    documented,
    load_trajectories,
    out_of_reach,
    report,
    select,
    why_documented,
)
from parity.trajectory_page import write_page

SHARED = Path(__file__).resolve().parents[3] / "shared" / "osworld" / "trajectories"


def trajectory(
    score: float, steps: int = 3, task_id: str = "d52d6308-ec58", agent: str = "ui-tars"
) -> Trajectory:
    actions = tuple(["pyautogui.click(1, 2)"] * (steps - 1) + ["DONE"])
    return Trajectory(agent, "gimp", task_id, score, actions)


def test_code_actions_get_their_imports_and_a_pause_special_actions_stay() -> None:
    solution = as_solution(["pyperclip.copy('Etsy')\npyautogui.hotkey('ctrl', 'v')", "WAIT", "DONE"], 3)
    assert solution[0] == f"{PRELUDE}\npyperclip.copy('Etsy')\npyautogui.hotkey('ctrl', 'v')\ntime.sleep(3)"
    assert solution[1:] == ["WAIT", "DONE"]


def test_the_ci_subset_is_short_successes_that_can_pass_here() -> None:
    chosen = [
        trajectory(1.0, 3),
        trajectory(0.0, 3, task_id="7767eef2"),
        trajectory(1.0, 11, task_id="7b7617bd"),
        trajectory(1.0, 3, task_id="4e60007a-f5be-4bfc-9723-c39affa0a6d3"),  # known broken here
    ]
    assert [t.task_id for t in select(chosen, "ci", None, None)] == ["d52d6308-ec58"]
    beyond = {"*/gimp/d52d6308": "out of reach"}
    assert select(chosen, "ci", None, None, beyond) == []
    assert len(select(chosen, "all", None, None, beyond)) == 4
    assert len(select(chosen, "all", None, None)) == 4
    assert len(select(chosen, "all", "ui-tars/gimp/7*", None)) == 2
    assert select(chosen, "all", None, ["doubao"]) == []


def test_documented_names_come_from_their_section_only() -> None:
    text = (
        "## Other\n- `ui-tars/gimp/d52d6308`: not this one\n"
        "## What real agents meet\n"
        "- `ui-tars/gimp/d52d6308`, `doubao/os/28cc3b7e`: the volume slider is lower\n"
        "- `*/vs_code/4e60007a`: the marketplace needs the internet\n"
        "  - `ui-tars/os/nested`: a sub-bullet names nothing\n"
        "## Next\n- `doubao/chrome/12086550`: not this one either\n"
    )
    names = documented(text)
    assert set(names) == {"ui-tars/gimp/d52d6308", "doubao/os/28cc3b7e", "*/vs_code/4e60007a"}
    assert names["doubao/os/28cc3b7e"] == "the volume slider is lower"
    both = Trajectory("doubao", "vs_code", "4e60007a-f5be", 1.0, ("DONE",))
    assert why_documented(both, names) == "the marketplace needs the internet"
    assert why_documented(trajectory(1.0, task_id="7767eef2"), names) == ""


def test_the_out_of_reach_list_is_read_from_its_subsection() -> None:
    text = (
        "## What real agents meet\n"
        "### Out of reach\n"
        "- `*/chrome/12086550`, `ui-tars/vs_code/57242fad`: Google Chrome cannot be installed here\n"
        "### Why the others part from the original\n"
        "- `doubao/os/28cc3b7e`: the volume slider is lower\n"
    )
    beyond = out_of_reach(text)
    assert beyond == {
        "*/chrome/12086550": "Google Chrome cannot be installed here",
        "ui-tars/vs_code/57242fad": "Google Chrome cannot be installed here",
    }
    assert why_documented(Trajectory("doubao", "chrome", "12086550-x", 1.0, ("DONE",)), beyond)
    assert set(documented(text)) == {"*/chrome/12086550", "ui-tars/vs_code/57242fad", "doubao/os/28cc3b7e"}


def test_successes_out_of_reach_are_counted_apart() -> None:
    replays = [
        Replayed(trajectory(1.0), 1.0, "passed", ""),
        Replayed(trajectory(1.0, task_id="7767eef2"), 0.0, "failed", "", documented="x", reach="no Chrome"),
        Replayed(trajectory(1.0, task_id="7b7617bd"), 1.0, "passed", "", reach="no Chrome"),
    ]
    data = report(replays, 1.0, 3.0, "all")
    assert data["successes_replayed_to_1"] == {"agree": 1, "of": 1, "percent": 100.0}
    assert data["out_of_reach_successes_replayed_to_1"] == {"agree": 1, "of": 2, "percent": 50.0}
    assert [case["name"] for case in data["out_of_reach"]] == [
        "ui-tars/gimp/7767eef2",
        "ui-tars/gimp/7b7617bd",
    ]


def test_agreement_is_1_for_successes_and_below_1_for_failures(tmp_path: Path) -> None:
    replays = [
        Replayed(trajectory(1.0), 1.0, "passed", ""),
        Replayed(trajectory(1.0, task_id="7767eef2"), 0.0, "failed", "missed", documented="a cause"),
        Replayed(trajectory(0.0, task_id="7b7617bd"), 1.0, "passed", ""),  # easier here: a defect
        Replayed(trajectory(0.0, task_id="e19bd559"), None, "error", "broken"),
    ]
    data = report(replays, 12.0, 3.0, "all")
    rows = {row["name"]: row for row in data["rows"]}
    assert rows["ui-tars recorded successes"] | {"undocumented_names": []} == {
        "name": "ui-tars recorded successes", "cases": 2, "agree": 1, "documented": 1, "undocumented": 0,
        "undocumented_names": [],
    }  # fmt: skip
    assert rows["ui-tars recorded failures"]["undocumented_names"] == ["ui-tars/gimp/7b7617bd"]
    assert data["successes_replayed_to_1"] == {"agree": 1, "of": 2, "percent": 50.0}
    assert data["short_failures_replayed_below_1"] == {"agree": 1, "of": 2, "percent": 50.0}
    assert [case["name"] for case in data["disagreements"]] == [
        "ui-tars/gimp/7767eef2",
        "ui-tars/gimp/7b7617bd",
    ]
    assert data["causes"] == [
        {"cause": "a cause", "cases": 1, "names": ["ui-tars/gimp/7767eef2"]},
        {"cause": "not documented", "cases": 1, "names": ["ui-tars/gimp/7b7617bd"]},
    ]
    page = write_page(data, tmp_path / "page.html").read_text()
    assert "Not documented in docs/fidelity.md" in page and "Documented: a cause" in page
    assert "<a href='#ui-tars/gimp/7b7617bd'>" in page


def test_a_cause_is_named_by_its_bullets_first_sentence() -> None:
    bullet = "step 2 drags the volume slider (y = 55). GNOME 43 puts it lower; so it misses."
    assert cause_label(bullet) == "step 2 drags the volume slider (y = 55)"
    assert cause_label("no sentence end here " * 10, width=30) == "no sentence end here no sen..."


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"the recorded trajectories are not at {SHARED}")
def test_the_recorded_trajectories_load_with_their_scores() -> None:
    loaded = load_trajectories(SHARED)
    assert len(loaded) == 128
    assert {t.agent for t in loaded} == {"ui-tars", "doubao"}
    assert sum(t.success for t in loaded) == 49
    ci = select(loaded, "ci", None, None)
    assert 30 <= len(ci) <= 40 and all(t.success and len(t.actions) <= 10 for t in ci)


def test_the_ci_subset_fails_below_its_floor_and_asks_to_raise_it_above(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def data(agree: int) -> dict[str, Any]:
        return {"successes_replayed_to_1": {"agree": agree, "of": 36, "percent": None}}

    assert below_floor(data(CI_FLOOR - 1)) == 1
    assert "below the floor" in capsys.readouterr().err
    assert below_floor(data(CI_FLOOR)) == 0
    assert below_floor(data(CI_FLOOR + 2)) == 0
    assert f"raise CI_FLOOR ({CI_FLOOR}) to {CI_FLOOR + 2}" in capsys.readouterr().out


def test_a_run_that_ran_out_of_steps_ends_with_done_after_all_its_actions() -> None:
    solution = as_solution(["pyautogui.click(1, 2)"] * 3, 3)
    assert len(solution) == 4 and solution[-1] == "DONE"
    assert as_solution([], 3) == ["DONE"]


def test_the_acceptance_subset_is_every_success_and_the_short_failures() -> None:
    chosen = [trajectory(1.0, 80), trajectory(0.0, 30, task_id="a"), trajectory(0.0, 31, task_id="b")]
    assert [t.task_id for t in select(chosen, "acceptance", None, None)] == ["d52d6308-ec58", "a"]
