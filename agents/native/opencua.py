"""``opencua``: OpenCUA's models, which answer with pyautogui code.

The model writes ``## Thought``, ``## Action`` and a ``python`` code block of pyautogui
calls, or ``computer.triple_click(x, y)``, ``computer.wait()`` and
``computer.terminate(status='success' | 'failure')`` (DONE or FAIL). The code is not run as
written: each call is read (``ast``), its coordinates mapped to the screen and its keys
checked, and it becomes the same call on the desktop; any other statement is a step error.
With ``parse=osworld`` the calls pass unchecked, coordinates projected, as OSWorld's agent
passes them.

Coordinates (``--agent-arg coordinates=``): ``absolute`` (OpenCUA-7B and -32B, built on
Qwen2.5-VL: pixels of the screenshot resized by smart_resize, factor 28) or ``relative``
(OpenCUA-A3B: fractions of the screen from 0 to 1); ``auto`` picks by the model's name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from pytest_osworld.agent.actions import Action, ActionParseError
from pytest_osworld.agent.contract import AgentConfig

from ..llm import AgentConfigError
from . import commands
from .base import Context, Outcome, Reply, Screen, ToolCall
from .chat import ChatNativeAgent
from .geometry import Frame, grid, smart
from .keys import pyautogui_keys

DEFAULT_MODEL = "xlangai/OpenCUA-7B"
SMART_RESIZE = (28, 3136, 12845056)
_BLOCK = re.compile(r"```(?:python)?\s*\n(.*?)```", re.DOTALL)
#: pyautogui functions with a point: name -> (button, clicks); None: a move or drag
POINTED: dict[str, tuple[str, int] | None] = {
    "click": ("left", 1),
    "doubleClick": ("left", 2),
    "tripleClick": ("left", 3),
    "rightClick": ("right", 1),
    "middleClick": ("middle", 1),
    "triple_click": ("left", 3),
    "moveTo": None,
    "dragTo": None,
}

PROMPT = """You are a GUI agent on an Ubuntu desktop (GNOME), working on a task from screenshots. \
The home folder is /home/user; the sudo password is '{password}'.

Answer every screenshot in this format:

## Thought
(what you see, and what to do next)

## Action
(the next action in a sentence)

## Code
```python
(pyautogui calls, such as pyautogui.click(x=100, y=200) or pyautogui.hotkey('ctrl', 's'))
```

Besides pyautogui you have computer.triple_click(x=..., y=...), computer.wait() and \
computer.terminate(status='success') when the task is done, or \
computer.terminate(status='failure') when it cannot be done on this computer. {coordinates}"""

COORDINATES = {
    "absolute": "Coordinates are pixels of the screenshot.",
    "relative": "Coordinates are fractions of the screen's width and height, from 0 to 1.",
}


def parse_code(text: str) -> list[ToolCall]:
    """The calls of the answer's last code block, as ``module.function`` calls with their arguments."""
    blocks = _BLOCK.findall(text)
    if not blocks:
        raise ActionParseError("the answer has no ```python code block")
    try:
        tree = ast.parse(blocks[-1])
    except SyntaxError as exc:
        raise ActionParseError(f"the code block is not Python: {exc.msg} (line {exc.lineno})") from None
    calls = []
    for index, statement in enumerate(tree.body):
        if isinstance(statement, ast.Import | ast.ImportFrom):
            continue
        node = statement.value if isinstance(statement, ast.Expr) else None
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
        ):
            raise ActionParseError(f"line {statement.lineno}: only pyautogui.* and computer.* calls are run")
        owner = node.func.value.id
        if owner not in ("pyautogui", "computer"):
            raise ActionParseError(
                f"line {statement.lineno}: {owner}.{node.func.attr} is not a pyautogui or computer call"
            )
        try:
            args: dict[str, Any] = {"*": [ast.literal_eval(a) for a in node.args]}
            args.update({kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg})
        except ValueError:
            raise ActionParseError(f"line {statement.lineno}: arguments must be plain values") from None
        calls.append(ToolCall(str(index), f"{owner}.{node.func.attr}", args))
    return calls


