"""``ui-tars``: ByteDance's UI-TARS-1.5 (and UI-TARS 1.0) and its action grammar.

The model answers ``Thought: ...`` then ``Action: click(start_box='(x,y)')``; one action per
line (several lines are a batch). Its functions: ``click``, ``left_double``,
``right_single``, ``hover``, ``drag(start_box, end_box)``, ``hotkey(key='ctrl c')``,
``press``, ``keydown``, ``keyup``, ``type(content=...)`` (a final ``\\n`` submits),
``scroll(start_box, direction)``, ``wait()``, ``finished(content=...)`` (DONE) and
``call_user()``, which here ends the episode as FAIL: the model asks for help when it
cannot go on, which on a benchmark means the task is infeasible. Boxes may be written
``(x,y)``, ``(x1,y1,x2,y2)`` (the centre), with ``<|box_start|>`` tokens or as
``<point>x y</point>``.

Coordinates (``--agent-arg coordinates=``): ``smart_resize`` (UI-TARS-1.5, the default)
are pixels of the screenshot resized with factor 28 and at most 16384 patches, which is
the image sent; ``relative`` (UI-TARS 1.0) are on a 0-1000 grid.
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

DEFAULT_MODEL = "ByteDance-Seed/UI-TARS-1.5-7B"
#: smart_resize of UI-TARS-1.5: factor, min and max pixels
SMART_RESIZE = (28, 100 * 28 * 28, 16384 * 28 * 28)
SCROLL_CLICKS = 5
WAIT_S = 5.0
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")

PROMPT = """You are a GUI agent on an Ubuntu desktop (GNOME). You get a task and screenshots; \
answer each with your reasoning and the next action, exactly in this format:

Thought: (what you see and what to do next)
Action: (one action; several actions go on separate lines)

Actions:
click(start_box='(x,y)')
left_double(start_box='(x,y)')
right_single(start_box='(x,y)')
hover(start_box='(x,y)')
drag(start_box='(x1,y1)', end_box='(x2,y2)')
hotkey(key='ctrl c')  # keys separated by spaces, lowercase
press(key='enter')
type(content='text')  # end with \\n to submit
scroll(start_box='(x,y)', direction='down')  # up, down, left or right
wait()  # 5 seconds
finished(content='summary')  # the task is done
call_user()  # the task cannot be done on this computer

The home folder is /home/user; the sudo password is '{password}'."""


def _box(value: Any, name: str) -> tuple[float, float]:
    """The point of a box string: ``(x,y)``, or the centre of ``(x1,y1,x2,y2)``."""
    numbers = [float(n) for n in _NUMBER.findall(str(value))]
    if len(numbers) == 2:
        return numbers[0], numbers[1]
    if len(numbers) == 4:
        return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    raise ActionParseError(f"{name}={value!r} is not a point (x,y) or a box (x1,y1,x2,y2)")


def parse_answer(text: str) -> tuple[str, list[ToolCall]]:
    """The thought and the calls of an answer; :class:`ActionParseError` if it has no action."""
    thought_part, sep, action_part = text.partition("Action:")
    if not sep:
        raise ActionParseError("the answer has no 'Action:' line")
    thought = re.sub(r"^\s*(Thought|Reflection|Action_Summary):\s*", "", thought_part.strip())
    calls = []
    for index, line in enumerate(l.strip() for l in action_part.strip().splitlines()):  # noqa: E741
        if not line:
            continue
        line = re.sub(r"<point>\s*(-?[\d.]+)\s+(-?[\d.]+)\s*</point>", r"(\1,\2)", line).replace(
            "point=", "start_box="
        )
        line = line.replace("start_point=", "start_box=").replace("end_point=", "end_box=")
        try:
            node = ast.parse(line, mode="eval").body
        except SyntaxError:
            raise ActionParseError(f"cannot read the action {line!r}") from None
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            raise ActionParseError(f"{line!r} is not an action call such as click(start_box='(x,y)')")
        try:
            args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        except ValueError:
            raise ActionParseError(f"the arguments of {line!r} must be plain strings") from None
        calls.append(ToolCall(str(index), node.func.id, args))
    if not calls:
        raise ActionParseError("the 'Action:' line is empty")
    return thought, calls


CLICKS = {
    "click": ("left", 1),
    "left_single": ("left", 1),
    "left_double": ("left", 2),
    "right_single": ("right", 1),
}
DIRECTIONS = {"down": (1, 0), "up": (-1, 0), "right": (0, 1), "left": (0, -1)}


def ours(call: ToolCall, context: Context) -> Outcome:
    """The desktop actions of one UI-TARS action."""
    name, args = call.name, call.args

    def point(key: str = "start_box") -> tuple[int, int]:
        if key not in args:
            raise ActionParseError(f"{name} needs {key}")
        return context.point(*_box(args[key], key))

    if name in CLICKS:
        button, count = CLICKS[name]
        return Outcome(call, [commands.click(point(), button, count)])
    if name == "hover":
        return Outcome(call, [commands.move(point())])
    if name == "drag":
        return Outcome(call, [commands.drag([point(), point("end_box")])])
    if name in ("hotkey", "press", "keydown", "keyup"):
        keys = pyautogui_keys(str(args.get("key", args.get("hotkey", ""))).split())
        if name == "hotkey" or name == "press":
            return Outcome(call, [commands.keys(keys)])
        return Outcome(call, [commands.key_state(keys, name == "keydown")])
    if name == "type":
        return Outcome(call, [commands.type_text(str(args.get("content", "")))])
    if name == "scroll":
        direction = str(args.get("direction", "down")).lower()
        if direction not in DIRECTIONS:
            raise ActionParseError(f"scroll direction {direction!r} is not up, down, left or right")
        down, right = DIRECTIONS[direction]
        at = point() if "start_box" in args else None
        return Outcome(call, [commands.scroll(at, down * SCROLL_CLICKS, right * SCROLL_CLICKS)])
    if name == "wait":
        return Outcome(call, [commands.wait(WAIT_S)])
    raise ActionParseError(f"unknown action {name!r}")


#: OSWorld's key renames for hotkeys.
OSWORLD_KEYS = {
    "arrowleft": "left",
    "arrowright": "right",
    "arrowup": "up",
    "arrowdown": "down",
    "space": " ",
}


def _scaled(context: Context, x: float, y: float) -> tuple[int, int]:
    """OSWorld's scaling: proportional, rounded, unchecked."""
    frame = context.frame
    return round(x * frame.screen[0] / frame.space[0]), round(y * frame.screen[1] / frame.space[1])


