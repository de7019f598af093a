"""Cases of the ``protocols`` parity level for the open models' text protocols: UI-TARS's
action grammar, Qwen-VL's ``<tool_call>`` blocks and OpenCUA's pyautogui code (whole answers;
see parity/protocol_cases.py)."""

from __future__ import annotations

import json
import random
from typing import Any

from parity.protocol_vocab import KEYS, TEXTS, new_case, pick

# -- UI-TARS ----------------------------------------------------------------------------------

UITARS_FUNCTIONS = (
    "click", "left_single", "left_double", "right_single", "hover", "drag", "select", "hotkey",
    "press", "keydown", "keyup", "type", "scroll", "wait", "finished", "call_user", "error_env",
    "long_press",
)  # fmt: skip


def _uitars_box(rng: random.Random, width: int, height: int) -> str:
    x, y = rng.randrange(0, width + 1), rng.randrange(0, height + 1)
    shapes = (
        f"({x},{y})",
        f"({x}, {y})",
        f"({x},{y},{min(width, x + 20)},{min(height, y + 10)})",
        f"<|box_start|>({x},{y})<|box_end|>",
        f"<point>{x} {y}</point>",
        f"({x}.5,{y})",
        f"({x})",
        "",
    )
    weights = (6, 2, 2, 1, 1, 1, 1, 1)
    return rng.choices(shapes, weights)[0]


def _uitars_action(rng: random.Random, width: int, height: int) -> str:
    name = pick(rng, UITARS_FUNCTIONS)
    box = _uitars_box(rng, width, height)
    if name in ("click", "left_single", "left_double", "right_single", "hover", "long_press"):
        return f"{name}(start_box='{box}')"
    if name in ("drag", "select"):
        return f"{name}(start_box='{box}', end_box='{_uitars_box(rng, width, height)}')"
    if name in ("hotkey", "press", "keydown", "keyup"):
        keys = " ".join(pick(rng, KEYS).lower() for _ in range(rng.choice((1, 2, 3))))
        return f"{name}(key='{keys}')"
    if name == "type":
        text = pick(rng, TEXTS).replace("\\", "\\\\").replace("\n", "\\n")
        return f"type(content='{text}')"
    if name == "scroll":
        direction = pick(rng, ("up", "down", "left", "right", "Down"))
        if rng.random() < 0.2:
            return f"scroll(direction='{direction}')"
        return f"scroll(start_box='{box}', direction='{direction}')"
    if name == "finished":
        return pick(rng, ("finished()", "finished(content='done')"))
    return f"{name}()"