def _arg(call: ToolCall, position: int, name: str, default: Any = None) -> Any:
    positional = call.args.get("*", [])
    if name in call.args:
        return call.args[name]
    if len(positional) > position:
        return positional[position]
    if default is None:
        raise ActionParseError(f"{call.name} needs {name}")
    return default


def _xy(call: ToolCall, context: Context) -> tuple[int, int]:
    x, y = _arg(call, 0, "x"), _arg(call, 1, "y")
    if isinstance(x, list | tuple):  # pyautogui.click((x, y))
        x, y = x
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
        raise ActionParseError(f"{call.name}: x and y must be numbers")
    return context.point(x, y)


def _keys(value: Any) -> list[str]:
    names = value if isinstance(value, list) else [value]
    if not all(isinstance(k, str) for k in names):
        raise ActionParseError(f"key names must be strings, got {value!r}")
    return pyautogui_keys(names)


def ours(call: ToolCall, context: Context) -> Outcome:
    """The desktop action of one call, coordinates mapped and keys checked."""
    owner, _, function = call.name.partition(".")
    positional = call.args.get("*", [])
    if function in POINTED and (owner == "pyautogui" or function == "triple_click"):
        start = context.pointer
        point = _xy(call, context)
        kind = POINTED[function]
        if function == "moveTo":
            return Outcome(call, [commands.move(point)])
        if kind is None:
            if start is None:
                raise ActionParseError("dragTo starts where the pointer is: move it there first (moveTo)")
            return Outcome(call, [commands.drag([start, point])])
        button = str(call.args.get("button", kind[0]))
        clicks = int(call.args.get("clicks", kind[1]))
        return Outcome(call, [commands.click(point, button, clicks)])
    if owner == "pyautogui":
        if function in ("write", "typewrite"):
            text = _arg(call, 0, "message")
            if isinstance(text, list):
                return Outcome(call, [commands.keys([k]) for k in _keys(text)])
            return Outcome(call, [commands.type_text(str(text))])
        if function == "press":
            keys = _keys(_arg(call, 0, "keys"))
            presses = int(call.args.get("presses", 1))
            return Outcome(call, [commands.keys([key]) for _ in range(presses) for key in keys])
        if function == "hotkey":
            return Outcome(call, [commands.keys(_keys(list(positional)))])
        if function in ("keyDown", "keyUp"):
            return Outcome(call, [commands.key_state(_keys(_arg(call, 0, "key")), function == "keyDown")])
        if function in ("mouseDown", "mouseUp"):
            return Outcome(
                call, [commands.press_button(function == "mouseDown", str(call.args.get("button", "left")))]
            )
        if function in ("scroll", "hscroll"):
            clicks = int(_arg(call, 0, "clicks"))
            x, y = (
                call.args.get("x", positional[1] if len(positional) > 2 else None),
                call.args.get("y", positional[2] if len(positional) > 2 else None),
            )
            at = context.point(x, y) if x is not None and y is not None else None
            down, right = (-clicks, 0) if function == "scroll" else (0, clicks)
            return Outcome(call, [commands.scroll(at, down, right)])
    if call.name == "computer.wait":
        return Outcome(call, [commands.wait(float(_arg(call, 0, "seconds", 3)))])
    raise ActionParseError(f"{call.name} is not an action of this desktop")


# -- parse=osworld: OSWorld's OpenCUAAgent (desktop-env 1.0.2) ---------------------------------

