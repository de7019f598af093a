"""The suite's self-check (ARCHITECTURE.md section 8): every evaluator proven both ways.

Runs ``pytest tasks --agent=replay`` and ``pytest tasks --agent=noop`` and reads their
JUnit reports: replay must score 1 on every task (infeasible tasks by saying FAIL) and
noop must score 0 on every task, with no errors and no skips.

Where OSWorld's examples are at hand (``../shared/osworld/examples``, or the folder in
``OSWORLD_EXAMPLES``), the OSWorld tasks named in ``tasks/osworld_solutions.json`` and
``tasks/osworld_known_broken.txt`` are checked the same way, unchanged: replay with
``--solutions`` must score 1 (a known-broken task must stay a strict xfail), and noop must
score 0 on every one of them, known-broken ones included.

The main command's replay runs a second time as three shards (``--shard K/3``) in three
processes, merged with ``pytest-osworld merge``: every task's outcome and score, and the
summary's rates, must be those of the run in one process.

In both replay runs no solution step may raise (``action_errors`` in ``traj.jsonl``), even
in a task that passes: such a step is a wait that timed out or a click that missed.

Extra pytest arguments (such as ``-n 2``) are passed through. Exits non-zero, listing the
offenders, otherwise.

    .venv/bin/python scripts/selfcheck.py -n 2
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "tasks" / "osworld_solutions.json"
KNOWN_BROKEN = ROOT / "tasks" / "osworld_known_broken.txt"

#: Outcome and score of each test id, from a JUnit report.
Results = dict[str, tuple[str, float | None]]


def run(
    label: str, agent: str, targets: list[str], extra: list[str], workdir: Path, junit: Path | None = None
) -> Results:
    """Run pytest with ``agent`` on ``targets`` into ``workdir/label``; return {test id:
    (outcome, score)} from its JUnit report (``workdir/label.xml`` unless ``junit``)."""
    junit = junit or workdir / f"{label}.xml"
    command = [
        sys.executable,
        "-m",
        "pytest",
        *targets,
        f"--agent={agent}",
        f"--junitxml={junit}",
        f"--results-dir={workdir / label}",
        "-p",
        "no:cacheprovider",
        "-q",
        *extra,
    ]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=ROOT, check=False)
    if not junit.is_file():
        raise SystemExit(f"selfcheck: pytest wrote no JUnit report for {label}")
    return read_junit(junit)


def read_junit(junit: Path) -> Results:
    """{test id: (outcome, score)} of a JUnit report."""
    results: Results = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        skipped = case.find("skipped")
        if case.find("error") is not None:
            outcome = "error"
        elif skipped is not None:
            outcome = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        elif case.find("failure") is not None:
            outcome = "failed"
        else:
            outcome = "passed"
        score = props.get("score")
        results[name] = (outcome, float(score) if score is not None else None)
    return results


def rates(results_dir: Path) -> list[str]:
    """The summary's rate lines of a results folder, as the terminal and the merge print them."""
    from pytest_osworld.report.resume import read_result, task_folders
    from pytest_osworld.report.summary import record_of_result, summary_lines

    found = [read_result(folder) for folder in task_folders(results_dir)]
    return summary_lines([record_of_result(r) for r in found if r is not None])


def check_shards(
    label: str, targets: list[str], extra: list[str], workdir: Path, whole: Results
) -> list[str]:
    """The run of agent ``label`` again as three separate processes (``--shard K/3``),
    merged with ``pytest-osworld merge``: per-task outcomes, scores and summary rates must
    be those of the run in one process (``whole``, in ``workdir/label``), with one HTML
    report."""
    shards = 3
    parts = [f"{label}-shard-{k}" for k in range(1, shards + 1)]
    for k, part in enumerate(parts, 1):
        shard = [f"--shard={k}/{shards}", *extra]
        run(part, label, targets, shard, workdir, junit=workdir / part / "junit.xml")
    merged = workdir / f"{label}-merged"
    merge = str(Path(sys.executable).parent / "pytest-osworld")
    command = [merge, "merge", *(str(workdir / p) for p in parts), "--out", str(merged)]
    print("+", " ".join(command), flush=True)
    done = subprocess.run(command, cwd=ROOT, check=False)
    if done.returncode != 0:
        return [f"{label}: pytest-osworld merge of {shards} shards exited with {done.returncode}"]
    problems = []
    combined = read_junit(merged / "junit.xml")
    for name in sorted(set(whole) | set(combined)):
        if whole.get(name) != combined.get(name):
            problems.append(f"{label} {name}: {whole.get(name)} in one run, {combined.get(name)} merged")
    if rates(workdir / label) != rates(merged):
        problems.append(f"{label}: merged rates {rates(merged)}, one run's {rates(workdir / label)}")
    if not (merged / "index.html").is_file():
        problems.append(f"{label}: the merge wrote no HTML report")
    verdict = "as in one run" if not problems else "NOT as in one run"
    print(f"selfcheck: {label}: {shards} shards merged: {len(combined)} tasks, {verdict}", flush=True)
    return problems


