"""Shards run as separate pytest runs, then merged: the same outcomes, summary, JUnit and report
as one run over all tasks; runs that do not make one run are refused, one line per reason."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_osworld.commands.cli import main as cli_main
from pytest_osworld.report.merge import (
    ALLOW_MISMATCH,
    DUPLICATE_TASK,
    NO_TASKS,
    OUT_NOT_EMPTY,
    SETTING_DIFFERS,
    SHARD_TWICE,
    SHARDS_MISSING,
    SUMMARY_NAME,
    TASKS_DIFFER,
)
from pytest_osworld.report.summary import SUMMARY_TITLE

pytestmark = pytest.mark.usefixtures("fake_ini")

MISSING = [{"type": "open", "parameters": {"path": "/home/user/missing.docx"}}]
BROKEN_ID = "x1"
#: Host, worker and clock readings differ between any two runs.
VOLATILE = re.compile(r"^(host|worker|time_.*|fixed_overhead|duration)$")


@pytest.fixture
def mixed_suite(pytester: pytest.Pytester, write_task) -> None:
    """Passes, fails (a noop-like DONE), an error, an infeasible task and a known-broken one."""
    write_task("os", task_id="p1")
    write_task("os", task_id="p2")
    write_task("chrome", task_id="f1", solution=["DONE"])
    write_task("chrome", task_id="p3")
    write_task("gimp", task_id="e1", config=MISSING)
    write_task("gimp", task_id="i1", evaluator={"func": "infeasible"}, solution=["FAIL"])
    write_task("libreoffice_calc", task_id=BROKEN_ID, solution=["DONE"])
    write_task("libreoffice_calc", task_id="f2", solution=["DONE"])
    pytester.path.joinpath("broken.txt").write_text(f"{BROKEN_ID}: reads the wrong cell\n")


def _run(pytester: pytest.Pytester, results: str, *args: str, junit: bool = True) -> pytest.RunResult:
    extra = [f"--junitxml={results}/junit.xml"] if junit else []
    return pytester.runpytest(
        "tasks", "--agent=replay", "--known-broken=broken.txt", f"--results-dir={results}", *extra, *args
    )


def _summary(result: pytest.RunResult) -> list[str]:
    """The summary section's lines of a run's terminal output, without the folder lines."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if SUMMARY_TITLE in line) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("results: "))
    return lines[start:end]


def _outcomes(results: Path) -> dict[tuple[str, str, int], tuple[str, str | None, float | None]]:
    found = {}
    for path in results.rglob("result.json"):
        data = json.loads(path.read_text())
        key = (data["domain"], data["task_id"], data["repeat"])
        found[key] = (data["outcome"], data.get("pytest_outcome"), data["score"])
    return found


def _cases(junit: Path) -> dict[tuple[str, str], tuple[str, dict[str, str]]]:
    """(classname, name) -> (what the case holds: failure/error/skipped/passed, its properties)."""
    root = ET.parse(junit).getroot()
    cases = {}
    for case in root.iter("testcase"):
        kinds = [child.tag for child in case if child.tag != "properties"] or ["passed"]
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        cases[(case.get("classname", ""), case.get("name", ""))] = ("+".join(kinds), props)
    return cases


def _cards(index: Path) -> dict[str, str]:
    pairs = re.findall(r'<div class="v">([^<]*)</div><div class="l">([^<]*)</div>', index.read_text())
    return {label: value for value, label in pairs if label != "agent time"}


