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


# -- parse=osworld: OSWorld's UITARSAgent (desktop-env 1.0.2, uitars15_v1) ------------------

#: A single quote not already escaped (OSWorld escapes these in typed text).
_UNESCAPED_QUOTE = re.compile(r"(?<!\\)'")
_TYPE_CONTENT = re.compile(r"type\(content='(.*?)'\)")
#: The functions that end OSWorld's turn (the calls before them are dropped).
OSWORLD_ENDINGS = ("finished", "wait", "error_env", "call_user")
#: OSWorld's renames of a whole ``hotkey`` string.
OSWORLD_HOTKEYS = {"arrowleft": "left", "arrowright": "right", "arrowup": "up", "arrowdown": "down"}
_HEADER = "import pyautogui\nimport time\n"


def _osworld_thought(text: str) -> str | None:
    """The thought OSWorld's parser reads (it goes into each action's code as a string)."""
    if text.startswith("Reflection:"):
        pattern = r"Reflection: (.+?)Action_Summary: (.+?)(?=\s*Action:|$)"
    elif text.startswith("Action_Summary:"):
        pattern = r"Action_Summary: (.+?)(?=\s*Action:|$)"
    else:
        pattern = r"Thought: (.+?)(?=\s*Action:|$)"
    match = re.search(pattern, text, re.DOTALL)
    return match.group(match.lastindex or 1).strip() if match else None


def parse_answer_osworld(text: str) -> tuple[str | None, list[ToolCall]]:
    """The thought and calls of an answer as OSWorld's parser reads it.

    Actions after ``Action:`` are separated by blank lines; each is read as one Python call
    with keyword arguments (positional ones dropped, non-literal ones None), the quotes of a
    ``type`` content escaped, ``start_box``/``end_box`` checked to be numbers. The calls'
    arguments are kept as OSWorld keeps them (strings), with the thought under ``_thought``.
    :class:`ActionParseError` where OSWorld's parser raises.
    """
    text = text.strip()
    thought = _osworld_thought(text)
    if "Action:" not in text:
        raise ActionParseError("the answer has no 'Action:'")
    calls = []
    for index, chunk in enumerate(text.split("Action:")[-1].split("\n\n")):
        if "type(content" in chunk:
            content = _TYPE_CONTENT.sub(lambda m: m.group(1), chunk)
            chunk = "type(content='" + _UNESCAPED_QUOTE.sub("\\\\'", content) + "')"
        source = chunk.replace("\n", "\\n").lstrip()
        try:
            node = ast.parse(source, mode="eval").body
        except (SyntaxError, ValueError):
            raise ActionParseError(f"cannot read the action {chunk.strip()!r}") from None
        if not isinstance(node, ast.Call):
            raise ActionParseError(f"{chunk.strip()!r} is not an action call")
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        inputs: dict[str, Any] = {}
        for keyword in node.keywords:
            value = keyword.value.value if isinstance(keyword.value, ast.Constant) else None
            if value == "":
                continue
            if not isinstance(value, str) or keyword.arg is None:
                raise ActionParseError(f"the arguments of {chunk.strip()!r} must be strings")
            inputs[keyword.arg] = value.lstrip()
            if "start_box" in keyword.arg or "end_box" in keyword.arg:
                try:
                    _numbers(inputs[keyword.arg])
                except ValueError:
                    raise ActionParseError(f"{keyword.arg}={value!r} is not a list of numbers") from None
        calls.append(ToolCall(str(index), name, {**inputs, "_thought": thought}))
    return thought, calls


def _numbers(box: str) -> list[float]:
    return [float(n) for n in box.replace("(", "").replace(")", "").split(",")]


def _osworld_box(box: str, frame: Frame) -> list[float]:
    """OSWorld's box: fractions of the model's space, a point repeated as ``[x, y, x, y]``."""
    numbers = [n / frame.space[i % 2] for i, n in enumerate(_numbers(box))]
    return numbers * 2 if len(numbers) == 2 else numbers


def _centre(box: list[float], frame: Frame) -> tuple[float, float]:
    """The screen point of a box as OSWorld computes it (rounded to 3 decimals)."""
    if len(box) == 4:
        x1, y1, x2, y2 = box
    elif len(box) == 2:
        x1, y1 = x2, y2 = box
    else:
        raise ActionParseError(f"a box of {len(box)} numbers (OSWorld's agent raises on it)")
    return round(float((x1 + x2) / 2) * frame.screen[0], 3), round(float((y1 + y2) / 2) * frame.screen[1], 3)


