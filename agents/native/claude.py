"""``claude-cu``: Claude with Anthropic's computer tool, through the Messages API.

The request carries the tool the model takes (``--agent-arg tool=auto``, by the model's
name): ``computer_toolset_20260801`` for the Claude 5 models (GA: no beta header; its
member tools are called by name, ``left_click``, ``type``, ``zoom`` ...; the screenshot goes
at the screen's size up to 2576 px on its long side), ``computer_20251124`` (with zoom) for
Opus 4.5 to 4.7 and Sonnet 4.6, ``computer_20250124`` for other Claude models, with its
beta header. The first user turn holds the screenshot and the task. Each later turn
answers every ``tool_use`` of the previous one with a ``tool_result``: "done" or the reason
it could not be used (``is_error``), the last one with the new screenshot, a ``zoom`` with
its region at full resolution. Thinking blocks go back as they came. Only the ``history``
most recent screenshots stay in the conversation.

With the beta tools the screenshot is resized to the declared display: by default the
quickstart's choice, the largest of XGA, WXGA and FWXGA with the screen's aspect ratio
(1366x768 for 1920x1080), so that the API never downscales it behind the agent's back.
The toolset's member schemas are not published where this machine can read them; the
members are read as the beta tool's actions of the same names.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from pytest_osworld.agent.contract import AgentConfig

from ..anthropic_agent import AnthropicAgent
from ..llm import png_base64
from . import claude_actions
from .base import (
    INFEASIBLE,
    Context,
    NativeAgent,
    Outcome,
    Reply,
    Screen,
    ToolCall,
    native_prompt,
    result_text,
)
from .geometry import Frame, declared

#: Tool version -> (beta header, or None for the GA toolset; whether it has zoom).
TOOLS: dict[str, tuple[str | None, bool]] = {
    "computer_20250124": ("computer-use-2025-01-24", False),
    "computer_20251124": ("computer-use-2025-11-24", True),
    "computer_toolset_20260801": (None, True),
}
#: The GA toolset of the Claude 5 models: one entry in ``tools``, its member tools
#: (``left_click``, ``type``, ``zoom`` ...) called by name, several in a turn.
TOOLSET = "computer_toolset_20260801"
#: ``tool=auto``: the newest tool each model accepts, by model name (Claude 5 models refuse
#: the beta tools; Opus 4.5 to 4.7 and Sonnet 4.6 take computer_20251124).
TOOL_BY_MODEL: tuple[tuple[str, str], ...] = (
    (r"claude-(opus|sonnet|haiku|fable|mythos)-5", TOOLSET),
    (r"claude-(opus-4-[5-9]|sonnet-4-[6-9])", "computer_20251124"),
    (r"claude", "computer_20250124"),
)
#: The longest side the Claude 5 models take an image at without downscaling it.
TOOLSET_MAX_SIDE = 2576
DEFAULT_MODEL = "claude-sonnet-4-6"
#: The quickstart's scaling targets, tried in order.
TARGETS = ((1024, 768), (1280, 800), (1366, 768))
#: OSWorld's AnthropicAgent: every screenshot at 1280x720, with computer_20251124.
OSWORLD_DISPLAY = (1280, 720)
REMOVED = "(an older screenshot, removed to keep the conversation short)"


def default_display(screen: tuple[int, int]) -> tuple[int, int]:
    """The largest quickstart target below ``screen`` with its aspect ratio (within 0.02)."""
    ratio = screen[0] / screen[1]
    fits = [t for t in TARGETS if abs(t[0] / t[1] - ratio) < 0.02 and t[0] < screen[0]]
    return fits[-1] if fits else screen


class ClaudeComputerAgent(AnthropicAgent, NativeAgent):
    """Claude driving the desktop through the computer tool."""

    wire = "Messages response"
    default_model = DEFAULT_MODEL
    #: OSWorld's agent asks three times for a turn with a call it cannot map, then answers FAIL.
    osworld_attempts = 3
    osworld_retry_calls = True
    osworld_given_up = "FAIL"
    extra_args: ClassVar[Mapping[str, str]] = {
        "tool": "auto",
        "display": "auto",
        "zoom": "on",
        "thinking": "0",
    }

    def __init__(self, config: AgentConfig) -> None:
        defaults = {"temperature": "none", "top_p": "none", "max_tokens": "4096", "history": "3"}
        if config.args.get("parse") == "osworld":
            defaults.update(
                {"history": "10", "tool": "computer_20251124", "display": "1280x720", "max_tokens": "3000"}
            )
        super().__init__(config, defaults=defaults)
        self.tool = self._tool_version()
        self.beta, has_zoom = TOOLS[self.tool]
        self.zoom = has_zoom and self.args.text("zoom") == "on" and self.mode == "ours"
        self.thinking = self.args.integer("thinking")
        self.display = self._display_arg()
        self._messages: list[dict[str, Any]] = []

    def _tool_version(self) -> str:
        if self.args.text("tool") != "auto":
            return self.args.choice("tool", TOOLS)
        return next(tool for pattern, tool in TOOL_BY_MODEL if re.search(pattern, self.model))

    def frame(self, screen: tuple[int, int]) -> Frame:
        """The declared display (see the module docstring)."""
        if self.display is None and self.tool == TOOLSET:
            factor = min(1.0, TOOLSET_MAX_SIDE / max(screen))
            return declared(screen, (round(screen[0] * factor), round(screen[1] * factor)))
        return declared(screen, self.display or default_display(screen))

    def _tool(self, frame: Frame) -> dict[str, Any]:
        if self.tool == TOOLSET:
            return {"type": TOOLSET}
        tool: dict[str, Any] = {
            "type": self.tool,
            "name": "computer",
            "display_width_px": frame.image[0],
            "display_height_px": frame.image[1],
        }
        if self.zoom:
            tool["enable_zoom"] = True
        return tool

    def _forget(self) -> None:
        self._messages = []

    def _request(self, instruction: str, screen: Screen, pending: list[Outcome]) -> dict[str, Any]:
        image = _image(screen.image)
        if not self._messages:
            content: list[dict[str, Any]] = [image, {"type": "text", "text": instruction}]
        else:
            content = []
            for index, outcome in enumerate(pending):
                parts: list[dict[str, Any]] = [{"type": "text", "text": self._result_text(outcome)}]
                if outcome.zoom is not None:
                    parts.append(_image(screen.region(outcome.zoom)))
                if index == len(pending) - 1:
                    parts.append(image)
                content.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": outcome.call.id,
                        "content": parts,
                        "is_error": outcome.error is not None and self.mode == "ours",
                    }
                )
            if not content:
                content = [image, {"type": "text", "text": "The screen now."}]
        messages = _pruned([*self._messages, {"role": "user", "content": content}], self.history_length)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.sampling.max_tokens,
            "system": native_prompt(
                self.config.client_password, _OSWORLD_NOTE if self.mode == "osworld" else ""
            ),
            "messages": messages,
            "tools": [self._tool(screen.frame)],
        }
        if self.beta is not None:
            request["betas"] = [self.beta]
        extra: dict[str, Any] = {}
        if self.sampling.temperature is not None:
            extra["temperature"] = self.sampling.temperature
        if self.sampling.top_p is not None:
            extra["top_p"] = self.sampling.top_p
        if self.thinking:
            extra["thinking"] = {"type": "enabled", "budget_tokens": self.thinking}
        if extra:
            request["extra_body"] = extra
        return request

    def _result_text(self, outcome: Outcome) -> str:
        return "Success" if self.mode == "osworld" else result_text(outcome)

    def _send(self, request: dict[str, Any]) -> Any:
        if self.beta is None:
            return self.client.messages.create(**request)
        return self.client.beta.messages.create(**request)

    def _read(self, response: Any) -> Reply:
        calls, texts, thoughts = [], [], []
        for block in response.content:
            if block.type == "tool_use":
                if not isinstance(block.input, dict):
                    raise TypeError(f"tool_use input is {type(block.input).__name__}")
                if self.tool == TOOLSET:  # a member tool, called by its name
                    calls.append(ToolCall(block.id, str(block.name), dict(block.input)))
                    continue
                args = {k: v for k, v in block.input.items() if k != "action"}
                calls.append(ToolCall(block.id, str(block.input.get("action", "")), args))
            elif block.type == "text":
                texts.append(block.text)
            elif block.type == "thinking":
                thoughts.append(block.thinking)
        usage = response.usage
        text = "\n".join(texts)
        if self.mode == "osworld" and INFEASIBLE in text:
            calls = []  # OSWorld's agent answers FAIL and drops the turn's calls
        return Reply(
            calls=tuple(calls),
            text=text,
            thought="\n".join(thoughts) or text,
            input_tokens=int(usage.input_tokens or 0),
            output_tokens=int(usage.output_tokens or 0),
        )

    def _commit(self, request: dict[str, Any], response: Any, reply: Reply) -> None:
        self._messages = [*request["messages"], {"role": "assistant", "content": _echoed(response.content)}]

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        if self.mode == "osworld":
            return claude_actions.osworld(call, context)
        return claude_actions.ours(call, context, self.zoom)


_OSWORLD_NOTE = "If you think the task is infeasible, output [INFEASIBLE]."


def _image(png: bytes) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_base64(png)}}


def _echoed(content: Any) -> list[dict[str, Any]]:
    """The assistant's blocks as request parameters (thinking with its signature)."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        if block.type == "text":
            blocks.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            blocks.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
        elif block.type == "thinking":
            blocks.append({"type": "thinking", "thinking": block.thinking, "signature": block.signature})
        elif block.type == "redacted_thinking":
            blocks.append({"type": "redacted_thinking", "data": block.data})
    return blocks


def _pruned(messages: list[dict[str, Any]], keep: int) -> list[dict[str, Any]]:
    """``messages`` with only the ``keep`` most recent images (0 keeps all); others become a note."""
    if keep <= 0:
        return messages
    pruned = copy.deepcopy(messages)
    seen = 0

    def prune(blocks: list[dict[str, Any]]) -> None:
        nonlocal seen
        for index in range(len(blocks) - 1, -1, -1):
            block = blocks[index]
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                prune(block["content"])
            elif block.get("type") == "image":
                seen += 1
                if seen > keep:
                    blocks[index] = {"type": "text", "text": REMOVED}

    for message in reversed(pruned):
        if isinstance(message["content"], list):
            prune(message["content"])
    return pruned


def claude_cu(config: AgentConfig) -> ClaudeComputerAgent:
    """The ``claude-cu`` agent: Claude Sonnet 4.6 with ``computer_20251124`` unless told otherwise."""
    return ClaudeComputerAgent(config)
