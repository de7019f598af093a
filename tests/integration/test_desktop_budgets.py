"""``--budgets`` on the real local desktop: one run at 30 steps gives, at 5 and at 10 steps, the
scores of separate runs at 5 and at 10, without another agent call; a desktop changed between
the run and the replay is reported as diverged, not scored; a native computer-use agent's
mapped actions are replayed as they ran, without another call to its model.

The agent is ``tests/budget_agent.py``: it plays a task's reference solution with a harmless
step after each action and ends after step 8, the same steps every time. The three tasks are
quick ones of our suite (a terminal and files): at 5 steps their solutions are cut short, at
10 the shortest has ended.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_wire import FAKE_KEY, ProviderServer, start
from protocol_wire import anthropic_turn

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).parents[2]
AGENT = ROOT / "tests" / "budget_agent.py"
TASKS = [
    ROOT / "tasks" / "os" / f"{task_id}.json"
    for task_id in (
        "4ae797ce-bf73-4720-ad06-176ca7483fb7",
        "9cf34795-a8b8-4693-a578-31eb2c71aef1",
        "ef9ea0c2-4f77-4017-9a2c-592f165ae51f",
    )
]


def _run(pytester: pytest.Pytester, results: str, *args: str, tasks: list[Path] = TASKS) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        *map(str, tasks),
        "--agent=budget_agent:BudgetAgent",
        f"--agent-arg=calls={pytester.path / f'{results}.calls'}",
        f"--results-dir={results}",
        "-p",
        "no:cacheprovider",
        *args,
    )


def _results(root: Path) -> dict[str, dict[str, Any]]:
    return {(data := json.loads(p.read_text()))["task_id"]: data for p in root.rglob("result.json")}


def test_one_run_cut_at_5_and_10_scores_as_runs_of_5_and_10_steps(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(budget_agent=AGENT.read_text())
    pytester.syspathinsert()
    _run(pytester, "r30", "--max-steps=30", "--budgets=5,10").assert_outcomes(passed=3)
    _run(pytester, "r5", "--max-steps=5")
    _run(pytester, "r10", "--max-steps=10")
    one = _results(pytester.path / "r30")
    assert len(one) == 3
    for budget in ("5", "10"):
        alone = _results(pytester.path / f"r{budget}")
        for task_id, result in one.items():
            entry = result["scores_at"][budget]
            parted = (budget, task_id, entry.get("diverged_at"), entry.get("reason"))
            assert entry["end"] in ("cut", "ended_before"), parted
            why = (budget, task_id, entry, alone[task_id]["reason"])
            assert entry["score"] == alone[task_id]["score"], why
    cut = [r["scores_at"]["5"] for r in one.values()]
    assert all(e["end"] == "cut" and e["replayed"] for e in cut)
    assert all(r["timings"]["phases"]["budgets"] > 0 for r in one.values())
    calls = (pytester.path / "r30.calls").read_text().splitlines()
    assert len(calls) == sum(r["steps"] for r in one.values())


#: A local provider whose replays' desktops get a terminal window after their second action:
#: the desktop changed between the run and the replay.
DRIFT = '''
import time
from dataclasses import replace

from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.local import LocalProvider


class DriftingGuest:
    """The desktop's guest; after the second action, an xterm opens over the screen."""

    def __init__(self, inner):
        self._inner = inner
        self._actions = 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def run_python(self, code, timeout=30.0):
        result = self._inner.run_python(code, timeout)
        self._actions += 1
        if self._actions == 2:
            before = self._inner.execute(["wmctrl", "-l"]).output
            self._inner.launch(["xterm", "-geometry", "100x40+300+200", "-bg", "red"])
            deadline = time.monotonic() + 20
            while self._inner.execute(["wmctrl", "-l"]).output == before and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(1.0)
        return result


class DriftingLocal(LocalProvider):
    restores_done = 0

    def _restore_impl(self, snapshot):
        env = super()._restore_impl(snapshot)
        DriftingLocal.restores_done += 1
        if DriftingLocal.restores_done == 1:
            return env
        return replace(env, guest=DriftingGuest(env.guest))


PROVIDERS.register("driftlocal", DriftingLocal)
'''


def test_a_replay_on_a_changed_desktop_is_diverged_not_scored(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(budget_agent=AGENT.read_text(), drift_env=DRIFT)
    pytester.makeconftest("import drift_env  # registers the driftlocal provider\n")
    pytester.syspathinsert()
    task = pytester.path / "tasks" / "os" / TASKS[0].name  # under the conftest's folder
    task.parent.mkdir(parents=True)
    task.write_text(TASKS[0].read_text())
    result = _run(pytester, "r", "--max-steps=30", "--budgets=5", "--provider=driftlocal", tasks=[task])
    result.assert_outcomes(passed=1)
    (data,) = _results(pytester.path / "r").values()
    entry = data["scores_at"]["5"]
    assert (entry["end"], entry["score"], entry["diverged_at"]) == ("diverged", None, 2)
    assert entry["changed_tiles"] > 3
    folder = next((pytester.path / "r").rglob("result.json")).parent
    assert (folder / entry["screen"]).is_file()
    result.stdout.fnmatch_lines(["*5 steps*no score; 1 diverged*"])


def test_a_native_agents_actions_are_replayed_without_another_model_call(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_BASE_URL", "HTTPS_PROXY", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    standin = ProviderServer()
    server = start(standin)
    # Claude's computer tool: the command typed at step 1, a wait at step 2, done at step 3.
    standin.play(
        anthropic_turn({"action": "type", "text": "cd ~/reports && tar -czf 2023.tar.gz 2023\n"}),
        anthropic_turn({"action": "wait", "duration": 1}),
        anthropic_turn(text="The task is done."),
    )
    try:
        result = pytester.runpytest_subprocess(
            str(TASKS[1]),
            "--agent=claude-cu",
            f"--agent-arg=base_url={standin.url}",
            "--agent-arg=backoff=0.01",
            "--max-steps=5",
            "--budgets=1,2",
            "--results-dir=r",
            "-p",
            "no:cacheprovider",
        )
    finally:
        server.shutdown()
        server.server_close()
    result.assert_outcomes(passed=1)
    assert len(standin.requests) == 3
    (data,) = _results(pytester.path / "r").values()
    # Cut after the typed command, the replay ran it again: the archive is there, score 1.
    for budget in ("1", "2"):
        entry = data["scores_at"][budget]
        assert (entry["end"], entry["replayed"], entry["score"]) == ("cut", True, 1.0), entry
