"""``pytest-osworld prove PATHS [--mutations] [-- PYTEST OPTIONS]``: tasks that prove themselves.

A task is proven when its file lints clean (:mod:`pytest_osworld.commands.prove_lint`), its
reference solution scores 1 (``--agent=replay``) and doing nothing scores 0
(``--agent=noop``); for an infeasible task the solution is FAIL, which scores 1. With
``--mutations``, every solution one step shorter must also score below 1, or that step
is not needed (or the evaluator does not check its effect).

The runs are pytest subprocesses over all the tasks at once (one per agent, one per
mutation round), read back from their JUnit files; options after ``--`` go to each of
them (``--provider=...``, ``-n 2``, ``--solutions FILE``, ``--offline``). The lint uses the
settings those runs resolve (the ini file of the paths' rootdir, then the options): the
asset cache, ``--offline``, ``--solutions`` and ``--known-broken``. A known-broken task's
replay must be a strict xfail (KNOWN BROKEN, not a failure); its noop must still score 0.

``scripts/selfcheck.py`` is a caller of :func:`prove`, :func:`run_pytest` and
:func:`read_cases`: this module is the one reader of the runs' JUnit reports.
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
from typing import TYPE_CHECKING, Any

from pytest_osworld.commands.cli import Command

if TYPE_CHECKING:
    from pytest_osworld.task.settings import Settings

# Output lines and reasons; tests import these.
PROVEN = "PROVEN {name}"
FAILED = "FAILED {name}: {problems}"
KNOWN_BROKEN = "KNOWN BROKEN {name}: {reason}"
COUNT = "{proven} of {total} task(s) proven, {failed} failed"
#: Appended to :data:`COUNT` when some tasks are known broken (strict xfails).
COUNT_KNOWN = ", {known} known broken"
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
REPLAY_NOT_PASSED = "the reference solution scored 1 but pytest reports {outcome}: {message}"
NOOP_NOT_FAILED = "doing nothing scored 0 but pytest reports {outcome}, not failed: {message}"
NO_JUNIT_STREAMED = (
    "pytest wrote no JUnit report for the {label} run (exit code {code}); see its output above"
)
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
    """One task's outcome in one run: pytest's outcome (passed, failed, error, skipped or
    xfailed), its score, its message."""

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
    from pytest_osworld.commands.prove_lint import is_split_file
    from pytest_osworld.plugin.collect import is_task_file

    found: set[Path] = set()
    for name in paths:
        path = Path(name)
        if path.is_file():
            found.add(path)
        elif path.is_dir():
            found.update(
                p for p in path.rglob("*.json") if is_task_file(p, explicit=False) or is_split_file(p)
            )
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
        for tag, name in (("error", "error"), ("failure", "failed"), ("skipped", "skipped")):
            found = node.find(tag)
            if found is not None:
                outcome, message = name, found.get("message", "") or (found.text or "")
                if tag == "skipped" and found.get("type") == "pytest.xfail":
                    outcome = "xfailed"
                break
        score = props.get("score")
        name = str(node.get("name", "")).split("[")[0]
        first = next(iter(message.strip().splitlines()), "")
        cases.setdefault(name, []).append(Case(outcome, float(score) if score is not None else None, first))
    return cases


def run_pytest(
    label: str,
    agent: str,
    files: Sequence[Path],
    options: Sequence[str],
    work: Path,
    *,
    stream: bool = False,
    junit: Path | None = None,
) -> dict[str, list[Case]]:
    """Run pytest with ``agent`` over ``files`` (results in ``work/label``); the test cases
    of its JUnit report (``work/label.xml`` unless ``junit``). With ``stream`` the command is
    printed and pytest's output goes to the terminal; otherwise it is kept for the error."""
    junit = junit or work / f"{label}.xml"
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
    if stream:
        print("+", " ".join(command), flush=True)
    done = subprocess.run(command, capture_output=not stream, text=True, check=False)
    if not junit.is_file():
        if stream:
            raise UsageProblem(NO_JUNIT_STREAMED.format(label=label, code=done.returncode))
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise UsageProblem(NO_JUNIT.format(label=label, code=done.returncode, tail=tail))
    return read_cases(junit)


def run_settings(files: Sequence[Path], options: Sequence[str]) -> Settings:
    """The settings pytest resolves for a run over ``files`` with ``options``: the ini file
    of their rootdir (pytest.ini, pyproject.toml's ``[tool.pytest.ini_options]``, ...), then
    the options; a bad option or value is a usage problem."""
    import pytest
    from _pytest.config import _prepareconfig

    from pytest_osworld.plugin.settings import resolve

    try:
        config = _prepareconfig([*map(str, files), *options])
        try:
            return resolve(config)
        finally:
            config._ensure_unconfigure()
    except pytest.UsageError as exc:
        raise UsageProblem(str(exc)) from exc


def replay_verdict(found: Sequence[Case] | None) -> tuple[list[str], str | None]:
    """A task's replay cases -> (problems, the known-broken reason when every case that did
    not pass with score 1 is a strict xfail). Every case must pass with score 1 or xfail."""
    if not found:
        return [NOT_RUN], None
    xfailed = [case for case in found if case.outcome == "xfailed"]
    rest = [case for case in found if case.outcome != "xfailed"]
    problems = []
    if rest:
        worst = min(rest, key=lambda c: (-1.0 if c.score is None else c.score, c.outcome == "passed"))
        if worst.score is None:
            problems.append(NO_SCORE.format(outcome=worst.outcome, message=worst.message or "no message"))
        elif worst.score < 1.0:
            problems.append(REPLAY_LOW.format(score=worst.score, message=worst.message))
        elif worst.outcome != "passed":
            problems.append(REPLAY_NOT_PASSED.format(outcome=worst.outcome, message=worst.message))
    reason = (xfailed[0].message or "xfailed") if xfailed and not problems else None
    return problems, reason


