"""Fixtures of the agent tests: a local provider server, a task, a distinctive fake key."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_wire import FAKE_KEY, ProviderServer, start

from pytest_osworld.agent.contract import AGENTS, AgentConfig
from pytest_osworld.task.model import Task, load_task

_PROVIDER_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
)


@pytest.fixture(autouse=True)
def _clean_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No real key or endpoint of the machine leaks into a test."""
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    """A local server answering with recordings; stopped after the test."""
    state = ProviderServer()
    server = start(state)
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def task(tmp_path: Path) -> Task:
    """A small feasible task."""
    path = tmp_path / "os" / "hello.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "id": "hello",
                "instruction": "Write 'hello; world' into ~/hello.txt",
                "evaluator": {"func": "infeasible"},
            }
        )
    )
    return load_task(path)


#: Native agent -> (its key variable or "", the base_url suffix its SDK expects).
NATIVE_ENDPOINTS = {
    "claude-cu": ("ANTHROPIC_API_KEY", ""),
    "openai-cu": ("OPENAI_API_KEY", "/v1"),
    "gemini-cu": ("GEMINI_API_KEY", ""),
    "ui-tars": ("", "/v1"),
    "qwen-vl": ("", "/v1"),
    "opencua": ("", "/v1"),
}


@pytest.fixture
def native_agent(
    provider_server: ProviderServer, monkeypatch: pytest.MonkeyPatch, task: Task
) -> Callable[..., Any]:
    """Builds a native agent (``name``, ``--agent-arg``\\ s) talking to the provider server,
    reset for ``task``."""

    def make(name: str, **args: str) -> Any:
        key_env, suffix = NATIVE_ENDPOINTS[name]
        if key_env:
            monkeypatch.setenv(key_env, FAKE_KEY)
        config = AgentConfig(
            name=name, args={"base_url": provider_server.url + suffix, "backoff": "0.01", **args}
        )
        agent = AGENTS.get(name)(config)
        agent.reset(task)
        return agent

    return make
