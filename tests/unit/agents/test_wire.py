"""The model agents, with the real SDK clients, against a local server speaking each
provider's wire protocol and answering with recorded responses."""

from __future__ import annotations

import base64
import json
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from agent_wire import FAKE_KEY, ProviderServer, recording, with_text

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AGENTS, Agent, AgentConfig, Observation
from pytest_osworld.episode.loop import Budget, EndReason, run_episode
from pytest_osworld.errors import AgentFailure
from pytest_osworld.providers.fake import FakeGuest, tiny_png


@dataclass(frozen=True)
class Provider:
    """How one model agent is reached and what its recordings are called."""

    agent: str
    key_env: str
    prefix: str
    path_suffix: str
    base_path: str = ""
    #: The model the agent asks for (``--model`` where the agent has no default).
    model: str = ""
    #: ``--model`` given to the agent (only ``openai-compatible`` needs one).
    model_arg: str | None = None
    #: Whether the paper's sampling (temperature 1.0, top_p 0.9) is sent by default.
    paper_sampling: bool = True

    def images(self, body: dict[str, Any]) -> list[bytes]:
        """The PNG images of the last user message of a captured request body."""
        return IMAGE_READERS[self.prefix](body)


def _anthropic_images(body: dict[str, Any]) -> list[bytes]:
    last = body["messages"][-1]
    assert last["role"] == "user"
    found = []
    for block in last["content"]:
        if block["type"] == "image":
            assert block["source"]["type"] == "base64"
            assert block["source"]["media_type"] == "image/png"
            found.append(base64.b64decode(block["source"]["data"]))
    return found


def _openai_images(body: dict[str, Any]) -> list[bytes]:
    last = body["messages"][-1]
    assert last["role"] == "user"
    found = []
    for part in last["content"]:
        if part["type"] == "image_url":
            url = part["image_url"]["url"]
            prefix = "data:image/png;base64,"
            assert url.startswith(prefix)
            found.append(base64.b64decode(url[len(prefix) :]))
    return found


def _gemini_images(body: dict[str, Any]) -> list[bytes]:
    last = body["contents"][-1]
    assert last["role"] == "user"
    found = []
    for part in last["parts"]:
        inline = part.get("inlineData") or part.get("inline_data")
        if inline:
            assert (inline.get("mimeType") or inline.get("mime_type")) == "image/png"
            found.append(base64.b64decode(inline["data"]))
    return found


IMAGE_READERS = {
    "anthropic": _anthropic_images,
    "openai": _openai_images,
    "gemini": _gemini_images,
}

#: Claude 3 Opus (the paper's model, the claude3 default) is past its end of life.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

#: Every model agent, each with its own SDK client (keyed by agent name).
PROVIDERS = {
    "claude3": Provider(
        "claude3", "ANTHROPIC_API_KEY", "anthropic", "/v1/messages", model="claude-3-opus-20240229"
    ),
    "claude": Provider(
        "claude",
        "ANTHROPIC_API_KEY",
        "anthropic",
        "/v1/messages",
        model="claude-sonnet-4-6",
        paper_sampling=False,
    ),
    "gpt-4v": Provider(
        "gpt-4v", "OPENAI_API_KEY", "openai", "/v1/chat/completions", "/v1", model="gpt-4-vision-preview"
    ),
    "gpt-4o": Provider("gpt-4o", "OPENAI_API_KEY", "openai", "/v1/chat/completions", "/v1", model="gpt-4o"),
    "gemini": Provider("gemini", "GEMINI_API_KEY", "gemini", ":generateContent", model="gemini-2.5-pro"),
    "openai-compatible": Provider(
        "openai-compatible",
        "OPENAI_API_KEY",
        "openai",
        "/v1/chat/completions",
        "/v1",
        model="ui-tars-1.5-7b",
        model_arg="ui-tars-1.5-7b",
    ),
}


