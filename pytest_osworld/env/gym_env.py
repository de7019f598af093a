"""The Gymnasium env ``pytest_osworld/Desktop-v0``: tasks as episodes, the score as reward.

::

    import gymnasium, pytest_osworld.env          # the import registers the env
    env = gymnasium.make("pytest_osworld/Desktop-v0", tasks="tasks/os", max_steps=15)
    obs, info = env.reset(seed=0)                 # the seed picks the task
    obs, reward, terminated, truncated, info = env.step("pyautogui.press('enter')")

Each ``reset`` restores a fresh desktop and runs the chosen task's setup steps
(``options={"task": id | index | path}`` chooses one; otherwise the env's random
generator does, so a seed picks tasks reproducibly). The reward is sparse: 0 on every
step, and the evaluator's score on the step that ends the episode, which is
``terminated`` when the agent says DONE or FAIL and ``truncated`` after ``max_steps``
steps. The metrics' reasons are in that step's ``info``. The same engine as the pytest
items and :class:`~pytest_osworld.env.DesktopEnv` does the work.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from pytest_osworld.agent.actions import Action, ActionParseError, action_from_json
from pytest_osworld.env.engine import (
    DesktopCrashed,
    EngineConfig,
    EnvError,
    EpisodeEngine,
    load_task_config,
)
from pytest_osworld.env.spaces import (
    MAX_TREE,
    OBSERVATION_KEYS,
    computer_13_space,
    observation_space,
    pyautogui_space,
    to_osworld_action,
)
from pytest_osworld.task.model import Task, looks_like_task

#: The id the env is registered under.
ENV_ID = "pytest_osworld/Desktop-v0"
#: The message of ``step`` after the episode ended.
EPISODE_OVER = "the episode is over (terminated or truncated): call reset() before step()"

TaskSource = str | Path | Task | Mapping[str, Any]


def find_tasks(source: TaskSource | Sequence[TaskSource]) -> list[Task]:
    """The tasks of a folder (every task JSON under it, sorted), a file, or a list of
    paths, task JSON objects and :class:`Task` objects."""
    if isinstance(source, str | Path) and Path(source).is_dir():
        paths = sorted(Path(source).rglob("*.json"))
        found = []
        for path in paths:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if looks_like_task(data):
                found.append(load_task_config(path))
        return found
    if isinstance(source, str | Path | Task | Mapping):
        return [load_task_config(source)]
    return [task for item in source for task in find_tasks(item)]


class DesktopGymEnv(gymnasium.Env[dict[str, Any], Any]):
    """A Gymnasium env over the episode engine; see the module docstring."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1}  # noqa: RUF012 (Gymnasium's API)

    def __init__(
        self,
        tasks: TaskSource | Sequence[TaskSource],
        provider: str = "local",
        provider_options: Mapping[str, str] | None = None,
        observation_type: str = "screenshot_a11y_tree",
        action_space: str = "pyautogui",
        max_steps: int = 15,
        screen_size: tuple[int, int] = (1920, 1080),
        observation_size: tuple[int, int] | None = None,
        pause: float = 0.0,
        render_mode: str | None = None,
        results_dir: str | Path | None = None,
        network: bool = False,
        offline: bool = False,
        worker_id: str | None = None,
    ) -> None:
        if observation_type not in OBSERVATION_KEYS:
            raise EnvError(
                f"observation_type must be one of {list(OBSERVATION_KEYS)}, got {observation_type!r}"
            )
        if action_space not in ("pyautogui", "computer_13"):
            raise EnvError(f"action_space must be 'pyautogui' or 'computer_13', got {action_space!r}")
        if max_steps < 1:
            raise EnvError(f"max_steps must be at least 1, got {max_steps}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise EnvError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.tasks = find_tasks(tasks)
        if not self.tasks:
            raise EnvError(f"no task files found in {tasks!r}")
        self.observation_type = observation_type
        self.action_kind = action_space
        self.max_steps = max_steps
        self.pause = pause
        self.render_mode = render_mode
        self.size = tuple(observation_size or screen_size)
        self.observation_space = observation_space(observation_type, self.size)  # type: ignore[arg-type]
        self.action_space = (
            pyautogui_space() if action_space == "pyautogui" else computer_13_space(tuple(screen_size))  # type: ignore[arg-type]
        )
        self.engine = EpisodeEngine(
            EngineConfig(
                provider=provider,
                provider_options=dict(provider_options or {}),
                worker_id=worker_id or f"gym-{os.getpid()}",
                screen_size=(int(screen_size[0]), int(screen_size[1])),
                network=network,
                offline=offline,
                results_dir=Path(results_dir) if results_dir is not None else None,
                results_names=(action_space, observation_type, "gym"),
            )
        )
        self.task: Task | None = None
        self.steps = 0
        self.over = True
        self._last_png: bytes | None = None

    # -- Gymnasium API -----------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A fresh desktop set up for a task; ``(obs, info)`` with the task in ``info``."""
        super().reset(seed=seed)
        choice = (options or {}).get("task")
        index = (
            self._task_index(choice) if choice is not None else int(self.np_random.integers(len(self.tasks)))
        )
        self.task = self.tasks[index]
        self.steps = 0
        self.over = False
        self.engine.begin(self.task)
        info = {"task_id": self.task.id, "domain": self.task.domain, "task_index": index}
        return self._observe(), info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Run one action; the score is the reward of the step that ends the episode."""
        if self.over or self.task is None:
            raise EnvError(EPISODE_OVER)
        parsed = self._parse(action)
        self.steps += 1
        try:
            error = self.engine.act(parsed, pause=self.pause)
            obs = self._observe()
        except DesktopCrashed:
            self.over = True  # the next reset() restores a fresh desktop
            raise
        self.engine.record(parsed, error, self._last_png)
        info: dict[str, Any] = {"step": self.steps}
        if error:
            info["action_error"] = error
        terminated = parsed.is_terminal
        truncated = not terminated and self.steps >= self.max_steps
        reward = 0.0
        if terminated or truncated:
            self.over = True
            evaluation = self.engine.evaluate()
            reward = float(evaluation.score)
            info.update(
                score=reward,
                reason=evaluation.first_reason(),
                metrics=[o.to_json() for o in evaluation.outcomes],
                eval_error=evaluation.error,
                end_reason=parsed.kind.lower() if terminated else "max_steps",
            )
        return obs, reward, terminated, truncated, info

    def render(self) -> np.ndarray[Any, Any] | None:
        """The last screenshot as an HxWx3 array (``render_mode="rgb_array"``)."""
        if self.render_mode != "rgb_array":
            return None
        if self._last_png is None:
            return np.zeros((self.size[1], self.size[0], 3), dtype=np.uint8)
        return self._pixels(self._last_png)

    def close(self) -> None:
        """Stop the desktop (safe to call twice)."""
        self.engine.close()
        super().close()

    # -- helpers -----------------------------------------------------------------------------

    def _task_index(self, choice: Any) -> int:
        if isinstance(choice, int | np.integer) and not isinstance(choice, bool):
            if 0 <= int(choice) < len(self.tasks):
                return int(choice)
            raise EnvError(f"options['task']={choice} is out of range: this env has {len(self.tasks)} tasks")
        for index, task in enumerate(self.tasks):
            if choice in (task.id, task.nodename) or str(task.path) == str(choice):
                return index
        known = ", ".join(t.nodename for t in self.tasks[:8])
        raise EnvError(f"options['task']={choice!r} is not one of this env's tasks ({known}, ...)")

    def _parse(self, action: Any) -> Action:
        try:
            if self.action_kind == "computer_13" and isinstance(action, Mapping):
                return action_from_json(to_osworld_action(action))
            return action_from_json(action)
        except (ActionParseError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise EnvError(f"step() got an action it cannot run in {self.action_kind}: {exc}") from exc

    def _observe(self) -> dict[str, Any]:
        keys = OBSERVATION_KEYS[self.observation_type]
        seen = self.engine.observe(tree="accessibility_tree" in keys)
        self._last_png = seen.screenshot
        obs: dict[str, Any] = {"instruction": seen.instruction}
        if "screenshot" in keys:
            obs["screenshot"] = self._pixels(seen.screenshot)
        if "accessibility_tree" in keys:
            obs["accessibility_tree"] = (seen.accessibility_tree or "")[:MAX_TREE]
        return obs

    def _pixels(self, png: bytes | None) -> np.ndarray[Any, Any]:
        """The PNG as a fresh uint8 HxWx3 array at the observation size."""
        from PIL import Image

        width, height = self.size
        if not png:
            return np.zeros((height, width, 3), dtype=np.uint8)
        image = Image.open(io.BytesIO(png)).convert("RGB")
        if image.size != (width, height):
            image = image.resize((width, height))
        return np.array(image, dtype=np.uint8)


def register() -> None:
    """Register ``pytest_osworld/Desktop-v0`` with Gymnasium (once)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="pytest_osworld.env.gym_env:DesktopGymEnv",
            nondeterministic=True,  # a real desktop: clocks, animations, app timing
            disable_env_checker=False,
        )
