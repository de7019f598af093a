"""Every row of the outcome table (ARCHITECTURE.md section 4), with golden failure text."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")

CALC_ID = "22222222-0000-0000-0000-000000000002"


def test_replay_passes(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "--agent=replay")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*OSWorld summary*", "*overall*100.0%*mean 1.000*(1/1 passed*"])


def test_noop_fails_with_score_and_reason(pytester: pytest.Pytester, write_task, monkeypatch) -> None:
    monkeypatch.setenv("CI", "true")  # the short summary line is not trimmed on CI
    write_task()
    result = pytester.runpytest("tasks", "--agent=noop", "-rf")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "OSWorld score 0.00 < 1.00: exact_match: *",
            "  instruction : Please write hello into ~/out.txt for me.",
            "  episode     : agent said DONE after 1/15 steps (*)",
            "  evaluator   : exact_match = 0.00  result=vm_command_line(*)  expected=rule(rules)",
            "  last screen : *step_1.png",
            "  artifacts   : *os/11111111-0000-0000-0000-000000000001/",
            "  rerun       : pytest *11111111-0000-0000-0000-000000000001.json --agent=noop --provider=fake",
            "*- Captured osworld trajectory call -*",
            'step  1 (*): "DONE"',
            "end: done",
            "FAILED tasks/os/11111111-0000-0000-0000-000000000001.json::os/11111111-0000-0000-0000-000000000001 - OSWorld score 0.00 < 1.00*",
        ]
    )


def test_missing_result_file_is_an_evaluation_error(pytester: pytest.Pytester, write_task) -> None:
    write_task(
        evaluator={
            "func": "exact_match",
            "result": {"type": "vm_file", "path": "/home/user/report.txt", "dest": "report.txt"},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        }
    )
    result = pytester.runpytest("tasks", "--agent=noop", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["OSWorld evaluation error: vm_file: /home/user/report.txt not found in the environment"]
    )
    props = _properties(pytester.path / "junit.xml")
    assert props["outcome"] == "eval_error"
    assert props["score"] == "0.0000"


def test_failing_setup_step_is_an_error(pytester: pytest.Pytester, write_task) -> None:
    write_task(config=[{"type": "open", "parameters": {"path": "/home/user/nope.docx"}}])
    result = pytester.runpytest("tasks", "--agent=replay")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*setup step 1/1 'open' failed: open_file: /home/user/nope.docx does not exist*"]
    )


def test_broken_provider_is_an_error(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "--agent=replay", "--provider-arg", "fail=restore")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*provider 'fake' failed to restore: RuntimeError: injected failure restoring snapshot 'os'*"]
    )


def test_environment_breaking_mid_episode_is_an_error_not_a_failure(
    pytester: pytest.Pytester, write_task
) -> None:
    write_task(solution=["pass", "pass", "DONE"])
    result = pytester.runpytest("tasks", "--agent=replay", "--provider-arg", "fail=step", "--junitxml=j.xml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fake guest: connection reset while running an action (injected)*"])
    root = ET.parse(pytester.path / "j.xml").getroot()
    assert root.find(".//testcase/error") is not None
    assert root.find(".//testcase/failure") is None
    # the step completed before the crash stays on disk
    traj = next((pytester.path / "results" / "run").rglob("traj.jsonl")).read_text().splitlines()
    assert '"step_num": 1' in traj[0]
    assert "Error" in traj[-1]


def test_missing_asset_offline_is_a_skip_naming_the_url(pytester: pytest.Pytester, write_task) -> None:
    url = "https://example.invalid/files/report.docx"
    write_task(
        config=[
            {
                "type": "download",
                "parameters": {"files": [{"url": url, "path": "/home/user/r.docx"}]},
            }
        ]
    )
    result = pytester.runpytest("tasks", "--agent=replay", "--offline", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([f"SKIPPED*asset {url} is not in the cache*--offline*"])


def test_cached_asset_runs_offline(pytester: pytest.Pytester, write_task) -> None:
    url = "https://example.invalid/files/out.txt"
    cached = pytester.path / ".assets" / "example.invalid" / "files" / "out.txt"
    cached.parent.mkdir(parents=True)
    cached.write_text("hello")
    write_task(
        config=[
            {
                "type": "download",
                "parameters": {"files": [{"url": url, "path": "/home/user/out.txt"}]},
            }
        ],
        solution=["DONE"],
    )
    result = pytester.runpytest("tasks", "--agent=replay", "--offline")
    result.assert_outcomes(passed=1)


def test_known_broken_task_is_a_strict_xfail(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    pytester.path.joinpath("broken.txt").write_text(
        "# task id: reason\n11111111-0000-0000-0000-000000000001: evaluator reads the wrong file\n"
    )
    result = pytester.runpytest("tasks", "--agent=noop", "--known-broken=broken.txt", "-rx")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL*known broken: evaluator reads the wrong file*"])
    # strict: if the task passes, the run says so
    result = pytester.runpytest("tasks", "--agent=replay", "--known-broken=broken.txt")
    result.assert_outcomes(failed=1)


def test_infeasible_task_scores_fail_as_right(pytester: pytest.Pytester, write_task) -> None:
    write_task(evaluator={"func": "infeasible"}, solution=["FAIL"])
    assert pytester.runpytest("tasks", "--agent=replay").ret == 0
    result = pytester.runpytest("tasks", "--agent=noop")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["OSWorld score 0.00 < 1.00: infeasible: infeasible task: the agent's last action was DONE, not FAIL"]
    )


def test_fail_on_feasible_task_scores_zero(pytester: pytest.Pytester, write_task) -> None:
    write_task(solution=["# fake: write /home/user/out.txt hello", "FAIL"])
    result = pytester.runpytest("tasks", "--agent=replay")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the agent said FAIL on a feasible task*"])


def test_junit_properties(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    pytester.runpytest("tasks", "--agent=replay", "--junitxml=junit.xml")
    props = _properties(pytester.path / "junit.xml")
    assert props["score"] == "1.0000"
    assert props["end_reason"] == "done"
    assert props["steps"] == "2"
    assert props["domain"] == "os"
    assert props["agent"] == "replay"
    assert props["provider"] == "fake"
    assert len(props["task_sha256"]) == 64
    assert props["plugin_version"]
    assert props["outcome"] == "passed"
    assert float(props["duration"]) > 0


def test_all_outcomes_under_xdist(pytester: pytest.Pytester, write_task) -> None:
    write_task("os", task_id="11111111-0000-0000-0000-000000000001")
    write_task("os", task_id="11111111-0000-0000-0000-000000000002", solution=["DONE"])
    write_task(
        "libreoffice_calc",
        task_id=CALC_ID,
        config=[{"type": "open", "parameters": {"path": "/nope.xlsx"}}],
    )
    write_task(
        "chrome",
        task_id="33333333-0000-0000-0000-000000000003",
        evaluator={"func": "infeasible"},
        solution=["FAIL"],
    )
    result = pytester.runpytest("tasks", "--agent=replay", "-n", "2", "--junitxml=junit.xml")
    result.assert_outcomes(passed=2, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*OSWorld summary*",
            "*overall*50.0%*(2/4 passed, 1 failed, 1 errors, 0 skipped)",
            "by category:",
            "*OS * 50.0%*(1/2 passed*",
            "*Office *0.0%*(0/1 passed, 0 failed, 1 errors*",
            "*Daily *100.0%*",
            "by domain:",
            "by feasibility:",
            "*feasible*33.3%*",
            "*infeasible*100.0%*",
        ]
    )
    root = ET.parse(pytester.path / "junit.xml").getroot()
    scores = sorted(p.get("value") for p in root.iter("property") if p.get("name") == "score")
    assert scores == ["0.0000", "1.0000", "1.0000"]


def _properties(junit) -> dict[str, str]:
    root = ET.parse(junit).getroot()
    case = root.find(".//testcase")
    assert case is not None
    return {p.get("name"): p.get("value") for p in case.iter("property")}


def test_verbose_run_shows_each_step(pytester: pytest.Pytester, write_task) -> None:
    write_task(solution=["# fake: write /home/user/out.txt hello", "DONE"])
    result = pytester.runpytest("tasks", "--agent=replay", "-v")
    result.stdout.fnmatch_lines(
        ["    step 1/15: # fake: write /home/user/out.txt hello", "    step 2/15: DONE"]
    )
