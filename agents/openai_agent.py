"""GPT agents (``gpt-4v``, ``gpt-4o``) and ``openai-compatible``, through the OpenAI SDK.

They speak the Chat Completions API. The key comes from ``OPENAI_API_KEY``; the endpoint
from ``--agent-arg base_url=`` or the SDK's ``OPENAI_BASE_URL``. Screenshots travel as
``image_url`` parts holding ``data:image/png;base64,...`` URLs.

``openai-compatible`` is for a local server that speaks the same API (vLLM, Ollama,
LM Studio, llama.cpp): it needs ``--agent-arg base_url=http://host:port/v1`` and
``--model``, and runs without a key when none is set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

from pytest_osworld.agent.contract import AgentConfig
from pytest_osworld.errors import AgentFailure

from .llm import (
    AgentConfigError,
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

#: GPT-4 with vision, the model of the OSWorld paper's GPT-4V baseline.
GPT4V_MODEL = "gpt-4-vision-preview"
GPT4O_MODEL = "gpt-4o"
#: Sent as the key to local servers that want none (the SDK insists on one).
NO_KEY = "no-key"
#: How the output limit is named in the request; newer OpenAI models want the second.
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")


def _message(turn: Turn, detail: str) -> dict[str, Any]:
    if not turn.images:
        return {"role": turn.role, "content": turn.text}
    parts: list[dict[str, Any]] = [{"type": "text", "text": turn.text}]
    parts.extend(
        {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{png_base64(png)}", "detail": detail},
        }
        for png in turn.images
    )
    return {"role": turn.role, "content": parts}


class OpenAIAgent(PromptAgent):
    """A :class:`~pytest_osworld.agents.llm.PromptAgent` calling Chat Completions."""

    provider = "openai"
    default_model = GPT4O_MODEL
    key_env = ("OPENAI_API_KEY",)
    extra_args: ClassVar[Mapping[str, str]] = {"token_param": "max_tokens", "image_detail": "high"}

    def _connect(self, api_key: str | None) -> Any:
        try:
            import openai
        except ImportError:
            raise AgentFailure(
                "the GPT agents need the OpenAI SDK: pip install 'pytest-osworld[agents]'"
            ) from None
        self.token_param = self.args.text("token_param")
        if self.token_param not in TOKEN_PARAMS:
            raise AgentConfigError(
                f"agent {self.config.name!r}: --agent-arg token_param must be one of "
                f"{', '.join(TOKEN_PARAMS)}, not {self.token_param!r}"
            )
        self.image_detail = self.args.text("image_detail")
        kwargs: dict[str, Any] = {
            "api_key": api_key or NO_KEY,
            "max_retries": 0,
            "timeout": self.timeout,
        }
        if self.base_url:
            kwargs["base_url"] = self.base_url
        return openai.OpenAI(**kwargs)

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()

    def _complete(self, system: str, turns: list[Turn], sampling: Sampling) -> Completion:
        messages = [{"role": "system", "content": system}]
        messages.extend(_message(t, self.image_detail) for t in turns)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            self.token_param: sampling.max_tokens,
        }
        if sampling.temperature is not None:
            request["temperature"] = sampling.temperature
        if sampling.top_p is not None:
            request["top_p"] = sampling.top_p
        response = self.client.chat.completions.create(**request)
        return read_answer("chat completion", response, _completion_of)

    def _describe_error(self, exc: Exception) -> ApiFailure | None:
        import openai

        if isinstance(exc, openai.APIStatusError):
            return http_failure(exc.status_code, exc.message, exc.response.headers)
        if isinstance(exc, openai.APITimeoutError):
            return ApiFailure(True, "timed out")
        if isinstance(exc, openai.APIConnectionError):
            return transport_failure(exc) or ApiFailure(True, f"connection failed: {exc}")
        return transport_failure(exc)


def _completion_of(response: Any) -> Completion:
    """The text and token counts of a Chat Completions response."""
    text = (response.choices[0].message.content or "") if response.choices else ""
    usage = response.usage
    if usage is None:
        return Completion(text)
    return Completion(text, int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0))


class OpenAICompatibleAgent(OpenAIAgent):
    """Chat Completions on a local server: base_url and model required, key optional."""

    provider = "openai-compatible"
    default_model = ""
    key_optional = True

    def _connect(self, api_key: str | None) -> Any:
        if not (self.base_url or os.environ.get("OPENAI_BASE_URL")):
            raise AgentConfigError(
                f"agent {self.config.name!r} needs the server's address: "
                "--agent-arg base_url=http://HOST:PORT/v1 (or OPENAI_BASE_URL)"
            )
        return super()._connect(api_key)


def gpt_4v(config: AgentConfig) -> OpenAIAgent:
    """The ``gpt-4v`` agent: GPT-4 with vision unless ``--model`` says otherwise."""
    return OpenAIAgent(with_default_model(config, GPT4V_MODEL))


def gpt_4o(config: AgentConfig) -> OpenAIAgent:
    """The ``gpt-4o`` agent: GPT-4o unless ``--model`` says otherwise."""
    return OpenAIAgent(with_default_model(config, GPT4O_MODEL))


def openai_compatible(config: AgentConfig) -> OpenAICompatibleAgent:
    """The ``openai-compatible`` agent for local OpenAI-style servers."""
    return OpenAICompatibleAgent(config)