@pytest.fixture(params=sorted(PROVIDERS))
def provider(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Provider:
    spec = PROVIDERS[request.param]
    monkeypatch.setenv(spec.key_env, FAKE_KEY)
    return spec


def make_agent(
    provider: Provider, server: ProviderServer, observation_type: str = "screenshot", **args: str
) -> Agent:
    settings = {"base_url": server.url + provider.base_path, "backoff": "0.01", **args}
    config = AgentConfig(
        name=provider.agent,
        model=provider.model_arg,
        args=settings,
        observation_type=observation_type,
        client_password="s3cret-pw",
    )
    return AGENTS.get(provider.agent)(config)


CLICK = "pyautogui.click(960, 540)"
DONE = "The file is saved; the task is complete.\n```DONE```"


def test_multi_step_episode_completes(provider, provider_server, task) -> None:
    provider_server.play(
        recording(f"{provider.prefix}_step"),
        with_text(f"{provider.prefix}_step", "I am not sure what to do next."),
        with_text(f"{provider.prefix}_step", DONE),
    )
    guest = FakeGuest({})
    agent = make_agent(provider, provider_server)
    records = []
    episode = run_episode(task, guest, agent, Budget(max_steps=5), on_step=records.append)

    assert episode.end_reason is EndReason.DONE, episode.error
    assert len(episode.steps) == 3
    # Step 1 ran its code whole: the ';' inside the string literal survived.
    assert guest.files["/home/user/hello.txt"] == b"hello; world"
    assert "pyautogui.typewrite('hello; world')" in guest.actions[0]
    # Step 2 was malformed: a wasted step with the reason, no action.
    assert records[1].actions == []
    assert "no ```code``` block" in (records[1].parse_error or "")
    assert records[2].actions == [Action("DONE")]
    assert all(r.path.endswith(provider.path_suffix) for r in provider_server.requests)
    assert len(provider_server.requests) == 3


def test_request_carries_screenshot_prompt_and_sampling(provider, provider_server, task) -> None:
    provider_server.play(recording(f"{provider.prefix}_step"))
    agent = make_agent(provider, provider_server)
    agent.reset(task)
    shot = tiny_png(16, 9)
    agent.act(task.instruction, Observation(task.instruction, screenshot=shot))

    (request,) = provider_server.requests
    body = request.body
    assert provider.images(body) == [shot]
    text = json.dumps(body)
    assert "My computer's password is 's3cret-pw'" in text
    assert "hello; world" in text  # the instruction is in the system prompt
    paper = (1.0, 0.9) if provider.paper_sampling else (None, None)
    if provider.prefix == "anthropic":
        assert body["model"] == provider.model
        assert (body.get("temperature"), body.get("top_p"), body["max_tokens"]) == (*paper, 1500)
        assert "password" in body["system"]
    elif provider.prefix == "openai":
        assert body["model"] == provider.model
        assert (body.get("temperature"), body.get("top_p"), body["max_tokens"]) == (*paper, 1500)
        assert body["messages"][0]["role"] == "system"
        assert all(p["image_url"]["detail"] == "high" for p in body["messages"][-1]["content"][1:])
    else:
        assert request.path.endswith(f"/models/{provider.model}:generateContent")
        generation = body["generationConfig"]
        assert generation["temperature"] == 1.0
        assert generation["topP"] == 0.9
        assert generation["maxOutputTokens"] == 1500
        assert "password" in json.dumps(body["systemInstruction"])


def test_history_keeps_the_last_steps(provider, provider_server, task) -> None:
    answers = [with_text(f"{provider.prefix}_step", f"step {i}\n```WAIT```") for i in range(5)]
    provider_server.play(*answers)
    agent = make_agent(provider, provider_server, history="2")
    agent.reset(task)
    for _ in range(5):
        agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    last = provider_server.requests[-1].body
    turns = last["contents"] if provider.prefix == "gemini" else last["messages"]
    if provider.prefix == "openai":
        turns = turns[1:]  # the system message
    # Two past (observation, answer) pairs, then the current observation.
    assert len(turns) == 5
    said = json.dumps(turns)
    assert "step 2" in said and "step 3" in said and "step 1" not in said
    # Past screenshots are sent with the history.
    assert (
        sum(
            len(IMAGE_READERS[provider.prefix]({"messages": [t], "contents": [t]}))
            for t in turns
            if t["role"] == "user"
        )
        == 3
    )


def test_rate_limit_and_server_error_are_retried(provider, provider_server, task, caplog) -> None:
    provider_server.play(
        recording(f"{provider.prefix}_rate_limit"),
        recording(f"{provider.prefix}_server_error"),
        recording(f"{provider.prefix}_step"),
    )
    agent = make_agent(provider, provider_server)
    agent.reset(task)
    with caplog.at_level(logging.WARNING, logger="pytest_osworld.agents"):
        step = agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    assert len(provider_server.requests) == 3
    assert step.parse_error is None
    assert step.actions[0].kind == "code"
    warnings = [r.getMessage() for r in caplog.records if r.name == "pytest_osworld.agents"]
    assert any("HTTP 429" in m for m in warnings)
    assert any("HTTP 500" in m for m in warnings)


def test_retries_stop_at_the_attempt_budget(provider, provider_server, task) -> None:
    provider_server.play(*[recording(f"{provider.prefix}_server_error")] * 3)
    agent = make_agent(provider, provider_server, max_attempts="2")
    episode = run_episode(task, FakeGuest({}), agent, Budget(max_steps=3))
    assert episode.end_reason is EndReason.AGENT_ERROR
    assert "still failing after 2 attempts" in (episode.error or "")
    assert "HTTP 500" in (episode.error or "")
    assert len(provider_server.requests) == 2


def test_a_client_error_is_not_retried(provider, provider_server, task) -> None:
    provider_server.play(
        {"status": 400, "body": {"error": {"message": "bad request", "type": "invalid_request_error"}}},
        recording(f"{provider.prefix}_step"),
    )
    agent = make_agent(provider, provider_server)
    agent.reset(task)
    with pytest.raises(AgentFailure, match="HTTP 400"):
        agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    assert len(provider_server.requests) == 1


def test_a_timeout_is_retried(provider, provider_server, task) -> None:
    slow = recording(f"{provider.prefix}_step")
    # A 2 s timeout against a 6 s answer: the retry's quick answer must arrive within 2 s,
    # which a heavily loaded CI machine still manages (0.5 s did not, once).
    slow["delay"] = 6.0
    provider_server.play(slow, recording(f"{provider.prefix}_step"))
    agent = make_agent(provider, provider_server, timeout="2.0")
    agent.reset(task)
    step = agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    assert step.actions and step.actions[0].kind == "code"
    assert len(provider_server.requests) == 2


def test_usage_and_cost_are_recorded(provider, provider_server, task) -> None:
    rec = recording(f"{provider.prefix}_step")
    provider_server.play(rec)
    agent = make_agent(provider, provider_server, price_in="2", price_out="10")
    agent.reset(task)
    step = agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    expected = {
        "anthropic": (2095, 73),
        "openai": (1187, 64),
        "gemini": (1320, 58),
    }[provider.prefix]
    assert (step.usage.input_tokens, step.usage.output_tokens) == expected
    assert step.usage.cost_usd == pytest.approx((expected[0] * 2 + expected[1] * 10) / 1e6)


def test_the_key_is_sent_but_never_recorded(provider, provider_server, task, caplog) -> None:
    provider_server.play(
        recording(f"{provider.prefix}_rate_limit"),
        recording(f"{provider.prefix}_step"),
        {"status": 401, "body": {"error": {"message": f"invalid key {FAKE_KEY}"}}},
    )
    agent = make_agent(provider, provider_server)
    with caplog.at_level(logging.DEBUG):
        episode = run_episode(task, FakeGuest({}), agent, Budget(max_steps=3))
    # The key did reach the server, in the provider's header.
    headers = provider_server.requests[0].headers
    sent = headers.get("x-api-key") or headers.get("x-goog-api-key") or headers.get("authorization")
    assert sent is not None and FAKE_KEY in sent
    # ... and nowhere in what we keep.
    assert episode.end_reason is EndReason.AGENT_ERROR
    assert FAKE_KEY not in (episode.error or "")
    assert "[redacted]" in (episode.error or "")
    assert FAKE_KEY not in json.dumps([s.to_json() for s in episode.steps])
    assert FAKE_KEY not in caplog.text
    # The SDKs' own debug logs were captured too (request options, HTTP lines).
    assert any(not r.name.startswith("pytest_osworld") for r in caplog.records)
    assert FAKE_KEY not in repr(vars(episode))


def test_the_key_is_not_in_a_raised_error(provider, provider_server, task) -> None:
    provider_server.play({"status": 403, "body": {"error": {"message": f"key {FAKE_KEY} revoked"}}})
    agent = make_agent(provider, provider_server)
    agent.reset(task)
    with pytest.raises(AgentFailure) as info:
        agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    assert FAKE_KEY not in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_a_missing_key_is_a_clear_error(provider, monkeypatch, provider_server) -> None:
    monkeypatch.delenv(provider.key_env)
    if provider.agent == "openai-compatible":  # a local server needs no key
        assert make_agent(provider, provider_server).model == provider.model
        return
    with pytest.raises(AgentFailure, match=f"needs an API key: set {provider.key_env}"):
        make_agent(provider, provider_server)


def test_unknown_agent_arg_is_refused(provider, provider_server) -> None:
    with pytest.raises(AgentFailure, match="does not know --agent-arg temprature"):
        make_agent(provider, provider_server, temprature="0.2")


def test_bad_agent_arg_value_names_the_argument(provider, provider_server) -> None:
    with pytest.raises(AgentFailure, match="--agent-arg max_tokens='lots' is not an integer"):
        make_agent(provider, provider_server, max_tokens="lots")


def test_sampling_parameter_none_is_left_out(provider_server, monkeypatch, task) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    provider_server.play(recording("anthropic_step"))
    agent = make_agent(PROVIDERS["claude3"], provider_server, top_p="none", temperature="0")
    agent.reset(task)
    agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    body = provider_server.requests[0].body
    assert "top_p" not in body
    assert body["temperature"] == 0.0


def test_env_base_url_is_honoured(provider_server, monkeypatch, task) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", provider_server.url)
    provider_server.play(recording("anthropic_step"))
    agent = AGENTS.get("claude")(AgentConfig(name="claude", args={"backoff": "0"}))
    agent.reset(task)
    agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    assert provider_server.requests[0].body["model"] == "claude-sonnet-4-6"


def test_openai_compatible_needs_no_key_and_sends_text_only_turns(provider_server, task) -> None:
    provider_server.play(recording("openai_step"))
    config = AgentConfig(
        name="openai-compatible",
        model="qwen2.5-vl-7b-instruct",
        args={"base_url": provider_server.url + "/v1"},
        observation_type="a11y_tree",
    )
    agent = AGENTS.get("openai-compatible")(config)
    agent.reset(task)
    tree = (
        '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
        'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component">'
        '<push-button name="Save" st:showing="true" st:visible="true" st:enabled="true" '
        'cp:screencoord="(10, 20)" cp:size="(80, 30)"/></desktop-frame>'
    )
    agent.act(task.instruction, Observation(task.instruction, accessibility_tree=tree))
    body = provider_server.requests[0].body
    assert body["model"] == "qwen2.5-vl-7b-instruct"
    user = body["messages"][-1]
    assert isinstance(user["content"], str)
    # The default tree format is OSWorld's 7 columns (docs/agents.md).
    assert 'push-button\tSave\t""\t\t\t(10, 20)\t(80, 30)' in user["content"]
    assert provider_server.requests[0].headers["authorization"] == "Bearer no-key"


def test_openai_compatible_without_base_url_is_refused() -> None:
    config = AgentConfig(name="openai-compatible", model="m")
    with pytest.raises(AgentFailure, match="base_url=http://HOST:PORT/v1"):
        AGENTS.get("openai-compatible")(config)


def test_openai_token_param_can_be_renamed(provider_server, monkeypatch, task) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    provider_server.play(recording("openai_step"))
    agent = make_agent(PROVIDERS["gpt-4o"], provider_server, token_param="max_completion_tokens")
    agent.reset(task)
    agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))
    body = provider_server.requests[0].body
    assert body["max_completion_tokens"] == 1500
    assert "max_tokens" not in body
