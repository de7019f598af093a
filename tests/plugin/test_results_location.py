"""Results go where users look: ./results/<UTC time> under the folder pytest was started from."""

from __future__ import annotations

import re

import pytest


def _task_tree(pytester: pytest.Pytester, write_task) -> str:
    """OSWorld's layout, in a folder with no ini file anywhere above the tasks."""
    for number in (1, 2):
        write_task(task_id=f"11111111-0000-0000-0000-00000000000{number}")
    examples = pytester.path / "OSWorld" / "evaluation_examples" / "examples"
    examples.parent.mkdir(parents=True)
    (pytester.path / "tasks").rename(examples)
    return str(examples / "os")


def test_default_results_folder_is_under_the_invocation_dir(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, write_task
) -> None:
    tasks = _task_tree(pytester, write_task)
    work = pytester.path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = pytester.runpytest(
        tasks,
        "--agent=noop",
        "--provider=fake",
        f"--asset-cache={pytester.path / 'cache'}",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=2)
    # pytest's rootdir is the task tree here (no ini file): nothing of ours is written there
    assert not list((pytester.path / "OSWorld").rglob("results")), "results written inside the task tree"
    (run,) = (work / "results").iterdir()
    assert re.fullmatch(r"\d{8}T\d{6}Z", run.name), run.name
    assert len(list(run.rglob("result.json"))) == 2
    result.stdout.fnmatch_lines(
        [
            f"results: {run}",
            f"report:  file://{run}/index.html",
        ]
    )
    assert (run / "index.html").is_file()


def test_results_dir_option_is_unchanged(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, write_task
) -> None:
    """--results-dir keeps its meaning: a path as given, relative to where pytest runs."""
    tasks = _task_tree(pytester, write_task)
    work = pytester.path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = pytester.runpytest(
        tasks,
        "--agent=noop",
        "--provider=fake",
        f"--asset-cache={pytester.path / 'cache'}",
        "--results-dir=mine",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=2)
    assert len(list((work / "mine").rglob("result.json"))) == 2
    assert not (work / "results").exists()
    result.stdout.fnmatch_lines([f"report:  file://{work}/mine/index.html"])
