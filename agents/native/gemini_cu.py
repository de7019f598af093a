"""``gemini-cu``: Gemini with the Computer Use tool, through Google's ``google-genai`` SDK.

The request carries ``Tool(computer_use=ComputerUse(environment=...))``: the browser
environment for ``gemini-2.5-computer-use-preview`` (the model Google tuned on browsers;
the desktop's Chrome serves it), the desktop one for later models (``--agent-arg
environment=``). The first turn holds the task and the screenshot. Each later turn answers
every function call of the previous one with a ``FunctionResponse``: its result ("done",
or the reason it could not be used), the new screenshot as an inline PNG part, and
``safety_acknowledgement`` for a call whose ``safety_decision`` required confirmation (the
check is recorded in the step's response). Screenshots stay in the ``history`` most
recent turns only, as Google's reference agent keeps 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pytest_osworld.agent.contract import AgentConfig

from ..gemini_agent import GeminiAgent
from ..llm import AgentConfigError
from . import gemini_actions
from .base import Context, NativeAgent, Outcome, Reply, Screen, ToolCall, native_prompt, result_text
from .geometry import Frame, grid

DEFAULT_MODEL = "gemini-2.5-computer-use-preview-10-2025"
#: Models tuned on browsers: the browser environment by default.
BROWSER_MODELS = ("gemini-2.5-computer-use-preview",)
ENVIRONMENTS = {"browser": "ENVIRONMENT_BROWSER", "desktop": "ENVIRONMENT_DESKTOP"}
GRID = 1000


class GeminiComputerAgent(GeminiAgent, NativeAgent):
    """Gemini driving the desktop through the Computer Use tool."""

    wire = "generateContent response"
    default_model = DEFAULT_MODEL
    modes: ClassVar[tuple[str, ...]] = ("ours",)
    extra_args: ClassVar[Mapping[str, str]] = {"environment": "auto"}

    def __init__(self, config: AgentConfig) -> None:
        defaults = {"temperature": "1.0", "top_p": "0.95", "max_tokens": "8192", "history": "3"}
        super().__init__(config, defaults=defaults)
        environment = self.args.text("environment")
        if environment == "auto":
            environment = "browser" if self.model.startswith(BROWSER_MODELS) else "desktop"
        if environment not in ENVIRONMENTS:
            raise AgentConfigError(
                f"agent {config.name!r}: --agent-arg environment must be auto, {' or '.join(ENVIRONMENTS)}"
            )
        self.environment = environment
        self._contents: list[Any] = []

    def frame(self, screen: tuple[int, int]) -> Frame:
        """Gemini's 0-999 grid over the screen; the screenshot goes as it is."""
        return grid(screen, screen, GRID)

    def _forget(self) -> None:
        self._contents = []

    def _request(self, instruction: str, screen: Screen, pending: list[Outcome]) -> dict[str, Any]:
        types = self._types
        image = types.Part.from_bytes(data=screen.image, mime_type="image/png")
        if not self._contents:
            turn = types.Content(role="user", parts=[types.Part.from_text(text=instruction), image])
        elif pending:
            parts = []
            for outcome in pending:
                response: dict[str, Any] = {"result": result_text(outcome)}
                if outcome.call.args.get("safety_decision"):
                    response["safety_acknowledgement"] = "true"
                blob = types.FunctionResponseBlob(mime_type="image/png", data=screen.image)
                parts.append(
                    types.Part(
                        function_response=types.FunctionResponse(
                            name=outcome.call.name,
                            response=response,
                            parts=[types.FunctionResponsePart(inline_data=blob)],
                        )
                    )
                )
            turn = types.Content(role="user", parts=parts)
        else:
            turn = types.Content(role="user", parts=[types.Part.from_text(text="The screen now."), image])
        contents = _pruned([*self._contents, turn], self.history_length)
        tool = types.Tool(
            computer_use=types.ComputerUse(
                environment=getattr(types.Environment, ENVIRONMENTS[self.environment])
            )
        )
        config = types.GenerateContentConfig(
            system_instruction=native_prompt(self.config.client_password),
            tools=[tool],
            temperature=self.sampling.temperature,
            top_p=self.sampling.top_p,
            max_output_tokens=self.sampling.max_tokens,
        )
        return {"model": self.model, "contents": contents, "config": config}

    def _send(self, request: dict[str, Any]) -> Any:
        return self.client.models.generate_content(**request)

    def _read(self, response: Any) -> Reply:
        candidate = response.candidates[0]
        calls: list[ToolCall] = []
        texts: list[str] = []
        thoughts: list[str] = []
        safety: list[str] = []
        for index, part in enumerate(candidate.content.parts or []):
            if part.function_call is not None:
                call = part.function_call
                args = dict(call.args or {})
                decision = args.get("safety_decision")
                if isinstance(decision, dict):
                    safety.append(f"{decision.get('decision', '')}: {decision.get('explanation', '')}")
                calls.append(ToolCall(call.id or f"call-{index}", str(call.name), args))
            elif part.text:
                (thoughts if part.thought else texts).append(part.text)
        usage = response.usage_metadata
        text = "\n".join(texts)
        return Reply(
            calls=tuple(calls),
            text=text,
            thought="\n".join(thoughts) or text,
            input_tokens=int(usage.prompt_token_count or 0) if usage else 0,
            output_tokens=int(usage.candidates_token_count or 0) if usage else 0,
            safety=tuple(safety),
        )

    def _commit(self, request: dict[str, Any], response: Any, reply: Reply) -> None:
        self._contents = [*request["contents"], response.candidates[0].content]

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        args = {k: v for k, v in call.args.items() if k != "safety_decision"}
        outcome = gemini_actions.ours(ToolCall(call.id, call.name, args), context)
        outcome.call = call
        return outcome


def _pruned(contents: list[Any], keep: int) -> list[Any]:
    """``contents`` with screenshots only in the ``keep`` most recent turns that carry one."""
    if keep <= 0:
        return contents
    kept = 0
    pruned: list[Any] = []
    for content in reversed(contents):
        has_image = any(_images(part) for part in content.parts or [])
        if has_image:
            kept += 1
            if kept > keep:
                content = content.model_copy(deep=True)
                for part in content.parts:
                    if part.function_response is not None:
                        part.function_response.parts = None
                    elif part.inline_data is not None:
                        part.inline_data = None
                        part.text = "(an older screenshot, removed)"
        pruned.append(content)
    return list(reversed(pruned))


def _images(part: Any) -> bool:
    if part.inline_data is not None:
        return True
    return part.function_response is not None and bool(part.function_response.parts)


def gemini_cu(config: AgentConfig) -> GeminiComputerAgent:
    """The ``gemini-cu`` agent: Gemini 2.5 Computer Use unless ``--model`` says otherwise."""
    return GeminiComputerAgent(config)