def noop_verdict(found: Sequence[Case] | None) -> list[str]:
    """A task's noop cases -> problems: every case must fail with score 0."""
    if not found:
        return [NOT_RUN]
    worst = max(found, key=lambda c: (2.0 if c.score is None else c.score, c.outcome != "failed"))
    if worst.score is None:
        return [NO_SCORE.format(outcome=worst.outcome, message=worst.message or "no message")]
    if worst.score > 0.0:
        return [NOOP_HIGH.format(score=worst.score)]
    if worst.outcome != "failed":
        return [NOOP_NOT_FAILED.format(outcome=worst.outcome, message=worst.message or "no message")]
    return []


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


def prove(
    paths: Sequence[str],
    options: Sequence[str],
    with_mutations: bool,
    work: Path,
    *,
    stream: bool = False,
    with_noop: bool = True,
) -> list[str]:
    """Prove the tasks under ``paths``; one output line per task (PROVEN, FAILED or KNOWN
    BROKEN; the count line is the caller's). The runs' JUnit reports and results folders
    stay in ``work`` (``replay.xml``, ``replay/``, ``noop.xml``, ...); ``stream`` shows
    pytest's output (:func:`run_pytest`). ``with_noop=False`` leaves out the noop run, for
    a caller whose tasks' noop is checked elsewhere."""
    import pytest

    from pytest_osworld.commands.prove_lint import lint_file
    from pytest_osworld.plugin.selection import load_known_broken
    from pytest_osworld.task.assets import AssetCache
    from pytest_osworld.task.solutions import load_solutions, solution_key

    files = find_task_files(paths)
    settings = run_settings(files, options)
    try:
        solutions = load_solutions(settings.solutions)
        known_broken = load_known_broken(settings.known_broken)
    except pytest.UsageError as exc:
        raise UsageProblem(str(exc)) from exc
    assets = AssetCache(settings.asset_cache, offline=settings.offline)
    failures: dict[str, list[str]] = {}
    broken: dict[str, str] = {}
    linted = [lint for path in files for lint in lint_file(path, solutions, assets, known_broken)]
    clean = []
    for lint in linted:
        if lint.problems:
            failures[lint.name] = [f"lint {'; '.join(map(str, lint.problems))}"]
        else:
            clean.append(lint)
    if clean:
        clean_files = list(dict.fromkeys(lint.path for lint in clean))  # a split file holds many
        replay = run_pytest("replay", "replay", clean_files, options, work, stream=stream)
        # Doing nothing must score 0 on a known-broken task too: no xfail for noop.
        noop_options = [*options, "--known-broken="]
        noop = run_pytest("noop", "noop", clean_files, noop_options, work, stream=stream) if with_noop else {}
        rounds: list[dict[str, tuple[Path, str, Mutation]]] = []
        for lint in clean:
            replayed, reason = replay_verdict(replay.get(lint.name))
            problems = failures.setdefault(lint.name, [f"replay {problem}" for problem in replayed])
            if reason is not None:
                broken[lint.name] = reason
            # An OmniACT task replays its own gold script, never a --solutions file.
            elif with_mutations and not replayed and not lint.omniact and lint.task and lint.task.solution:
                _add_to_rounds(
                    rounds, lint.path, lint.name, solution_key(lint.task), mutations(lint.task.solution)
                )
            if with_noop:
                problems += [f"noop {problem}" for problem in noop_verdict(noop.get(lint.name))]
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
                stream=stream,
            )
            for _, name, mutation in round_.values():
                score, _ = score_of(cases, name)
                if score is not None and score >= 1.0:
                    failures[name].append(f"mutation {mutation.why}")
    return [
        verdict_line(name, failures.get(name, []), broken.get(name))
        for name in sorted({lint.name for lint in linted})
    ]


def verdict_line(name: str, problems: Sequence[str], broken: str | None) -> str:
    """A task's output line: FAILED with its problems, else KNOWN BROKEN, else PROVEN."""
    if problems:
        return FAILED.format(name=name, problems="; ".join(problems))
    if broken is not None:
        return KNOWN_BROKEN.format(name=name, reason=broken)
    return PROVEN.format(name=name)


def count_line(lines: Sequence[str]) -> str:
    """The count line of :func:`prove`'s output lines."""
    proven = sum(line.startswith("PROVEN ") for line in lines)
    failed = sum(line.startswith("FAILED ") for line in lines)
    known = len(lines) - proven - failed
    return COUNT.format(proven=proven, total=len(lines), failed=failed) + (
        COUNT_KNOWN.format(known=known) if known else ""
    )


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
    """Prove; print one line per task and the count. 0 all proven (or known broken), 1 some
    not, 2 usage error."""
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
    print(count_line(lines))
    return 1 if any(line.startswith("FAILED ") for line in lines) else 0


#: The ``prove`` subcommand (registered in :data:`pytest_osworld.commands.cli.COMMANDS`).
COMMAND = Command(
    help="prove tasks: lint them, then their solution must score 1 and doing nothing 0",
    add_arguments=add_arguments,
    run=run,
    description="Lint task files without a desktop, then run pytest with --agent=replay (must score 1) "
    "and --agent=noop (must score 0) over those that lint clean; with --mutations, every solution "
    "one step shorter must score below 1. Options after -- go to every pytest run.",
)
