"""``openai-cu``: OpenAI's computer tool through the Responses API.

Two generations (``--agent-arg tool=``):

- ``computer`` (the default, GA, ``gpt-5.4`` and later): the tool has no fields; a
  ``computer_call`` may hold several ``actions`` (a batch, one step); screenshots go back
  at full resolution (``detail: original``);
- ``computer_use_preview`` (``computer-use-preview``): the tool declares the display and
  the environment (``linux``), and each ``computer_call`` holds one ``action``.

The conversation lives on OpenAI's side: each request names the previous response and
carries only the new items, a ``computer_call_output`` per call with the new screenshot
and the call's pending safety checks acknowledged (they are recorded in the step's
response, so in ``traj.jsonl``); ``truncation: auto`` lets the API drop old turns. The
tool's output has no error channel, so the reasons a call could not be used follow as a
user message. A turn without a ``computer_call`` ends the episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentConfig

from ..llm import AgentConfigError, png_base64
from ..openai_agent import OpenAIAgent
from . import openai_actions
from .base import Context, NativeAgent, Outcome, Reply, Screen, ToolCall, native_prompt, result_text
from .geometry import Frame, declared

TOOLS = ("computer", "computer_use_preview")
MODELS = {"computer": "gpt-5.4", "computer_use_preview": "computer-use-preview"}
#: Words of OSWorld's preview agent that make a final message FAIL (``parse=osworld``).
OSWORLD_INFEASIBLE_WORDS = ("infeasible", "unfeasible", "impossible", "not feasible", "cannot be done")


class OpenAIComputerAgent(OpenAIAgent, NativeAgent):
    """A GPT model driving the desktop through OpenAI's computer tool."""

    provider = "openai"
    wire = "Responses response"
    default_model = ""
    extra_args: ClassVar[Mapping[str, str]] = {
        "token_param": "max_tokens",
        "image_detail": "original",
        "tool": "computer",
        "display": "auto",
        "truncation": "auto",
        "reasoning_effort": "",
    }

    def __init__(self, config: AgentConfig) -> None:
        tool = config.args.get("tool", "computer")
        if tool not in TOOLS:
            raise AgentConfigError(
                f"agent {config.name!r}: --agent-arg tool must be one of {', '.join(TOOLS)}"
            )
        defaults = {"temperature": "none", "top_p": "none", "max_tokens": "4096"}
        if not config.model:
            config = replace(config, model=MODELS[tool])
        super().__init__(config, defaults=defaults)
        self.tool = tool
        self.display = self._display_arg()
        if self.mode == "osworld":
            self.display = None
        self._previous: str | None = None
        self._checks: dict[str, list[dict[str, Any]]] = {}

    def frame(self, screen: tuple[int, int]) -> Frame:
        """The screen itself, or the declared ``display`` it is resized to."""
        return declared(screen, self.display or screen)

    def _forget(self) -> None:
        self._previous = None
        self._checks = {}

    def _image(self, png: bytes) -> dict[str, Any]:
        part: dict[str, Any] = {
            "type": "input_image",
            "image_url": f"data:image/png;base64,{png_base64(png)}",
        }
        if self.tool == "computer":
            part["detail"] = self.args.text("image_detail")
        return part

    def _request(self, instruction: str, screen: Screen, pending: list[Outcome]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "instructions": native_prompt(self.config.client_password),
            "tools": [self._tool(screen.frame)],
            "max_output_tokens": self.sampling.max_tokens,
            "reasoning": {"summary": "concise"},
        }
        if self.args.text("reasoning_effort"):
            request["reasoning"]["effort"] = self.args.text("reasoning_effort")
        if self.tool == "computer":
            request["parallel_tool_calls"] = False
        if self.args.text("truncation") != "none":
            request["truncation"] = self.args.text("truncation")
        if self._previous is None:
            request["input"] = [
                {
                    "role": "user",
                    "content": [{"type": "input_text", "text": instruction}, self._image(screen.image)],
                }
            ]
            return request
        request["previous_response_id"] = self._previous
        items: list[dict[str, Any]] = []
        for call_id in dict.fromkeys(o.call.id for o in pending):
            output: dict[str, Any] = {
                "type": "computer_call_output",
                "call_id": call_id,
                "output": {
                    "type": "computer_screenshot",
                    "image_url": self._image(screen.image)["image_url"],
                },
            }
            if self.tool == "computer":
                output["output"]["detail"] = self.args.text("image_detail")
            if self._checks.get(call_id):
                output["acknowledged_safety_checks"] = self._checks[call_id]
            items.append(output)
        problems = [f"{o.call.shown()}: {result_text(o)}" for o in pending if o.error]
        if problems and self.mode == "ours":
            text = "Some actions of your last turn could not be done:\n" + "\n".join(problems)
            items.append({"role": "user", "content": [{"type": "input_text", "text": text}]})
        if not items:
            items.append(
                {
                    "role": "user",
                    "content": [{"type": "input_text", "text": "The screen now."}, self._image(screen.image)],
                }
            )
        request["input"] = items
        return request

    def _tool(self, frame: Frame) -> dict[str, Any]:
        if self.tool == "computer":
            return {"type": "computer"}
        return {
            "type": "computer_use_preview",
            "display_width": frame.image[0],
            "display_height": frame.image[1],
            "environment": "linux",
        }

    def _send(self, request: dict[str, Any]) -> Any:
        return self.client.responses.create(**request)

    def _read(self, response: Any) -> Reply:
        calls: list[ToolCall] = []
        texts: list[str] = []
        thoughts: list[str] = []
        safety: list[str] = []
        ending: Action | None = None
        for item in response.output:
            if item.type == "computer_call":
                actions = item.actions if getattr(item, "actions", None) else [item.action]
                for action in actions:
                    args = action.model_dump(exclude_none=True)
                    calls.append(ToolCall(item.call_id, str(args.pop("type")), args))
                for check in item.pending_safety_checks or []:
                    safety.append(f"{check.code or ''}: {check.message or ''}".strip(": "))
            elif item.type == "message":
                parts = [part.text for part in item.content if getattr(part, "type", "") == "output_text"]
                texts += parts
                if self._osworld_infeasible(item):
                    # OSWorld's preview agent answers FAIL and reads no further item
                    ending = Action(kind="FAIL")
                    break
            elif item.type == "reasoning":
                thoughts += [s.text for s in getattr(item, "summary", None) or []]
        usage = response.usage
        text = "\n".join(texts)
        return Reply(
            calls=tuple(calls),
            text=text,
            thought="\n".join(thoughts) or text,
            input_tokens=int(usage.input_tokens or 0) if usage else 0,
            output_tokens=int(usage.output_tokens or 0) if usage else 0,
            safety=tuple(safety),
            ending=ending,
        )

    def _osworld_infeasible(self, item: Any) -> bool:
        """``parse=osworld`` with the preview tool: a message whose first part has one of
        OSWorld's infeasibility words (its preview agent then answers FAIL)."""
        if self.mode != "osworld" or self.tool != "computer_use_preview" or not item.content:
            return False
        first = str(getattr(item.content[0], "text", "") or "").lower()
        return any(word in first for word in OSWORLD_INFEASIBLE_WORDS)

    def _commit(self, request: dict[str, Any], response: Any, reply: Reply) -> None:
        self._previous = response.id
        # The checks each call raised, acknowledged with its output in the next request.
        self._checks = {
            item.call_id: [c.model_dump(exclude_none=True) for c in item.pending_safety_checks or []]
            for item in response.output
            if item.type == "computer_call"
        }

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        if self.mode == "osworld":
            return openai_actions.osworld(call, context, ga=self.tool == "computer")
        return openai_actions.ours(call, context)

    def _ending(self, reply: Reply) -> Action | None:
        if self.mode == "ours":
            return super()._ending(reply)
        # OSWorld's GPT-5.4 agent never answers FAIL; its preview agent's FAIL is read in _read
        return Action(kind="DONE")


def openai_cu(config: AgentConfig) -> OpenAIComputerAgent:
    """The ``openai-cu`` agent: GPT-5.4 with the GA computer tool unless told otherwise."""
    return OpenAIComputerAgent(config)
