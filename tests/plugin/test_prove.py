"""``pytest-osworld prove``: lint, then replay must score 1 and noop 0; ``--mutations``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.commands.cli import main
from pytest_osworld.commands.prove import (
    COUNT,
    COUNT_KNOWN,
    DONE_INSTEAD,
    KNOWN_BROKEN,
    NO_PATHS,
    NO_SUCH_PATH,
    NO_TASKS,
    NOOP_HIGH,
    REPLAY_LOW,
    REPLAY_NOT_PASSED,
    STEP_NOT_NEEDED,
    UNKNOWN_OPTION,
    mutations,
    split_items,
)
from pytest_osworld.commands.prove_lint import (
    ASSET_MISSING,
    ASSET_NOT_CACHED,
    HOME,
    NO_SOLUTION,
    OUTSIDE_HOME,
)
from pytest_osworld.task.assets import AssetCache
from tests.plugin.conftest import WRITE_HELLO

pytestmark = pytest.mark.usefixtures("fake_ini")

#: The ini of the ``fake_ini`` fixture; tests add osworld_* lines to it.
FAKE_INI = """
[pytest]
osworld_provider = fake
osworld_asset_cache = .assets
osworld_results_dir = results/run
filterwarnings = ignore::pytest.PytestAssertRewriteWarning
"""

TASK_ID = "11111111-0000-0000-0000-000000000001"
NAME = f"os/{TASK_ID}"


def prove(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    """Run ``pytest-osworld prove ARGV`` in process: exit code, output lines, error text."""
    code = main(["prove", *argv])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_a_good_task_proves(pytester: pytest.Pytester, write_task: Any, capsys: Any) -> None:
    write_task()
    code, lines, _ = prove(capsys, "tasks")
    assert lines == [f"PROVEN {NAME}", COUNT.format(proven=1, total=1, failed=0)]
    assert code == 0


def test_an_infeasible_task_proves_with_fail(pytester: pytest.Pytester, write_task: Any, capsys: Any) -> None:
    write_task(evaluator={"func": "infeasible"}, solution=["FAIL"])
    code, lines, _ = prove(capsys, "tasks")
    assert lines[0] == f"PROVEN {NAME}"
    assert code == 0


def test_a_solution_that_cannot_pass(pytester: pytest.Pytester, write_task: Any, capsys: Any) -> None:
    write_task(solution=["# fake: write /home/user/out.txt goodbye", "DONE"])
    code, lines, _ = prove(capsys, "tasks")
    head = REPLAY_LOW.split("{score")[0]
    assert lines[0].startswith(f"FAILED {NAME}: replay {head}0.00, not 1"), lines
    assert code == 1


def test_a_noop_that_passes(pytester: pytest.Pytester, write_task: Any, capsys: Any) -> None:
    """The desktop already holds the answer: the evaluator checks nothing the noop lacks."""
    write_task()
    code, lines, _ = prove(capsys, "tasks", "--", "--provider-arg=files=/home/user/out.txt=hello")
    assert lines[0] == f"FAILED {NAME}: noop " + NOOP_HIGH.format(score=1.0)
    assert code == 1


def test_without_noop_only_the_replay_runs(
    pytester: pytest.Pytester, write_task: Any, tmp_path: Path
) -> None:
    """``with_noop=False`` (the self-check's OSWorld replay): the same noop-passing task is
    proven by its replay alone, and no noop run is made."""
    from pytest_osworld.commands.prove import prove as prove_paths

    write_task()
    work = tmp_path / "work"
    work.mkdir()
    options = ["--provider-arg=files=/home/user/out.txt=hello"]
    assert prove_paths(["tasks"], options, False, work, with_noop=False) == [f"PROVEN {NAME}"]
    assert (work / "replay.xml").is_file()
    assert not (work / "noop.xml").exists()


def test_a_metric_typo_is_a_lint_problem_with_the_suggestion(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    write_task(
        evaluator={
            "func": "exact_mach",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        }
    )
    code, lines, err = prove(capsys, "tasks")
    assert lines[0].startswith(f"FAILED {NAME}: lint $.evaluator.func: unknown metric"), lines
    assert "did you mean 'exact_match'?" in lines[0]
    assert "replay:" not in err  # no desktop run for a task that does not lint
    assert code == 1


def test_a_missing_asset(pytester: pytest.Pytester, write_task: Any, capsys: Any) -> None:
    path = write_task(
        config=[
            {"type": "download", "parameters": {"files": [{"url": "data/in.txt", "path": f"{HOME}/in.txt"}]}}
        ]
    )
    code, lines, _ = prove(capsys, "tasks")
    where = str(Path("tasks/os/data/in.txt"))
    expected = ASSET_MISSING.format(url="data/in.txt", where=where)
    assert lines[0] == f"FAILED {NAME}: lint $.config[0].parameters.files[0].url: {expected}"
    assert code == 1
    (path.parent / "data").mkdir()
    (path.parent / "data" / "in.txt").write_text("x")
    code, lines, _ = prove(capsys, "tasks")
    assert (code, lines[0]) == (0, f"PROVEN {NAME}")


def test_a_path_outside_the_home(pytester: pytest.Pytester, write_task: Any, capsys: Any) -> None:
    write_task(
        evaluator={
            "func": "exact_match",
            "result": {"type": "vm_file", "path": "/tmp/out.txt", "dest": "out.txt"},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        }
    )
    code, lines, _ = prove(capsys, "tasks")
    problem = OUTSIDE_HOME.format(path="/tmp/out.txt", home=HOME)
    assert lines[0] == f"FAILED {NAME}: lint $.evaluator.result.path: {problem}"
    assert code == 1


def test_a_task_without_solution_fails_lint_unless_solutions_file_has_one(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    path = write_task()
    data = json.loads(path.read_text())
    del data["solution"]
    path.write_text(json.dumps(data))
    code, lines, _ = prove(capsys, "tasks")
    assert lines[0] == f"FAILED {NAME}: lint $.solution: " + NO_SOLUTION.format(key=f"os/{TASK_ID}.json")
    assert code == 1
    solutions = pytester.path / "solutions.json"
    solutions.write_text(json.dumps({f"os/{TASK_ID}.json": [WRITE_HELLO, "DONE"]}))
    code, lines, _ = prove(capsys, "tasks", "--", f"--solutions={solutions}")
    assert (code, lines[0]) == (0, f"PROVEN {NAME}")


def test_mutations_catch_a_step_that_is_not_needed(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    extra = "# fake: write /home/user/notes.txt unused"
    write_task(solution=[WRITE_HELLO, extra, "DONE"])
    write_task(task_id="22222222-0000-0000-0000-000000000002")
    code, lines, _ = prove(capsys, "tasks")
    assert code == 0  # without --mutations the extra step goes unnoticed
    code, lines, err = prove(capsys, "tasks", "--mutations")
    why = STEP_NOT_NEEDED.format(step=2, action=repr(extra))
    assert lines == [
        f"FAILED {NAME}: mutation {why}",
        "PROVEN os/22222222-0000-0000-0000-000000000002",
        COUNT.format(proven=1, total=2, failed=1),
    ]
    assert err.count("mutations-") == 2  # one run per round, both tasks in round 1
    assert code == 1


def test_mutations_of_solutions() -> None:
    assert [m.solution for m in mutations(["a", "b", "DONE"])] == [["b", "DONE"], ["a", "DONE"]]
    assert [(m.solution, m.why) for m in mutations(["FAIL"])] == [
        (["DONE"], DONE_INSTEAD.format(action="'FAIL'"))
    ]
    assert mutations(["DONE"]) == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], NO_PATHS),
        (["nowhere"], NO_SUCH_PATH.format(path="nowhere")),
        (["empty"], NO_TASKS.format(paths="empty")),
        (["tasks", "-n", "2"], UNKNOWN_OPTION.format(option="-n")),
    ],
)
def test_usage_errors_exit_2(
    pytester: pytest.Pytester, write_task: Any, capsys: Any, argv: list[str], message: str
) -> None:
    write_task()
    (pytester.path / "empty").mkdir()
    code, lines, err = prove(capsys, *argv)
    assert (code, lines) == (2, [])
    assert err.strip() == f"error: {message}"


def test_split_items() -> None:
    assert split_items(["a", "--mutations", "--", "-n", "2"]) == (["a"], True, ["-n", "2"])
    assert split_items(["a", "b"]) == (["a", "b"], False, [])


def test_the_console_script(pytester: pytest.Pytester, write_task: Any) -> None:
    write_task()
    write_task(task_id="33333333-0000-0000-0000-000000000003", solution=["DONE"])
    script = Path(sys.executable).parent / "pytest-osworld"
    done = subprocess.run(
        [str(script), "prove", "tasks"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == f"PROVEN {NAME}"
    low = REPLAY_LOW.format(score=0.0, message="")
    assert lines[1].startswith(f"FAILED os/33333333-0000-0000-0000-000000000003: replay {low}"), lines
    assert done.stdout.splitlines()[2] == COUNT.format(proven=1, total=2, failed=1)
    assert done.returncode == 1, done.stderr


def test_every_unknown_name_is_a_lint_problem_with_its_suggestion(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    write_task(
        config=[{"type": "execut", "parameters": {"command": ["true"]}}],
        evaluator={
            "func": "exact_mach",
            "result": {"type": "vm_command_lin", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
    )
    code, lines, _ = prove(capsys, "tasks")
    assert lines[0].startswith(f"FAILED {NAME}: lint "), lines
    assert re.findall(r"(\$[^ ]*): unknown", lines[0]) == [
        "$.config[0].type",
        "$.evaluator.func",
        "$.evaluator.result.type",
    ]
    for typo, right in (
        ("execut", "execute"),
        ("exact_mach", "exact_match"),
        ("vm_command_lin", "vm_command_line"),
    ):
        assert f"{typo!r}; did you mean {right!r}?" in lines[0]
    assert code == 1


def test_collection_still_reports_the_first_unknown_name(pytester: pytest.Pytester, write_task: Any) -> None:
    write_task(
        evaluator={
            "func": "exact_mach",
            "result": {"type": "vm_command_lin", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
    )
    result = pytester.runpytest("tasks", "--agent=noop", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        ["*invalid OSWorld task file*at $.evaluator.func: unknown metric 'exact_mach'*"]
    )
    assert "vm_command_lin" not in result.stdout.str()


def test_lint_reads_the_solutions_file_of_the_ini(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    path = write_task()
    data = json.loads(path.read_text())
    del data["solution"]
    path.write_text(json.dumps(data))
    (pytester.path / "solutions.json").write_text(json.dumps({f"os/{TASK_ID}.json": [WRITE_HELLO, "DONE"]}))
    pytester.makeini(FAKE_INI + "osworld_solutions = solutions.json\n")
    code, lines, _ = prove(capsys, "tasks")
    assert (code, lines[0]) == (0, f"PROVEN {NAME}")


def test_lint_uses_the_asset_cache_and_offline_of_the_ini(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    url = "https://example.invalid/in.txt"
    write_task(
        config=[{"type": "download", "parameters": {"files": [{"url": url, "path": f"{HOME}/in.txt"}]}}]
    )
    pytester.makeini(FAKE_INI + "osworld_offline = true\n")
    code, lines, err = prove(capsys, "tasks")
    where = AssetCache(Path(".assets")).path_for(url)
    expected = ASSET_NOT_CACHED.format(url=url, where=where)
    assert lines[0] == f"FAILED {NAME}: lint $.config[0].parameters.files[0].url: {expected}"
    assert "replay:" not in err
    assert code == 1
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text("x")  # seeded: the lint looks in the ini's cache, not the default one
    code, lines, _ = prove(capsys, "tasks")
    assert not lines[0].startswith(f"FAILED {NAME}: lint"), lines


def test_a_known_broken_task_of_the_ini_is_a_strict_xfail(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    """No solution needed, replay must xfail, noop must still score 0; exit code 0."""
    path = write_task()
    data = json.loads(path.read_text())
    del data["solution"]
    path.write_text(json.dumps(data))
    (pytester.path / "broken.txt").write_text(f"{TASK_ID}: needs the internet\n")
    pytester.makeini(FAKE_INI + "osworld_known_broken = broken.txt\n")
    code, lines, err = prove(capsys, "tasks")
    assert lines == [
        KNOWN_BROKEN.format(name=NAME, reason="known broken: needs the internet"),
        COUNT.format(proven=0, total=1, failed=0) + COUNT_KNOWN.format(known=1),
    ]
    assert "noop:" in err
    assert code == 0


def test_a_known_broken_task_that_passes_fails(
    pytester: pytest.Pytester, write_task: Any, capsys: Any
) -> None:
    write_task()
    broken = pytester.path / "broken.txt"
    broken.write_text(f"{TASK_ID}: needs the internet\n")
    code, lines, _ = prove(capsys, "tasks", "--", f"--known-broken={broken}")
    head = REPLAY_NOT_PASSED.split("{outcome}")[0].format(score=1)
    assert lines[0].startswith(f"FAILED {NAME}: replay {head}failed: [XPASS(strict)]"), lines
    assert code == 1


def test_a_bad_option_value_is_a_usage_error(pytester: pytest.Pytester, write_task: Any, capsys: Any) -> None:
    write_task()
    code, lines, err = prove(capsys, "tasks", "--", "--max-steps=0")
    assert (code, lines) == (2, [])
    assert err.startswith("error: --max-steps='0' (command line --max-steps)"), err
