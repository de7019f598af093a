"""The Gymnasium env on real local desktops: check_env, a make() episode, a vector of two."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import pytest_osworld.env  # noqa: F401  (registers the env)
from pytest_osworld.env.gym_env import ENV_ID, DesktopGymEnv

pytestmark = pytest.mark.desktop

TASKS = Path(__file__).resolve().parents[2] / "tasks"
DEPLOY = TASKS / "os" / "ef9ea0c2-4f77-4017-9a2c-592f165ae51f.json"
SCREEN = (640, 360)
WRITE_HELLO = "open('/home/user/out.txt', 'w').write('hello')"


def static_task(folder: Path) -> Path:
    """A task whose screen never changes (no app): write hello into ~/out.txt."""
    task = {
        "id": "gym-static",
        "snapshot": "os",
        "instruction": "Write hello into ~/out.txt.",
        "config": [{"type": "execute", "parameters": {"command": ["mkdir", "-p", "/home/user/work"]}}],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
        "solution": [WRITE_HELLO, "DONE"],
    }
    path = folder / "os" / "gym-static.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(task))
    return path


def test_check_env_on_the_local_desktop(tmp_path: Path) -> None:
    task = static_task(tmp_path)
    # Without a spec, check_env also checks that a seeded reset and one step are deterministic:
    # two observations seconds apart must be equal. GNOME's top bar shows a clock, which
    # differs when a minute turns in between, so this runs on openbox, which has none.
    still = {"session": "openbox"}
    env = DesktopGymEnv(task, screen_size=SCREEN, max_steps=3, provider_options=still)
    check_env(env, skip_render_check=True)
    env.close()
    # Through gymnasium.make (the default session): the registered spec, Gymnasium's passive
    # checker around a reset and a step, the render mode and a double close.
    made = gymnasium.make(ENV_ID, tasks=str(task), screen_size=SCREEN, max_steps=3, render_mode="rgb_array")
    assert made.spec is not None and made.spec.id == ENV_ID and made.spec.nondeterministic
    obs, _ = made.reset(seed=0)
    assert made.observation_space.contains(obs)
    obs, reward, terminated, truncated, _ = made.step(WRITE_HELLO)
    assert made.observation_space.contains(obs) and (reward, terminated, truncated) == (0.0, False, False)
    frame = made.render()
    assert isinstance(frame, np.ndarray) and frame.shape == (SCREEN[1], SCREEN[0], 3)
    made.close()
    made.close()


def test_make_episode_scores_the_reference_solution_and_done(tmp_path: Path) -> None:
    env = gymnasium.make(ENV_ID, tasks=[str(DEPLOY)], screen_size=SCREEN, observation_type="screenshot")
    solution: list[Any] = json.loads(DEPLOY.read_text())["solution"]
    obs, info = env.reset(seed=0)
    assert info["task_id"] == DEPLOY.stem
    assert obs["screenshot"].shape == (SCREEN[1], SCREEN[0], 3)
    rewards = []
    for action in solution:
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
    assert rewards == [0.0] * (len(solution) - 1) + [1.0]
    assert terminated and not truncated and info["end_reason"] == "done"
    assert info["metrics"][0]["func"] == "exact_match"
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("DONE")
    assert (reward, terminated) == (0.0, True)
    assert info["reason"].startswith("exact_match: got ")
    env.close()


def test_async_vector_env_of_two_local_desktops(tmp_path: Path) -> None:
    task = str(static_task(tmp_path))

    def make() -> gymnasium.Env[Any, Any]:
        return gymnasium.make(ENV_ID, tasks=task, screen_size=SCREEN, observation_type="screenshot")

    envs = gymnasium.vector.AsyncVectorEnv([make, make], shared_memory=False)
    try:
        obs, infos = envs.reset(seed=[1, 2])
        assert obs["screenshot"].shape == (2, SCREEN[1], SCREEN[0], 3)
        assert obs["screenshot"].dtype == np.uint8
        assert list(infos["task_id"]) == ["gym-static", "gym-static"]
        _, rewards, terminated, _, _ = envs.step((WRITE_HELLO, "pass"))
        assert list(rewards) == [0.0, 0.0] and not terminated.any()
        _, rewards, terminated, truncated, infos = envs.step(("DONE", "DONE"))
        assert list(rewards) == [1.0, 0.0]  # only the first desktop wrote the file
        assert terminated.all() and not truncated.any()
    finally:
        envs.close()