def osworld(call: ToolCall, context: Context) -> Outcome:
    """One action as OSWorld's UI-TARS-1.5 agent writes it: one script per action, which
    starts with the thought in a string; text pasted through the clipboard; unknown
    functions a comment; ``press`` raises there, so it is refused here."""
    name, args, frame = call.name, call.args, context.frame
    code = _HEADER + f"'''\nObservation:\n\n\nThought:\n{args.get('_thought')}\n'''\n"
    if name == "hotkey":
        hotkey = args.get("key", "") if "key" in args else args.get("hotkey", "")
        hotkey = OSWORLD_HOTKEYS.get(hotkey, hotkey)
        if hotkey:
            keys = [" " if key == "space" else key for key in hotkey.split()]
            code += f"\npyautogui.hotkey({', '.join(repr(k) for k in keys)})"
    elif name == "press":
        raise ActionParseError("press: OSWorld's agent raises on it (UnboundLocalError)")
    elif name in ("keyup", "keydown"):
        verb = "keyUp" if name == "keyup" else "keyDown"
        code += f"\npyautogui.{verb}({args.get('key', '')!r})"
    elif name == "type":
        content = _UNESCAPED_QUOTE.sub("\\\\'", args.get("content", ""))
        submit = content.endswith("\n") or content.endswith("\\n")
        stripped = content.rstrip("\\n").rstrip("\n") if submit else content
        if content:
            # between quotes as it is: a line break in it makes the script invalid there
            code += f"\nimport pyperclip\npyperclip.copy('{stripped}')"
            code += "\npyautogui.hotkey('ctrl', 'v')\ntime.sleep(0.5)\n"
            if submit:
                code += "\npyautogui.press('enter')"
    elif name in ("drag", "select"):
        if args.get("start_box") and args.get("end_box"):
            start, end = _osworld_box(args["start_box"], frame), _osworld_box(args["end_box"], frame)
            if len(start) != 4 or len(end) != 4:
                raise ActionParseError(
                    f"{name}: a box of {len(start)} numbers (OSWorld's agent raises on it)"
                )
            (sx, sy), (ex, ey) = _centre(start, frame), _centre(end, frame)
            code += f"\npyautogui.moveTo({sx}, {sy})\n\npyautogui.dragTo({ex}, {ey}, duration=1.0)\n"
    elif name == "scroll":
        at = ""
        if args.get("start_box"):
            box = _osworld_box(args["start_box"], frame)
            if len(box) != 4:
                raise ActionParseError(f"scroll: a box of {len(box)} numbers (OSWorld's agent raises on it)")
            x, y = _centre(box, frame)
            at = f", x={x}, y={y}"
        direction = str(args.get("direction", "")).lower()
        if "up" in direction:
            code += f"\npyautogui.scroll(5{at})"
        elif "down" in direction:
            code += f"\npyautogui.scroll(-5{at})"
    elif name in ("click", "left_single", "left_double", "right_single", "hover"):
        if "start_box" not in args:
            raise ActionParseError(f"{name} without start_box (OSWorld's agent raises on it)")
        x, y = _centre(_osworld_box(args["start_box"], frame), frame)
        code += {
            "left_double": f"\npyautogui.doubleClick({x}, {y}, button='left')",
            "right_single": f"\npyautogui.click({x}, {y}, button='right')",
            "hover": f"\npyautogui.moveTo({x}, {y})",
        }.get(name, f"\npyautogui.click({x}, {y}, button='left')")
    elif name == "finished":
        return Outcome(call, [Action(kind="DONE")])
    else:
        code += f"\n# Unrecognized action type: {name or None}"
    return Outcome(call, [Action(kind="code", code=code)])


class UITarsAgent(ChatNativeAgent):
    """UI-TARS on an OpenAI-compatible server."""

    default_model = DEFAULT_MODEL
    extra_args: ClassVar[Mapping[str, str]] = {**ChatNativeAgent.extra_args, "coordinates": "smart_resize"}
    #: OSWorld's agent answers WAIT to call_user() this many times, then FAIL.
    OSWORLD_CALL_USER_TOLERANCE = 3
    #: OSWorld's agent asks three times for an answer it cannot read, then answers DONE.
    osworld_attempts = 3
    osworld_given_up = "DONE"

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
        if self.mode == "osworld":
            return self._parse_osworld(text)
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

    def _osworld_again(self, request: dict[str, Any]) -> dict[str, Any]:
        return {**request, "temperature": 1.0}  # OSWorld's agent samples again at 1

    def _parse_osworld(self, text: str) -> Reply:
        """The answer as OSWorld's agent reads it: an ending drops the turn's other calls; a
        call before it that OSWorld's agent raises on is kept, so that it fails here too."""
        try:
            thought, calls = parse_answer_osworld(text)
        except ActionParseError as exc:
            return Reply(text=text, error=str(exc))
        probe = Context(grid((1000, 1000), (1000, 1000), 1000), "osworld")
        for index, call in enumerate(calls):
            if call.name in OSWORLD_ENDINGS:
                return Reply(text=text, thought=thought or "", ending=self._end(call.name))
            try:
                osworld(call, probe)
            except ActionParseError:
                return Reply(calls=tuple(calls[: index + 1]), text=text, thought=thought or "")
        return Reply(calls=tuple(calls), text=text, thought=thought or "")

    def _end(self, name: str) -> Action:
        if name == "finished":
            return Action(kind="DONE")
        if self.mode == "osworld" and name == "wait":
            return Action(kind="WAIT")
        # OSWorld's agent answers call_user() with WAIT this many times, then FAIL
        if (
            name == "call_user"
            and self.mode == "osworld"
            and self._calls_to_user < self.OSWORLD_CALL_USER_TOLERANCE
        ):
            self._calls_to_user += 1
            return Action(kind="WAIT")
        return Action(kind="FAIL")

    def _map(self, call: ToolCall, context: Context) -> Outcome:
        return osworld(call, context) if self.mode == "osworld" else ours(call, context)


def ui_tars(config: AgentConfig) -> UITarsAgent:
    """The ``ui-tars`` agent: UI-TARS-1.5-7B on the server at ``--agent-arg base_url``."""
    return UITarsAgent(config)