def osworld_examples() -> Path | None:
    """OSWorld's examples folder, if it is on this machine."""
    folder = Path(os.environ.get("OSWORLD_EXAMPLES", ROOT.parent / "shared" / "osworld" / "examples"))
    return folder if folder.is_dir() else None


def osworld_targets(examples: Path) -> list[str]:
    """The OSWorld task files with a solution or a known-broken entry."""
    files = {str(examples / key) for key in json.loads(SOLUTIONS.read_text())}
    for line in KNOWN_BROKEN.read_text().splitlines():
        task_id = line.split("#", 1)[0].partition(":")[0].strip()
        if task_id:
            files.update(str(path) for path in examples.glob(f"*/{task_id}.json"))
    return sorted(files)


def raised_steps(results_dir: Path) -> list[str]:
    """Solution steps that raised in tasks that still passed: a wait that timed out, a click
    that missed. The score hides them, the time does not (a wait's whole timeout is lost),
    so each one is a defect of that solution."""
    found = []
    for traj in sorted(results_dir.rglob("traj.jsonl")):
        try:
            outcome = json.loads((traj.parent / "result.json").read_text()).get("outcome")
        except (OSError, ValueError):
            continue
        if outcome != "passed":
            continue
        for line in traj.read_text().splitlines():
            step = json.loads(line)
            errors = step.get("action_errors") or []
            if errors:
                last = str(errors[-1]).strip().splitlines()[-1]
                found.append(f"{traj.parent.relative_to(results_dir)} step {step.get('step_num')}: {last}")
    return found


def check(label: str, replay: Results, noop: Results) -> list[str]:
    """Replay scores 1 (or is a known-broken xfail); noop scores 0; both saw the same tasks."""
    problems = [
        f"{label} replay {name}: {outcome}, score {score}"
        for name, (outcome, score) in replay.items()
        if not (outcome == "passed" and score == 1.0) and outcome != "xfailed"
    ]
    problems += [
        f"{label} noop {name}: {outcome}, score {score}"
        for name, (outcome, score) in noop.items()
        if outcome != "failed" or score != 0.0
    ]
    if not replay or set(replay) != set(noop):
        problems.append(f"{label}: the runs saw different or no tasks ({len(replay)} vs {len(noop)})")
    print(
        f"selfcheck: {label}: {len(replay)} tasks; replay scored 1 on "
        f"{sum(1 for o, s in replay.values() if o == 'passed' and s == 1.0)} "
        f"({sum(1 for o, _ in replay.values() if o == 'xfailed')} known broken), noop scored 0 on "
        f"{sum(1 for o, s in noop.values() if o == 'failed' and s == 0.0)}"
    )
    return problems


def main(argv: list[str]) -> int:
    """Run both agents on our tasks and on OSWorld's solved ones; print a verdict."""
    with tempfile.TemporaryDirectory(prefix="osworld-selfcheck-") as tmp:
        work = Path(tmp)
        replay = run("replay", "replay", ["tasks"], argv, work)
        problems = check("tasks", replay, run("noop", "noop", ["tasks"], argv, work))
        # The main command again, as three shards in three processes, merged.
        problems += check_shards("replay", ["tasks"], argv, work, replay)
        problems += [f"tasks replay raised: {step}" for step in raised_steps(work / "replay")]
        examples = osworld_examples()
        if examples is None:
            print("selfcheck: OSWorld's examples are not here; its solved tasks are not checked")
        else:
            targets = osworld_targets(examples)
            replay = run(
                "osworld-replay",
                "replay",
                targets,
                [f"--solutions={SOLUTIONS}", f"--known-broken={KNOWN_BROKEN}", *argv],
                work,
            )
            problems += check("osworld", replay, run("osworld-noop", "noop", targets, argv, work))
            problems += [f"osworld replay raised: {step}" for step in raised_steps(work / "osworld-replay")]
    for problem in problems:
        print(f"selfcheck: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
