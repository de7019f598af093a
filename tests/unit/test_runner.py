"""The episode loop, driven by scripted agents against the fake guest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep, Observation, Usage
from pytest_osworld.episode.loop import Budget, EndReason, run_episode
from pytest_osworld.errors import GuestError
from pytest_osworld.providers.fake import FakeGuest
from pytest_osworld.task.model import load_task


@pytest.fixture
def task(tmp_path: Path):
    path = tmp_path / "os" / "t.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": "t", "instruction": "do", "evaluator": {"func": "infeasible"}}))
    return load_task(path)


class Scripted:
    def __init__(self, steps: list[AgentStep | Exception]) -> None:
        self.steps = steps
        self.seen: list[Observation] = []

    def reset(self, task) -> None:
        self.seen.clear()

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        self.seen.append(observation)
        step = self.steps.pop(0) if self.steps else AgentStep([Action("WAIT")])
        if isinstance(step, Exception):
            raise step
        return step


def _code(text: str) -> AgentStep:
    return AgentStep([Action("code", code=text)], response=text, usage=Usage(10, 2, 0.001))


def test_done_ends_and_records_every_step(task) -> None:
    guest = FakeGuest({})
    recorded = []
    agent = Scripted([_code("# fake: write /a x"), AgentStep([Action("DONE")])])
    episode = run_episode(task, guest, agent, Budget(max_steps=5), on_step=recorded.append)
    assert episode.end_reason is EndReason.DONE
    assert [s.index for s in recorded] == [1, 2]
    assert guest.files["/a"] == b"x"
    assert episode.last_action == Action("DONE")
    assert episode.usage.input_tokens == 10
    assert all(s.screenshot for s in recorded)


def test_out_of_steps(task) -> None:
    episode = run_episode(task, FakeGuest({}), Scripted([]), Budget(max_steps=3), sleep=lambda s: None)
    assert episode.end_reason is EndReason.MAX_STEPS and len(episode.steps) == 3
    assert "ran out of steps (3/3)" in episode.describe(3)


def test_out_of_time(task) -> None:
    ticks = iter(range(0, 1000, 50))
    episode = run_episode(
        task,
        FakeGuest({}),
        Scripted([]),
        Budget(max_steps=15, seconds=120),
        clock=lambda: float(next(ticks)),
        sleep=lambda s: None,
    )
    assert episode.end_reason is EndReason.TIMEOUT
    assert len(episode.steps) < 15


def test_agent_exception_is_an_agent_error(task) -> None:
    episode = run_episode(task, FakeGuest({}), Scripted([RuntimeError("API down")]), Budget())
    assert episode.end_reason is EndReason.AGENT_ERROR
    assert episode.error == "RuntimeError: API down"


def test_garbage_answer_is_a_wasted_step(task) -> None:
    agent = Scripted(
        [
            AgentStep([], response="I think...", parse_error="no code block"),
            AgentStep([Action("FAIL")]),
        ]
    )
    episode = run_episode(task, FakeGuest({}), agent, Budget())
    assert episode.end_reason is EndReason.FAIL
    assert episode.steps[0].parse_error == "no code block" and episode.steps[0].actions == []


def test_invalid_structured_action_is_recorded_not_raised(task) -> None:
    bad = AgentStep([Action("computer_13", params={"action_type": "CLICK", "parameters": {"x": "left"}})])
    episode = run_episode(task, FakeGuest({}), Scripted([bad, AgentStep([Action("DONE")])]), Budget())
    assert episode.end_reason is EndReason.DONE
    assert "x must be a number" in episode.steps[0].action_errors[0]


def test_guest_failure_propagates(task) -> None:
    guest = FakeGuest({}, fail_at_action=1)
    with pytest.raises(GuestError, match="injected"):
        run_episode(task, guest, Scripted([_code("pass")]), Budget())


def test_actions_after_done_are_not_run(task) -> None:
    guest = FakeGuest({})
    agent = Scripted([AgentStep([Action("DONE"), Action("code", code="# fake: write /late x")])])
    episode = run_episode(task, guest, agent, Budget())
    assert "/late" not in guest.files and episode.end_reason is EndReason.DONE


def test_observation_type_controls_the_tree(task) -> None:
    agent = Scripted([AgentStep([Action("DONE")])])
    run_episode(task, FakeGuest({}), agent, Budget(), observation_type="screenshot_a11y_tree")
    assert agent.seen[0].accessibility_tree and agent.seen[0].screenshot
    agent = Scripted([AgentStep([Action("DONE")])])
    run_episode(task, FakeGuest({}), agent, Budget(), observation_type="screenshot")
    assert agent.seen[0].accessibility_tree is None
