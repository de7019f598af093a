"""``pytest-osworld prove PATHS [--mutations] [-- PYTEST OPTIONS]``: tasks that prove themselves.

A task is proven when its file lints clean (:mod:`pytest_osworld.prove_lint`), its
reference solution scores 1 (``--agent=replay``) and doing nothing scores 0
(``--agent=noop``); for an infeasible task the solution is FAIL, which scores 1. With
``--mutations``, every solution one step shorter must also score below 1, or that step
is not needed (or the evaluator does not check its effect).

The runs are pytest subprocesses over all the tasks at once (one per agent, one per
mutation round), read back from their JUnit files; options after ``--`` go to each of
them (``--provider=...``, ``-n 2``, ``--solutions FILE``, ``--offline``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_osworld.cli import Command

# Output lines and reasons; tests import these.
PROVEN = "PROVEN {name}"
FAILED = "FAILED {name}: {problems}"
COUNT = "{proven} of {total} task(s) proven, {failed} failed"
USAGE = "error: {problem}"
NO_PATHS = (
    "give the task files or folders to prove: pytest-osworld prove PATHS [--mutations] [-- PYTEST OPTIONS]"
)
NO_SUCH_PATH = "{path}: no such file or folder"
NO_TASKS = "no task files found under {paths}"
UNKNOWN_OPTION = "{option}: not an option of prove; put pytest's options after --"
NO_JUNIT = "pytest wrote no JUnit report for the {label} run (exit code {code}); its output ends:\n{tail}"
NOT_RUN = "pytest did not run it (see the run's output)"
NO_SCORE = "{outcome} without a score: {message}"
REPLAY_LOW = "the reference solution scored {score:.2f}, not 1: {message}"
NOOP_HIGH = (
    "doing nothing scored {score:.2f}, not 0: the evaluator checks nothing the untouched desktop "
    "lacks; compare the result with a state only the solution makes"
)
STEP_NOT_NEEDED = (
    "solution step {step} ({action}) is not needed, or the evaluator does not check its effect: "
    "the solution without it still scores 1"
)
DONE_INSTEAD = "answering DONE instead of {action} still scores 1"

MUTATIONS_FLAG = "--mutations"


class UsageProblem(Exception):
    """A command line prove cannot run (exit code 2)."""


@dataclass(frozen=True)
class Case:
    """One task's outcome in one run: pytest's outcome, its score, its message."""

    outcome: str
    score: float | None
    message: str


@dataclass(frozen=True)
class Mutation:
    """A solution changed in one line, and how to say which."""

    solution: list[Any]
    why: str


def split_items(items: Sequence[str]) -> tuple[list[str], bool, list[str]]:
    """``PATHS [--mutations] [-- OPTIONS]`` -> (paths, mutations, pytest options)."""
    head, rest = list(items), []
    if "--" in head:
        at = head.index("--")
        head, rest = head[:at], head[at + 1 :]
    mutations = MUTATIONS_FLAG in head
    paths = [item for item in head if item != MUTATIONS_FLAG]
    for item in paths:
        if item.startswith("-"):
            raise UsageProblem(UNKNOWN_OPTION.format(option=item))
    return paths, mutations, rest


def option_value(options: Sequence[str], flag: str) -> str | None:
    """The last value of ``flag`` in pytest's options (``--flag=V`` or ``--flag V``)."""
    found = None
    for i, item in enumerate(options):
        if item == flag and i + 1 < len(options):
            found = options[i + 1]
        elif item.startswith(flag + "="):
            found = item[len(flag) + 1 :]
    return found


def without_option(options: Sequence[str], flag: str) -> list[str]:
    """pytest's options with ``flag`` and its value left out."""
    kept: list[str] = []
    skip = False
    for item in options:
        if skip:
            skip = False
        elif item == flag:
            skip = True
        elif not item.startswith(flag + "="):
            kept.append(item)
    return kept


def find_task_files(paths: Sequence[str]) -> list[Path]:
    """The task files named or under the folders named, sorted; bad paths are usage problems."""
    from pytest_osworld.collect import is_task_file

    found: set[Path] = set()
    for name in paths:
        path = Path(name)
        if path.is_file():
            found.add(path)
        elif path.is_dir():
            found.update(p for p in path.rglob("*.json") if is_task_file(p, explicit=False))
        else:
            raise UsageProblem(NO_SUCH_PATH.format(path=name))
    if not found:
        raise UsageProblem(NO_TASKS.format(paths=" ".join(paths)))
    return sorted(found)


