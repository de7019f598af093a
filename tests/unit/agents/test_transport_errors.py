"""Timeouts and broken connections are retried, whichever way the SDK lets them out.

The SDKs wrap transport errors in their own classes, but a raw ``httpcore2.ReadTimeout``
once escaped one on a loaded CI machine and was reported as a fatal "API error"; another
time a timeout came out as "connection failed". Each agent's classification must find
the timeout wherever it sits in the exception's chain.
"""

from __future__ import annotations

import anthropic
import httpcore2
import httpx2
import openai
import pytest
from agent_wire import FAKE_KEY, ProviderServer, recording

from agents.llm_api import ApiFailure, transport_failure
from pytest_osworld.agent.contract import AGENTS, AgentConfig, Observation
from pytest_osworld.providers.fake import tiny_png
from pytest_osworld.task.model import Task

#: agent name -> (key variable, path under the server's URL, prefix of its recordings).
AGENT_WIRES = {
    "claude": ("ANTHROPIC_API_KEY", "", "anthropic"),
    "gpt-4o": ("OPENAI_API_KEY", "/v1", "openai"),
    "gemini": ("GEMINI_API_KEY", "", "gemini"),
}

REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/x")


def raised_from(outer: BaseException, cause: BaseException) -> BaseException:
    """``outer`` as ``raise outer from cause`` leaves it."""
    try:
        raise outer from cause
    except BaseException as exc:
        return exc


def make(name: str, server: ProviderServer, monkeypatch: pytest.MonkeyPatch) -> object:
    key_env, path, _ = AGENT_WIRES[name]
    monkeypatch.setenv(key_env, FAKE_KEY)
    config = AgentConfig(name=name, args={"base_url": server.url + path, "backoff": "0.01"})
    return AGENTS.get(name)(config)


@pytest.mark.parametrize(
    "exc",
    [
        httpcore2.ReadTimeout("timed out"),
        httpx2.ReadTimeout("timed out", request=REQUEST),
        TimeoutError("timed out"),
        raised_from(anthropic.APIConnectionError(request=REQUEST), httpcore2.ReadTimeout("timed out")),
        raised_from(
            openai.APIConnectionError(request=REQUEST), httpx2.ReadTimeout("timed out", request=REQUEST)
        ),
        raised_from(
            RuntimeError("wrapped"), raised_from(ValueError("inner"), httpcore2.WriteTimeout("timed out"))
        ),
    ],
    ids=["httpcore2", "httpx2", "builtin", "anthropic-wrapped", "openai-wrapped", "deep"],
)
def test_a_timeout_anywhere_in_the_chain_is_a_retried_timeout(exc: BaseException) -> None:
    assert transport_failure(exc) == ApiFailure(True, "timed out")


@pytest.mark.parametrize(
    "exc",
    [
        httpcore2.ConnectError("refused"),
        httpx2.ConnectError("refused", request=REQUEST),
        ConnectionResetError("reset by peer"),
        raised_from(
            anthropic.APIConnectionError(request=REQUEST),
            httpx2.RemoteProtocolError("closed", request=REQUEST),
        ),
    ],
    ids=["httpcore2", "httpx2", "builtin", "anthropic-wrapped"],
)
def test_a_broken_connection_is_retried_and_named(exc: BaseException) -> None:
    failure = transport_failure(exc)
    assert failure is not None and failure.retryable
    assert failure.summary.startswith("connection failed: ")


@pytest.mark.parametrize(
    "exc", [ValueError("bad"), KeyError("x"), raised_from(RuntimeError("a"), ValueError("b"))]
)
def test_other_errors_are_not_transport_failures(exc: BaseException) -> None:
    assert transport_failure(exc) is None


@pytest.mark.parametrize("name", sorted(AGENT_WIRES))
def test_each_agent_retries_a_raw_timeout_that_escaped_its_sdk(
    name: str, provider_server: ProviderServer, monkeypatch: pytest.MonkeyPatch, task: Task
) -> None:
    agent = make(name, provider_server, monkeypatch)
    provider_server.play(recording(f"{AGENT_WIRES[name][2]}_step"))
    real_complete = agent._complete  # type: ignore[attr-defined]
    calls: list[int] = []

    def first_times_out(*args: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise httpcore2.ReadTimeout("timed out")
        return real_complete(*args)

    monkeypatch.setattr(agent, "_complete", first_times_out)
    agent.reset(task)  # type: ignore[attr-defined]
    step = agent.act(task.instruction, Observation(task.instruction, screenshot=tiny_png()))  # type: ignore[attr-defined]
    assert len(calls) == 2 and len(provider_server.requests) == 1
    assert step.actions


def test_the_agents_keep_their_sdks_status_errors_first() -> None:
    # A status error whose context holds a timeout is still an HTTP failure (the
    # classification of each agent looks at the SDK's own classes before the chain).
    response = httpx2.Response(401, request=REQUEST)
    error = anthropic.AuthenticationError("bad key", response=response, body=None)
    config = AgentConfig(name="claude", args={"base_url": "http://127.0.0.1:9", "api_key_env": "NONE_SET"})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NONE_SET", FAKE_KEY)
        agent = AGENTS.get("claude")(config)
    failure = agent._describe_error(error)  # type: ignore[attr-defined]
    assert failure is not None and not failure.retryable and failure.summary.startswith("HTTP 401")
