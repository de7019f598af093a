"""The ``gemini`` agent, through Google's ``google-genai`` SDK (Gemini API).

The key comes from ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``; the endpoint from
``--agent-arg base_url=`` (the SDK's ``HttpOptions.base_url``) or the SDK's
``GOOGLE_GEMINI_BASE_URL``. Screenshots travel as ``inline_data`` parts (base64 PNG),
the system prompt as ``system_instruction``, and the history with the roles ``user``
and ``model``.
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
    transport_failure,
    with_default_model,
)

#: The default model of the ``gemini`` agent; pass ``--model`` for another.
GEMINI_MODEL = "gemini-2.5-pro"


class GeminiAgent(PromptAgent):
    """A :class:`~pytest_osworld.agents.llm.PromptAgent` calling ``generateContent``."""

    provider = "gemini"
    default_model = GEMINI_MODEL
    key_env = ("GEMINI_API_KEY", "GOOGLE_API_KEY")

    def _connect(self, api_key: str | None) -> Any:
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise AgentFailure(
                "the gemini agent needs Google's SDK: pip install 'pytest-osworld[agents]'"
            ) from None
        self._types = types
        options = types.HttpOptions(
            base_url=self.base_url,
            timeout=int(self.timeout * 1000),
            # One attempt per call: the agent's own loop retries, with its budget.
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        return genai.Client(api_key=api_key, http_options=options)

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()

    def _complete(self, system: str, turns: list[Turn], sampling: Sampling) -> Completion:
        types = self._types
        contents = []
        for turn in turns:
            parts = [types.Part.from_bytes(data=png, mime_type="image/png") for png in turn.images]
            parts.append(types.Part.from_text(text=turn.text or "(empty)"))
            role = "model" if turn.role == "assistant" else "user"
            contents.append(types.Content(role=role, parts=parts))
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_output_tokens=sampling.max_tokens,
        )
        response = self.client.models.generate_content(model=self.model, contents=contents, config=config)
        texts: list[str] = []
        for candidate in (response.candidates or [])[:1]:
            if candidate.content is None:
                continue
            texts.extend(
                part.text for part in candidate.content.parts or [] if part.text and not part.thought
            )
        usage = response.usage_metadata
        if usage is None:
            return Completion("".join(texts))
        return Completion(
            "".join(texts),
            int(usage.prompt_token_count or 0),
            int(usage.candidates_token_count or 0),
        )

    def _describe_error(self, exc: Exception) -> ApiFailure | None:
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            headers = getattr(exc.response, "headers", None)
            return http_failure(exc.code, exc.message or str(exc), headers)
        return transport_failure(exc)


def gemini(config: AgentConfig) -> GeminiAgent:
    """The ``gemini`` agent: Gemini 2.5 Pro unless ``--model`` says otherwise."""
    return GeminiAgent(with_default_model(config, GEMINI_MODEL))
