"""One engine: the pytest episode loop and the envs' EpisodeEngine take actions, observe and
tell a dead desktop from a failing action with the same functions of ``runner``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.computer13 import to_pyautogui
from pytest_osworld.agent.contract import AgentStep, Observation
from pytest_osworld.env.engine import EngineConfig, EpisodeEngine
from pytest_osworld.episode.loop import (
    Budget,
    environment_gone,
    observe,
    provider_note,
    run_action,
    run_episode,
)
from pytest_osworld.errors import AssetMissing, GuestError, GuestUnreachable
from pytest_osworld.guest_client.api import CommandResult
from pytest_osworld.plugin.fixtures import check_assets_available as from_fixtures
from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.fake import FakeGuest, FakeProvider
from pytest_osworld.task.assets import AssetCache, check_assets_available
from pytest_osworld.task.model import Task, load_task

BAD_CLICK = Action("computer_13", params={"action_type": "CLICK", "parameters": {"x": "left"}})
WRITE = Action("code", code="# fake: write /home/user/out.txt hello")


class Terminal(FakeGuest):
    """A fake guest with a terminal and a scripted health answer."""

    def __init__(self, health: Exception | None = None) -> None:
        super().__init__({})
        self.health_error = health
        self.terminal_calls = 0

    def terminal_output(self) -> str | None:
        self.terminal_calls += 1
        return "$ ls\nout.txt\n"

    def health(self) -> dict[str, Any]:
        if self.health_error is not None:
            raise self.health_error
        return {"ready": True}


class Exits(FakeGuest):
    """A fake guest whose every action exits 1 with a traceback."""

    def run_python(self, code: str, timeout: float = 30.0) -> CommandResult:
        self.actions.append(code)
        return CommandResult(1, "", "Traceback ...\nNameError: name 'pyautogui2' is not defined\n")


class Scripted:
    """An agent that answers with the given steps, then DONE."""

    def __init__(self, steps: list[AgentStep]) -> None:
        self.steps = list(steps)

    def reset(self, task: Task) -> None:
        return None

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        return self.steps.pop(0) if self.steps else AgentStep([Action("DONE")])


@pytest.fixture
def task(tmp_path: Path) -> Task:
    path = tmp_path / "os" / "t.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": "t", "instruction": "do it", "evaluator": {"func": "infeasible"}}))
    return load_task(path)


def test_run_action_wait_sleeps_at_least_a_second_and_runs_nothing() -> None:
    guest, slept = FakeGuest({}), []
    assert run_action(guest, Action("WAIT"), to_pyautogui, 0.25, slept.append) is None
    assert run_action(guest, Action("WAIT"), to_pyautogui, 3.0, slept.append) is None
    assert slept == [1.0, 3.0]
    assert guest.actions == []


def test_run_action_done_and_fail_do_nothing() -> None:
    guest, slept = FakeGuest({}), []
    for kind in ("DONE", "FAIL"):
        assert run_action(guest, Action(kind), to_pyautogui, 2.0, slept.append) is None
    assert (slept, guest.actions) == ([], [])


def test_run_action_runs_code_then_pauses() -> None:
    guest, slept = FakeGuest({}), []
    assert run_action(guest, WRITE, to_pyautogui, 0.5, slept.append) is None
    assert guest.files["/home/user/out.txt"] == b"hello"
    assert slept == [0.5]
    assert run_action(guest, WRITE, to_pyautogui, 0.0, slept.append) is None
    assert slept == [0.5]  # no pause asked, no sleep


def test_run_action_invalid_computer13_is_an_error_text() -> None:
    guest, slept = FakeGuest({}), []
    error = run_action(guest, BAD_CLICK, to_pyautogui, 0.0, slept.append)
    assert error is not None and error.startswith("invalid action: CLICK:")
    assert guest.actions == []


def test_run_action_failing_code_returns_the_error_tail() -> None:
    error = run_action(Exits({}), WRITE, to_pyautogui, 0.0, lambda s: None)
    assert error == "Traceback ...\nNameError: name 'pyautogui2' is not defined"


def test_run_action_lets_a_broken_guest_raise() -> None:
    guest = FakeGuest({}, fail_at_action=1)
    with pytest.raises(GuestError, match="injected"):
        run_action(guest, WRITE, to_pyautogui, 0.0, lambda s: None)


def test_observe_adds_the_terminal_only_when_asked() -> None:
    guest = Terminal()
    plain = observe(guest, "do it", "screenshot")
    assert (plain.terminal, plain.accessibility_tree, guest.terminal_calls) == (None, None, 0)
    full = observe(guest, "do it", "screenshot_a11y_tree", terminal=True)
    assert full.terminal == "$ ls\nout.txt\n"
    assert full.accessibility_tree == '<desktop-frame name="fake"/>'
    assert full.screenshot is not None and full.screenshot.startswith(b"\x89PNG")


def test_environment_gone_tells_dead_from_alive() -> None:
    assert environment_gone(Terminal()) is None
    assert environment_gone(Terminal(GuestError("404 no /health"))) is None
    dead = GuestUnreachable("connection refused")
    assert environment_gone(Terminal(dead)) is dead


def test_provider_note_never_raises(tmp_path: Path) -> None:
    provider = FakeProvider(ProviderConfig(worker_id="t", work_dir=str(tmp_path)))
    assert provider_note(provider) == ""

    def broken() -> str:
        raise RuntimeError("socket gone")

    provider.diagnose = broken  # type: ignore[method-assign]
    assert (
        provider_note(provider) == "(could not ask provider 'fake' what happened: RuntimeError: socket gone)"
    )


def test_check_assets_available_is_one_function() -> None:
    assert from_fixtures is check_assets_available


def test_offline_check_names_the_missing_url(tmp_path: Path) -> None:
    path = tmp_path / "os" / "t.json"
    path.parent.mkdir()
    url = "https://example.org/files/report.xlsx"
    step = {"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/r.xlsx"}]}}
    data = {"id": "t", "instruction": "x", "config": [step], "evaluator": {"func": "infeasible"}}
    path.write_text(json.dumps(data))
    task = load_task(path)
    check_assets_available(task, AssetCache(tmp_path / "cache", offline=False))  # online: no check
    with pytest.raises(AssetMissing, match=r"report\.xlsx"):
        check_assets_available(task, AssetCache(tmp_path / "cache", offline=True))


def test_pytest_loop_and_engine_take_the_same_actions_alike(task: Task, tmp_path: Path) -> None:
    """The same answer gives the same errors, sleeps and guest calls through both front doors."""
    actions = [WRITE, BAD_CLICK, Action("WAIT"), Action("DONE")]
    loop_guest, loop_slept = FakeGuest({}), []
    budget = Budget(max_steps=3, sleep_after_action=0.5)
    episode = run_episode(task, loop_guest, Scripted([AgentStep(actions)]), budget, sleep=loop_slept.append)

    engine_slept: list[float] = []
    engine = EpisodeEngine(EngineConfig(provider="fake", work_dir=tmp_path / "w"), sleep=engine_slept.append)
    try:
        engine.begin(task)
        errors = [engine.act(action, pause=0.5) for action in actions]
        engine_guest = engine.guest
    finally:
        engine.close()
    assert episode.steps[0].action_errors == [e for e in errors if e]
    assert errors[1] is not None and errors[1].startswith("invalid action: CLICK:")
    assert loop_slept == engine_slept == [0.5, 0.5, 1.0]
    assert loop_guest.actions == engine_guest.actions == [WRITE.code]
    assert engine.actions == actions == episode.actions


def test_engine_times_its_episode_like_a_pytest_item(tmp_path: Path) -> None:
    """The env path fills the same TaskTimings as the pytest items, and result.json has them."""
    data = {
        "id": "timed",
        "instruction": "write hello",
        "config": [{"type": "execute", "parameters": {"command": ["echo", "hi"]}}],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
    }
    (tmp_path / "os").mkdir()
    (tmp_path / "os" / "timed.json").write_text(json.dumps(data))
    task = load_task(tmp_path / "os" / "timed.json")
    config = EngineConfig(provider="fake", work_dir=tmp_path / "w", results_dir=tmp_path / "results")
    engine = EpisodeEngine(config, sleep=lambda s: None)
    try:
        engine.begin(task)
        assert [s["type"] for s in engine.timings.setup_steps] == ["execute"]
        for action in (WRITE, Action("DONE")):
            engine.observe(tree=False)
            error = engine.act(action)
            engine.record(action, error, None)
        assert engine.evaluate().score == 1.0
    finally:
        engine.close()
    timings = engine.timings
    assert [sorted(s) for s in timings.step_times] == [["actions", "index", "observe", "record"]] * 2
    assert [s["index"] for s in timings.step_times] == [1, 2]
    assert [g["name"] for g in timings.getters] == ["vm_command_line", "rule"]
    assert [m["name"] for m in timings.metrics] == ["exact_match"]
    assert timings.phases["agent"] == 0.0  # the agent is the caller's
    assert timings.phases["observe"] > 0.0 and timings.phases["actions"] > 0.0
    results = json.loads(next((tmp_path / "results").rglob("result.json")).read_text())
    assert set(results["timings"]["phases"]) == set(timings.phases)
    assert results["duration_s"] == results["timings"]["total"]
    assert sum(results["timings"]["phases"].values()) <= results["timings"]["total"] + 0.01


def test_a_new_episode_starts_a_new_clock(task: Task, tmp_path: Path) -> None:
    engine = EpisodeEngine(EngineConfig(provider="fake", work_dir=tmp_path / "w"), sleep=lambda s: None)
    try:
        engine.begin(task)
        engine.act(WRITE)
        first = engine.timings
        engine.begin(task)
        assert engine.timings is not first
        assert engine.timings.step_times == [] and len(first.step_times) == 1
    finally:
        engine.close()


def test_the_engines_own_work_folder_never_outlives_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed before its first reset, or failing to build its provider, the engine leaves
    no ``osworld-env-*`` folder behind in the temporary folder."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    EpisodeEngine(EngineConfig(provider="fake"), sleep=lambda s: None).close()
    with pytest.raises(Exception, match="no-such-provider"):
        EpisodeEngine(EngineConfig(provider="no-such-provider"), sleep=lambda s: None)
    assert list(tmp_path.glob("osworld-env-*")) == []
