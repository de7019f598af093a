"""The suite's self-check (ARCHITECTURE.md section 8): every evaluator proven both ways.

Runs ``pytest tasks --agent=replay`` and ``pytest tasks --agent=noop`` and reads their
JUnit reports: replay must score 1 on every task (infeasible tasks by saying FAIL) and
noop must score 0 on every task, with no errors and no skips. Extra pytest arguments
(such as ``-n 2``) are passed through. Exits non-zero, listing the offenders, otherwise.

    .venv/bin/python scripts/selfcheck.py -n 2
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(agent: str, extra: list[str], workdir: Path) -> dict[str, tuple[str, float | None]]:
    """Run the suite with ``agent``; return {test id: (outcome, score)} from its JUnit report."""
    junit = workdir / f"{agent}.xml"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tasks",
        f"--agent={agent}",
        f"--junitxml={junit}",
        f"--results-dir={workdir / agent}",
        "-p",
        "no:cacheprovider",
        "-q",
        *extra,
    ]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=ROOT, check=False)
    if not junit.is_file():
        raise SystemExit(f"selfcheck: pytest wrote no JUnit report for --agent={agent}")
    results: dict[str, tuple[str, float | None]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if case.find("error") is not None:
            outcome = "error"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        elif case.find("failure") is not None:
            outcome = "failed"
        else:
            outcome = "passed"
        score = props.get("score")
        results[name] = (outcome, float(score) if score is not None else None)
    return results


def main(argv: list[str]) -> int:
    """Run both agents and check every task's score; print a verdict."""
    with tempfile.TemporaryDirectory(prefix="osworld-selfcheck-") as tmp:
        replay = run("replay", argv, Path(tmp))
        noop = run("noop", argv, Path(tmp))
    problems = [
        f"replay {name}: {outcome}, score {score}"
        for name, (outcome, score) in replay.items()
        if outcome != "passed" or score != 1.0
    ]
    problems += [
        f"noop {name}: {outcome}, score {score}"
        for name, (outcome, score) in noop.items()
        if outcome != "failed" or score != 0.0
    ]
    if not replay or set(replay) != set(noop):
        problems.append(f"the runs saw different or no tasks ({len(replay)} vs {len(noop)})")
    print(
        f"selfcheck: {len(replay)} tasks; replay scored 1 on "
        f"{sum(1 for o, s in replay.values() if o == 'passed' and s == 1.0)}, noop scored 0 on "
        f"{sum(1 for o, s in noop.values() if o == 'failed' and s == 0.0)}"
    )
    for problem in problems:
        print(f"selfcheck: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
