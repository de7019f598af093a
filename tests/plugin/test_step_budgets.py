"""``--budgets`` end to end on the fake provider: one run gives the scores a run per budget
gives, without another agent call; every report shows them; the option's usage errors."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.commands.cli import main as cli_main
from pytest_osworld.plugin.option_values import BUDGET_NOT_BELOW, BUDGET_TWICE, BUDGETS_PROBLEM
from pytest_osworld.plugin.preflight import BUDGETS_WITH_PAUSE
from pytest_osworld.report.budget_figures import BUDGETS_HEADING
from pytest_osworld.report.merge import SETTING_DIFFERS
from pytest_osworld.report.summary import SUMMARY_TITLE

pytestmark = pytest.mark.usefixtures("fake_ini")

AGENT = Path(__file__).parents[1] / "budget_agent.py"
OUT = "/home/user/out.txt"

#: Tasks whose solutions reach "hello" at different points: with the budget agent's harmless
#: step after each action, the first has written it by step 3, the second by step 9; the third
#: is infeasible (FAIL at step 9).
TASKS: dict[str, dict[str, Any]] = {
    "11111111-0000-0000-0000-0000000000b1": {
        "solution": [f"# fake: write {OUT} hel", f"# fake: write {OUT} hello", "DONE"],
    },
    "11111111-0000-0000-0000-0000000000b2": {
        "solution": [f"# fake: write {OUT} {'hello'[:n]}" for n in range(1, 6)] + ["DONE"],
    },
    "11111111-0000-0000-0000-0000000000b3": {"solution": ["FAIL"], "evaluator": {"func": "infeasible"}},
}


@pytest.fixture
def suite(pytester: pytest.Pytester, write_task: Any) -> pytest.Pytester:
    """The three tasks and the budget agent in the pytester folder."""
    pytester.makepyfile(budget_agent=AGENT.read_text())
    pytester.syspathinsert()
    for task_id, spec in TASKS.items():
        write_task(task_id=task_id, **spec)
    return pytester


def _run(pytester: pytest.Pytester, results: str, *args: str) -> pytest.RunResult:
    calls = pytester.path / f"{results}.calls"
    return pytester.runpytest(
        "tasks",
        "--agent=budget_agent:BudgetAgent",
        f"--agent-arg=calls={calls}",
        f"--results-dir={results}",
        f"--junitxml={results}/junit.xml",
        *args,
    )


def _results(root: Path) -> dict[str, dict[str, Any]]:
    return {(data := json.loads(p.read_text()))["task_id"]: data for p in root.rglob("result.json")}


def _calls(pytester: pytest.Pytester, results: str) -> int:
    return len((pytester.path / f"{results}.calls").read_text().splitlines())


def test_one_run_gives_the_scores_of_a_run_per_budget_without_another_agent_call(
    suite: pytest.Pytester,
) -> None:
    _run(suite, "r30", "--max-steps=30", "--budgets=5,10").assert_outcomes(passed=3)
    _run(suite, "r5", "--max-steps=5").assert_outcomes(passed=1, failed=2)
    _run(suite, "r10", "--max-steps=10").assert_outcomes(passed=3)
    one = _results(suite.path / "r30")
    for budget, alone in (("5", _results(suite.path / "r5")), ("10", _results(suite.path / "r10"))):
        for task_id, result in one.items():
            entry = result["scores_at"][budget]
            assert entry["score"] == alone[task_id]["score"], (budget, task_id, entry)
            assert entry["passed"] == (alone[task_id]["outcome"] == "passed")
    assert [list(r["scores_at"]) for r in one.values()] == [["5", "10", "30"]] * 3
    ends = {task_id[-2:]: [r["scores_at"][k]["end"] for k in ("5", "10", "30")] for task_id, r in one.items()}
    assert ends == {
        "b1": ["cut", "ended_before", "ended_before"],
        "b2": ["cut", "cut", "ended_before"],
        "b3": ["cut", "ended_before", "ended_before"],
    }
    # The agent was called once per step of the one run, never for a budget.
    assert _calls(suite, "r30") == sum(r["steps"] for r in one.values()) == 9 + 11 + 9
    assert _calls(suite, "r30") <= _calls(suite, "r5") + _calls(suite, "r10") + 9 + 11 + 9


def test_result_junit_summary_and_timings_carry_the_budgets(suite: pytest.Pytester) -> None:
    result = _run(suite, "r", "--max-steps=30", "--budgets=5,10")
    one = _results(suite.path / "r")
    b2 = one["11111111-0000-0000-0000-0000000000b2"]
    cut = b2["scores_at"]["5"]
    assert (cut["score"], cut["passed"], cut["outcome"], cut["replayed"], cut["steps"]) == (
        0.0,
        False,
        "failed",
        True,
        5,
    )
    assert cut["reason"] == "exact_match: got 'hel', expected 'hello'"
    assert cut["evaluator_inputs"][0]["result"] == "hel"
    assert b2["provenance"]["budgets"] == [5, 10]
    phases = b2["timings"]["phases"]
    assert phases["budgets"] > 0.0
    total = b2["timings"]["total"]
    assert b2["timings"]["fixed_overhead"] == pytest.approx(
        total - phases["agent"] - phases["setup_sleep"] - phases["settle"] - phases["budgets"], abs=0.003
    )
    cases = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(suite.path / "r/junit.xml").getroot().iter("testcase")
    }
    props = cases["os/11111111-0000-0000-0000-0000000000b2"]
    assert (props["score_at_5"], props["score_at_10"], props["score_at_30"]) == ("0.0000", "1.0000", "1.0000")
    assert float(props["time_budgets"]) == pytest.approx(phases["budgets"], abs=0.0011)
    lines = result.stdout.lines
    at = lines.index(BUDGETS_HEADING)
    assert lines[at + 1 : at + 4] == [
        "  5 steps                 33.3%  mean 0.333  (1/3 passed, 95% CI [6.1%, 79.2%])",
        "  10 steps               100.0%  mean 1.000  (3/3 passed, 95% CI [43.9%, 100.0%])",
        "  30 steps (max)         100.0%  mean 1.000  (3/3 passed, 95% CI [43.9%, 100.0%])",
    ]
    result.stdout.fnmatch_lines(["osworld: *max_steps=30 pass>=1 budgets=5,10*"])
    index = (suite.path / "r/index.html").read_text()
    assert "<h2>Step budgets</h2>" in index and "Success rate by step budget" in index


def test_without_budgets_nothing_changes(suite: pytest.Pytester) -> None:
    result = _run(suite, "r", "--max-steps=30")
    data = next(iter(_results(suite.path / "r").values()))
    assert "scores_at" not in data and data["provenance"]["budgets"] == []
    assert data["timings"]["phases"]["budgets"] == 0.0
    assert BUDGETS_HEADING not in result.stdout.str()
    assert "score_at_" not in (suite.path / "r/junit.xml").read_text()


#: A provider whose screens show the desktop's files, and whose replays' desktops get an extra
#: file after their second action: the desktop changed between the run and the replay.
DRIFT = """
import hashlib
import io
from dataclasses import replace

