"""An OSWorld run script, unchanged but for its import line, on our tasks and local desktop.

The agents below follow OSWorld's agent contract (``reset()``, ``predict(instruction,
obs) -> (response, actions)``); the script is :mod:`osworld_style_run`. The reference
solutions must score 1 and an agent that says DONE at once must score 0, with OSWorld's
result files written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from osworld_style_run import run_examples

pytestmark = pytest.mark.desktop

TASKS = Path(__file__).resolve().parents[2] / "tasks"
EXAMPLES = [
    ("os", str(TASKS / "os" / "ef9ea0c2-4f77-4017-9a2c-592f165ae51f.json")),
    ("os", str(TASKS / "os" / "4ae797ce-bf73-4720-ad06-176ca7483fb7.json")),
]
SCREEN = (1280, 720)


class SolutionAgent:
    """An OSWorld-style agent that answers each observation with the next solution line."""

    model = "solution"

    def __init__(self) -> None:
        self.pending: list[Any] = []
        self.seen: list[dict[str, Any]] = []

    def reset(self, *args: Any, **kwargs: Any) -> None:
        self.pending = []

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[Any]]:
        self.seen.append(obs)
        if not self.pending:
            path = next(
                p for _, p in EXAMPLES if json.loads(Path(p).read_text())["instruction"] == instruction
            )
            self.pending = list(json.loads(Path(path).read_text())["solution"])
        action = self.pending.pop(0)
        return f"```python\n{action}\n```", [action]


class DoneAgent:
    """An OSWorld-style agent that declares the task done at once."""

    model = "done"

    def reset(self, *args: Any, **kwargs: Any) -> None:
        pass

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[Any]]:
        return "```DONE```", ["DONE"]


def test_reference_solutions_score_one_through_the_osworld_loop(tmp_path: Path) -> None:
    agent = SolutionAgent()
    scores = run_examples(agent, EXAMPLES, str(tmp_path), screen_size=SCREEN)
    assert scores == [1.0, 1.0]
    first = agent.seen[0]
    assert set(first) == {"screenshot", "accessibility_tree", "terminal", "instruction"}
    assert first["screenshot"].startswith(b"\x89PNG")
    assert first["accessibility_tree"] is None  # require_a11y_tree=False, as asked
    for _, path in EXAMPLES:
        task_id = json.loads(Path(path).read_text())["id"]
        folder = tmp_path / "pyautogui" / "screenshot" / "solution" / "os" / task_id
        assert (folder / "result.txt").read_text().strip() == "1.0"
        lines = [json.loads(line) for line in (folder / "traj.jsonl").read_text().splitlines()]
        assert lines[-1]["action"] == "DONE" and lines[-1]["done"] is True
        assert lines[-1]["info"] == {"done": True}
        assert all(line["reward"] == 0.0 for line in lines)
        assert len(list(folder.glob("step_*.png"))) == len(lines)


def test_done_at_once_scores_zero_through_the_osworld_loop(tmp_path: Path) -> None:
    scores = run_examples(DoneAgent(), EXAMPLES, str(tmp_path), screen_size=SCREEN)
    assert scores == [0.0, 0.0]
    for _, path in EXAMPLES:
        task_id = json.loads(Path(path).read_text())["id"]
        folder = tmp_path / "pyautogui" / "screenshot" / "done" / "os" / task_id
        assert (folder / "result.txt").read_text().strip() == "0.0"