def uitars_cases(rng: random.Random, count: int, relative: bool) -> list[dict[str, Any]]:
    """Hand-picked UI-TARS answers, then ``count`` random ones."""
    width, height = (1000, 1000) if relative else (1932, 1092)
    mid = f"({width // 2},{height // 2})"
    hand = [
        f"Thought: click the menu\nAction: click(start_box='{mid}')",
        f"Thought: click\nAction: click(start_box='<|box_start|>{mid}<|box_end|>')",
        "Thought: click\nAction: click(start_box='<point>500 500</point>')",
        "Thought: click a box\nAction: click(start_box='(100,200,300,400)')",
        f"Thought: double\nAction: left_double(start_box='{mid}')",
        f"Thought: right\nAction: right_single(start_box='{mid}')",
        f"Thought: hover\nAction: hover(start_box='{mid}')",
        "Thought: click nothing\nAction: click()",
        "Thought: drag\nAction: drag(start_box='(10,10)', end_box='(500,500)')",
        "Thought: drag\nAction: drag(start_box='(10,10)')",
        "Thought: select\nAction: select(start_box='(10,10)', end_box='(50,50)')",
        "Thought: copy\nAction: hotkey(key='ctrl c')",
        "Thought: copy\nAction: hotkey(key='Ctrl C')",
        "Thought: left\nAction: hotkey(key='arrowleft')",
        "Thought: left\nAction: hotkey(key='ctrl arrowleft')",
        "Thought: space\nAction: hotkey(key='space')",
        "Thought: empty\nAction: hotkey(key='')",
        "Thought: press\nAction: press(key='enter')",
        "Thought: hold\nAction: keydown(key='shift')",
        "Thought: release\nAction: keyup(key='shift')",
        "Thought: type\nAction: type(content='hello')",
        "Thought: type and submit\nAction: type(content='hello\\n')",
        "Thought: type two lines\nAction: type(content='one\\ntwo')",
        "Thought: quotes\nAction: type(content='it's fine')",
        "Thought: escaped\nAction: type(content='it\\'s fine')",
        "Thought: unicode\nAction: type(content='ünïcödé 日本')",
        "Thought: Lemon\nAction: type(content='Lemon\\n')",
        "Thought: empty\nAction: type(content='')",
        f"Thought: scroll\nAction: scroll(start_box='{mid}', direction='down')",
        f"Thought: scroll\nAction: scroll(start_box='{mid}', direction='up')",
        f"Thought: scroll\nAction: scroll(start_box='{mid}', direction='left')",
        "Thought: scroll\nAction: scroll(direction='down')",
        "Thought: wait\nAction: wait()",
        "Thought: done\nAction: finished(content='all done')",
        "Thought: done\nAction: finished()",
        "Thought: help\nAction: call_user()",
        "Thought: broken\nAction: error_env()",
        f"Thought: two\nAction: click(start_box='{mid}')\n\nhotkey(key='ctrl v')",
        f"Thought: two on one line each\nAction: click(start_box='{mid}')\nhotkey(key='ctrl v')",
        f"Thought: then done\nAction: click(start_box='{mid}')\n\nfinished()",
        f"Thought: then wait\nAction: click(start_box='{mid}')\n\nwait()",
        "Reflection: it failed Action_Summary: retry\nAction: click(start_box='(1,1)')",
        "Action_Summary: retry\nAction: click(start_box='(1,1)')",
        "Thought: has '''triple''' quotes\nAction: click(start_box='(1,1)')",
        "Thought: no action here",
        "Action: unknown_thing(start_box='(1,1)')",
        "Thought: x\nAction: click(start_box=5)",
        "Thought: x\nAction: click(start_box='(1,2,3)')",
        "Thought: x\nAction: pyautogui.click(start_box='(1,2)')",
        "Thought: x\nAction: click(start_box='(1,2)', start_box2='')",
        "",
    ]
    for _ in range(count):
        actions = [_uitars_action(rng, width, height) for _ in range(rng.choice((1, 1, 1, 2, 3)))]
        sep = "\n\n" if rng.random() < 0.85 else "\n"
        thought = pick(rng, ("look at the screen", "it's next", "step 2: open it", ""))
        hand.append(f"Thought: {thought}\nAction: " + sep.join(actions))
    protocol = "ui-tars-relative" if relative else "ui-tars"
    return [new_case(protocol, _uitars_kind(text), text) for text in hand]


def _uitars_kind(text: str) -> str:
    action = text.split("Action:")[-1].strip() if "Action:" in text else ""
    return action.split("(", 1)[0].strip() or "(none)"


# -- Qwen-VL's computer_use -------------------------------------------------------------------

QWEN_ACTIONS = (
    "key", "type", "mouse_move", "left_click", "right_click", "middle_click", "double_click",
    "triple_click", "left_click_drag", "scroll", "hscroll", "wait", "terminate", "answer", "zoom",
)  # fmt: skip


def _qwen_call(action: str | None, **args: Any) -> str:
    arguments = {"action": action, **args} if action is not None else args
    return json.dumps({"name": "computer_use", "arguments": arguments}, ensure_ascii=False)


def _qwen_block(call: str, rng: random.Random | None = None) -> str:
    if rng is not None and rng.random() < 0.1:
        return call  # a bare JSON line
    return f"<tool_call>\n{call}\n</tool_call>"