def osworld(call: ToolCall, context: Context) -> Outcome:
    """One action as OSWorld's UI-TARS-1.5 agent maps it (clipboard typing, no checks)."""
    name, args = call.name, call.args
    code: list[str] = []
    sx, sy = _scaled(context, *_box(args["start_box"], "start_box")) if "start_box" in args else (0, 0)
    if name in CLICKS:
        verb = {"left_double": "doubleClick"}.get(name, "click")
        button = "right" if name == "right_single" else "left"
        code.append(f"pyautogui.{verb}({sx}, {sy}, button={button!r})")
    elif name == "hover":
        code.append(f"pyautogui.moveTo({sx}, {sy})")
    elif name == "drag":
        ex, ey = _scaled(context, *_box(args.get("end_box"), "end_box"))
        code += [f"pyautogui.moveTo({sx}, {sy})", f"pyautogui.dragTo({ex}, {ey}, duration=0.5)"]
    elif name in ("hotkey", "press"):
        keys = [OSWORLD_KEYS.get(k, k) for k in str(args.get("key", "")).lower().split()]
        code.append(f"pyautogui.hotkey({', '.join(repr(k) for k in keys)})")
    elif name == "type":
        content = str(args.get("content", ""))
        code += [
            "import pyperclip",
            f"pyperclip.copy({content.rstrip(chr(10))!r})",
            "pyautogui.hotkey('ctrl', 'v')",
        ]
        if content.endswith("\n"):
            code.append("pyautogui.press('enter')")
    elif name == "scroll":
        amount = 5 if str(args.get("direction", "")).lower() == "up" else -5
        code.append(
            f"pyautogui.scroll({amount}, x={sx}, y={sy})"
            if "start_box" in args
            else f"pyautogui.scroll({amount})"
        )
    elif name == "wait":
        return Outcome(call, [Action(kind="WAIT")])
    else:
        raise ActionParseError(f"unknown action {name!r}")
    return Outcome(call, [Action(kind="code", code="\n".join(("import pyautogui", *code)))])


class UITarsAgent(ChatNativeAgent):
    """UI-TARS on an OpenAI-compatible server."""

    default_model = DEFAULT_MODEL
    extra_args: ClassVar[Mapping[str, str]] = {**ChatNativeAgent.extra_args, "coordinates": "smart_resize"}
    #: OSWorld's agent answers WAIT to call_user() this many times, then FAIL.
    OSWORLD_CALL_USER_TOLERANCE = 3

    def __init__(self, config: AgentConfig) -> None:
        super().__init__(config, defaults={"history": "5", "max_tokens": "500"})
        self.coordinates = self.args.text("coordinates")
        if self.coordinates not in ("smart_resize", "relative"):
            raise AgentConfigError(
                f"agent {config.name!r}: --agent-arg coordinates must be smart_resize or relative"
            )
        self._calls_to_user = 0

    def frame(self, screen: tuple[int, int]) -> Frame:
        """smart_resize pixels (UI-TARS-1.5) or the 0-1000 grid (UI-TARS 1.0)."""
        if self.coordinates == "relative":
            return grid(screen, screen, 1000)
        return smart(screen, *SMART_RESIZE)

    def _forget(self) -> None:
        super()._forget()
        self._calls_to_user = 0

    def _system(self, screen: Screen) -> str:
        return PROMPT.format(password=self.config.client_password)

    def _parse(self, text: str) -> Reply:
        try:
            thought, calls = parse_answer(text)
        except ActionParseError as exc:
            return Reply(text=text, error=str(exc))
        names = [c.name for c in calls]
        for end in ("finished", "call_user", "error_env"):
            if end in names:
                kept = tuple(calls[: names.index(end)])
                return Reply(calls=kept, text=text, thought=thought, ending=self._end(end))
        return Reply(calls=tuple(calls), text=text, thought=thought)

    def _end(self, name: str) -> Action:
        if name == "finished":
            return Action(kind="DONE")
        if name == "call_user" and self.mode == "osworld":
            self._calls_to_user += 1
            return Action(kind="WAIT" if self._calls_to_user < self.OSWORLD_CALL_USER_TOLERANCE else "FAIL")
        return Action(kind="FAIL")

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        return osworld(call, context) if self.mode == "osworld" else ours(call, context)


def ui_tars(config: AgentConfig) -> UITarsAgent:
    """The ``ui-tars`` agent: UI-TARS-1.5-7B on the server at ``--agent-arg base_url``."""
    return UITarsAgent(config)