_OSWORLD_ACTION = re.compile(r"^##\s*Action\s*:?[\n\r]+(.*?)(?=^##|\Z)", re.DOTALL | re.MULTILINE)
_OSWORLD_BLOCK = re.compile(r"```(?:code|python)?\s*(.*?)\s*```", re.DOTALL | re.IGNORECASE)
#: A pyautogui call up to its first closing parenthesis, as OSWorld's agent finds them.
_OSWORLD_CALL = re.compile(r"(pyautogui\.\w+\([^\)]*\))")
_OSWORLD_PARTS = re.compile(r"(pyautogui\.\w+)\((.*)\)", re.DOTALL)
#: The parameters OSWorld's agent reads positional arguments into, per function.
OSWORLD_PARAMETERS = {
    "click": ("x", "y", "clicks", "interval", "button", "duration", "pause"),
    "rightClick": ("x", "y", "duration", "tween", "pause"),
    "middleClick": ("x", "y", "duration", "tween", "pause"),
    "doubleClick": ("x", "y", "interval", "button", "duration", "pause"),
    "tripleClick": ("x", "y", "interval", "button", "duration", "pause"),
    "moveTo": ("x", "y", "duration", "tween", "pause"),
    "dragTo": ("x", "y", "duration", "button", "mouseDownUp", "pause"),
}


def parse_code_osworld(text: str) -> tuple[str, str]:
    """The answer as OSWorld's OpenCUA agent reads it: ``("WAIT"|"DONE"|"FAIL", "")`` or
    ``("code", block)`` with the last code block as it is.

    ``computer.wait`` anywhere in the block is WAIT; ``computer.terminate`` is FAIL when
    the block has ``fail`` in it, else DONE with ``success``. :class:`ActionParseError`
    where OSWorld's agent finds no action (no block, no ``## Action`` section, a terminate
    without a status): it asks again, then FAIL.
    """
    found = _OSWORLD_ACTION.search(text)
    action = found.group(1).strip() if found else None
    blocks = _OSWORLD_BLOCK.findall(text)
    if not blocks:
        raise ActionParseError("the answer has no code block")
    block = blocks[-1].strip()
    lower = block.lower()
    if "computer.wait" in lower:
        if action is None:
            raise ActionParseError("the answer has no '## Action' section")
        kind, said = "WAIT", action
    elif "computer.terminate" in lower:
        if "fail" not in lower and "success" not in lower:
            raise ActionParseError("computer.terminate without a status")
        kind, said = ("FAIL" if "fail" in lower else "DONE"), block
    else:
        if not action:
            raise ActionParseError("the answer has no '## Action' section")
        _project(block, grid((1000, 1000), (1000, 1000), 1))  # raises where OSWorld's does
        kind, said = "code", action
    if "<Error>" in said:  # OSWorld's agent takes this for its own parse error
        raise ActionParseError("the answer holds '<Error>'")
    return kind, block if kind == "code" else ""


def _project_point(x: float, y: float, frame: Frame) -> tuple[int, int]:
    """OSWorld's projection: fractions of the screen (``relative``), or smart_resize pixels,
    where a point inside [0, 1] counts as fractions of the *resized* image."""
    (width, height), (space_w, space_h) = frame.screen, frame.space
    if (space_w, space_h) == (1, 1):
        return round(x * width), round(y * height)
    if 0 <= x <= 1 and 0 <= y <= 1:
        return round(x * space_w), round(y * space_h)
    return int(x / space_w * width), int(y / space_h * height)


def _shown(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)


def _project(code: str, frame: Frame) -> str:
    """``code`` with the points of its pyautogui calls projected to the screen, the way
    OSWorld's agent rewrites them (the call written anew; code it cannot read left as is)."""
    rewritten = code
    for whole in _OSWORLD_CALL.findall(code):
        parts = _OSWORLD_PARTS.match(whole)
        if not parts:
            continue
        function, inside = parts.group(1), parts.group(2)
        try:
            node = ast.parse(f"func({inside})").body[0].value  # type: ignore[attr-defined]
        except SyntaxError:
            return code
        names = OSWORLD_PARAMETERS.get(function.split(".")[-1], ())
        values: dict[Any, Any] = {}
        try:
            for name, arg in zip(names, node.args, strict=False):
                values[name] = ast.literal_eval(arg)
        except Exception as exc:
            raise ActionParseError(f"{whole}: {exc}") from None
        try:
            for keyword in node.keywords:
                values[keyword.arg] = ast.literal_eval(keyword.value)
        except Exception:
            return code
        if "x" not in values or "y" not in values:
            continue
        try:
            values["x"], values["y"] = _project_point(float(values["x"]), float(values["y"]), frame)
        except ValueError:
            continue
        except Exception as exc:
            raise ActionParseError(f"{whole}: {exc}") from None
        shown = []
        for name in names:
            if name not in values:
                break
            shown.append(_shown(values[name]))
        used = set(names[: len(shown)])
        shown += [f"{k.arg}={_shown(values[k.arg])}" for k in node.keywords if k.arg not in used]
        rewritten = rewritten.replace(whole, f"{function}({', '.join(shown)})")
    return rewritten


