"""The report's charts: figures checked against values worked out by hand, and hostile labels.

Wilson 95% intervals used below (z = 1.959964, z^2 = 3.841459), worked out by hand:
- 1 of 2: centre 0.5, half-width 1.959964 / 2.920729 * sqrt(0.125 + 0.240091) = 0.405469,
  so [0.094531, 0.905469] (9.5% to 90.5%);
- 0 of 1: [0, z^2 / (1 + z^2)] = [0, 0.793451] (0.0% to 79.3%);
- 2 of 2: [2 / (2 + z^2), 1] = [0.342380, 1] (34.2% to 100.0%).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from report_tree import ACTION_SPACE, MODEL, OBSERVATION, record_task, write_task_file

from pytest_osworld.episode.result import TaskResult
from pytest_osworld.report.html import write_report
from pytest_osworld.report.model import TaskView
from pytest_osworld.report.plots import phase_plot, score_bins
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.report.svg import nice_step

SVG = "{http://www.w3.org/2000/svg}"


def charts(page: Path) -> dict[str, ET.Element]:
    """Every chart of a page, by its key, parsed as XML (the SVG must be well-formed)."""
    html = page.read_text(encoding="utf-8")
    found = {}
    for match in re.finditer(r'<figure class="chart" id="chart-([^"]+)">.*?(<svg.*?</svg>)', html, re.S):
        svg = match.group(2).replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
        found[match.group(1)] = ET.fromstring(svg)
    return found


def bars(chart: ET.Element) -> dict[str, ET.Element]:
    """The rate bars of a rate chart, by the label at the start of their tooltip."""
    out = {}
    for rect in chart.iter(f"{SVG}rect"):
        if rect.get("class") == "rate-bar":
            out[rect.findtext(f"{SVG}title", "").split(":")[0]] = rect
    return out


def axis(chart: ET.Element) -> tuple[float, float]:
    """The x of the 0% and 100% grid lines of a rate chart."""
    ticks = {t.text: float(t.get("x", "nan")) for t in chart.iter(f"{SVG}text") if t.text in ("0%", "100%")}
    return ticks["0%"], ticks["100%"]


def texts(chart: ET.Element) -> list[str]:
    """The visible text of every ``<text>`` (a tooltip ``<title>`` inside it left out)."""
    return [(t.text or "") + "".join(child.tail or "" for child in t) for t in chart.iter(f"{SVG}text")]


def add_timings(folder: Path, phases: dict[str, float], steps: list[dict[str, float]] | None = None) -> None:
    data = json.loads((folder / "result.json").read_text())
    data["timings"] = {"phases": phases, "total": sum(phases.values()), "fixed_overhead": 1.25}
    if steps is not None:
        data["timings"]["step_times"] = steps
    (folder / "result.json").write_text(json.dumps(data))


def rate_tree(root: Path) -> None:
    record_task(root, "os", "os-pass")
    record_task(root, "os", "os-fail", outcome="failed", score=0.0)
    record_task(root, "chrome", "ch-fail", outcome="failed", score=0.0)
    record_task(root, "gimp", "g-1")
    record_task(root, "gimp", "g-2")
    record_task(root, "gimp", "g-skip", outcome="skipped", score=None, steps=[])


def test_success_rate_bars_and_wilson_intervals_match_hand_computed_values(tmp_path: Path) -> None:
    root = tmp_path / "results"
    rate_tree(root)
    found = charts(write_report(root))
    expected = {  # label: (rate, low, high, text beside the bar)
        "os": (0.5, 0.094531, 0.905469, "50.0% (1/2) [9.5%, 90.5%]"),
        "chrome": (0.0, 0.0, 0.793451, "0.0% (0/1) [0.0%, 79.3%]"),
        "gimp": (1.0, 0.342380, 1.0, "100.0% (2/2) [34.2%, 100.0%]"),  # the skipped task did not run
    }
    by_category = {"OS": expected["os"], "Daily": expected["chrome"], "Professional": expected["gimp"]}
    for key, wanted in (("by-domain", expected), ("by-category", by_category)):
        chart = found[key]
        assert chart.findtext(f"{SVG}title", "").startswith("Success rate by")
        zero, full = axis(chart)
        width = full - zero
        shown = bars(chart)
        assert set(shown) == set(wanted)
        for label, (rate, low, high, text) in wanted.items():
            rect = shown[label]
            assert float(rect.get("data-rate", "nan")) == pytest.approx(rate, abs=1e-6)
            assert float(rect.get("width", "nan")) == pytest.approx(rate * width, abs=0.02)
            assert float(rect.get("x", "nan")) == pytest.approx(zero, abs=0.02)
            assert text in texts(chart)
            whisker = next(
                p
                for p in chart.iter(f"{SVG}path")
                if p.findtext(f"{SVG}title", "") == rect.findtext(f"{SVG}title")
            )
            assert float(whisker.get("data-low", "nan")) == pytest.approx(low, abs=2e-6)
            assert float(whisker.get("data-high", "nan")) == pytest.approx(high, abs=2e-6)
            start, end = re.match(r"M([\d.]+),[\d.]+ H([\d.]+)", whisker.get("d", "")).groups()
            assert float(start) == pytest.approx(zero + low * width, abs=0.02)
            assert float(end) == pytest.approx(zero + high * width, abs=0.02)


def test_score_and_step_histograms_count_the_tasks(tmp_path: Path) -> None:
    root = tmp_path / "results"
    record_task(root, "os", "a", steps=[{"special": "DONE"}])  # 1 step, passed
    record_task(root, "os", "b", outcome="failed", score=0.0, steps=[{"special": "FAIL"}])  # 1 step
    record_task(
        root, "os", "c", outcome="failed", score=0.55, steps=[{"code": "x=1"}] * 2 + [{"special": "DONE"}]
    )
    record_task(root, "os", "d", score=1.0, steps=[{"code": "x=1"}] * 2 + [{"special": "DONE"}])  # 3 steps
    found = charts(write_report(root))

    def columns(key: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for rect in found[key].iter(f"{SVG}rect"):
            if rect.get("data-segment"):
                name = f"{rect.get('data-column')}|{rect.get('data-segment')}"
                out[name] = float(rect.get("data-value", "nan"))
        return out

    assert columns("scores") == {"0|tasks": 1.0, "0.5-0.6|tasks": 1.0, "1|tasks": 2.0}
    assert columns("steps") == {"1|passed": 1.0, "1|not passed": 1.0, "3|passed": 1.0, "3|not passed": 1.0}
    # one tooltip per column, on a transparent cover as tall as the column
    covers = {
        r.get("data-column"): r for r in found["steps"].iter(f"{SVG}rect") if r.get("fill") == "transparent"
    }
    assert covers["3"].findtext(f"{SVG}title") == "3 steps: 2 tasks, 1 passed, 1 not passed"
    assert covers["0"].get("height") == "0.0"
    # the step axis runs to the budget (15) even though no task used that many
    labels = texts(found["steps"])
    assert "15" in labels and "16" not in labels


def test_time_charts_appear_only_with_timings(tmp_path: Path) -> None:
    root = tmp_path / "results"
    old = record_task(root, "os", "old")
    assert "phases" not in charts(write_report(root))  # older results have no timings
    assert "task-phases" not in charts(old / "report.html")
    new = record_task(root, "os", "new")
    phases = {"restore": 1.0, "setup": 2.0, "setup_sleep": 0.0, "observe": 0.5, "agent": 4.0}
    phases |= {"actions": 1.5, "postconfig": 0.0, "evaluation": 0.75, "record": 0.25}
    add_timings(new, phases, [{"index": 1, "observe": 0.25, "agent": 2.0, "actions": 0.5}])
    found = charts(write_report(root))
    per_task = {
        rect.get("data-segment"): float(rect.get("data-value", "nan"))
        for rect in found["phases"].iter(f"{SVG}rect")
        if rect.get("data-segment")
    }
    assert per_task == {name: value for name, value in phases.items() if value > 0}
    # whole run: 10 s, of which the agent 4 s (40.0%), over the one task with timings
    totals = {
        t.text.split(" ")[0]: t.text
        for t in found["phase-totals"].iter(f"{SVG}text")
        if "per task" in (t.text or "")
    }
    assert totals["4.0"] == "4.0 s · 40.0% · 4.0 s per task"
    assert totals["750"] == "750 ms · 7.5% · 750 ms per task"
    task_page = charts(new / "report.html")
    assert "task-phases" in task_page and "step-times" in task_page
    steps = {
        r.get("data-segment"): r.get("data-value")
        for r in task_page["step-times"].iter(f"{SVG}rect")
        if r.get("data-segment")
    }
    assert steps == {"observe": "0.25", "agent": "2", "actions": "0.5"}
    assert "1.25 s (total - agent - setup sleeps)" in (new / "report.html").read_text()


def record_repeat(root: Path, task_id: str, repeat: int, passed: bool) -> None:
    recorder = TaskRecorder(root, ACTION_SPACE, OBSERVATION, MODEL, "os", task_id, repeat=repeat)
    recorder.finish(
        TaskResult(
            task_id=task_id,
            domain="os",
            nodeid=f"tasks/os/{task_id}.json::os/{task_id}[{repeat}]",
            outcome="passed" if passed else "failed",
            score=1.0 if passed else 0.0,
            threshold=1.0,
            end_reason="done",
            steps=1,
            max_steps=15,
            duration_s=1.0,
            infeasible=False,
            repeat=repeat,
        )
    )


def test_pass_at_k_curve_with_repeats(tmp_path: Path) -> None:
    root = tmp_path / "results"
    for repeat in (1, 2, 3):
        record_repeat(root, "x", repeat, passed=repeat == 2)  # 1 of 3
        record_repeat(root, "y", repeat, passed=True)  # 3 of 3
    index = write_report(root)
    points = {
        c.findtext(f"{SVG}title", "").split(":")[0]: float(c.get("data-value", "nan"))
        for c in charts(index)["pass-at-k"].iter(f"{SVG}circle")
    }
    # pass@k, x: 1/3, 1 - C(2,2)/C(3,2) = 2/3, 1; y: 1 at every k
    # pass^k, x: 1/3, C(1,2)/C(3,2) = 0, 0; y: 1 at every k
    assert points == pytest.approx(
        {
            "pass@k at k=1": (1 / 3 + 1) / 2,
            "pass@k at k=2": (2 / 3 + 1) / 2,
            "pass@k at k=3": 1.0,
            "pass^k at k=1": (1 / 3 + 1) / 2,
            "pass^k at k=2": 0.5,
            "pass^k at k=3": 0.5,
        }
    )
    html = index.read_text()
    assert '<div class="v">66.7%</div><div class="l">pass@1</div>' in html
    assert '<div class="v">83.3%</div><div class="l">pass@2</div>' in html
    assert '<div class="v">4 / 6</div><div class="l">runs passed</div>' in html
    assert "run 3" in html  # the task table says which run a row is


def test_no_pass_at_k_without_repeats(tmp_path: Path) -> None:
    root = tmp_path / "results"
    record_task(root, "os", "a")
    index = write_report(root)
    assert "pass-at-k" not in charts(index)
    assert "Repeated runs" not in index.read_text()


HOSTILE_ID = '"><img src=x onerror=alert(1)>'


def test_hostile_labels_instructions_and_file_names_are_text(tmp_path: Path) -> None:
    root = tmp_path / "results"
    task_file = write_task_file(
        tmp_path / "tasks", "t", "os", "<script>alert(1)</script>", {"func": "exact_match"}
    )
    folder = record_task(
        root,
        HOSTILE_ID,
        HOSTILE_ID,
        task_file=task_file,
        reason=HOSTILE_ID,
        evaluator_inputs=[{"func": "exact_match", "options": {}, "result": {"file": HOSTILE_ID}}],
        eval_files={HOSTILE_ID: "x"},
    )
    add_timings(folder, {"agent": 1.0})
    for page in (write_report(root), folder / "report.html"):
        html = page.read_text()
        assert "<img src=x" not in html and "<script>alert" not in html
        for chart in charts(page).values():  # still well-formed SVG, the label kept as text
            assert all(e.tag.startswith(SVG) for e in chart.iter())
    task_html = (folder / "report.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in task_html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</a>" in task_html  # the evaluator input's file name
    by_domain = charts(root / "index.html")["by-domain"]
    assert HOSTILE_ID in [t.findtext(f"{SVG}title") for t in by_domain.iter(f"{SVG}text")]


def test_the_time_chart_keeps_the_longest_tasks_of_a_big_run(tmp_path: Path) -> None:
    tasks = [
        TaskView(
            tmp_path, f"os/t{i}", "", "os", f"t{i}", {"timings": {"phases": {"agent": float((i * 37) % 70)}}}
        )
        for i in range(70)
    ]
    chart = phase_plot(tasks, most=60)
    assert chart is not None and chart.title == "Time per task, by phase (the 60 longest of 70 tasks)"
    drawn = [m.attrs["data-column"] for m in chart.marks if m.attrs.get("fill") == "transparent"]
    # agent time (i * 37) % 70 takes every value 0..69 once; the 10 shortest (0..9 s) are left out
    kept = [f"t{i}" for i in range(70) if (i * 37) % 70 >= 10]
    assert drawn == kept
    assert phase_plot(tasks[:5]) is not None and phase_plot([]) is None


@pytest.mark.parametrize(
    ("value", "whole", "step"),
    [
        (0.3, False, 0.5),
        (1.25, True, 2.0),
        (0.3, True, 1.0),
        (7.0, False, 10.0),
        (2.2, False, 2.5),
        (0.0, True, 1.0),
    ],
)
def test_nice_step(value: float, whole: bool, step: float) -> None:
    assert nice_step(value, whole) == step


def test_score_bins_edges() -> None:
    counts = dict(score_bins([0.0, 0.1, 0.0999, 0.95, 1.0, 1.5, -0.2]))
    assert counts["0"] == 2 and counts["0.0-0.1"] == 1 and counts["0.1-0.2"] == 1
    assert counts["0.9-1.0"] == 1 and counts["1"] == 2
    assert sum(counts.values()) == 7


@pytest.mark.parametrize(
    "result",
    [
        {"outcome": "passed"},  # a minimal hand-written result
        {
            "outcome": 5,
            "score": "high",
            "threshold": "x",
            "reason": ["not", "text"],
            "metrics": "none",
            "evaluator_inputs": {"func": "x"},
            "steps": "3",
            "max_steps": None,
            "duration_s": True,
            "usage": {"input_tokens": "many", "cost_usd": None},
            "provenance": "?",
            "timings": {"phases": {"agent": "slow", "restore": -1}, "step_times": 7},
            "repeat": "2",
        },
    ],
)
def test_odd_result_files_still_give_pages(tmp_path: Path, result: dict[str, object]) -> None:
    root = tmp_path / "results"
    folder = root / ACTION_SPACE / OBSERVATION / MODEL / "os" / "odd"
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(result))
    index = write_report(root)
    assert "odd" in index.read_text()
    assert "<h2>Evaluator</h2>" in (folder / "report.html").read_text()
    assert {"by-category", "by-domain", "scores", "steps"} <= set(charts(index))
