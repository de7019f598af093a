"""The open models' text protocols over Chat Completions (a vLLM-style server).

UI-TARS, Qwen-VL and OpenCUA answer in text: an action grammar, ``<tool_call>`` blocks or
pyautogui code. A :class:`ChatNativeAgent` keeps the conversation (the system prompt, the
task, then one user turn per screenshot and the model's answers), sends only the
``history`` most recent screenshots (older user turns keep their text), reads the answer
with the subclass's :meth:`ChatNativeAgent._parse` and tells the model, in the next user
turn, why an answer or an action could not be used.

The server's address comes from ``--agent-arg base_url=http://HOST:PORT/v1`` (or
``OPENAI_BASE_URL``); a key is optional (``OPENAI_API_KEY`` when the server wants one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from pytest_osworld.agent.contract import AgentConfig

from ..llm import png_base64
from ..openai_agent import OpenAICompatibleAgent
from .base import NativeAgent, Outcome, Reply, Screen, result_text

REMOVED = "(an older screenshot, removed)"


class ChatNativeAgent(OpenAICompatibleAgent, NativeAgent):
    """An open model's text protocol, through the OpenAI SDK's Chat Completions."""

    provider = "openai-compatible"
    wire = "chat completion"
    extra_args: ClassVar[Mapping[str, str]] = {"token_param": "max_tokens", "image_detail": "high"}

    def __init__(self, config: AgentConfig, defaults: Mapping[str, str] | None = None) -> None:
        super().__init__(config, defaults={"temperature": "0", "top_p": "none", **(defaults or {})})
        self._messages: list[dict[str, Any]] = []

    # -- what each model provides --------------------------------------------------------------

    def _system(self, screen: Screen) -> str:
        """The system prompt: the protocol's grammar, the desktop, how to end."""
        raise NotImplementedError

    def _parse(self, text: str) -> Reply:
        """The answer's calls (or its ``error``, or its ``ending``); usage is filled in here."""
        raise NotImplementedError

    def _user_text(self, instruction: str, first: bool) -> str:
        """The text beside each screenshot."""
        return f"Task: {instruction}" if first else "The screen now."

    # -- the exchange -----------------------------------------------------------------------

    def _forget(self) -> None:
        self._messages = []

    def _request(self, instruction: str, screen: Screen, pending: list[Outcome]) -> dict[str, Any]:
        first = not self._messages
        lines = [self._user_text(instruction, first)]
        problems = [f"{o.call.shown()}: {result_text(o)}" for o in pending if o.error]
        if problems and self.mode == "ours":
            lines.insert(0, "Your last answer could not be fully used:\n" + "\n".join(problems))
        image = {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{png_base64(screen.image)}"},
        }
        turn = {"role": "user", "content": [{"type": "text", "text": "\n\n".join(lines)}, image]}
        messages = _pruned([*self._messages, turn], self.history_length)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": self._system(screen)}, *messages],
            self.token_param: self.sampling.max_tokens,
        }
        if self.sampling.temperature is not None:
            request["temperature"] = self.sampling.temperature
        if self.sampling.top_p is not None:
            request["top_p"] = self.sampling.top_p
        return request

    def _send(self, request: dict[str, Any]) -> Any:
        return self.client.chat.completions.create(**request)

    def _read(self, response: Any) -> Reply:
        text = response.choices[0].message.content or ""
        reply = self._parse(text)
        usage = response.usage
        if usage is None:
            return reply
        return replace(
            reply, input_tokens=int(usage.prompt_tokens or 0), output_tokens=int(usage.completion_tokens or 0)
        )

    def _commit(self, request: dict[str, Any], response: Any, reply: Reply) -> None:
        answer = response.choices[0].message.content or "(empty answer)"
        self._messages = [*request["messages"][1:], {"role": "assistant", "content": answer}]


def _pruned(messages: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """``messages`` with images in the ``keep`` most recent user turns only (0 keeps all)."""
    if keep <= 0:
        return messages
    seen = 0
    pruned: list[dict[str, Any]] = []
    for message in reversed(messages):
        content = message["content"]
        if (
            message["role"] == "user"
            and isinstance(content, list)
            and any(p["type"] == "image_url" for p in content)
        ):
            seen += 1
            if seen > keep:
                message = {
                    **message,
                    "content": [p for p in content if p["type"] != "image_url"]
                    + [{"type": "text", "text": REMOVED}],
                }
        pruned.append(message)
    return list(reversed(pruned))