from PIL import Image

from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.fake import FakeGuest, FakeProvider


class DrawnGuest(FakeGuest):
    drift_after = None

    def screenshot(self):
        image = Image.new("RGB", (1024, 512), "white")
        for index, (path, data) in enumerate(sorted(self.files.items())):
            colour = tuple(hashlib.sha256(path.encode() + data).digest()[:3])
            left, top = (index % 8) * 128, (index // 8) * 128
            image.paste(colour, (left, top, left + 128, top + 128))
        out = io.BytesIO()
        image.save(out, "PNG")
        return out.getvalue()

    def run_python(self, code, timeout=30.0):
        result = super().run_python(code, timeout)
        if self.drift_after is not None and len(self.actions) == self.drift_after:
            for n in range(5):
                self.files[f"/home/user/drift{n}"] = b"changed between the run and the replay"
        return result


class DriftProvider(FakeProvider):
    name = "driftfake"

    def _restore_impl(self, snapshot):
        env = super()._restore_impl(snapshot)
        guest = DrawnGuest(env.guest.files, None, env.guest.screen)
        guest.drift_after = 2 if self.restores > 1 else None
        return replace(env, guest=guest)


PROVIDERS.register("driftfake", DriftProvider)
"""


def test_a_replay_whose_desktop_changed_is_diverged_and_not_counted(
    suite: pytest.Pytester, write_task
) -> None:
    for path in (suite.path / "tasks").rglob("*.json"):
        if "b2" not in path.name:
            path.unlink()
    suite.makepyfile(drift_env=DRIFT)
    suite.makeconftest("import drift_env  # registers the driftfake provider\n")
    result = _run(suite, "r", "--max-steps=30", "--budgets=5", "--provider=driftfake")
    result.assert_outcomes(passed=1)
    (data,) = _results(suite.path / "r").values()
    entry = data["scores_at"]["5"]
    assert (entry["end"], entry["score"], entry["passed"], entry["diverged_at"]) == (
        "diverged",
        None,
        None,
        2,
    )
    assert entry["changed_tiles"] >= 5  # five new files' tiles (and those they pushed along)
    assert "from step 2 on" in entry["reason"] and "(step_2.png)" in entry["reason"]
    folder = next((suite.path / "r").rglob("result.json")).parent
    assert entry["screen"] == "budget_5_step_2.png" and (folder / entry["screen"]).is_file()
    assert "  5 steps                    -  mean   -    (no score; 1 diverged)" in result.stdout.lines
    assert 'name="score_at_5" value="diverged at step 2"' in (suite.path / "r/junit.xml").read_text()


def test_rescore_and_merge_keep_the_budgets(
    suite: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(suite, "s1", "--max-steps=30", "--budgets=5,10", "--shard=1/2").assert_outcomes(passed=2)
    _run(suite, "s2", "--max-steps=30", "--budgets=5,10", "--shard=2/2").assert_outcomes(passed=1)
    _run(suite, "s3", "--max-steps=30", "--budgets=5", "--shard=2/2").assert_outcomes(passed=1)
    capsys.readouterr()
    assert (
        cli_main(["merge", str(suite.path / "s1"), str(suite.path / "s2"), "--out", str(suite.path / "m")])
        == 0
    )
    out = capsys.readouterr().out
    assert BUDGETS_HEADING in out and re.search(r"5 steps +33\.3%", out)
    merged = _results(suite.path / "m")
    assert all(list(r["scores_at"]) == ["5", "10", "30"] for r in merged.values())
    assert SUMMARY_TITLE in (suite.path / "m/summary.txt").read_text()
    assert "score_at_10" in (suite.path / "m/junit.xml").read_text()
    code = cli_main(
        ["merge", str(suite.path / "s1"), str(suite.path / "s3"), "--out", str(suite.path / "m2")]
    )
    assert code == 2
    reason = SETTING_DIFFERS.format(
        setting="step budgets (--budgets)",
        values=f"[5, 10] in {suite.path / 's1'}; [5] in {suite.path / 's3'}",
    )
    assert f"refused: {reason}" in capsys.readouterr().err
    result = suite.runpytest(f"--rescore={suite.path / 's1'}")
    assert result.ret == 0
    for path in (suite.path / "s1").rglob("result.rescored.json"):
        assert list(json.loads(path.read_text())["scores_at"]) == ["5", "10", "30"]


def _usage(result: pytest.RunResult) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    return result.stderr.str()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (
            ("--max-steps=30", "--budgets=5,30"),
            BUDGET_NOT_BELOW.format(budget=30, max_steps=30, source="command line --max-steps"),
        ),
        (("--budgets=20",), BUDGET_NOT_BELOW.format(budget=20, max_steps=15, source="default")),
        (("--budgets=5,x",), BUDGETS_PROBLEM),
        (("--budgets=0",), BUDGETS_PROBLEM),
        (("--budgets=5,5",), BUDGET_TWICE.format(budget=5)),
    ],
    ids=["at-max-steps", "above-default", "not-a-number", "zero", "twice"],
)
def test_bad_budgets_are_usage_errors_naming_the_problem(
    suite: pytest.Pytester, args: tuple[str, ...], problem: str
) -> None:
    value = args[-1].partition("=")[2]
    err = _usage(_run(suite, "r", *args))
    assert f"ERROR: --budgets={value!r} (command line --budgets): {problem}" in err


def test_the_ini_twin_is_read_and_named_in_its_errors(suite: pytest.Pytester) -> None:
    ini = (suite.path / "tox.ini").read_text().replace("[pytest]", "[pytest]\nosworld_budgets = 5, 40")
    (suite.path / "tox.ini").write_text(ini)
    err = _usage(_run(suite, "r", "--max-steps=30"))
    assert "--budgets='5, 40' (ini osworld_budgets): budget 40 is not below --max-steps 30" in err
    _run(suite, "r2", "--max-steps=50").assert_outcomes(passed=3)
    assert all(list(r["scores_at"]) == ["5", "40", "50"] for r in _results(suite.path / "r2").values())


def test_a_provider_that_cannot_restore_refuses_budgets_before_any_desktop(suite: pytest.Pytester) -> None:
    err = _usage(
        _run(suite, "r", "--budgets=5", "--provider=remote", "--provider-arg=urls=http://127.0.0.1:9")
    )
    assert (
        "ERROR: --budgets=5 (command line --budgets): the budgets are scored by replaying each episode's "
        "first steps on a freshly restored desktop, and the 'remote' provider cannot restore its desktops "
        "to a snapshot: use --provider=local or vagrant"
    ) in err
    assert not (suite.path / "r").exists()


def test_budgets_and_pause_on_fail_do_not_go_together(suite: pytest.Pytester) -> None:
    err = _usage(_run(suite, "r", "--budgets=5", "--pause-on-fail"))
    assert BUDGETS_WITH_PAUSE.format(value="5", source="command line --budgets") in err
