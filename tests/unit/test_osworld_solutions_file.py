"""``tasks/osworld_solutions.json`` and ``tasks/osworld_known_broken.txt`` name real OSWorld
tasks, load without error, and never both solve and give up on the same task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_osworld.plugin.selection import load_known_broken
from pytest_osworld.task.model import load_task
from pytest_osworld.task.solutions import load_solutions

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "tasks" / "osworld_solutions.json"
KNOWN_BROKEN = ROOT / "tasks" / "osworld_known_broken.txt"
EXAMPLES = ROOT.parent / "shared" / "osworld" / "examples"

needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"OSWorld's examples are not at {EXAMPLES}")


def test_the_files_load_and_do_not_overlap() -> None:
    solutions = load_solutions(SOLUTIONS)
    broken = load_known_broken(KNOWN_BROKEN)
    assert solutions and broken
    solved_ids = {Path(key).stem for key in solutions}
    assert not solved_ids & set(broken)


@needs_examples
def test_every_solution_is_for_an_osworld_task_and_fits_it() -> None:
    for key, solution in load_solutions(SOLUTIONS).items():
        task = load_task(EXAMPLES / key)
        ends_with = solution[-1]
        assert (ends_with == "FAIL") == task.infeasible, f"{key}: infeasible tasks end with FAIL, others DONE"


@needs_examples
def test_every_known_broken_entry_is_an_osworld_task() -> None:
    for task_id in load_known_broken(KNOWN_BROKEN):
        assert len(list(EXAMPLES.glob(f"*/{task_id}.json"))) == 1, task_id


def test_the_solutions_file_is_not_collected_as_a_task(pytester: pytest.Pytester) -> None:
    tasks = pytester.path / "tasks"
    tasks.mkdir()
    (tasks / "osworld_solutions.json").write_text(json.dumps(json.loads(SOLUTIONS.read_text())))
    result = pytester.runpytest("tasks", "--collect-only", "-q", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
