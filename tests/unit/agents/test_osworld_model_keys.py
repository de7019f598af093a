"""OSWorld agents' API keys are checked when the agent is built, not swallowed at each step."""

from __future__ import annotations

import pytest

from pytest_osworld.agents.osworld_adapter import MODEL_KEYS, check_model_key
from pytest_osworld.errors import AgentFailure


@pytest.mark.parametrize(
    ("model", "variable"),
    [
        ("gpt-4o", "OPENAI_API_KEY"),
        ("claude-3-opus", "ANTHROPIC_API_KEY"),
        ("gemini-1.5-pro", "GENAI_API_KEY"),
        ("qwen-max", "DASHSCOPE_API_KEY"),
    ],
)
def test_a_missing_key_is_named(model: str, variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for _, name in MODEL_KEYS:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AgentFailure, match=f"^{variable} is not set: OSWorld's agents send '{model}'"):
        check_model_key(model)
    monkeypatch.setenv(variable, "sk-test")
    check_model_key(model)


def test_models_without_a_known_key_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, name in MODEL_KEYS:
        monkeypatch.delenv(name, raising=False)
    check_model_key("")
    check_model_key("my-local-model")
