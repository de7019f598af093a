"""Level 1, metric parity: our metric functions against OSWorld's on the same cases.

    .venv/bin/python -m parity.metrics --out parity-results/metrics.json [--quick]

Cases come from OSWorld's task files (``--tasks``, default ../shared/osworld/examples beside the repository
or ``$OSWORLD_TASKS``; the level is skipped with a message when the folder is absent):
each metric use's options and rules applied to small real files made here. Ours are scored
through the plugin's own ``score_metric`` (what the runner calls); OSWorld's by
``parity/oracle_side/metrics_oracle.py`` in ``.parity-venv`` on a copy of the files, at the
same time. Scores must agree within 1e-6 (or the metric's stated tolerance).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from parity.documented import documented_names
from parity.metric_cases import build_cases
from parity.metric_cases_tasks import Case
from parity.oracle_venv import ensure_oracle_venv

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TASKS = ROOT.parent / "shared" / "osworld" / "examples"  # shared/ beside the clone, as in CI
EPSILON = 1e-6
CASE_TIMEOUT = 30
STUB_MARK = "stubbed in the parity oracle venv"

#: Stated tolerances for fractional metrics where a library differs (see docs/parity.md).
TOLERANCE: dict[str, float] = {}


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout(f"timed out after {CASE_TIMEOUT} s")


def score_ours(cases: list[Case]) -> dict[str, dict[str, Any]]:
    """Score every case with the plugin's metrics, as its evaluator does."""
    from pytest_osworld.evaluators.evaluate import score_metric

    signal.signal(signal.SIGALRM, _alarm)
    scores: dict[str, dict[str, Any]] = {}
    for number, case in enumerate(cases, start=1):
        signal.alarm(CASE_TIMEOUT)
        try:
            outcome = score_metric(
                case.metric, case.result, case.expected, dict(case.options), case.has_expected
            )
            scores[case.id] = {"score": float(outcome.value or 0.0), "error": outcome.reason[:300]}
        except _Timeout as error:
            scores[case.id] = {"score": 0.0, "error": str(error)}
        finally:
            signal.alarm(0)
        if number % 500 == 0:
            print(f"parity: ours scored {number}/{len(cases)} metric cases", flush=True)
    return scores


def start_oracle(
    python: Path, cases: list[Case], work: Path, files: Path
) -> tuple[subprocess.Popen[bytes], Path]:
    """Copy the files and start the oracle on its own copy; returns the process and its output."""
    copy = work / "oracle-files"
    shutil.copytree(files, copy)
    text = json.dumps([case.as_json() for case in cases]).replace(str(files), str(copy))
    (work / "oracle-cases.json").write_text(text)
    out = work / "oracle-scores.json"
    script = ROOT / "parity" / "oracle_side" / "metrics_oracle.py"
    process = subprocess.Popen(
        [str(python), str(script), str(work / "oracle-cases.json"), str(out)], cwd=work
    )
    return process, out


def compare(
    cases: list[Case],
    ours: dict[str, dict[str, Any]],
    oracle: dict[str, dict[str, Any]],
    documented: set[str],
) -> dict[str, Any]:
    """Per-metric rows, metrics not compared and every disagreement."""
    rows: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    skipped_cases: dict[str, int] = {}
    disagreements: list[dict[str, Any]] = []
    for case in cases:
        theirs = oracle.get(case.id, {"score": None, "error": "oracle gave no score"})
        note = (
            "oracle: upstream behaviour after 1.0.2 (oracle_side/metrics_upstream.py)"
            if theirs.get("upstream")
            else ""
        )
        if theirs["score"] is None or STUB_MARK in str(theirs.get("error", "")):
            skipped.setdefault(case.metric, str(theirs.get("error") or "no score"))
            skipped_cases[case.metric] = skipped_cases.get(case.metric, 0) + 1
            continue
        row = rows.setdefault(
            case.metric,
            {"name": case.metric, "cases": 0, "agree": 0, "documented": 0, "undocumented": 0, "note": note},
        )
        row["cases"] += 1
        mine = ours[case.id]
        if abs(mine["score"] - theirs["score"]) <= TOLERANCE.get(case.metric, EPSILON):
            row["agree"] += 1
            continue
        known = case.metric in documented
        row["documented" if known else "undocumented"] += 1
        disagreements.append(
            {
                "name": case.metric,
                "case": case.id,
                "ours": mine["score"],
                "oracle": theirs["score"],
                "documented": known,
                "ours_reason": mine["error"],
                "oracle_error": theirs.get("error", ""),
                "options": case.options,
            }
        )
    for name, count in skipped_cases.items():
        if name in rows:
            extra = f"{count} more cases not compared: {skipped[name][:80]}"
            rows[name]["note"] = "; ".join(filter(None, [rows[name]["note"], extra]))
    not_compared = [
        {"name": name, "why": f"OSWorld's side cannot run it here: {why}"}
        for name, why in sorted(skipped.items())
        if name not in rows
    ]
    return {
        "rows": sorted(rows.values(), key=lambda r: r["name"]),
        "not_compared": not_compared,
        "disagreements": disagreements,
    }