def _qwen_random_call(rng: random.Random, size: int) -> str:
    action = pick(rng, QWEN_ACTIONS)
    args: dict[str, Any] = {}
    pointed = action in QWEN_ACTIONS[2:9] or rng.random() < 0.1
    if pointed and rng.random() < 0.9:
        args["coordinate"] = pick(
            rng,
            (
                [rng.randrange(0, size), rng.randrange(0, size)],
                [rng.randrange(0, size), rng.randrange(0, size)],
                [rng.randrange(0, size) + 0.5, rng.randrange(0, size)],
                [size, size],
                [1, 2, 3],
                "12",
            ),
        )
    if action == "key":
        keys = [pick(rng, KEYS) for _ in range(rng.choice((1, 1, 2, 3)))]
        args["keys"] = pick(rng, (keys, keys, "+".join(keys), [f"keys=['{keys[0]}']"]))
    if action in ("type", "answer"):
        args["text"] = pick(rng, TEXTS)
    if action in ("scroll", "hscroll"):
        args["pixels"] = pick(rng, (-300, 300, -5, 5, 100, 0, 2.5))
    if action == "wait":
        args["time"] = pick(rng, (1, 2, 5))
    if action == "terminate":
        args["status"] = pick(rng, ("success", "failure"))
    if action == "left_click_drag" and rng.random() < 0.3:
        args["duration"] = pick(rng, (0.2, 1, "slow"))
    return _qwen_call(action, **args)


def qwen_cases(rng: random.Random, count: int, protocol: str) -> list[dict[str, Any]]:
    """Hand-picked Qwen-VL answers, then ``count`` random ones."""
    size = 999 if protocol == "qwen3-vl" else 1316
    b = _qwen_block
    hand = [
        b(_qwen_call("left_click", coordinate=[500, 500])),
        b(_qwen_call("left_click")),
        b(_qwen_call("left_click", coordinate=[999, 999])),
        b(_qwen_call("left_click", coordinate=[0, 0])),
        b(_qwen_call("left_click", coordinate=[10.7, 20.2])),
        b(_qwen_call("right_click", coordinate=[300, 400])),
        b(_qwen_call("right_click")),
        b(_qwen_call("middle_click", coordinate=[300, 400])),
        b(_qwen_call("double_click", coordinate=[300, 400])),
        b(_qwen_call("double_click")),
        b(_qwen_call("triple_click", coordinate=[300, 400])),
        b(_qwen_call("mouse_move", coordinate=[1, 2])),
        b(_qwen_call("mouse_move")),
        b(_qwen_call("left_click_drag", coordinate=[600, 700])),
        b(_qwen_call("left_click_drag", coordinate=[600, 700], duration=2)),
        b(_qwen_call("left_click_drag")),
        b(_qwen_call("key", keys=["ctrl", "c"])),
        b(_qwen_call("key", keys=["Return"])),
        b(_qwen_call("key", keys=["ctrl", "Page_Down"])),
        b(_qwen_call("key", keys=["super"])),
        b(_qwen_call("key", keys=["KP_0"])),
        b(_qwen_call("key", keys=["keys=['ctrl'", "'a']"])),
        b(_qwen_call("key", keys=["['enter']"])),
        b(_qwen_call("key", keys=[])),
        b(_qwen_call("key", keys="ctrl+c")),
        b(_qwen_call("key", keys=[1, "a"])),
        b(_qwen_call("key")),
        b(_qwen_call("type", text="hello")),
        b(_qwen_call("type", text="it's")),
        b(_qwen_call("type", text="two\nlines")),
        b(_qwen_call("type", text="ünïcödé")),
        b(_qwen_call("type")),
        b(_qwen_call("scroll", pixels=-300)),
        b(_qwen_call("scroll", pixels=5)),
        b(_qwen_call("scroll", pixels=-300, coordinate=[100, 100])),
        b(_qwen_call("scroll")),
        b(_qwen_call("hscroll", pixels=200)),
        b(_qwen_call("wait", time=2)),
        b(_qwen_call("terminate", status="success")),
        b(_qwen_call("terminate", status="failure")),
        b(_qwen_call("answer", text="42")),
        b(_qwen_call("zoom", coordinate=[1, 1])),
        b(_qwen_call(None, coordinate=[1, 1])),
        b(_qwen_call("left_click", coordinate=[1, 2, 3])),
        b(_qwen_call("left_click", coordinate="12")),
        b(_qwen_call("left_click", coordinate=None)),
        "Action: click it\n" + b(_qwen_call("left_click", coordinate=[500, 500])),
        "I will click.\n" + b(_qwen_call("left_click", coordinate=[500, 500])),
        "Step 1: click\n" + b(_qwen_call("left_click", coordinate=[500, 500])),
        _qwen_call("left_click", coordinate=[500, 500]),
        "<tool_call>" + _qwen_call("left_click", coordinate=[500, 500]) + "</tool_call>",
        "⚗\n" + _qwen_call("left_click", coordinate=[500, 500]) + "\n⚗",
        b(_qwen_call("left_click", coordinate=[500, 500])) + "\n" + b(_qwen_call("type", text="x")),
        b(_qwen_call("left_click", coordinate=[1, 1])) + "\n" + b(_qwen_call("terminate", status="success")),
        b(_qwen_call("wait", time=1)) + "\n" + b(_qwen_call("left_click", coordinate=[1, 1])),
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": \n</tool_call>',
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1, 2]}}',
        '<tool_call>\n{"name": "other_tool", "arguments": {"action": "left_click"}}\n</tool_call>',
        '<tool_call>\n{"name": "computer_use", "arguments": "left_click"}\n</tool_call>',
        '<tool_call>\n{"name": "computer_use"}\n</tool_call>',
        "<tool_call>\n[1, 2]\n</tool_call>",
        "no tool call at all",
        "",
    ]
    for _ in range(count):
        calls = [_qwen_random_call(rng, size) for _ in range(rng.choice((1, 1, 2, 3)))]
        prose = pick(rng, ("", "", "Action: do it\n", "I'll do it.\n"))
        hand.append(prose + "\n".join(_qwen_block(c, rng) for c in calls))
    return [new_case(protocol, _qwen_kind(text), text) for text in hand]