def osworld(call: ToolCall, context: Context) -> Outcome:
    """The answer's code block as OSWorld's OpenCUA agent passes it: one script, its
    pyautogui points projected (``computer.triple_click`` and any other code as written)."""
    if call.name != "code":
        raise ActionParseError(f"{call.name}: not an answer read with parse=osworld")
    return Outcome(call, [Action(kind="code", code=_project(str(call.args["code"]), context.frame))])


class OpenCUAAgent(ChatNativeAgent):
    """An OpenCUA model on an OpenAI-compatible server."""

    default_model = DEFAULT_MODEL
    extra_args: ClassVar[Mapping[str, str]] = {**ChatNativeAgent.extra_args, "coordinates": "auto"}
    #: OSWorld's agent asks five times for an answer it cannot read, then answers FAIL.
    osworld_attempts = 5
    osworld_given_up = "FAIL"

    def __init__(self, config: AgentConfig) -> None:
        super().__init__(config, defaults={"history": "3", "max_tokens": "2048"})
        coordinates = self.args.text("coordinates")
        if coordinates == "auto":
            coordinates = "relative" if "a3b" in self.model.lower() else "absolute"
        if coordinates not in COORDINATES:
            raise AgentConfigError(
                f"agent {config.name!r}: --agent-arg coordinates must be auto, absolute or relative"
            )
        self.coordinates = coordinates

    def frame(self, screen: tuple[int, int]) -> Frame:
        """smart_resize pixels, or fractions of the screen."""
        if self.coordinates == "absolute":
            return smart(screen, *SMART_RESIZE)
        return grid(screen, screen, 1)

    def _system(self, screen: Screen) -> str:
        return PROMPT.format(password=self.config.client_password, coordinates=COORDINATES[self.coordinates])

    def _osworld_again(self, request: dict[str, Any]) -> dict[str, Any]:
        # OSWorld's agent asks again at a temperature of at least 0.2
        return {**request, "temperature": max(0.2, float(request.get("temperature") or 0))}

    def _parse(self, text: str) -> Reply:
        thought = text.split("## Code", 1)[0].strip()
        if self.mode == "osworld":
            try:
                kind, block = parse_code_osworld(text)
            except ActionParseError as exc:
                return Reply(text=text, thought=thought, error=str(exc))
            if kind != "code":
                return Reply(text=text, thought=thought, ending=Action(kind=kind))  # type: ignore[arg-type]
            return Reply(calls=(ToolCall("0", "code", {"code": block}),), text=text, thought=thought)
        try:
            calls = parse_code(text)
        except ActionParseError as exc:
            return Reply(text=text, thought=thought, error=str(exc))
        names = [c.name for c in calls]
        if "computer.terminate" in names:
            end = calls[names.index("computer.terminate")]
            status = end.args.get("status", (end.args.get("*") or ["success"])[0])
            kept = tuple(calls[: names.index("computer.terminate")])
            return Reply(
                calls=kept,
                text=text,
                thought=thought,
                ending=Action(kind="FAIL" if status == "failure" else "DONE"),
            )
        return Reply(calls=tuple(calls), text=text, thought=thought)

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        return osworld(call, context) if self.mode == "osworld" else ours(call, context)


def opencua(config: AgentConfig) -> OpenCUAAgent:
    """The ``opencua`` agent: OpenCUA-7B on the server at ``--agent-arg base_url``."""
    return OpenCUAAgent(config)
