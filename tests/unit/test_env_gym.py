"""The Gymnasium env on the fake provider: API, spaces, sparse reward, seeds, check_env."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import pytest_osworld.env  # noqa: F401  (registers the env)
from pytest_osworld.env import EnvError
from pytest_osworld.env.gym_env import ENV_ID, EPISODE_OVER, DesktopGymEnv, find_tasks
from pytest_osworld.env.spaces import ACTION_TYPE_NAMES, AnyText, computer_13_space, to_osworld_action

WRITE_HELLO = "# fake: write /home/user/out.txt hello"
SMALL = (16, 9)


def write_tasks(folder: Path, count: int = 3) -> Path:
    for n in range(count):
        task = {
            "id": f"gym-{n}",
            "snapshot": "os",
            "instruction": f"Task {n}: write hello into ~/out.txt.",
            "config": [],
            "evaluator": {
                "func": "exact_match",
                "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
                "expected": {"type": "rule", "rules": {"expected": "hello"}},
            },
        }
        (folder / "os").mkdir(parents=True, exist_ok=True)
        (folder / "os" / f"gym-{n}.json").write_text(json.dumps(task))
    (folder / "os" / "not-a-task.json").write_text(json.dumps({"tasks": []}))
    return folder


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    return write_tasks(tmp_path / "tasks")


def make(tasks: Path, **kwargs: Any) -> DesktopGymEnv:
    kwargs.setdefault("observation_size", SMALL)
    return DesktopGymEnv(tasks, provider="fake", **kwargs)


def test_check_env_passes_for_both_action_spaces(tasks: Path) -> None:
    for space in ("pyautogui", "computer_13"):
        env = gymnasium.make(ENV_ID, tasks=tasks, provider="fake", observation_size=SMALL, action_space=space)
        check_env(env.unwrapped)
        env.close()


def test_check_env_passes_without_a_spec_so_determinism_is_checked(tasks: Path) -> None:
    env = make(tasks, render_mode="rgb_array")
    check_env(env)
    env.close()


def test_reset_returns_obs_and_info_in_the_declared_space(tasks: Path) -> None:
    env = make(tasks)
    obs, info = env.reset(seed=1, options={"task": "gym-2"})
    assert info == {"task_id": "gym-2", "domain": "os", "task_index": 2}
    assert obs in env.observation_space
    assert obs["screenshot"].shape == (9, 16, 3) and obs["screenshot"].dtype == np.uint8
    assert obs["instruction"].startswith("Task 2:")
    assert obs["accessibility_tree"] == '<desktop-frame name="fake"/>'
    env.close()


def test_sparse_reward_on_done_with_the_metric_reasons(tasks: Path) -> None:
    env = make(tasks)
    env.reset(options={"task": 0})
    _, reward, terminated, truncated, info = env.step(WRITE_HELLO)
    assert (reward, terminated, truncated, info) == (0.0, False, False, {"step": 1})
    _, reward, terminated, truncated, info = env.step("DONE")
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["score"] == 1.0 and info["end_reason"] == "done"
    assert info["metrics"][0]["func"] == "exact_match"
    with pytest.raises(EnvError, match="call reset"):
        env.step("DONE")
    assert EPISODE_OVER.startswith("the episode is over")
    env.reset(options={"task": "os/gym-0"})
    _, reward, terminated, _, info = env.step("FAIL")
    assert (reward, terminated, info["end_reason"]) == (0.0, True, "fail")
    assert info["reason"] == "the agent said FAIL on a feasible task"
    env.close()


def test_truncated_at_max_steps_is_scored_too(tasks: Path) -> None:
    env = make(tasks, max_steps=2)
    env.reset(options={"task": 1})
    _, _, _, truncated, _ = env.step("pass")
    assert not truncated
    _, reward, terminated, truncated, info = env.step(WRITE_HELLO)
    assert (reward, terminated, truncated, info["end_reason"]) == (1.0, False, True, "max_steps")
    env.close()


def test_action_errors_are_reported_not_raised(tasks: Path) -> None:
    env = make(tasks, action_space="computer_13")
    env.reset(options={"task": 0})
    bad = {"action_type": "CLICK", "parameters": {"x": "left"}}
    _, _, terminated, _, info = env.step(bad)
    assert not terminated and "x must be a number" in info["action_error"]
    with pytest.raises(EnvError, match="cannot run in computer_13"):
        env.step({"action_type": 99})
    env.close()


def test_seeds_pick_tasks_reproducibly(tasks: Path) -> None:
    def picks(seed: int) -> list[str]:
        env = make(tasks)
        first = env.reset(seed=seed)[1]["task_id"]
        rest = [env.reset()[1]["task_id"] for _ in range(5)]
        env.close()
        return [first, *rest]

    assert picks(7) == picks(7)
    assert len({tuple(picks(s)) for s in range(6)}) > 1
    assert set(picks(3)) <= {"gym-0", "gym-1", "gym-2"}


def test_computer_13_samples_become_osworld_dicts() -> None:
    space = computer_13_space((100, 50))
    space.seed(0)
    for _ in range(50):
        converted = to_osworld_action(space.sample())
        assert converted["action_type"] in ACTION_TYPE_NAMES
        params = converted["parameters"]
        assert 0 <= params.get("x", 0) < 100 and 0 <= params.get("y", 0) < 50
    sample = dict(space.sample(), action_type=ACTION_TYPE_NAMES.index("HOTKEY"), key="ctrl+c")
    assert to_osworld_action(sample) == {"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "c"]}}
    assert to_osworld_action({"action_type": "DONE"}) == {"action_type": "DONE"}


def test_any_text_holds_unicode_and_samples_harmless_names() -> None:
    space = AnyText(10)
    assert "<é😀>" in space and "" not in space and "x" * 11 not in space
    space.seed(0)
    assert all(space.sample().isalnum() for _ in range(20))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"observation_type": "som"}, "observation_type must be one of"),
        ({"action_space": "claude"}, "action_space must be"),
        ({"max_steps": 0}, "max_steps must be at least 1"),
        ({"render_mode": "human"}, "render_mode must be"),
    ],
)
def test_bad_arguments_are_explained(tasks: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(EnvError, match=message):
        make(tasks, **kwargs)


def test_tasks_from_folders_files_and_lists(tasks: Path, tmp_path: Path) -> None:
    assert [t.id for t in find_tasks(tasks)] == ["gym-0", "gym-1", "gym-2"]
    one = tasks / "os" / "gym-1.json"
    assert [t.id for t in find_tasks([one, json.loads(one.read_text())])] == ["gym-1", "gym-1"]
    empty = tmp_path / "e"
    empty.mkdir()
    with pytest.raises(EnvError, match="no task files"):
        make(empty)
    env = make(tasks)
    with pytest.raises(EnvError, match="out of range"):
        env.reset(options={"task": 5})
    with pytest.raises(EnvError, match="not one of this env's tasks"):
        env.reset(options={"task": "nope"})
    env.close()
