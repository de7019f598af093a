"""``qwen-vl``: Qwen2.5-VL and Qwen3-VL with their ``computer_use`` function.

The system prompt declares one function, ``computer_use``, in the Qwen chat template's
``<tools>`` block; the model answers with ``<tool_call>{"name": "computer_use",
"arguments": {"action": ...}}</tool_call>`` blocks (several are a batch). Its actions:
``key`` (``keys``: a list pressed together), ``type``, ``mouse_move``, ``left_click``,
``right_click``, ``middle_click``, ``double_click``, ``triple_click``, ``left_click_drag``
(from the pointer to ``coordinate``), ``scroll`` and ``hscroll`` (``pixels``, positive up or
right, turned into wheel clicks), ``wait`` (``time`` seconds), ``answer`` and
``terminate`` (``status``: ``success`` is DONE, ``failure`` is FAIL). An answer without a
tool call is a step error: the model ends with ``terminate``.

Coordinates (``--agent-arg coordinates=``): ``relative`` (Qwen3-VL, the default unless
the model is a Qwen2.5) are on a 0-1000 grid, the prompt saying the screen is 1000x1000;
``absolute`` (Qwen2.5-VL) are pixels of the screenshot resized by smart_resize (factor
28, at most 1280 patches of 28x28), which is the image sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from pytest_osworld.agent.actions import Action, ActionParseError
from pytest_osworld.agent.contract import AgentConfig

from ..llm import AgentConfigError
from . import arguments, commands
from .base import Context, Outcome, Reply, Screen, ToolCall
from .chat import ChatNativeAgent
from .geometry import Frame, grid, smart
from .keys import pyautogui_keys

DEFAULT_MODEL = "Qwen/Qwen3-VL-8B-Instruct"
#: smart_resize of Qwen2.5-VL as OSWorld runs it: factor, min and max pixels
SMART_RESIZE = (28, 56 * 56, 28 * 28 * 1280)
ACTIONS = (
    "key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click",
    "double_click", "triple_click", "scroll", "hscroll", "wait", "terminate", "answer",
)  # fmt: skip
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def tool_schema(width: int, height: int) -> dict[str, Any]:
    """The ``computer_use`` function as the prompt declares it."""
    return {
        "type": "function",
        "function": {
            "name": "computer_use",
            "description": (
                "Use the mouse and keyboard of an Ubuntu desktop and see its screen. "
                f"The screen's resolution is {width}x{height}; coordinates are [x, y] on it. "
                "Click the centre of what you mean. Finish with terminate."
            ),
            "parameters": {
                "type": "object",
                "required": ["action"],
                "properties": {
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "keys": {"type": "array", "description": "Keys pressed together (action=key)."},
                    "text": {"type": "string", "description": "Text to type (type) or the answer (answer)."},
                    "coordinate": {"type": "array", "description": "[x, y] to move to, click, or drag to."},
                    "pixels": {"type": "number", "description": "Scroll distance: up or right if positive."},
                    "time": {"type": "number", "description": "Seconds to wait (wait)."},
                    "status": {
                        "type": "string",
                        "enum": ["success", "failure"],
                        "description": "failure: the task cannot be done (terminate).",
                    },
                },
            },
        },
    }  # fmt: skip


PROMPT = """You are a computer-use agent on an Ubuntu desktop (GNOME). The home folder is /home/user; \
the sudo password is '{password}'.

# Tools

Call functions to act. Their signatures are in <tools></tools>:
<tools>
{tools}
</tools>

To call one, write a JSON object with its name and arguments in <tool_call></tool_call> tags:
<tool_call>
{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [100, 200]}}}}
</tool_call>

