"""The random agent and the OSWorld adapter."""

from __future__ import annotations

import ast

import pytest

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.computer13 import validate
from pytest_osworld.agent.contract import AGENTS, AgentConfig, Observation
from pytest_osworld.agents.osworld_adapter import NO_ACTIONS, OSWorldAdapter
from pytest_osworld.agents.random_agent import SAFE_KEYS
from pytest_osworld.episode.loop import Budget, EndReason, run_episode
from pytest_osworld.errors import AgentFailure
from pytest_osworld.providers.fake import FakeGuest, tiny_png


def random_agent(action_space: str = "pyautogui", **args: str):
    config = AgentConfig(name="random", args=args, action_space=action_space)
    return AGENTS.get("random")(config)


def run(agent, task, steps: int = 40) -> list[Action]:
    shot = tiny_png(64, 48)
    agent.reset(task)
    return [
        a
        for _ in range(steps)
        for a in agent.act(task.instruction, Observation(task.instruction, screenshot=shot)).actions
    ]


def test_random_is_repeatable_with_a_seed(task) -> None:
    first = run(random_agent(seed="7"), task)
    again = run(random_agent(seed="7"), task)
    other = run(random_agent(seed="8"), task)
    assert first == again
    assert first != other


def test_random_stays_inside_the_screen_and_harmless(task) -> None:
    actions = run(random_agent("computer_13", seed="3"), task, steps=300)
    kinds = {a.params["action_type"] for a in actions if a.params}
    assert {"CLICK", "TYPING", "PRESS", "SCROLL"} <= kinds
    for action in actions:
        params = action.params or {}
        validate(params)
        inner = params["parameters"]
        if "x" in inner:
            assert 0 <= inner["x"] < 64 and 0 <= inner["y"] < 48
        if params["action_type"] == "PRESS":
            assert inner["key"] in SAFE_KEYS
            assert inner["key"] not in ("enter", "return")
        if params["action_type"] == "TYPING":
            assert set(inner["text"]) <= set("abcdefghijklmnopqrstuvwxyz ")
        assert params["action_type"] not in ("HOTKEY", "KEY_DOWN")


def test_random_pyautogui_code_is_valid_python(task) -> None:
    for action in run(random_agent(seed="1"), task, steps=50):
        assert action.kind == "code"
        assert action.code.startswith("pyautogui.")
        ast.parse(action.code)


def test_random_done_after_ends_the_episode(task) -> None:
    episode = run_episode(task, FakeGuest({}), random_agent(seed="2", done_after="3"), Budget(max_steps=10))
    assert episode.end_reason is EndReason.DONE
    assert len(episode.steps) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [({"seed": "x"}, "seed='x' is not an integer"), ({"sed": "1"}, "does not know --agent-arg sed")],
)
def test_random_bad_args(args, message) -> None:
    with pytest.raises(AgentFailure, match=message):
        random_agent(**args)


class Scripted:
    """An OSWorld-style agent: predict() -> (response, actions)."""

    def __init__(self, answers) -> None:
        self.answers = list(answers)
        self.seen: list[dict] = []
        self.resets = 0

    def reset(self, logger=None, vm_ip=None, **kwargs) -> None:
        self.resets += 1

    def predict(self, instruction, obs):
        self.seen.append(obs)
        return self.answers.pop(0)


def test_adapter_converts_actions_and_passes_the_obs_dict(task) -> None:
    inner = Scripted(
        [
            ("```python\n# fake: write /tmp/a 1\n```", ["# fake: write /tmp/a 1"]),
            ("oops", None),
            ("json", [{"action_type": "CLICK", "parameters": {"x": 1, "y": 2}}]),
            ("bad", [{"action_type": "CLICK", "parameters": {"x": "one"}}]),
            ("DONE", ["DONE"]),
        ]
    )
    guest = FakeGuest({})
    episode = run_episode(task, guest, OSWorldAdapter(inner), Budget(max_steps=10))
    assert inner.resets == 1
    assert episode.end_reason is EndReason.DONE
    assert guest.files["/tmp/a"] == b"1"
    steps = episode.steps
    assert steps[1].actions == [] and steps[1].parse_error == NO_ACTIONS
    assert steps[2].actions[0].kind == "computer_13"
    assert steps[3].actions == [] and "x must be a number" in (steps[3].parse_error or "")
    obs = inner.seen[0]
    assert set(obs) == {"screenshot", "accessibility_tree", "terminal", "instruction"}
    assert obs["screenshot"].startswith(b"\x89PNG")
    assert obs["instruction"] == task.instruction