def _merge(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()  # what the pytester runs before printed
    code = cli_main(["merge", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.usefixtures("mixed_suite")
@pytest.mark.parametrize("junit", [True, False], ids=["junit-kept", "junit-from-results"])
def test_three_shards_merged_are_one_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], junit: bool
) -> None:
    whole = _run(pytester, "results/all", "--repeat=2")
    whole.assert_outcomes(passed=8, failed=4, errors=2, xfailed=2)
    shards = [_run(pytester, f"results/s{k}", "--repeat=2", f"--shard={k}/3", junit=junit) for k in (1, 2, 3)]
    assert sum(len(_outcomes(pytester.path / f"results/s{k}")) for k in (1, 2, 3)) == 16
    assert all(shard.ret in (0, 1) for shard in shards)

    code, out, err = _merge(capsys, "results/s1", "results/s2", "results/s3", "--out", "merged")
    assert (code, err) == (0, "")
    merged = pytester.path / "merged"
    # the same per-task outcomes, scores and pytest verdicts (the xfail kept in result.json)
    assert _outcomes(merged) == _outcomes(pytester.path / "results/all")
    assert _outcomes(merged)[("libreoffice_calc", BROKEN_ID, 1)][1] == "xfailed"
    # the same summary: the terminal's lines, in summary.txt and on stdout
    text = (merged / SUMMARY_NAME).read_text().splitlines()
    assert text[0] == SUMMARY_TITLE
    assert text[1:-2] == _summary(whole)
    assert any("repeats (2 runs of each task):" in line for line in text)
    assert text[-2] == f"results: {merged.resolve()}"
    assert "\n".join(_summary(whole)) in out
    # one JUnit file with the same cases, verdicts and properties
    mine, theirs = _cases(merged / "junit.xml"), _cases(pytester.path / "results/all/junit.xml")
    assert mine.keys() == theirs.keys()
    for key, (kind, props) in theirs.items():
        assert mine[key][0] == kind, key
        names = [n for n in mine[key][1] if n != "shard"]  # a shard's cases name it
        assert names == list(props), key  # the same names, in the same order
        stable = {n: v for n, v in props.items() if not VOLATILE.match(n) and n != "shard"}
        assert {n: v for n, v in mine[key][1].items() if n in stable} == stable, key
    suite = ET.parse(merged / "junit.xml").getroot().find("testsuite")
    whole_suite = ET.parse(pytester.path / "results/all/junit.xml").getroot().find("testsuite")
    assert suite is not None and whole_suite is not None
    for count in ("tests", "errors", "failures", "skipped"):
        assert suite.get(count) == whole_suite.get(count), count
    # one HTML report with the same figures, naming the shards
    index = merged / "index.html"
    assert _cards(index) == _cards(pytester.path / "results/all/index.html")
    assert "shard: 1/3, 2/3, 3/3" in index.read_text()
    assert len(list(merged.rglob("report.html"))) == 16


def _two_shards(pytester: pytest.Pytester, write_task, second: tuple[str, ...] = ()) -> None:
    for task_id in ("a1", "a2", "a3", "a4"):
        write_task("os", task_id=task_id)
    pytester.runpytest("tasks", "--agent=replay", "--results-dir=s1", "--shard=1/2").assert_outcomes(passed=2)
    pytester.runpytest("tasks", "--agent=replay", "--results-dir=s2", "--shard=2/2", *second)


@pytest.mark.parametrize(
    ("second", "setting", "values"),
    [
        (("--agent=noop",), "agent", "'replay' in s1; 'noop' in s2"),
        (("--max-steps=5",), "max steps", "15 in s1; 5 in s2"),
    ],
    ids=["agent", "max-steps"],
)
def test_runs_with_other_settings_are_refused(
    pytester: pytest.Pytester, capsys, write_task, second, setting, values
) -> None:
    _two_shards(pytester, write_task, second)
    code, out, err = _merge(capsys, "s1", "s2", "--out", "merged")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "refused: " + SETTING_DIFFERS.format(setting=setting, values=values),
        f"1 reason(s) to refuse; {ALLOW_MISMATCH} merges anyway",
    ]
    assert not (pytester.path / "merged").exists()
    code, _, err = _merge(capsys, "s1", "s2", "--out", "merged", ALLOW_MISMATCH)
    assert code == 0 and err.startswith(f"merged anyway ({ALLOW_MISMATCH}): the runs differ in {setting}")
    assert (pytester.path / "merged/index.html").is_file()


