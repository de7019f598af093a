"""TaskTimings and the timing hooks of the setup steps, the episode loop and the evaluation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep, Observation
from pytest_osworld.episode.loop import Budget, run_episode
from pytest_osworld.errors import SetupStepError
from pytest_osworld.evaluators.evaluate import evaluate
from pytest_osworld.providers.fake import FakeGuest
from pytest_osworld.setup_steps import run_steps
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Step, Task, load_task
from pytest_osworld.task.timings import PHASES, TaskTimings, UnknownPhase


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_phases_accumulate_and_fixed_overhead_leaves_out_agent_and_sleeps() -> None:
    clock = Clock()
    timings = TaskTimings(clock=clock)
    for name, seconds in (("restore", 0.5), ("agent", 2.0), ("setup_sleep", 1.0), ("agent", 1.0)):
        with timings.phase(name):
            clock.advance(seconds)
    clock.advance(0.25)  # between phases: in the total, in no phase
    assert timings.stop() == pytest.approx(4.75)
    clock.advance(10.0)
    assert timings.total == pytest.approx(4.75)  # stopped means frozen
    assert timings.phases["agent"] == pytest.approx(3.0)
    assert timings.fixed_overhead == pytest.approx(0.75)
    data = timings.to_json()
    assert list(data["phases"]) == list(PHASES)
    assert (data["total"], data["fixed_overhead"]) == (4.75, 0.75)
    assert json.loads(json.dumps(data)) == data


def test_the_budget_replays_are_a_phase_of_their_own_outside_the_fixed_overhead() -> None:
    clock = Clock()
    timings = TaskTimings(clock=clock)
    for name, seconds in (("restore", 0.5), ("agent", 1.0), ("budgets", 4.0)):
        with timings.phase(name):
            clock.advance(seconds)
    assert timings.stop() == pytest.approx(5.5)
    assert timings.phases["budgets"] == pytest.approx(4.0)
    assert timings.fixed_overhead == pytest.approx(0.5)
    assert dict(timings.properties())["time_budgets"] == "4.000"


def test_a_phase_that_raises_is_still_counted_and_stop_can_end_at_it() -> None:
    clock = Clock()
    timings = TaskTimings(clock=clock)

    def restore() -> None:
        with timings.phase("restore"):
            clock.advance(0.4)
            raise RuntimeError("desktop died")

    with pytest.raises(RuntimeError):
        restore()
    clock.advance(3.0)  # pytest formatting the error
    assert timings.phases["restore"] == pytest.approx(0.4)
    assert timings.stop(at_last_phase=True) == pytest.approx(0.4)


def test_into_collects_a_detail_entry_and_unknown_phases_are_refused() -> None:
    clock = Clock()
    timings = TaskTimings(clock=clock)
    entry: dict[str, Any] = {"index": 1}
    with timings.phase("observe", into=entry):
        clock.advance(0.0125)
    with timings.phase("observe", into=entry):
        clock.advance(0.02)
    assert entry == {"index": 1, "observe": 0.033}
    with pytest.raises(UnknownPhase, match="unknown timing phase 'thinking'"):
        timings.add("thinking", 1.0)
    with pytest.raises(UnknownPhase), timings.phase("idle"):
        pass


def test_junit_properties_name_every_phase_with_three_decimals() -> None:
    clock = Clock()
    timings = TaskTimings(clock=clock)
    with timings.phase("evaluation"):
        clock.advance(1.23456)
    timings.stop()
    props = dict(timings.properties())
    assert list(props) == [f"time_{p}" for p in PHASES] + ["fixed_overhead"]
    assert props["time_evaluation"] == "1.235" and props["time_restore"] == "0.000"
    assert props["fixed_overhead"] == "1.235"


@pytest.fixture
def task(tmp_path: Path) -> Task:
    path = tmp_path / "os" / "t.json"
    path.parent.mkdir()
    evaluator = {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": ["cat", "/a"]},
        "expected": {"type": "rule", "rules": {"expected": "x"}},
        "postconfig": [{"type": "sleep", "parameters": {"seconds": 0}}],
    }
    path.write_text(json.dumps({"id": "t", "instruction": "do", "evaluator": evaluator}))
    return load_task(path)


def _context(task: Task, guest: FakeGuest, tmp_path: Path) -> TaskContext:
    return TaskContext(task=task, guest=guest, assets=AssetCache(tmp_path / "cache"), work_dir=tmp_path)


def test_setup_steps_are_timed_one_by_one_and_sleeps_apart(task: Task, tmp_path: Path) -> None:
    steps = [
        Step("execute", {"command": ["echo", "hi"]}, "$.config[0]"),
        Step("sleep", {"seconds": 0.01}, "$.config[1]"),
        Step("open", {"path": "/missing"}, "$.config[2]"),
    ]
    timings = TaskTimings()
    with pytest.raises(SetupStepError):
        run_steps(_context(task, FakeGuest({}), tmp_path), steps, timings=timings)
    assert [(s["index"], s["type"], s["phase"]) for s in timings.setup_steps] == [
        (1, "execute", "setup"),
        (2, "sleep", "setup"),
        (3, "open", "setup"),
    ]
    # Each step's own seconds land in its phase: the sleep step's in setup_sleep, the others'
    # in setup (compared with the steps' records, not with each other: a loaded machine can
    # make an in-memory step slower than a 10 ms sleep).
    seconds = [s["seconds"] for s in timings.setup_steps]
    assert timings.phases["setup_sleep"] == pytest.approx(seconds[1], abs=0.001)
    assert timings.phases["setup_sleep"] >= 0.01
    assert timings.phases["setup"] == pytest.approx(seconds[0] + seconds[2], abs=0.002)


class Thinking:
    """Writes x to /a, then says DONE; each call takes 1 s on the fake clock."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.plan: list[AgentStep] = []

    def reset(self, task: Task) -> None:
        self.plan = [AgentStep([Action("code", code="# fake: write /a x")]), AgentStep([Action("DONE")])]

    def act(self, instruction: str, observation: Observation) -> AgentStep:
        self.clock.advance(1.0)
        return self.plan.pop(0)


