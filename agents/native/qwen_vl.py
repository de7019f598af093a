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


# -- parse=osworld: OSWorld's Qwen3VLAgent and Qwen25VLAgent (desktop-env 1.0.2) ------------

#: Lines OSWorld's agents take for the action's description (and skip), per model.
OSWORLD_INSTRUCTION_LINES = {
    "qwen3": ("action:",),
    "qwen2.5": ("action:", "step", "i will", "i'll", "now i"),
}
#: Lines that open a tool call, per model (Qwen2.5's agent also takes two stray symbols).
OSWORLD_OPENERS = {"qwen3": ("<tool_call>",), "qwen2.5": ("<tool_call>", "\u2697", "\U0001f4d0")}
#: computer_use actions OSWorld's agents write as one pyautogui call at the coordinate.
OSWORLD_POINTED = {
    "left_click": "click",
    "right_click": "rightClick",
    "middle_click": "middleClick",
    "double_click": "doubleClick",
}


def parse_calls_osworld(text: str, model: str) -> tuple[str, list[ToolCall]]:
    """The description and the ``computer_use`` calls of an answer as OSWorld's agent for
    ``model`` (``qwen3`` or ``qwen2.5``) reads it: line by line, a call's JSON on the lines
    between ``<tool_call>`` and ``</tool_call>`` (the rest of the opening line dropped) or on
    one line of its own; unreadable JSON, other tools and calls without an action skipped.
    :class:`ActionParseError` where OSWorld's agent raises (a call that is not an object,
    arguments that are not one).
    """
    instruction = ""
    blocks: list[str] = []
    inside, current = False, list[str]()
    for line in (line.strip() for line in text.split("\n")):
        if not line:
            continue
        if line.lower().startswith(OSWORLD_INSTRUCTION_LINES[model]):
            if not instruction:
                instruction = line.split("Action:")[-1].strip() if model == "qwen3" else line
            continue
        if line.startswith(OSWORLD_OPENERS[model]):
            inside = True
        elif line.startswith("</tool_call>"):
            if current:
                blocks.append("\n".join(current))
                current = []
            inside = False
        elif inside:
            current.append(line)
        elif line.startswith("{") and line.endswith("}"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "name" in value and "arguments" in value:
                blocks.append(line)
    if current:
        blocks.append("\n".join(current))
    calls: list[ToolCall] = []
    for block in blocks:
        try:
            value = json.loads(block)
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict):
            raise ActionParseError(f"a tool call that is not an object: {block[:80]!r}")
        if value.get("name") != "computer_use" or "arguments" not in value:
            continue
        args = value["arguments"]
        if not isinstance(args, dict):
            raise ActionParseError(f"computer_use arguments that are not an object: {args!r}")
        if "action" not in args:
            continue
        rest = {k: v for k, v in args.items() if k != "action"}
        calls.append(ToolCall(str(len(calls)), str(args["action"]), rest))
    return instruction, calls


def _osworld_xy(call: ToolCall, frame: Frame) -> tuple[int, int]:
    """OSWorld's scaling: the coordinate times screen / model space, truncated."""
    try:
        x, y = call.args["coordinate"]
        return int(x * (frame.screen[0] / frame.space[0])), int(y * (frame.screen[1] / frame.space[1]))
    except (TypeError, ValueError) as exc:
        raise ActionParseError(f"{call.name}: coordinate {call.args['coordinate']!r} ({exc})") from None


def _osworld_key(key: Any) -> Any:
    """OSWorld's clean-up of a key name that looks like a piece of a list."""
    if not isinstance(key, str):
        return key
    if key.startswith("keys=["):
        key = key[6:]
    if key.endswith("]"):
        key = key[:-1]
    if key.startswith(("['", '["')):
        key = key[2:] if len(key) > 2 else key
    if key.endswith(("']", '"]')):
        key = key[:-2] if len(key) > 2 else key
    return key.strip()


