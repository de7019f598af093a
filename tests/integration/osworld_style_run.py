"""A run script written against OSWorld's ``DesktopEnv`` and agent contract.

It does what OSWorld's default runner does, in its shape: reset the env to the example,
reset the agent, start the recording, ask ``agent.predict(instruction, obs)`` and feed each
returned action to ``env.step(action, sleep_after_execution)``, saving every screenshot and
a ``traj.jsonl`` line, then ``env.evaluate()`` into ``result.txt`` and the recording.
Only the import below differs from a script that drives OSWorld's own class.
"""

from __future__ import annotations

import datetime
import json
import os
from typing import Any

from pytest_osworld.env import DesktopEnv  # OSWorld: from desktop_env.desktop_env import DesktopEnv


def run_single_example(
    agent: Any,
    env: Any,
    example: dict[str, Any],
    max_steps: int,
    instruction: str,
    sleep_after_execution: float,
    example_result_dir: str,
    scores: list[float],
) -> None:
    """One example: the loop, the trajectory files, the score."""
    agent.reset()
    obs = env.reset(task_config=example)
    done = False
    step_idx = 0
    env.controller.start_recording()
    while not done and step_idx < max_steps:
        response, actions = agent.predict(instruction, obs)
        for action in actions:
            stamp = datetime.datetime.now().strftime("%Y%m%d@%H%M%S%f")
            obs, reward, done, info = env.step(action, sleep_after_execution)
            shot = f"step_{step_idx + 1}_{stamp}.png"
            with open(os.path.join(example_result_dir, shot), "wb") as handle:
                handle.write(obs["screenshot"])
            with open(os.path.join(example_result_dir, "traj.jsonl"), "a") as handle:
                line = {
                    "step_num": step_idx + 1,
                    "action_timestamp": stamp,
                    "action": action,
                    "response": response,
                    "reward": reward,
                    "done": done,
                    "info": info,
                    "screenshot_file": shot,
                }
                handle.write(json.dumps(line) + "\n")
            if done:
                break
        step_idx += 1
    result = env.evaluate()
    scores.append(result)
    with open(os.path.join(example_result_dir, "result.txt"), "w", encoding="utf-8") as handle:
        handle.write(f"{result}\n")
    env.controller.end_recording(os.path.join(example_result_dir, "recording.mp4"))


def run_examples(
    agent: Any,
    examples: list[tuple[str, str]],
    result_dir: str,
    max_steps: int = 15,
    screen_size: tuple[int, int] = (1920, 1080),
) -> list[float]:
    """Run each ``(domain, path)`` example with one env, as OSWorld's ``run.py`` does."""
    env = DesktopEnv(
        provider_name="local",
        action_space="pyautogui",
        screen_size=screen_size,
        headless=True,
        os_type="Ubuntu",
        require_a11y_tree=False,
    )
    scores: list[float] = []
    try:
        for domain, path in examples:
            with open(path, encoding="utf-8") as handle:
                example = json.load(handle)
            example_result_dir = os.path.join(
                result_dir, "pyautogui", "screenshot", agent.model, domain, example["id"]
            )
            os.makedirs(example_result_dir, exist_ok=True)
            run_single_example(
                agent, env, example, max_steps, example["instruction"], 0.0, example_result_dir, scores
            )
    finally:
        env.close()
    return scores
