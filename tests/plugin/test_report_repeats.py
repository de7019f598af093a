"""With --repeat, the report counts every run and draws pass@k (fake provider, real runs)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")


def test_repeated_runs_give_pass_at_k(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="33333333-0000-0000-0000-000000000001")  # replay solves it
    write_task(task_id="33333333-0000-0000-0000-000000000002", solution=["DONE"])  # never solved
    pytester.runpytest("tasks", "--agent=replay", "--repeat=3").assert_outcomes(passed=3, failed=3)
    html = (pytester.path / "results/run/index.html").read_text()
    assert '<div class="v">3 / 6</div><div class="l">runs passed</div>' in html
    assert '<div class="v">50.0%</div><div class="l">pass@1</div>' in html
    assert '<div class="v">50.0%</div><div class="l">passed at least once</div>' in html
    # one task always passes, the other never: pass@k and pass^k are 1/2 at every k
    points = re.findall(r'<circle[^>]*data-value="([\d.]+)"><title>(pass[@^]k at k=\d):', html)
    assert sorted(title for _, title in points) == [f"pass{s}k at k={k}" for s in "@^" for k in (1, 2, 3)]
    assert {value for value, _ in points} == {"0.500000"}
    assert html.count("run 3</span>") == 2  # each task's third run has its row