def read_cases(junit: Path) -> dict[str, list[Case]]:
    """Test cases of a JUnit file by test name (``domain/id``; repeats ``[k]`` folded)."""
    cases: dict[str, list[Case]] = {}
    for node in ET.parse(junit).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in node.iter("property")}
        outcome, message = "passed", ""
        for tag in ("error", "failure", "skipped"):
            found = node.find(tag)
            if found is not None:
                outcome, message = tag, found.get("message", "") or (found.text or "")
                break
        score = props.get("score")
        name = str(node.get("name", "")).split("[")[0]
        first = next(iter(message.strip().splitlines()), "")
        cases.setdefault(name, []).append(Case(outcome, float(score) if score is not None else None, first))
    return cases


def run_pytest(
    label: str, agent: str, files: Sequence[Path], options: Sequence[str], work: Path
) -> dict[str, list[Case]]:
    """Run pytest with ``agent`` over ``files``; the test cases of its JUnit report."""
    junit = work / f"{label}.xml"
    command = [
        sys.executable,
        "-m",
        "pytest",
        *map(str, files),
        *options,
        f"--agent={agent}",
        f"--junitxml={junit}",
        f"--results-dir={work / label}",
        "-p",
        "no:cacheprovider",
        "-q",
    ]
    print(f"prove: {label}: {len(files)} task(s), --agent={agent}", file=sys.stderr, flush=True)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if not junit.is_file():
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise UsageProblem(NO_JUNIT.format(label=label, code=done.returncode, tail=tail))
    return read_cases(junit)


def score_of(cases: dict[str, list[Case]], name: str) -> tuple[float | None, str]:
    """A task's lowest score over its test cases, and the message of that case."""
    found = cases.get(name)
    if not found:
        return None, NOT_RUN
    worst = min(found, key=lambda c: -1.0 if c.score is None else c.score)
    if worst.score is None:
        return None, NO_SCORE.format(outcome=worst.outcome, message=worst.message or "no message")
    return worst.score, worst.message


def mutations(solution: Sequence[Any]) -> list[Mutation]:
    """Every one-line change of ``solution``: each step but the last (DONE/FAIL) dropped in
    turn; a solution of one line (its DONE or FAIL) answers DONE instead."""
    steps = list(solution)
    if len(steps) == 1:
        only = steps[0]
        if _terminal(only) == "DONE":
            return []
        return [Mutation(["DONE"], DONE_INSTEAD.format(action=_show(only)))]
    return [
        Mutation(steps[:i] + steps[i + 1 :], STEP_NOT_NEEDED.format(step=i + 1, action=_show(steps[i])))
        for i in range(len(steps) - 1)
    ]


def _terminal(action: Any) -> str:
    return str(action.get("action_type") if isinstance(action, dict) else action).strip()


def _show(action: Any) -> str:
    text = json.dumps(action) if isinstance(action, dict) else str(action).strip().replace("\n", " | ")
    return repr(text if len(text) <= 60 else text[:57] + "...")