def osworld(call: ToolCall, context: Context) -> Outcome:
    """One ``computer_use`` action as OSWorld's Qwen agents write it: coordinates scaled and
    truncated, keys and text between quotes as they are, scroll pixels as wheel clicks,
    ``wait`` WAIT, ``terminate`` DONE whatever its status; any other action (``hscroll``,
    ``triple_click``, ``answer``...) does nothing."""
    name, args, frame = call.name, call.args, context.frame
    if name in OSWORLD_POINTED:
        verb = OSWORLD_POINTED[name]
        code = (
            f"pyautogui.{verb}({'{}, {}'.format(*_osworld_xy(call, frame)) if 'coordinate' in args else ''})"
        )
    elif name == "type":
        code = f"pyautogui.typewrite('{args.get('text', '')}')"
    elif name == "key":
        keys = args.get("keys", [])
        if isinstance(keys, list):
            keys = [_osworld_key(k) for k in keys]
        try:
            shown = ", ".join(f"'{key}'" for key in keys)
            code = f"pyautogui.{'hotkey' if len(keys) > 1 else 'press'}({shown})"
        except TypeError:
            raise ActionParseError(f"key: 'keys' is {keys!r}") from None
    elif name == "scroll":
        code = f"pyautogui.scroll({args.get('pixels', 0)})"
    elif name == "wait":
        return Outcome(call, [Action(kind="WAIT")])
    elif name == "terminate":
        return Outcome(call, [Action(kind="DONE")])
    elif name == "mouse_move":
        code = "pyautogui.moveTo({}, {})".format(
            *(_osworld_xy(call, frame) if "coordinate" in args else (0, 0))
        )
    elif name == "left_click_drag":
        if "coordinate" in args:
            x, y = _osworld_xy(call, frame)
            code = f"pyautogui.dragTo({x}, {y}, duration={args.get('duration', 0.5)})"
        else:
            code = "pyautogui.dragTo(0, 0)"
    else:
        return Outcome(call)
    return Outcome(call, [Action(kind="code", code=code)])


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
        if self.mode == "osworld":
            return self._parse_osworld(text)
        thought = text.split("<tool_call>", 1)[0].strip()
        try:
            calls = parse_calls(text)
        except ActionParseError as exc:
            return Reply(text=text, thought=thought, error=str(exc))
        names = [c.name for c in calls]
        if "terminate" in names:
            end = calls[names.index("terminate")]
            failed = end.args.get("status") == "failure"
            kept = tuple(calls[: names.index("terminate")])
            return Reply(
                calls=kept, text=text, thought=thought, ending=Action(kind="FAIL" if failed else "DONE")
            )
        return Reply(calls=tuple(calls), text=text, thought=thought)

    def _parse_osworld(self, text: str) -> Reply:
        """The answer as OSWorld's agent reads it (:func:`parse_calls_osworld`): its calls
        map in order, ``wait`` and ``terminate`` among them; no call is no action."""
        model = "qwen2.5" if self.coordinates == "absolute" else "qwen3"
        try:
            instruction, calls = parse_calls_osworld(text, model)
        except ActionParseError as exc:
            return Reply(text=text, error=str(exc))
        if not instruction:
            # OSWorld's agent names the step after its first action's function, and raises
            # when that action is WAIT or DONE (no "pyautogui." in it)
            probe = Context(grid((1000, 1000), (1000, 1000), 1000), "osworld")
            for call in calls:
                try:
                    first = osworld(call, probe).actions
                except ActionParseError:
                    break
                if first and first[0].kind != "code":
                    return Reply(
                        text=text, error=f"OSWorld's agent raises on an answer that starts with {call.name}"
                    )
                if first:
                    break
        return Reply(calls=tuple(calls), text=text, thought=instruction)

    def _ending(self, reply: Reply) -> Action | None:
        if self.mode == "osworld":
            return None  # OSWorld's agent gives no action for an answer without a call
        return super()._ending(reply)

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        return osworld(call, context) if self.mode == "osworld" else ours(call, context)


def qwen_vl(config: AgentConfig) -> QwenVLAgent:
    """The ``qwen-vl`` agent: Qwen3-VL-8B-Instruct on the server at ``--agent-arg base_url``."""
    return QwenVLAgent(config)
