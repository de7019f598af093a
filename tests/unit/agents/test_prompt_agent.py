"""The PromptAgent's observation handling, end to end through the OpenAI wire protocol:
Set-of-Marks with tag_N resolution, screenshot downscaling, computer_13, feedback."""

from __future__ import annotations

import base64
import io

import pytest
from agent_wire import FAKE_KEY, with_text
from PIL import Image, ImageDraw

from pytest_osworld.agent.contract import AGENTS, AgentConfig, Observation
from pytest_osworld.agent.observe import png_size
from pytest_osworld.agents.llm import Completion, PromptAgent, http_failure
from pytest_osworld.episode.loop import Budget, EndReason, run_episode
from pytest_osworld.errors import AgentFailure, UnknownNameError
from pytest_osworld.providers.fake import FakeGuest

NS = (
    'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component"'
)
TREE = (
    f"<desktop-frame {NS}>"
    '<push-button name="Save" st:showing="true" st:visible="true" st:enabled="true" '
    'cp:screencoord="(40, 40)" cp:size="(100, 40)"/>'
    '<push-button name="Cancel" st:showing="true" st:visible="true" st:enabled="true" '
    'cp:screencoord="(200, 40)" cp:size="(100, 40)"/>'
    "</desktop-frame>"
)


def desktop_png(width: int = 400, height: int = 300) -> bytes:
    image = Image.new("RGB", (width, height), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle((45, 45, 135, 75), fill=(0, 90, 200))
    draw.rectangle((205, 45, 295, 75), fill=(200, 60, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


class DesktopGuest(FakeGuest):
    """The fake guest with a real-looking screenshot and tree."""

    def screenshot(self) -> bytes:
        return desktop_png()

    def accessibility_tree(self) -> str:
        return TREE


@pytest.fixture
def openai_agent(provider_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)

    def make(observation_type: str = "screenshot", action_space: str = "pyautogui", **args: str):
        config = AgentConfig(
            name="gpt-4o",
            # The tables these tests assert are the 5-column "paper" format (the default is "osworld").
            args={"base_url": provider_server.url + "/v1", "backoff": "0", "a11y_format": "paper", **args},
            observation_type=observation_type,
            action_space=action_space,
        )
        return AGENTS.get("gpt-4o")(config)

    return make


def sent_image(body) -> bytes:
    for part in body["messages"][-1]["content"]:
        if part["type"] == "image_url":
            return base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
    raise AssertionError("no image sent")


def sent_text(body) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p["type"] == "text")


def test_som_episode_resolves_tags(openai_agent, provider_server, task) -> None:
    provider_server.play(
        with_text("openai_step", "Save it.\n```python\npyautogui.click(tag_1)\n```"),
        with_text("openai_step", "```python\npyautogui.click(tag_9)\n```"),
        with_text("openai_step", "```DONE```"),
    )
    guest = DesktopGuest({})
    episode = run_episode(task, guest, openai_agent("som"), Budget(max_steps=5), observation_type="som")
    assert episode.end_reason is EndReason.DONE
    assert guest.actions[0] == "tag_1 = (90, 60)\npyautogui.click(tag_1)"
    assert "tag_9 is not a mark" in (episode.steps[1].parse_error or "")
    first = provider_server.requests[0].body
    marked = Image.open(io.BytesIO(sent_image(first))).convert("RGB")
    assert marked.getpixel((139, 60)) == (255, 0, 0)  # the right edge of box 1
    assert "1\tpush-button\tSave\t" in sent_text(first)
    assert "2\tpush-button\tCancel\t" in sent_text(first)
    # The failed step is explained to the model in the next turn.
    assert "tag_9 is not a mark" in sent_text(provider_server.requests[2].body)


def test_downscaled_screenshot_and_coordinates_mapped_back(openai_agent, provider_server, task) -> None:
    provider_server.play(with_text("openai_step", "```python\npyautogui.click(100, 50)\n```"))
    agent = openai_agent("screenshot_a11y_tree", max_side="200")
    agent.reset(task)
    step = agent.act(
        task.instruction, Observation(task.instruction, screenshot=desktop_png(), accessibility_tree=TREE)
    )
    body = provider_server.requests[0].body
    assert png_size(sent_image(body)) == (200, 150)
    assert "200 x" not in body["messages"][0]["content"]
    assert "(200x150 pixels" in body["messages"][0]["content"]
    assert "push-button\tSave\t\t(20, 20)\t(50, 20)" in sent_text(body)
    assert step.actions[0].code == "pyautogui.click(200, 100)"


def test_computer13_answers_are_scaled_and_validated(openai_agent, provider_server, task) -> None:
    provider_server.play(
        with_text("openai_step", '```json\n{"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}\n```'),
        with_text("openai_step", '```json\n{"action_type": "CLICK", "parameters": {"x": "left"}}\n```'),
    )
    agent = openai_agent("screenshot", "computer_13", max_side="200")
    agent.reset(task)
    obs = Observation(task.instruction, screenshot=desktop_png())
    step = agent.act(task.instruction, obs)
    assert step.actions[0].params == {"action_type": "CLICK", "parameters": {"x": 20, "y": 40}}
    bad = agent.act(task.instruction, obs)
    assert bad.actions == [] and "x must be a number" in (bad.parse_error or "")
    assert '"action_type": "CLICK"' in provider_server.requests[0].body["messages"][0]["content"]


def test_a11y_only_sends_no_image(openai_agent, provider_server, task) -> None:
    provider_server.play(with_text("openai_step", "```WAIT```"))
    agent = openai_agent("a11y_tree")
    agent.reset(task)
    step = agent.act(task.instruction, Observation(task.instruction, accessibility_tree=TREE))
    body = provider_server.requests[0].body
    assert isinstance(body["messages"][-1]["content"], str)
    assert "push-button\tCancel\t\t(200, 40)\t(100, 40)" in sent_text(body)
    assert step.actions[0].kind == "WAIT"


def test_missing_observation_parts_are_agent_errors(openai_agent, task) -> None:
    agent = openai_agent("som")
    with pytest.raises(AgentFailure, match="needs the accessibility tree"):
        agent.act(task.instruction, Observation(task.instruction, screenshot=desktop_png()))
    with pytest.raises(AgentFailure, match="needs a screenshot"):
        openai_agent("screenshot").act(task.instruction, Observation(task.instruction))


def test_som_with_computer13_is_refused(openai_agent) -> None:
    with pytest.raises(AgentFailure, match="pyautogui action space only"):
        openai_agent("som", "computer_13")


def test_reset_forgets_history(openai_agent, provider_server, task) -> None:
    provider_server.play(*[with_text("openai_step", f"answer {i}\n```WAIT```") for i in range(3)])
    agent = openai_agent()
    obs = Observation(task.instruction, screenshot=desktop_png())
    agent.reset(task)
    agent.act(task.instruction, obs)
    agent.act(task.instruction, obs)
    assert len(provider_server.requests[1].body["messages"]) == 4
    agent.reset(task)
    agent.act(task.instruction, obs)
    assert len(provider_server.requests[2].body["messages"]) == 2


class Flaky(PromptAgent):
    """A backend that fails as scripted, without any network."""

    provider = "flaky"
    default_model = "flaky-1"
    key_env = ("FLAKY_KEY",)

    def __init__(self, config, failures, **kwargs) -> None:
        self.failures = list(failures)
        super().__init__(config, **kwargs)

    def _connect(self, api_key):
        return None

    def _complete(self, system, turns, sampling):
        if self.failures:
            raise RuntimeError(self.failures.pop(0))
        return Completion("```DONE```", 10, 1)

    def _describe_error(self, exc):
        status = int(str(exc))
        return http_failure(status, f"status {status}", {"retry-after": "7"} if status == 429 else None)


def flaky(failures, monkeypatch, **args):
    monkeypatch.setenv("FLAKY_KEY", FAKE_KEY)
    slept: list[float] = []
    now = [0.0]

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    agent = Flaky(AgentConfig(name="flaky", args=args), failures, sleep=sleep, clock=lambda: now[0])
    return agent, slept


def test_backoff_is_exponential_and_honours_retry_after(monkeypatch, task) -> None:
    agent, slept = flaky(["500", "503", "429", "502"], monkeypatch)
    step = agent.act(task.instruction, Observation(task.instruction, screenshot=desktop_png()))
    assert step.actions[0].kind == "DONE"
    assert [round(s) for s in slept] == pytest.approx([2, 4, 8, 16], abs=2)
    assert slept[2] >= 8  # max(backoff 8, retry-after 7)
    assert all(base <= s <= base * 1.1 for s, base in zip(slept, [2, 4, 8, 16], strict=True))


def test_retry_budget_bounds_the_waiting(monkeypatch, task) -> None:
    agent, slept = flaky(["500"] * 10, monkeypatch, retry_budget="10", max_attempts="10")
    with pytest.raises(AgentFailure, match=r"still failing after 3 attempts over \d+\.\ds: HTTP 500"):
        agent.act(task.instruction, Observation(task.instruction, screenshot=desktop_png()))
    assert sum(slept) <= 10


def test_unknown_observation_type_fails_at_construction(monkeypatch) -> None:
    monkeypatch.setenv("FLAKY_KEY", FAKE_KEY)
    with pytest.raises(UnknownNameError, match="did you mean 'screenshot\\+pyautogui'"):
        Flaky(AgentConfig(name="flaky", observation_type="screenshots"), [])