def prove(paths: Sequence[str], options: Sequence[str], with_mutations: bool, work: Path) -> list[str]:
    """Prove the tasks under ``paths``; one output line per task (the count line is the caller's)."""
    import pytest

    from pytest_osworld.assets import AssetCache, default_cache_dir
    from pytest_osworld.prove_lint import lint_task
    from pytest_osworld.solutions import load_solutions, solution_key

    files = find_task_files(paths)
    solutions_file = option_value(options, "--solutions")
    try:
        solutions = load_solutions(Path(solutions_file) if solutions_file else None)
    except pytest.UsageError as exc:
        raise UsageProblem(str(exc)) from exc
    cache = option_value(options, "--asset-cache")
    assets = AssetCache(Path(cache) if cache else default_cache_dir(), offline="--offline" in options)
    failures: dict[str, list[str]] = {}
    clean = []
    linted = [lint_task(path, solutions, assets) for path in files]
    for lint in linted:
        if lint.problems:
            failures[lint.name] = [f"lint {'; '.join(map(str, lint.problems))}"]
        else:
            clean.append(lint)
    if clean:
        clean_files = [lint.path for lint in clean]
        replay = run_pytest("replay", "replay", clean_files, options, work)
        noop = run_pytest("noop", "noop", clean_files, options, work)
        rounds: list[dict[str, tuple[Path, str, Mutation]]] = []
        for lint in clean:
            score, message = score_of(replay, lint.name)
            problems = failures.setdefault(lint.name, [])
            if score is None or score < 1.0:
                problems.append(
                    "replay "
                    + (message if score is None else REPLAY_LOW.format(score=score, message=message))
                )
            elif with_mutations and lint.task is not None and lint.task.solution is not None:
                _add_to_rounds(
                    rounds, lint.path, lint.name, solution_key(lint.task), mutations(lint.task.solution)
                )
            score, message = score_of(noop, lint.name)
            if score is None or score > 0.0:
                problems.append("noop " + (message if score is None else NOOP_HIGH.format(score=score)))
        base = without_option(options, "--solutions")
        for k, round_ in enumerate(rounds, start=1):
            solutions_path = work / f"mutations-{k}.json"
            solutions_path.write_text(
                json.dumps({key: m.solution for key, (_, _, m) in round_.items()}, indent=1)
            )
            cases = run_pytest(
                f"mutations-{k}",
                "replay",
                [p for p, _, _ in round_.values()],
                [*base, f"--solutions={solutions_path}"],
                work,
            )
            for _, name, mutation in round_.values():
                score, _ = score_of(cases, name)
                if score is not None and score >= 1.0:
                    failures[name].append(f"mutation {mutation.why}")
    names = sorted({lint.name for lint in linted})
    return [
        FAILED.format(name=name, problems="; ".join(failures[name]))
        if failures.get(name)
        else PROVEN.format(name=name)
        for name in names
    ]


def _add_to_rounds(
    rounds: list[dict[str, tuple[Path, str, Mutation]]],
    path: Path,
    name: str,
    key: str,
    found: list[Mutation],
) -> None:
    """Put each of a task's mutations in the first round without its solution key (so the
    k-th mutation of every task runs in round k, and two tasks never share a key in a round)."""
    for mutation in found:
        round_ = next((r for r in rounds if key not in r), None)
        if round_ is None:
            round_ = {}
            rounds.append(round_)
        round_[key] = (path, name, mutation)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``prove`` subcommand's arguments (pytest's options follow ``--``)."""
    parser.add_argument(
        MUTATIONS_FLAG,
        action="store_true",
        help="also check that every solution step is needed: each solution one step shorter "
        "must score below 1",
    )
    parser.add_argument(
        "items",
        nargs=argparse.REMAINDER,
        metavar="PATHS [-- PYTEST OPTIONS]",
        help="task files or folders; options after -- go to every pytest run "
        "(--provider, -n, --solutions, --offline)",
    )


def run(args: argparse.Namespace) -> int:
    """Prove; print one line per task and the count. 0 all proven, 1 some not, 2 usage error."""
    try:
        paths, later_mutations, options = split_items(args.items)
        if not paths:
            raise UsageProblem(NO_PATHS)
        with tempfile.TemporaryDirectory(prefix="osworld-prove-") as work:
            lines = prove(paths, options, args.mutations or later_mutations, Path(work))
    except UsageProblem as exc:
        print(USAGE.format(problem=exc), file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    proven = sum(line.startswith("PROVEN ") for line in lines)
    print(COUNT.format(proven=proven, total=len(lines), failed=len(lines) - proven))
    return 0 if proven == len(lines) else 1


#: The ``prove`` subcommand (registered in :data:`pytest_osworld.cli.COMMANDS`).
COMMAND = Command(
    help="prove tasks: lint them, then their solution must score 1 and doing nothing 0",
    add_arguments=add_arguments,
    run=run,
    description="Lint task files without a desktop, then run pytest with --agent=replay (must score 1) "
    "and --agent=noop (must score 0) over those that lint clean; with --mutations, every solution "
    "one step shorter must score below 1. Options after -- go to every pytest run.",
)
