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
        ["    step 1/15 (code, *s): # fake: write /home/user/out.txt hello", "    step 2/15 (DONE, *s)"]
    )


# --- rows of the table not shown above ------------------------------------------------

FUZZY = {
    "func": "fuzzy_match",
    "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
    "expected": {"type": "rule", "rules": {"expected": "hellp"}},
}


def test_pass_threshold_decides_between_pass_and_fail(pytester: pytest.Pytester, write_task) -> None:
    """score >= threshold passes, score < threshold fails, with a partial score (0.80)."""
    write_task(evaluator=FUZZY)
    result = pytester.runpytest("tasks", "--agent=replay", "--pass-threshold=0.8", "--junitxml=j.xml")
    result.assert_outcomes(passed=1)
    assert _properties(pytester.path / "j.xml")["score"] == "0.8000"
    result = pytester.runpytest("tasks", "--agent=replay", "--pass-threshold=0.81")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["OSWorld score 0.80 < 0.81: fuzzy_match: fuzzy ratio 0.800 between 'hello' and 'hellp'"]
    )


def test_failing_postconfig_is_an_evaluation_error(pytester: pytest.Pytester, write_task) -> None:
    evaluator = {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
        "expected": {"type": "rule", "rules": {"expected": "hello"}},
        "postconfig": [{"type": "open", "parameters": {"path": "/home/user/gone.odt"}}],
    }
    write_task(evaluator=evaluator)
    result = pytester.runpytest("tasks", "--agent=replay", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "OSWorld evaluation error: postconfig failed: setup step 1/1 'open' failed: "
            "open_file: /home/user/gone.odt does not exist*",
            "  instruction : Please write hello into ~/out.txt for me.",
            "  episode     : agent said DONE after 2/15 steps (*)",
        ]
    )
    props = _properties(pytester.path / "junit.xml")
    assert (props["outcome"], props["score"]) == ("eval_error", "0.0000")


def test_live_web_page_without_network_is_a_skip_naming_the_option(
    pytester: pytest.Pytester, write_task
) -> None:
    url = "https://www.example.com/"
    write_task("chrome", config=[{"type": "chrome_open_tabs", "parameters": {"urls_to_open": [url]}}])
    result = pytester.runpytest("tasks", "--agent=replay", "-rs", "--junitxml=j.xml")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [f"SKIPPED*the task opens {url} from the live web; this run has no network access*network=shared*"]
    )
    root = ET.parse(pytester.path / "j.xml").getroot()
    assert root.find(".//testcase/skipped") is not None


def test_network_shared_lets_a_live_web_task_run(pytester: pytest.Pytester, write_task) -> None:
    """The skip's enabling option really enables: the step goes on to Chrome (none here)."""
    write_task(
        "chrome",
        config=[{"type": "chrome_open_tabs", "parameters": {"urls_to_open": ["https://www.example.com/"]}}],
    )
    result = pytester.runpytest("tasks", "--agent=replay", "--provider-arg", "network=shared")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*setup step 1/1 'chrome_open_tabs' failed: *"])


def test_google_account_is_a_skip_with_the_reason(pytester: pytest.Pytester, write_task) -> None:
    write_task(config=[{"type": "googledrive", "parameters": {"settings_file": "s.json", "operation": []}}])
    result = pytester.runpytest("tasks", "--agent=replay", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED*Google Drive account (googledrive step); this run has no Google account configured*"]
    )


