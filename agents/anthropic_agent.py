"""Claude agents (``claude3``, ``claude``) through Anthropic's Messages API and SDK.

The key comes from ``ANTHROPIC_API_KEY``; the endpoint from ``--agent-arg base_url=``
or the SDK's ``ANTHROPIC_BASE_URL``. Screenshots travel as base64 ``image`` blocks, the
system prompt as the request's ``system`` field.
"""

from __future__ import annotations

from typing import Any

from pytest_osworld.agent.contract import AgentConfig
from pytest_osworld.errors import AgentFailure

from .llm import (
    ApiFailure,
    Completion,
    PromptAgent,
    Sampling,
    Turn,
    http_failure,
    png_base64,
    read_answer,
    transport_failure,
    with_default_model,
)

#: Claude 3 Opus, the model of the OSWorld paper's Claude baseline.
CLAUDE3_MODEL = "claude-3-opus-20240229"
#: The default of the ``claude`` agent; pass ``--model`` for another.
CLAUDE_MODEL = "claude-sonnet-4-6"
#: The ``claude`` agent's defaults that differ from the paper's.
CURRENT_MODEL_DEFAULTS = {"temperature": "none", "top_p": "none"}


def _content(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": png_base64(png)},
        }
        for png in turn.images
    ]
    blocks.append({"type": "text", "text": turn.text or "(empty)"})
    return blocks


class AnthropicAgent(PromptAgent):
    """A :class:`~pytest_osworld.agents.llm.PromptAgent` calling Claude."""

    provider = "anthropic"
    default_model = CLAUDE_MODEL
    key_env = ("ANTHROPIC_API_KEY",)

    def _connect(self, api_key: str | None) -> Any:
        try:
            import anthropic
        except ImportError:
            raise AgentFailure(
                "the Claude agents need the Anthropic SDK: pip install 'pytest-osworld[agents]'"
            ) from None
        kwargs: dict[str, Any] = {"api_key": api_key, "max_retries": 0, "timeout": self.timeout}
        if self.base_url:
            kwargs["base_url"] = self.base_url
        return anthropic.Anthropic(**kwargs)

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()

    def _complete(self, system: str, turns: list[Turn], sampling: Sampling) -> Completion:
        request: dict[str, Any] = {
            "model": self.model,
            "system": system,
            "max_tokens": sampling.max_tokens,
            "messages": [{"role": t.role, "content": _content(t)} for t in turns],
        }
        # The SDK's typed parameters no longer include the sampling knobs (current models
        # fix them); models that take them, such as Claude 3, get them in the body.
        extra: dict[str, float] = {}
        if sampling.temperature is not None:
            extra["temperature"] = sampling.temperature
        if sampling.top_p is not None:
            extra["top_p"] = sampling.top_p
        if extra:
            request["extra_body"] = extra
        response = self.client.messages.create(**request)
        return read_answer("Messages response", response, _completion_of)

    def _describe_error(self, exc: Exception) -> ApiFailure | None:
        import anthropic

        if isinstance(exc, anthropic.APIStatusError):
            return http_failure(exc.status_code, exc.message, exc.response.headers)
        if isinstance(exc, anthropic.APITimeoutError):
            return ApiFailure(True, "timed out")
        if isinstance(exc, anthropic.APIConnectionError):
            return transport_failure(exc) or ApiFailure(True, f"connection failed: {exc}")
        return transport_failure(exc)


def claude3(config: AgentConfig) -> AnthropicAgent:
    """The ``claude3`` agent: Claude 3 Opus unless ``--model`` says otherwise."""
    return AnthropicAgent(with_default_model(config, CLAUDE3_MODEL))


def claude(config: AgentConfig) -> AnthropicAgent:
    """The ``claude`` agent: a current Claude model unless ``--model`` says otherwise.

    Current Claude models reject custom sampling, so temperature and top_p are left out
    unless given with ``--agent-arg``.
    """
    return AnthropicAgent(config, defaults=CURRENT_MODEL_DEFAULTS)


def _completion_of(response: Any) -> Completion:
    """The text and token counts of a Messages response."""
    text = "".join(getattr(block, "text", "") for block in response.content if block.type == "text")
    usage = response.usage
    return Completion(text, int(usage.input_tokens or 0), int(usage.output_tokens or 0))