class SlowGuest(FakeGuest):
    """Screenshots take 0.5 s and actions 0.25 s on the fake clock."""

    def __init__(self, clock: Clock) -> None:
        super().__init__({})
        self.clock = clock

    def screenshot(self) -> bytes:
        self.clock.advance(0.5)
        return super().screenshot()

    def run_python(self, code: str, timeout: float = 30.0) -> Any:
        self.clock.advance(0.25)
        return super().run_python(code, timeout)


def test_the_episode_times_observations_agent_calls_actions_and_recording(task: Task) -> None:
    clock = Clock()
    timings = TaskTimings(clock=clock)
    guest = SlowGuest(clock)
    episode = run_episode(
        task,
        guest,
        Thinking(clock),
        Budget(max_steps=5),
        on_step=lambda record: clock.advance(0.125),
        clock=clock,
        timings=timings,
    )
    assert len(episode.steps) == 2
    assert timings.phases["observe"] == pytest.approx(1.5)  # before step 1, after steps 1 and 2
    assert timings.phases["agent"] == pytest.approx(2.0)
    assert timings.phases["actions"] == pytest.approx(0.25)
    assert timings.phases["record"] == pytest.approx(0.25)
    assert timings.step_times == [
        {"index": 1, "observe": 0.5, "agent": 1.0, "actions": 0.25, "record": 0.125},
        {"index": 2, "observe": 0.5, "agent": 1.0, "actions": 0.0, "record": 0.125},
    ]
    assert sum(timings.phases.values()) == pytest.approx(timings.total)


def test_evaluation_times_postconfig_getters_and_metrics(task: Task, tmp_path: Path) -> None:
    timings = TaskTimings()
    evaluation = evaluate(_context(task, FakeGuest({"/a": b"x"}), tmp_path), Action("DONE"), timings)
    assert evaluation.score == 1.0
    assert [g["name"] for g in timings.getters] == ["vm_command_line", "rule"]
    assert [m["name"] for m in timings.metrics] == ["exact_match"]
    assert [s["phase"] for s in timings.setup_steps] == ["postconfig"]
    assert timings.phases["evaluation"] >= sum(g["seconds"] for g in timings.getters)
    assert timings.phases["evaluation"] > 0.0


class TreeCountingGuest(FakeGuest):
    """Counts accessibility-tree requests."""

    def __init__(self) -> None:
        super().__init__({})
        self.trees = 0

    def accessibility_tree(self) -> str:
        self.trees += 1
        return super().accessibility_tree()


@pytest.mark.parametrize(("plan", "max_steps", "trees"), [(["x", "DONE"], 5, 2), (["x", "x", "x"], 3, 3)])
def test_no_tree_is_fetched_after_the_last_step(
    task: Task, plan: list[str], max_steps: int, trees: int
) -> None:
    class Agent:
        def reset(self, task: Task) -> None:
            self.plan = list(plan)

        def act(self, instruction: str, observation: Observation) -> AgentStep:
            assert observation.accessibility_tree is not None  # every step the agent sees has one
            step = self.plan.pop(0)
            return AgentStep([Action("DONE") if step == "DONE" else Action("code", code="pass")])

    guest = TreeCountingGuest()
    episode = run_episode(task, guest, Agent(), Budget(max_steps=max_steps), observation_type="a11y_tree")
    assert len(episode.steps) == len(plan)
    assert guest.trees == trees  # one per agent call, none after the last step
    assert all(step.screenshot for step in episode.steps)


def test_a_sleep_after_a_launch_waits_until_settled_and_the_others_sleep(task: Task, tmp_path: Path) -> None:
    """The settle wait's sleeper takes the place of a sleep right after a launch (a second
    sleep after it too), never of a sleep after any other step."""
    asked: list[float] = []
    steps = [
        Step("launch", {"command": ["true"]}, "$.config[0]"),
        Step("sleep", {"seconds": 3}, "$.config[1]"),
        Step("sleep", {"seconds": 2}, "$.config[2]"),
        Step("execute", {"command": ["echo", "hi"]}, "$.config[3]"),
        Step("sleep", {"seconds": 0.01}, "$.config[4]"),
    ]
    timings = TaskTimings()
    run_steps(
        _context(task, FakeGuest({}), tmp_path), steps, timings=timings, sleep_until_settled=asked.append
    )
    assert asked == [3.0, 2.0]
    assert [s.get("until_settled", False) for s in timings.setup_steps] == [False, True, True, False, False]
    assert timings.setup_steps[4]["seconds"] >= 0.01


def test_a_sleep_until_settled_checks_its_parameters(task: Task, tmp_path: Path) -> None:
    steps = [Step("open", {"path": "/x"}, "$.config[0]"), Step("sleep", {"second": 3}, "$.config[1]")]
    guest = FakeGuest({"/x": b""})
    with pytest.raises(SetupStepError, match=r"bad parameters at \$\.config\[1\]"):
        run_steps(_context(task, guest, tmp_path), steps, sleep_until_settled=lambda seconds: None)
