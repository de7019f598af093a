"""A run whose tasks need downloads that cannot succeed says so once, before any task ends."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")

URL = "https://assets.osworld-test.invalid/files/report.docx"
LINE = (
    "pytest-osworld: no network: 1 of 2 collected task(s) download files that are not in the asset "
    "cache, and assets.osworld-test.invalid does not resolve (*); they will end as ERROR. Run with "
    "--offline to skip them, or fill the cache first with `pytest-osworld-fetch TASK_PATHS`*"
)


def write_two_tasks(write_task) -> None:
    """One task that downloads from a host that does not resolve, one that downloads nothing."""
    write_task(
        task_id="33333333-0000-0000-0000-000000000001",
        config=[{"type": "download", "parameters": {"files": [{"url": URL, "path": "/home/user/r.docx"}]}}],
    )
    write_task(task_id="33333333-0000-0000-0000-000000000002")


def first_outcome(lines: list[str]) -> int:
    """The index of the first line reporting a task's outcome."""
    return next(
        i
        for i, line in enumerate(lines)
        if ".json::" in line and any(word in line for word in ("PASSED", "FAILED", "ERROR", "SKIPPED"))
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_the_line_comes_once_before_the_first_task_ends(
    pytester: pytest.Pytester, write_task, workers: list[str]
) -> None:
    write_two_tasks(write_task)
    result = pytester.runpytest("tasks", "--agent=replay", "-v", "-p", "no:randomly", *workers)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([LINE])
    lines = result.stdout.lines
    assert sum("pytest-osworld: no network:" in line for line in lines) == 1
    said = next(i for i, line in enumerate(lines) if line.startswith("pytest-osworld: no network:"))
    assert said < first_outcome(lines)
    # The task still ends as an ERROR with its own reason: the denominator stays honest.
    result.stdout.fnmatch_lines([f"*could not download {URL} after 3 attempts*"])


def test_offline_runs_say_nothing_of_the_network(pytester: pytest.Pytester, write_task) -> None:
    write_two_tasks(write_task)
    result = pytester.runpytest("tasks", "--agent=replay", "--offline")
    result.assert_outcomes(passed=1, skipped=1)
    assert "no network" not in result.stdout.str()


def test_cached_files_need_no_network(pytester: pytest.Pytester, write_task) -> None:
    write_two_tasks(write_task)
    cached = pytester.path / ".assets" / "assets.osworld-test.invalid" / "files" / "report.docx"
    cached.parent.mkdir(parents=True)
    cached.write_text("a report")
    result = pytester.runpytest("tasks", "--agent=replay")
    result.assert_outcomes(passed=2)
    assert "no network" not in result.stdout.str()