def _qwen_kind(text: str) -> str:
    start = text.find('"action": "')
    if start < 0:
        return "(none)"
    return text[start + 11 :].split('"', 1)[0]


# -- OpenCUA's pyautogui code -----------------------------------------------------------------


def _opencua_answer(code: str, action: str = "Do the next step.", fence: str = "python") -> str:
    return (
        "## Observation\nThe screen.\n\n## Thought\nI should act.\n\n"
        f"## Action\n{action}\n\n## Code\n```{fence}\n{code}\n```"
    )


def _opencua_point(rng: random.Random, relative: bool) -> tuple[Any, Any]:
    if relative or rng.random() < 0.1:
        return round(rng.random(), 4), round(rng.random(), 4)
    return rng.randrange(0, 1933), rng.randrange(0, 1093)


def _opencua_line(rng: random.Random, relative: bool) -> str:
    x, y = _opencua_point(rng, relative)
    choices = (
        f"pyautogui.click(x={x}, y={y})",
        f"pyautogui.click({x}, {y})",
        f"pyautogui.click(x={x}, y={y}, clicks=2)",
        f"pyautogui.click({x}, {y}, button='right')",
        f"pyautogui.doubleClick(x={x}, y={y})",
        f"pyautogui.tripleClick({x}, {y})",
        f"pyautogui.rightClick(x={x}, y={y})",
        f"pyautogui.middleClick({x}, {y})",
        f"pyautogui.moveTo({x}, {y})",
        f"pyautogui.moveTo(x={x}, y={y}, duration=0.5)",
        f"pyautogui.dragTo({x}, {y}, duration=0.5)",
        f"pyautogui.dragTo(x={x}, y={y}, button='left')",
        f"pyautogui.scroll({rng.choice((-5, 5, -10, 3))})",
        f"pyautogui.scroll({rng.choice((-5, 5))}, x={x}, y={y})",
        f"pyautogui.hscroll({rng.choice((-5, 5))})",
        f"pyautogui.hotkey('{pick(rng, KEYS).lower()}', '{pick(rng, KEYS).lower()}')",
        f"pyautogui.press('{pick(rng, KEYS).lower()}')",
        f"pyautogui.press(['{pick(rng, KEYS).lower()}', 'enter'])",
        f"pyautogui.write({pick(rng, TEXTS)!r})",
        f"pyautogui.typewrite(message={pick(rng, TEXTS)!r}, interval=0.05)",
        f"pyautogui.keyDown('{pick(rng, KEYS).lower()}')",
        f"pyautogui.keyUp('{pick(rng, KEYS).lower()}')",
        f"computer.triple_click(x={x}, y={y})",
        "time.sleep(1)",
        "x = 5",
    )
    return pick(rng, choices)


