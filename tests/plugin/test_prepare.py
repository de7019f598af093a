"""A provider's slow one-off preparation (a home template, a box) is done once, by the
controller or a plain run, before any task starts, and said on the terminal."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")


def first_outcome(lines: list[str]) -> int:
    """The index of the first line reporting a task's outcome."""
    return next(
        i
        for i, line in enumerate(lines)
        if ".json::" in line and any(word in line for word in ("PASSED", "FAILED", "ERROR"))
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_the_controller_says_what_it_prepares_once_before_any_task(
    pytester: pytest.Pytester, write_task, workers: list[str]
) -> None:
    write_task(task_id="44444444-0000-0000-0000-000000000001")
    write_task(task_id="44444444-0000-0000-0000-000000000002")
    result = pytester.runpytest("tasks", "--agent=replay", "-v", "--provider-arg", "prepare=1", *workers)
    result.assert_outcomes(passed=2)
    lines = result.outlines
    said = [
        i for i, line in enumerate(lines) if line.startswith("pytest-osworld: preparing the fake provider")
    ]
    assert len(said) == 1, "\n".join(lines)
    assert lines[said[0]] == "pytest-osworld: preparing the fake provider for prepare"
    assert lines[said[0] + 1] == "pytest-osworld: the fake provider is prepared (0 s)"
    assert said[0] < first_outcome(lines)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_failed_preparation_is_said_and_the_run_goes_on(
    pytester: pytest.Pytester, write_task, workers: list[str]
) -> None:
    write_task(task_id="44444444-0000-0000-0000-000000000003")
    result = pytester.runpytest("tasks", "--agent=replay", "--provider-arg", "fail=prepare", *workers)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "pytest-osworld: could not prepare the 'fake' provider: injected prepare failure. Each "
            "worker tries again at its start; its tasks end as ERROR with the reason if that fails too"
        ]
    )


def test_nothing_is_prepared_when_only_collecting(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="44444444-0000-0000-0000-000000000004")
    result = pytester.runpytest("tasks", "--agent=replay", "--collect-only", "--provider-arg", "prepare=1")
    assert "preparing the fake provider" not in result.stdout.str()
