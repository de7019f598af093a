"""The suite's self-check (ARCHITECTURE.md section 8): every evaluator proven both ways.

Proves ``tasks/`` with ``pytest-osworld prove`` (:func:`pytest_osworld.commands.prove.prove`: the
lint, then ``--agent=replay`` and ``--agent=noop`` runs read back from their JUnit reports):
replay must pass with score 1 on every task (infeasible tasks by saying FAIL) and noop must
fail with score 0 on every task, with no errors and no skips.

With ``--osworld`` (CI runs it after the own tasks' check), it checks OSWorld's tasks instead: those named
in ``tasks/osworld_solutions.json`` and ``tasks/osworld_known_broken.txt`` are replayed,
unchanged, from ``../shared/osworld/examples`` (or the folder in ``OSWORLD_EXAMPLES``),
with ``--solutions`` and ``--known-broken``: each must score 1 (a known-broken task must
stay a strict xfail). Their noop is not run here: the 55 of them that need neither
network nor asset (category D of OSWORLD-CONTRACT.md) are run with noop, and must score
0, by the test suite (``tests/integration/test_osworld_offline.py``, on openbox), and all
65 by parity's end-to-end level (``scripts/parity --level end_to_end``, by hand, on gnome).

All of these run on the default desktop, the gnome session. The tasks that need GNOME
Shell (``tasks_gnome/``) are proven the same way, naming the session
(``--provider-arg session=gnome``) so that they keep it whatever the default. So that the
lighter ``openbox`` session stays proven, the own os and Calc tasks are proven on it too
(with the OmniACT tasks, which need no desktop).

That openbox replay runs a second time as three shards (``--shard K/3``) in three
processes, merged with ``pytest-osworld merge``: every task's outcome and score, and the
summary's rates, must be those of the run in one process. (It used to be the whole main
command's replay again, 42 desktop tasks more than the merge needs to be checked on.)

In both replay runs no solution step may raise (``action_errors`` in ``traj.jsonl``), even
in a task that passes: such a step is a wait that timed out or a click that missed.

Extra pytest arguments (such as ``-n 2``) are passed through to every run (as the options
after ``--`` of prove). Exits non-zero, listing the offenders, otherwise; the runs' results
(screenshots, trajectories, HTML reports) are then kept, and the last line names their
folder. A green check deletes them.

    .venv/bin/python scripts/selfcheck.py -n 3              # our tasks
    .venv/bin/python scripts/selfcheck.py --osworld -n 3    # OSWorld's solved tasks
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pytest_osworld.commands.prove import (
    UsageProblem,
    count_line,
    find_task_files,
    prove,
    read_cases,
    run_pytest,
)

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "tasks" / "osworld_solutions.json"
KNOWN_BROKEN = ROOT / "tasks" / "osworld_known_broken.txt"
#: The own tasks also proven on the openbox session, then again as shards.
OPENBOX_TASKS = ["tasks/os", "tasks/libreoffice_calc", "tasks/omniact", "tasks/omniact_release"]

#: Outcomes and scores of each task of a run (its repeats in order), from a JUnit report.
Results = dict[str, list[tuple[str, float | None]]]


def results(junit: Path) -> Results:
    """{task: [(outcome, score), ...]} of a JUnit report, read by prove."""
    return {name: [(case.outcome, case.score) for case in cases] for name, cases in read_cases(junit).items()}


def check(
    label: str, paths: list[str], options: list[str], work: Path, *, with_noop: bool = True
) -> list[str]:
    """Prove ``paths`` with ``options`` into ``work``; the lines of the tasks not proven
    (a known-broken strict xfail is not a problem)."""
    work.mkdir()
    try:
        lines = prove(paths, options, False, work, stream=True, with_noop=with_noop)
    except UsageProblem as exc:
        return [f"{label}: {exc}"]
    print(f"selfcheck: {label}: {count_line(lines)}", flush=True)
    return [f"{label} {line}" for line in lines if line.startswith("FAILED ")]


def rates(results_dir: Path) -> list[str]:
    """The summary's rate lines of a results folder, as the terminal and the merge print them."""
    from pytest_osworld.report.resume import read_result, task_folders
    from pytest_osworld.report.summary import record_of_result, summary_lines

    found = [read_result(folder) for folder in task_folders(results_dir)]
    return summary_lines([record_of_result(r) for r in found if r is not None])