def opencua_cases(rng: random.Random, count: int, relative: bool) -> list[dict[str, Any]]:
    """Hand-picked OpenCUA answers, then ``count`` random ones."""
    x, y = ("0.5", "0.5") if relative else ("966", "546")
    a = _opencua_answer
    hand = [
        a(f"pyautogui.click(x={x}, y={y})"),
        a(f"pyautogui.click({x}, {y})"),
        a(f"pyautogui.click({x}, {y}, clicks=2, button='right')"),
        a(f"pyautogui.click(x={x}, y={y}, button='left')"),
        a("pyautogui.click(0.25, 0.75)"),
        a("pyautogui.click(x=1.0, y=0)"),
        a(f"pyautogui.doubleClick(x={x}, y={y})"),
        a(f"pyautogui.tripleClick({x}, {y})"),
        a(f"pyautogui.rightClick({x}, {y})"),
        a(f"pyautogui.middleClick(x={x}, y={y})"),
        a(f"pyautogui.moveTo({x}, {y}, duration=0.5)"),
        a(f"pyautogui.moveTo({x}, {y})\npyautogui.dragTo(100, 200, duration=0.5)"),
        a(f"pyautogui.dragTo(x={x}, y={y}, button='left')"),
        a(f"computer.triple_click(x={x}, y={y})"),
        a(f"pyautogui.click(x={x})"),
        a("pyautogui.click()"),
        a("pyautogui.scroll(-5)"),
        a(f"pyautogui.scroll(5, x={x}, y={y})"),
        a(f"pyautogui.scroll(-3, {x}, {y})"),
        a("pyautogui.hscroll(4)"),
        a("pyautogui.hotkey('ctrl', 'c')"),
        a("pyautogui.hotkey('Page_Down')"),
        a("pyautogui.press('enter')"),
        a("pyautogui.press(['down', 'down', 'enter'])"),
        a("pyautogui.press('tab', presses=3)"),
        a("pyautogui.write('hello world')"),
        a("pyautogui.write(message='it\\'s')"),
        a("pyautogui.typewrite('ünïcödé')"),
        a("pyautogui.write('line1\\nline2')"),
        a("pyautogui.keyDown('shift')\npyautogui.click(100, 100)\npyautogui.keyUp('shift')"),
        a(f"pyautogui.click({x}, {y})\npyautogui.write('abc')\npyautogui.press('enter')"),
        a(f"pyautogui.click({x}, {y}); pyautogui.write('abc')"),
        a("import time\ntime.sleep(2)"),
        a("computer.wait()"),
        a("computer.wait(seconds=3)"),
        a("computer.terminate(status='success')"),
        a("computer.terminate(status='failure')"),
        a("computer.terminate(status='fail')"),
        a("computer.terminate()"),
        a("computer.terminate(status='success', answer='I failed before')"),
        a("pyautogui.click(100, 100)\ncomputer.terminate(status='success')"),
        a(f"pyautogui.click({x}, {y})", fence="code"),
        a(f"pyautogui.click({x}, {y})", fence=""),
        a(f"pyautogui.click({x}, {y})", action=""),
        a("pyautogui.click(x=foo, y=1)"),
        a("pyautogui.click(x='10', y='20')"),
        a("pyautogui.click((100, 200))"),
        a("pyautogui.click(100, 200"),
        "## Action\nclick\n\n## Code\n```python\npyautogui.click(1, 1)\n```\n"
        "```python\npyautogui.click(0.5, 0.5)\n```",
        "## Thought\nno action section\n```python\npyautogui.click(1, 1)\n```",
        "## Action\nno code block",
        "",
    ]
    for _ in range(count):
        lines = [_opencua_line(rng, relative) for _ in range(rng.choice((1, 1, 2, 3)))]
        if rng.random() < 0.08:
            lines.append(pick(rng, ("computer.wait()", "computer.terminate(status='success')")))
        hand.append(_opencua_answer("\n".join(lines)))
    protocol = "opencua-relative" if relative else "opencua"
    return [new_case(protocol, _opencua_kind(text), text) for text in hand]


def _opencua_kind(text: str) -> str:
    code = text.rsplit("```", 2)[-2] if text.count("```") >= 2 else ""
    for line in code.splitlines():
        name = line.strip().split("(", 1)[0].strip()
        if name and name not in ("python", "code"):
            return name
    return "(none)"
