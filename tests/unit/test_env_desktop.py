"""DesktopEnv on the fake provider: OSWorld's surface, our engine underneath."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.env import DesktopCrashed, DesktopEnv, EnvError
from pytest_osworld.env.controller import CONTROLLER_METHODS, Controller
from pytest_osworld.env.engine import NO_EPISODE, NO_TASK, load_task_config
from pytest_osworld.errors import GuestError, GuestUnreachable, SetupStepError

WRITE_HELLO = "# fake: write /home/user/out.txt hello"


def make_task(**extra: Any) -> dict[str, Any]:
    task: dict[str, Any] = {
        "id": "env-unit-1",
        "snapshot": "os",
        "instruction": "Please write hello into ~/out.txt.",
        "config": [],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
    }
    task.update(extra)
    return task


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
def env(tmp_path: Path, slept: list[float]) -> Any:
    desktop = DesktopEnv(
        provider_name="fake",
        action_space="pyautogui",
        results_dir=tmp_path / "results",
        sleep=slept.append,
    )
    yield desktop
    desktop.close()


def guest_actions(env: DesktopEnv) -> list[str]:
    return list(env.engine.guest.actions)


def test_reset_returns_osworlds_observation_dict(env: DesktopEnv) -> None:
    obs = env.reset(task_config=make_task())
    assert set(obs) == {"screenshot", "accessibility_tree", "terminal", "instruction"}
    assert obs["screenshot"].startswith(b"\x89PNG")
    assert obs["accessibility_tree"] == '<desktop-frame name="fake"/>'
    assert obs["terminal"] is None
    assert obs["instruction"] == "Please write hello into ~/out.txt."
    assert env.task_id == "env-unit-1"
    assert env.cache_dir == str(Path("cache") / "env-unit-1")


def test_solution_scores_one_and_done_scores_zero(env: DesktopEnv, tmp_path: Path) -> None:
    env.reset(task_config=make_task())
    _, reward, done, info = env.step(WRITE_HELLO, pause=0)
    assert (reward, done, info) == (0.0, False, {})
    _, reward, done, info = env.step("DONE", pause=0)
    assert (reward, done, info) == (0.0, True, {"done": True})
    assert env.evaluate() == 1.0
    env.reset(task_config=make_task())
    env.step({"action_type": "DONE"})
    assert env.evaluate() == 0.0
    assert env.last_evaluation is not None
    assert env.last_evaluation.first_reason() == "exact_match: got '', expected 'hello'"
    folder = tmp_path / "results" / "pyautogui" / "env" / "DesktopEnv" / "os" / "env-unit-1"
    assert (folder / "result.txt").read_text().strip() == "0.0"
    assert json.loads((folder / "traj.jsonl").read_text().splitlines()[0])["actions"] == ["DONE"]


def test_fail_ends_the_episode_and_scores_an_infeasible_task(env: DesktopEnv) -> None:
    env.reset(task_config=make_task(evaluator={"func": "infeasible"}))
    _, _, done, info = env.step("FAIL")
    assert done and info == {"fail": True}
    assert env.evaluate() == 1.0


def test_computer_13_actions_run_as_pyautogui(env: DesktopEnv) -> None:
    env.reset(task_config=make_task())
    env.step({"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}, pause=0)
    assert guest_actions(env) == ["pyautogui.click(10, 20)"]
    _, _, done, info = env.step({"action_type": "CLICK", "parameters": {"x": "left"}}, pause=0)
    assert not done and "x must be a number" in info["error"]


def test_wait_sleeps_pause_and_actions_pause_after(env: DesktopEnv, slept: list[float]) -> None:
    env.reset(task_config=make_task())
    env.step("WAIT", pause=3)
    env.step("pass", pause=0.5)
    env.step({"command": "pass"}, pause=0)
    assert slept == [3, 0.5]
    assert guest_actions(env) == ["pass", "pass"]
    assert [a.kind for a in env.engine.actions] == ["WAIT", "code", "code"]
    assert env.action_history == ["WAIT", "pass", {"command": "pass"}]


def test_out_of_order_calls_are_explained(tmp_path: Path) -> None:
    env = DesktopEnv(provider_name="fake", action_space="pyautogui")
    with pytest.raises(EnvError, match="call reset"):
        env.step("pass")
    with pytest.raises(EnvError) as no_episode:
        env.evaluate()
    assert NO_EPISODE in str(no_episode.value)
    env.reset()  # the bare snapshot, no task
    with pytest.raises(EnvError) as no_task:
        env.evaluate()
    assert NO_TASK in str(no_task.value)
    with pytest.raises(EnvError, match="cannot run"):
        env.step(42)
    work = env.engine.work_dir
    assert work.is_dir()
    env.close()
    env.close()  # idempotent
    assert not work.exists()  # the engine's own work folder goes with it


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"provider_name": "vmware"}, "provider_name='vmware' is OSWorld's"),
        ({"provider_name": "fake", "action_space": "mouse"}, "action_space must be one of"),
        ({"provider_name": "fake", "os_type": "Windows"}, "desktops are Linux"),
    ],
)
def test_constructor_rejects_what_it_cannot_run(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(EnvError, match=message):
        DesktopEnv(**kwargs)


def test_setup_failures_raise_the_pytest_items_errors(env: DesktopEnv) -> None:
    bad = make_task(config=[{"type": "open", "parameters": {"path": 3, "extra": 1}}])
    with pytest.raises(SetupStepError, match="setup step 1/1 'open' failed"):
        env.reset(task_config=bad)


def test_controller_and_vm_helpers(env: DesktopEnv) -> None:
    env.reset(task_config=make_task())
    assert env.vm_screen_size == {"width": 1920, "height": 1080}
    assert env.render() == env.controller.get_screenshot()
    assert env.controller.get_file("/nope") is None
    result = env.controller.execute_python_command(WRITE_HELLO)
    assert result == {"status": "success", "output": "", "error": "", "returncode": 0}
    assert env.controller.get_file("/home/user/out.txt") == b"hello"
    env.controller.execute_action({"action_type": "PRESS", "parameters": {"key": "enter"}})
    assert guest_actions(env)[-1] == 'pyautogui.press("enter")'
    assert all(callable(getattr(Controller, name)) for name in CONTROLLER_METHODS)


def test_task_configs_from_dicts_paths_and_relative_assets(tmp_path: Path) -> None:
    data = make_task()
    path = tmp_path / "os" / "t.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    from_path = load_task_config(str(path))
    assert (from_path.domain, from_path.path) == ("os", path)
    from_dict = load_task_config(data, task_dir=tmp_path / "chrome")
    assert from_dict.domain == "os"  # the snapshot names the domain
    assert from_dict.path.parent == tmp_path / "chrome"
    assert load_task_config({**data, "domain": "mine"}).domain == "mine"
    with pytest.raises(EnvError, match="task_config must be"):
        load_task_config(3)  # type: ignore[arg-type]


def test_a_guest_that_stops_answering_is_explained_and_reset_recovers(
    env: DesktopEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    env.reset(task_config=make_task())
    guest = env.engine.guest

    def gone(*args: Any, **kwargs: Any) -> Any:
        raise GuestUnreachable("connection refused")

    monkeypatch.setattr(guest, "run_python", gone)
    monkeypatch.setattr(guest, "health", gone)
    with pytest.raises(DesktopCrashed) as crashed:
        env.step("pass", pause=0)
    assert str(crashed.value) == (
        "the desktop stopped answering during step 1 of task os/env-unit-1: the guest server "
        "stopped answering (connection refused); the episode is lost, and the next reset() "
        "restores a fresh desktop"
    )
    with pytest.raises(EnvError, match="call reset"):
        env.step("pass")
    env.reset(task_config=make_task())
    env.step(WRITE_HELLO, pause=0)
    env.step("DONE")
    assert env.evaluate() == 1.0


def test_a_guest_error_from_a_live_desktop_is_not_a_crash(
    env: DesktopEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    env.reset(task_config=make_task())

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise GuestError("HTTP 500 from /run_python", status=500)

    monkeypatch.setattr(env.engine.guest, "run_python", broken)
    with pytest.raises(GuestError, match="HTTP 500") as raised:
        env.step("pass", pause=0)
    assert not isinstance(raised.value, DesktopCrashed)