def check_shards(label: str, files: list[Path], extra: list[str], work: Path) -> list[str]:
    """The run of agent ``label`` again as three separate processes (``--shard K/3``),
    merged with ``pytest-osworld merge``: per-task outcomes, scores and summary rates must
    be those of the run in one process (``work/label.xml``, ``work/label``), with one HTML
    report."""
    shards = 3
    parts = [f"{label}-shard-{k}" for k in range(1, shards + 1)]
    try:
        for k, part in enumerate(parts, 1):
            shard = [*extra, f"--shard={k}/{shards}"]
            run_pytest(part, label, files, shard, work, stream=True, junit=work / part / "junit.xml")
    except UsageProblem as exc:
        return [f"{label}: {exc}"]
    merged = work / f"{label}-merged"
    merge = str(Path(sys.executable).parent / "pytest-osworld")
    command = [merge, "merge", *(str(work / p) for p in parts), "--out", str(merged)]
    print("+", " ".join(command), flush=True)
    done = subprocess.run(command, check=False)
    if done.returncode != 0:
        return [f"{label}: pytest-osworld merge of {shards} shards exited with {done.returncode}"]
    problems = []
    whole, combined = results(work / f"{label}.xml"), results(merged / "junit.xml")
    for name in sorted(set(whole) | set(combined)):
        if whole.get(name) != combined.get(name):
            problems.append(f"{label} {name}: {whole.get(name)} in one run, {combined.get(name)} merged")
    if rates(work / label) != rates(merged):
        problems.append(f"{label}: merged rates {rates(merged)}, one run's {rates(work / label)}")
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


def own_tasks(argv: list[str], work: Path) -> list[str]:
    """Prove ``tasks/`` and ``tasks_gnome/``, the openbox selection, its shards."""
    problems = check("tasks", ["tasks"], argv, work / "tasks")
    problems += [f"tasks replay raised: {step}" for step in raised_steps(work / "tasks" / "replay")]
    # The tasks that need GNOME Shell, on the gnome session.
    gnome = ["--provider-arg", "session=gnome", *argv]
    problems += check("tasks_gnome", ["tasks_gnome"], gnome, work / "tasks_gnome")
    problems += [
        f"tasks_gnome replay raised: {step}" for step in raised_steps(work / "tasks_gnome" / "replay")
    ]
    # The lighter session, on a few tasks: it keeps working.
    openbox = ["--provider-arg", "session=openbox", *argv]
    problems += check("tasks_openbox", OPENBOX_TASKS, openbox, work / "tasks_openbox")
    if (work / "tasks_openbox" / "replay.xml").is_file():
        # That replay again, as three shards in three processes, merged.
        files = find_task_files(OPENBOX_TASKS)
        problems += check_shards("replay", files, openbox, work / "tasks_openbox")
    problems += [
        f"tasks_openbox replay raised: {step}" for step in raised_steps(work / "tasks_openbox" / "replay")
    ]
    return problems


def osworld_tasks(argv: list[str], work: Path) -> list[str]:
    """Replay OSWorld's solved and known-broken tasks (their noop is checked elsewhere)."""
    examples = osworld_examples()
    if examples is None:
        return ["--osworld: OSWorld's examples are not here (set OSWORLD_EXAMPLES)"]
    options = [f"--solutions={SOLUTIONS}", f"--known-broken={KNOWN_BROKEN}", *argv]
    problems = check("osworld", osworld_targets(examples), options, work / "osworld", with_noop=False)
    return problems + [f"osworld replay raised: {step}" for step in raised_steps(work / "osworld" / "replay")]


def main(argv: list[str]) -> int:
    """Prove our tasks, or with ``--osworld`` replay OSWorld's solved ones; print a verdict."""
    os.chdir(ROOT)
    with_osworld = "--osworld" in argv
    argv = [arg for arg in argv if arg != "--osworld"]
    work = Path(tempfile.mkdtemp(prefix="osworld-selfcheck-"))
    run = osworld_tasks if with_osworld else own_tasks
    problems = run(argv, work)
    for problem in problems:
        print(f"selfcheck: {problem}")
    if problems:
        # The failed runs' screenshots, trajectories and HTML reports are what explains them.
        print(f"selfcheck: results kept in {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