When the task is done, call terminate with status success; if it cannot be done, with status failure."""


def parse_calls(text: str) -> list[ToolCall]:
    """The ``computer_use`` calls of an answer; :class:`ActionParseError` if none or one is broken."""
    blocks = _CALL.findall(text)
    if not blocks:
        raise ActionParseError("the answer has no <tool_call>; act with computer_use, or end with terminate")
    calls = []
    for index, block in enumerate(blocks):
        try:
            value = json.loads(block)
        except json.JSONDecodeError as exc:
            raise ActionParseError(f"a <tool_call> is not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(value, dict) or value.get("name") != "computer_use":
            raise ActionParseError(f"a <tool_call> must call computer_use, got {str(value)[:80]!r}")
        args = value.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = None
        if not isinstance(args, dict) or not isinstance(args.get("action"), str):
            raise ActionParseError("the call's arguments must be an object with an 'action'")
        calls.append(ToolCall(str(index), args["action"], {k: v for k, v in args.items() if k != "action"}))
    return calls


CLICKS = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}


def _point(call: ToolCall, context: Context, required: bool = False) -> tuple[int, int] | None:
    pair = arguments.pair(call.args, "coordinate", call.name, required)
    return context.point(*pair) if pair else None


def ours(call: ToolCall, context: Context) -> Outcome:
    """The desktop actions of one ``computer_use`` action."""
    name, args = call.name, call.args
    if name in CLICKS:
        button, count = CLICKS[name]
        return Outcome(call, [commands.click(_point(call, context), button, count)])
    if name == "mouse_move":
        return Outcome(call, [commands.move(_point(call, context, True) or (0, 0))])
    if name == "left_click_drag":
        start = context.pointer
        if start is None:
            raise ActionParseError("left_click_drag starts where the pointer is: move it first (mouse_move)")
        return Outcome(call, [commands.drag([start, _point(call, context, True) or start])])
    if name == "key":
        keys = args.get("keys")
        if isinstance(keys, str):
            keys = keys.split("+")
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ActionParseError(f"key needs 'keys': a list of key names, got {keys!r}")
        return Outcome(call, [commands.keys(pyautogui_keys(keys))])
    if name == "type":
        return Outcome(call, [commands.type_text(arguments.text(args, "text", name))])
    if name in ("scroll", "hscroll"):
        clicks = commands.wheel_clicks(arguments.number(args, "pixels", name))
        down, right = (-clicks, 0) if name == "scroll" else (0, clicks)
        return Outcome(call, [commands.scroll(_point(call, context), down, right)])
    if name == "wait":
        return Outcome(call, [commands.wait(arguments.number(args, "time", name, default=2))])
    if name == "answer":
        return Outcome(call, note="answer recorded")
    raise ActionParseError(f"unknown action {name!r} of computer_use")


def osworld(call: ToolCall, context: Context) -> Outcome:
    """One action as OSWorld's Qwen3-VL agent maps it (unchecked; unmapped actions refused)."""
    name, args = call.name, call.args
    xy = args.get("coordinate")
    at = ""
    if isinstance(xy, list) and len(xy) == 2:
        screen, space = context.frame.screen, context.frame.space
        at = f"{round(xy[0] * screen[0] / space[0])}, {round(xy[1] * screen[1] / space[1])}"
    verbs = {
        "left_click": "click",
        "right_click": "rightClick",
        "middle_click": "middleClick",
        "double_click": "doubleClick",
        "mouse_move": "moveTo",
        "left_click_drag": "dragTo",
    }
    if name in verbs:
        code = f"pyautogui.{verbs[name]}({at})"
    elif name == "key":
        keys = [str(k).lower() for k in args.get("keys") or []]
        code = (
            f"pyautogui.hotkey({', '.join(repr(k) for k in keys)})"
            if len(keys) > 1
            else f"pyautogui.press({keys[0]!r})"
            if keys
            else ""
        )
    elif name == "type":
        code = f"pyautogui.typewrite({str(args.get('text', ''))!r})"
    elif name == "scroll":
        code = f"pyautogui.scroll({args.get('pixels', 0)})"
    elif name == "wait":
        return Outcome(call, [Action(kind="WAIT")])
    else:
        raise ActionParseError(f"unmapped action {name!r}")
    return Outcome(call, [Action(kind="code", code="import pyautogui\n" + code)])


class QwenVLAgent(ChatNativeAgent):
    """Qwen2.5-VL or Qwen3-VL on an OpenAI-compatible server."""

    default_model = DEFAULT_MODEL
    extra_args: ClassVar[Mapping[str, str]] = {**ChatNativeAgent.extra_args, "coordinates": "auto"}

    def __init__(self, config: AgentConfig) -> None:
        super().__init__(config, defaults={"history": "4", "max_tokens": "2048"})
        coordinates = self.args.text("coordinates")
        if coordinates == "auto":
            coordinates = (
                "absolute"
                if "qwen2.5" in self.model.lower() or "qwen2_5" in self.model.lower()
                else "relative"
            )
        if coordinates not in ("relative", "absolute"):
            raise AgentConfigError(
                f"agent {config.name!r}: --agent-arg coordinates must be auto, relative or absolute"
            )
        self.coordinates = coordinates

    def frame(self, screen: tuple[int, int]) -> Frame:
        """The 0-1000 grid (OSWorld's agent: 0-999), or smart_resize pixels."""
        if self.coordinates == "absolute":
            return smart(screen, *SMART_RESIZE)
        return grid(screen, screen, 999 if self.mode == "osworld" else 1000)

    def _system(self, screen: Screen) -> str:
        space = screen.frame.space if self.coordinates == "absolute" else (1000, 1000)
        tools = json.dumps(tool_schema(*space), ensure_ascii=False)
        return PROMPT.format(password=self.config.client_password, tools=tools)

    def _parse(self, text: str) -> Reply:
        thought = text.split("<tool_call>", 1)[0].strip()
        try:
            calls = parse_calls(text)
        except ActionParseError as exc:
            return Reply(text=text, thought=thought, error=str(exc))
        names = [c.name for c in calls]
        if "terminate" in names:
            end = calls[names.index("terminate")]
            failed = end.args.get("status") == "failure" and self.mode == "ours"
            kept = tuple(calls[: names.index("terminate")])
            return Reply(
                calls=kept, text=text, thought=thought, ending=Action(kind="FAIL" if failed else "DONE")
            )
        return Reply(calls=tuple(calls), text=text, thought=thought)

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        return osworld(call, context) if self.mode == "osworld" else ours(call, context)


def qwen_vl(config: AgentConfig) -> QwenVLAgent:
    """The ``qwen-vl`` agent: Qwen3-VL-8B-Instruct on the server at ``--agent-arg base_url``."""
    return QwenVLAgent(config)
