"""Check ``--budgets`` against separate runs, by hand, on a whole task folder.

Runs the deterministic agent of the tests (``tests/budget_agent.py``: a task's reference
solution with a harmless step after each action, ended after step 8) three times over the
same tasks: once at ``--max-steps 30 --budgets 5,10``, then alone at ``--max-steps 5`` and at
``--max-steps 10``. For each budget it prints how many tasks' scores at that budget (from the
one run) equal the separate run's, how many differ (listed), how many replays diverged or
broke, and the agent calls of the one run beside those of the three runs a user would
otherwise make.

    .venv/bin/python scripts/budgets_check.py tasks -- -n 2
    .venv/bin/python scripts/budgets_check.py --osworld -- -n 2    # OSWorld's solved tasks

Exits 1 when a counted score differs from the separate run's or the one run made more agent
calls than a run at 30 steps would. Each run's results stay in ``--work`` (a temporary folder
unless given).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from selfcheck import KNOWN_BROKEN, SOLUTIONS, osworld_examples, osworld_targets  # noqa: E402

BUDGETS = (5, 10)
MAX_STEPS = 30


def run(targets: list[str], results: Path, steps: int, extra: list[str], budgets: bool) -> None:
    """One pytest run of the budget agent over ``targets``; its calls go to ``<results>.calls``."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        *targets,
        "--agent=budget_agent:BudgetAgent",
        f"--agent-arg=calls={results}.calls",
        f"--max-steps={steps}",
        f"--results-dir={results}",
        "-p",
        "no:cacheprovider",
        "-q",
        *([f"--budgets={','.join(map(str, BUDGETS))}"] if budgets else []),
        *extra,
    ]
    path = os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    print("+", " ".join(command[:3]), f"({len(targets)} targets)", *command[3 + len(targets) :], flush=True)
    subprocess.run(command, cwd=ROOT, env=env, check=False)


def results_of(folder: Path) -> dict[str, dict[str, Any]]:
    """Each task's ``result.json``, by task id."""
    found = {}
    for path in folder.rglob("result.json"):
        data = json.loads(path.read_text())
        found[data["task_id"]] = data
    return found


def calls(results: Path) -> int:
    """The agent calls a run made."""
    path = Path(f"{results}.calls")
    return len(path.read_text().splitlines()) if path.is_file() else 0


def compare(work: Path) -> tuple[list[str], bool]:
    """The report's lines and whether every counted score agreed."""
    one = results_of(work / "r30")
    lines = [f"tasks in the one run: {len(one)}"]
    agreed = True
    for budget in BUDGETS:
        alone = results_of(work / f"r{budget}")
        same = differ = diverged = broke = missing = 0
        cut = ended = 0
        listed = []
        for task_id, result in sorted(one.items()):
            entry = (result.get("scores_at") or {}).get(str(budget))
            if entry is None or task_id not in alone:
                missing += 1
                continue
            if entry["end"] == "diverged":
                diverged += 1
                reason = entry.get("reason", "")[:160]
                listed.append(f"    diverged {task_id} at step {entry.get('diverged_at')}: {reason}")
                continue
            if entry["end"] == "error":
                broke += 1
                listed.append(f"    error {task_id}: {entry.get('reason', '')[:160]}")
                continue
            cut += entry["end"] == "cut"
            ended += entry["end"] == "ended_before"
            if entry["score"] == alone[task_id]["score"]:
                same += 1
            else:
                differ += 1
                score = alone[task_id]["score"]
                listed.append(f"    differs {task_id}: {entry['score']} here, {score} alone")
        agreed = agreed and differ == 0
        lines.append(
            f"budget {budget:>3}: {same} same score as the separate run, {differ} differ, "
            f"{diverged} diverged, {broke} broke, {missing} missing ({cut} cut and replayed, "
            f"{ended} ended before)"
        )
        lines += listed
    one_calls = calls(work / "r30")
    separate = sum(calls(work / f"r{budget}") for budget in BUDGETS) + one_calls
    lines.append(f"agent calls: {one_calls} in the one run; {separate} in runs at 5, 10 and 30 steps")
    seconds = [r["timings"]["phases"].get("budgets", 0.0) for r in one.values() if r.get("timings")]
    totals = [r["timings"]["total"] for r in one.values() if r.get("timings")]
    if totals:
        lines.append(
            f"budget replays: {sum(seconds):.0f} s of the one run's {sum(totals):.0f} s summed task time "
            f"({sum(seconds) / sum(totals):.0%})"
        )
    return lines, agreed


def main(argv: list[str]) -> int:
    """Run the three runs and print the comparison."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("targets", nargs="*", help="task files or folders (default: tasks)")
    parser.add_argument("--osworld", action="store_true", help="OSWorld's solved tasks instead")
    parser.add_argument("--work", type=Path, help="where the runs' results go")
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    extra_args = argv[cut + 1 :]
    targets = args.targets or ["tasks"]
    if args.osworld:
        examples = osworld_examples()
        if examples is None:
            print("budgets_check: OSWorld's examples are not here (set OSWORLD_EXAMPLES)")
            return 1
        targets = osworld_targets(examples)
        extra_args = [f"--solutions={SOLUTIONS}", f"--known-broken={KNOWN_BROKEN}", *extra_args]
    work = args.work or Path(tempfile.mkdtemp(prefix="osworld-budgets-"))
    run(targets, work / "r30", MAX_STEPS, extra_args, budgets=True)
    for budget in BUDGETS:
        run(targets, work / f"r{budget}", budget, extra_args, budgets=False)
    lines, agreed = compare(work)
    print("\n".join(["budgets_check:", *lines, f"results: {work}"]), flush=True)
    one_calls = calls(work / "r30")
    return 0 if agreed and one_calls <= len(results_of(work / "r30")) * MAX_STEPS else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