def quick_subset(cases: list[Case]) -> list[Case]:
    """Every fifth case of each metric (its first included), so every metric keeps a case."""
    seen: dict[str, int] = {}
    kept = []
    for case in cases:
        index = seen.get(case.metric, 0)
        seen[case.metric] = index + 1
        if index % 5 == 0:
            kept.append(case)
    return kept


def uncovered(report: dict[str, Any]) -> list[dict[str, str]]:
    """Registered metrics that got no case at all (no task uses them, no made-up use)."""
    from pytest_osworld.evaluators.metrics import METRIC_TABLE

    seen = {row["name"] for row in report["rows"]} | {item["name"] for item in report["not_compared"]}
    why = "no case: no OSWorld task in the set uses it and it has no made-up use (docs/parity.md)"
    return [{"name": name, "why": why} for name, _ in METRIC_TABLE if name not in seen]


def run(tasks: Path, quick: bool) -> dict[str, Any]:
    """Run the level and return its JSON report."""
    started = time.monotonic()
    if not tasks.is_dir():
        print(f"parity: metric level skipped: no OSWorld task folder at {tasks}", flush=True)
        why = f"no OSWorld task folder at {tasks} (set OSWORLD_TASKS or --tasks)"
        return {
            "level": "metrics",
            "seconds": 0.0,
            "rows": [],
            "not_compared": [{"name": "metrics", "why": why}],
            "disagreements": [],
        }
    python = ensure_oracle_venv(ROOT)
    with tempfile.TemporaryDirectory(prefix="parity-metrics-") as tmp:
        work = Path(tmp)
        files = work / "files"
        cases = build_cases(tasks, files)
        if quick:
            cases = quick_subset(cases)
        print(f"parity: {len(cases)} metric cases from {tasks}", flush=True)
        process, out = start_oracle(python, cases, work, files)
        ours = score_ours(cases)
        if process.wait() != 0 or not out.is_file():
            raise SystemExit(f"parity: the oracle's metric run failed (exit {process.returncode})")
        oracle = json.loads(out.read_text())
        report = compare(cases, ours, oracle, documented_names(ROOT))
    report["not_compared"] += uncovered(report)
    return {"level": "metrics", "seconds": round(time.monotonic() - started, 1), **report}


def main(argv: list[str] | None = None) -> int:
    """CLI: run level 1 and write its JSON."""
    parser = argparse.ArgumentParser(description="Metric parity with OSWorld (level 1)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="every fifth case of each metric")
    parser.add_argument("--tasks", type=Path, default=Path(os.environ.get("OSWORLD_TASKS", DEFAULT_TASKS)))
    args = parser.parse_args(argv)
    report = run(args.tasks, args.quick)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, default=str))
    rows = report["rows"]
    total = sum(r["cases"] for r in rows)
    bad = sum(r["undocumented"] for r in rows)
    seconds = report["seconds"]
    print(
        f"parity: metrics: {total} cases, {len(rows)} metrics, {bad} undocumented disagreements, {seconds} s"
    )
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