def test_every_row_under_xdist_with_golden_text_and_junit(
    pytester: pytest.Pytester, write_task, monkeypatch
) -> None:
    """Each row of the outcome table in one ``-n 2`` run: outcomes, messages, JUnit, summary."""
    monkeypatch.setenv("CI", "true")
    ids = {
        name: f"44444444-0000-0000-0000-00000000000{n}"
        for n, name in enumerate(["pass", "fail", "evalerr", "setup", "skip", "xfail", "infeasible"], start=1)
    }
    write_task("os", task_id=ids["pass"])
    write_task("os", task_id=ids["fail"], solution=["DONE"])
    write_task(
        "libreoffice_calc",
        task_id=ids["evalerr"],
        evaluator={
            "func": "exact_match",
            "result": {"type": "vm_file", "path": "/home/user/sales.xlsx", "dest": "sales.xlsx"},
            "expected": {"type": "rule", "rules": {"expected": "x"}},
        },
        solution=["DONE"],
    )
    write_task(
        "libreoffice_writer",
        task_id=ids["setup"],
        config=[
            {"type": "sleep", "parameters": {"seconds": 0}},
            {"type": "open", "parameters": {"path": "/home/user/nope.docx"}},
        ],
    )
    write_task(
        "thunderbird",
        task_id=ids["skip"],
        config=[
            {
                "type": "download",
                "parameters": {
                    "files": [{"url": "https://example.invalid/a.eml", "path": "/home/user/a.eml"}]
                },
            }
        ],
    )
    write_task("gimp", task_id=ids["xfail"], solution=["DONE"])
    write_task("vs_code", task_id=ids["infeasible"], evaluator={"func": "infeasible"}, solution=["FAIL"])
    pytester.path.joinpath("broken.txt").write_text(f"{ids['xfail']}: gold file is wrong\n")

    result = pytester.runpytest(
        "tasks",
        "--agent=replay",
        "--offline",
        "--known-broken=broken.txt",
        "-n",
        "2",
        "-rfEsx",
        "--junitxml=junit.xml",
    )
    result.assert_outcomes(passed=2, failed=2, errors=1, skipped=1, xfailed=1)
    fail_id, err_id = ids["fail"], ids["evalerr"]
    result.stdout.fnmatch_lines_random(
        [
            # FAILED, with the body of section 5
            "OSWorld score 0.00 < 1.00: exact_match: got '', expected 'hello'*",
            "  episode     : agent said DONE after 1/15 steps (*)",
            f"  rerun       : pytest *{fail_id}.json --agent=replay --provider=fake",
            # FAILED as eval_error
            "OSWorld evaluation error: vm_file: /home/user/sales.xlsx not found in the environment",
            # ERROR naming the step
            "*setup step 2/2 'open' failed: open_file: /home/user/nope.docx does not exist*",
            # SKIPPED with the URL and the option
            "SKIPPED*asset https://example.invalid/a.eml is not in the cache*--offline*",
            # XFAIL with the reason
            f"XFAIL*{ids['xfail']}*known broken: gold file is wrong*",
            # the short summary keeps the first line
            f"FAILED tasks/os/{fail_id}.json::os/{fail_id} - OSWorld score 0.00 < 1.00: exact_match*",
            f"FAILED tasks/libreoffice_calc/{err_id}.json::libreoffice_calc/{err_id} - "
            "OSWorld evaluation error: vm_file*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*OSWorld summary*",
            # the rate is over the tasks that ran; skips and xfails are counted apart
            "  overall * 40.0%  mean 0.400  (2/5 passed, 2 failed, 1 errors, 1 skipped, 1 xfail)",
            # and over every collected task, as the paper divides: 2 of 7
            "  all 7 collected * 28.6%  mean 0.286  (2/7 passed; skipped and xfail tasks count as 0)",
            "by category:",
            "*OS * 50.0%*(1/2 passed, 1 failed, 0 errors, 0 skipped)*",
            "*Office *0.0%*(0/2 passed, 1 failed, 1 errors, 0 skipped)*",
            "  Daily  * -  mean   -    (0/0 passed, 0 failed, 0 errors, 1 skipped)",
            "*Professional *100.0%*(1/1 passed, 0 failed, 0 errors, 0 skipped, 1 xfail)",
            "by domain:",
            "  gimp  * -  mean   -    (0/0 passed, 0 failed, 0 errors, 0 skipped, 1 xfail)",
            "  libreoffice_calc  * 0.0%  mean 0.000  (0/1 passed, 1 failed, 0 errors, 0 skipped)",
            "  libreoffice_writer  * 0.0%  mean 0.000  (0/1 passed, 0 failed, 1 errors, 0 skipped)",
            "  os  * 50.0%  mean 0.500  (1/2 passed, 1 failed, 0 errors, 0 skipped)",
            "  thunderbird  * -  mean   -    (0/0 passed, 0 failed, 0 errors, 1 skipped)",
            "  vs_code  * 100.0%  mean 1.000  (1/1 passed, 0 failed, 0 errors, 0 skipped)",
            "by feasibility:",
            "  feasible  * 25.0%  mean 0.250  (1/4 passed, 2 failed, 1 errors, 1 skipped, 1 xfail)",
            "  infeasible  * 100.0%  mean 1.000  (1/1 passed, 0 failed, 0 errors, 0 skipped)",
        ]
    )
    root = ET.parse(pytester.path / "junit.xml").getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert len(cases) == 7
    expected_outcome = {
        "pass": "passed",
        "fail": "failed",
        "evalerr": "eval_error",
        "infeasible": "passed",
    }
    for name, task_id in ids.items():
        (case,) = [c for n, c in cases.items() if n.endswith(task_id)]
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        # identity and provenance on every test case, whatever its outcome
        assert props["agent"] == "replay", name
        assert props["provider"] == "fake", name
        assert "model" in props, name
        assert len(props["task_sha256"]) == 64, name
        assert props["plugin_version"], name
        assert props["domain"] == _domain_of(pytester, task_id), name
        if name in expected_outcome:
            assert props["outcome"] == expected_outcome[name], name
            assert props["end_reason"] in ("done", "fail"), name
            assert int(props["steps"]) >= 1, name
            assert float(props["duration"]) >= 0, name
            assert props["score"] == ("1.0000" if expected_outcome[name] == "passed" else "0.0000"), name
    assert cases_of(cases, ids["setup"]).find("error") is not None
    assert cases_of(cases, ids["skip"]).find("skipped") is not None
    assert cases_of(cases, ids["fail"]).find("failure") is not None


def cases_of(cases: dict[str, ET.Element], task_id: str) -> ET.Element:
    (case,) = [c for n, c in cases.items() if n.endswith(task_id)]
    return case


def _domain_of(pytester: pytest.Pytester, task_id: str) -> str:
    (path,) = (pytester.path / "tasks").rglob(f"{task_id}.json")
    return path.parent.name


def test_junit_model_property(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    pytester.runpytest("tasks", "--agent=replay", "--model=some-model-7b", "--junitxml=junit.xml")
    assert _properties(pytester.path / "junit.xml")["model"] == "some-model-7b"