def test_shards_of_a_changed_task_file_are_refused(pytester: pytest.Pytester, capsys, write_task) -> None:
    for task_id in ("a1", "a2"):
        write_task("os", task_id=task_id)
    pytester.runpytest("tasks", "--agent=replay", "--results-dir=s1", "--shard=1/2")
    write_task("os", task_id="a2", instruction="Write hello into ~/out.txt, please.")  # edited
    pytester.runpytest("tasks", "--agent=replay", "--results-dir=s2", "--shard=2/2")
    code, _, err = _merge(capsys, "s1", "s2", "--out", "merged")
    assert code == 2
    (line, _hint) = err.splitlines()
    prefix = TASKS_DIFFER.split("{values}")[0]
    assert line.startswith("refused: " + prefix) and re.search(
        r"[0-9a-f]{12} in s1; [0-9a-f]{12} in s2", line
    )


def test_the_same_task_twice_is_refused(pytester: pytest.Pytester, capsys, write_task) -> None:
    write_task("os", task_id="a1")
    for results in ("r1", "r2"):
        pytester.runpytest("tasks", "--agent=replay", f"--results-dir={results}").assert_outcomes(passed=1)
    code, _, err = _merge(capsys, "r1", "r2", "--out", "merged")
    assert code == 2
    assert err.splitlines()[0] == "refused: " + DUPLICATE_TASK.format(
        count=1, task="os/a1 (repeat 1)", runs="r1, r2"
    )


def test_missing_and_doubled_shards_are_refused(pytester: pytest.Pytester, capsys, write_task) -> None:
    _two_shards(pytester, write_task)
    code, _, err = _merge(capsys, "s1", "--out", "merged")
    assert code == 2
    assert err.splitlines()[0] == "refused: " + SHARDS_MISSING.format(missing="2/2")
    shutil.copytree(pytester.path / "s1", pytester.path / "s1again")
    code, _, err = _merge(capsys, "s1", "s1again", "s2", "--out", "merged")
    assert code == 2
    assert "refused: " + SHARD_TWICE.format(shard="1/2", runs="s1, s1again") in err.splitlines()
    assert any(
        line.startswith("refused: 2 task run(s) are in more than one run") for line in err.splitlines()
    )


def test_unreadable_runs_and_a_used_output_folder(pytester: pytest.Pytester, capsys, write_task) -> None:
    _two_shards(pytester, write_task)
    pytester.mkdir("empty")
    code, _, err = _merge(capsys, "s1", "empty", "--out", "merged")
    assert (code, err.strip()) == (2, "error: " + NO_TASKS.format(run="empty"))
    code, _, err = _merge(capsys, "s1", "nowhere", "--out", "merged")
    assert code == 2 and "nowhere: not a results folder" in err
    pytester.mkdir("used").joinpath("x").write_text("")
    code, _, err = _merge(capsys, "s1", "s2", "--out", "used")
    assert (code, err.strip()) == (2, "error: " + OUT_NOT_EMPTY.format(out="used"))
    code, _, err = _merge(capsys, "s1", "s2", "--out", "s1/merged")
    assert code == 2 and "inside s1" in err


def test_console_script_and_module_entry(pytester: pytest.Pytester, write_task) -> None:
    _two_shards(pytester, write_task)
    script = shutil.which("pytest-osworld", path=str(Path(sys.executable).parent))
    assert script is not None, "pytest-osworld is not installed: pip install -e ."
    help_text = subprocess.run([script, "--help"], capture_output=True, text=True, check=True).stdout
    assert "merge" in help_text
    done = subprocess.run(
        [script, "merge", "s1", "s2", "--out", "merged"], cwd=pytester.path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("merged 2 run(s), 4 task folder(s), into merged")
    refused = subprocess.run(
        [sys.executable, "-m", "pytest_osworld.report", "merge", "s1", "--out", "again"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2
    assert refused.stderr.splitlines()[0] == "refused: " + SHARDS_MISSING.format(missing="2/2")
