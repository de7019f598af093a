"""The native computer-use agents on the real desktop.

Each agent talks through its vendor's SDK, unchanged, to a stand-in server on the host
that answers in the vendor's wire format (``protocol_wire``), scripted as a model that
knows the task would answer. Checked inside the desktop: each protocol's action kinds
arrive as the X input they mean (the guest's input recorder and pointer), two own tasks
are solved (score 1) and an infeasible one is answered FAIL (score 1).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agent_wire import FAKE_KEY, ProviderServer, start
from protocol_wire import anthropic_turn, chat_turn, gemini_turn, responses_turn
from task_harness import run_task

from pytest_osworld.agent.computer13 import to_pyautogui
from pytest_osworld.agent.contract import AGENTS, Agent, AgentConfig
from pytest_osworld.episode.loop import observe, run_action

pytestmark = pytest.mark.desktop

TASKS = Path(__file__).resolve().parents[2] / "tasks"
#: Own tasks solved by one shell command typed into the terminal their setup opens.
COMMANDS = {
    "os/ef9ea0c2-4f77-4017-9a2c-592f165ae51f": "cd ~/project/deploy && chmod 700 build.sh deploy.sh rollback.sh"
    " && chmod 600 secrets.env",
    "os/9cf34795-a8b8-4693-a578-31eb2c71aef1": "cd ~/reports && tar -czf 2023.tar.gz 2023",
}
#: An own infeasible task (LibreOffice Impress has no such feature): FAIL scores 1.
INFEASIBLE = "libreoffice_impress/d4cabf3b-e8f6-4eb2-9b35-35dd737e22f4"


def _tool_call(action: str, **args: Any) -> str:
    payload = {"name": "computer_use", "arguments": {"action": action, **args}}
    return f"<tool_call>\n{json.dumps(payload)}\n</tool_call>"


def _code(*lines: str) -> str:
    return "## Action\nAct.\n## Code\n```python\n" + "\n".join(lines) + "\n```"


@dataclass(frozen=True)
class Protocol:
    """How to reach one agent's stand-in, and a scripted model's turns in its format."""

    key_env: str
    path: str
    model: str | None
    solve: Callable[[str], list[dict[str, Any]]]
    give_up: Callable[[], list[dict[str, Any]]]
    #: One turn using every action kind, what the desktop records of it, and where the
    #: pointer ends.
    kinds: dict[str, Any]
    recorded: list[str]
    pointer: tuple[int, int]


#: What each protocol's action kinds turn into on a 1920x1080 screen, as the guest's
#: input recorder writes them (clicks, drags, scrolls, keys; moves show in the pointer).
def recorded(double: tuple[int, int], drag_from: tuple[int, int], scroll: int = -3) -> list[str]:
    """What the desktop records of the action kinds, with the points that differ by
    protocol (their grids do not all reach the same pixel)."""
    return [
        "pyautogui.click(960, 540)",
        f"pyautogui.doubleClick({double[0]}, {double[1]})",
        "pyautogui.rightClick(1265, 703)",
        f"pyautogui.moveTo({drag_from[0]}, {drag_from[1]})",
        "pyautogui.dragTo(1265, 703, duration=0.5, button='left')",
        f"pyautogui.scroll({scroll}, x=960, y=540)",
        "pyautogui.hotkey('ctrl', 'pagedown')",
        "pyautogui.write('hi there')",
    ]


PROTOCOLS: dict[str, Protocol] = {
    "claude-cu": Protocol(
        "ANTHROPIC_API_KEY",
        "",
        None,
        lambda command: [
            anthropic_turn({"action": "type", "text": command + "\n"}),
            anthropic_turn({"action": "wait", "duration": 2}),
            anthropic_turn(text="The task is done."),
        ],
        lambda: [anthropic_turn(text="Impress cannot do this. [INFEASIBLE]")],
        # declared 1366x768 on 1920x1080
        anthropic_turn(
            {"action": "left_click", "coordinate": [683, 384]},
            {"action": "double_click", "coordinate": [996, 597]},
            {"action": "right_click", "coordinate": [900, 500]},
            {"action": "left_click_drag", "start_coordinate": [707, 633], "coordinate": [900, 500]},
            {"action": "scroll", "coordinate": [683, 384], "scroll_direction": "down", "scroll_amount": 3},
            {"action": "key", "text": "ctrl+Page_Down"},
            {"action": "type", "text": "hi there"},
            {"action": "mouse_move", "coordinate": [683, 384]},
        ),
        recorded((1399, 839), (993, 890)),
        (960, 540),
    ),
    "openai-cu": Protocol(
        "OPENAI_API_KEY",
        "/v1",
        None,
        lambda command: [
            responses_turn({"type": "type", "text": command + "\n"}, {"type": "wait"}, {"type": "wait"}),
            responses_turn(text="The task is done."),
        ],
        lambda: [responses_turn(text="Impress has no such feature: [INFEASIBLE]")],
        responses_turn(
            {"type": "click", "x": 960, "y": 540, "button": "left"},
            {"type": "double_click", "x": 1400, "y": 840},
            {"type": "click", "x": 1265, "y": 703, "button": "right"},
            {"type": "drag", "path": [{"x": 993, "y": 890}, {"x": 1100, "y": 800}, {"x": 1265, "y": 703}]},
            {"type": "scroll", "x": 960, "y": 540, "scroll_x": 0, "scroll_y": 300},
            {"type": "keypress", "keys": ["CTRL", "PAGEDOWN"]},
            {"type": "type", "text": "hi there"},
            {"type": "move", "x": 960, "y": 540},
        ),
        recorded((1400, 840), (993, 890)),
        (960, 540),
    ),
    "gemini-cu": Protocol(
        "GEMINI_API_KEY",
        "",
        "gemini-3.5-flash",
        lambda command: [
            gemini_turn(("type", {"text": command, "press_enter": True})),
            gemini_turn(("wait", {"seconds": 2})),
            gemini_turn(text="The task is done."),
        ],
        lambda: [gemini_turn(text="[INFEASIBLE] Impress cannot do this.")],
        # the 0-999 grid on 1920x1080
        gemini_turn(
            ("click", {"x": 500, "y": 500}),
            ("double_click", {"x": 730, "y": 778}),
            ("right_click", {"x": 659, "y": 651}),
            ("drag_and_drop", {"x": 518, "y": 825, "destination_x": 659, "destination_y": 651}),
            ("scroll", {"x": 500, "y": 500, "direction": "down", "magnitude": 278}),
            ("hotkey", {"keys": "Control+PageDown"}),
            ("type", {"text": "hi there"}),
            ("move", {"x": 500, "y": 500}),
        ),
        recorded((1401, 840), (994, 891)),
        (960, 540),
    ),
    "ui-tars": Protocol(
        "",
        "/v1",
        None,
        lambda command: [
            chat_turn(f"Thought: run it\nAction: type(content={command + chr(10)!r})"),
            chat_turn("Thought: let it finish\nAction: wait()"),
            chat_turn("Thought: done\nAction: finished(content='done')"),
        ],
        lambda: [chat_turn("Thought: Impress has no such feature.\nAction: call_user()")],
        # smart_resize: 1920x1080 is seen as 1932x1092
        chat_turn(
            "Thought: try everything\nAction: click(start_box='(966,546)')\n"
            "left_double(start_box='(1409,850)')\nright_single(start_box='(1273,711)')\n"
            "drag(start_box='(1000,900)', end_box='(1273,711)')\n"
            "scroll(start_box='(966,546)', direction='down')\nhotkey(key='ctrl pagedown')\n"
            "type(content='hi there')\nhover(start_box='(966,546)')"
        ),
        recorded((1400, 840), (993, 890), scroll=-5),
        (960, 540),
    ),
    "qwen-vl": Protocol(
        "",
        "/v1",
        None,
        lambda command: [
            chat_turn(_tool_call("type", text=command + "\n")),
            chat_turn(_tool_call("wait", time=2)),
            chat_turn(_tool_call("terminate", status="success")),
        ],
        lambda: [chat_turn(_tool_call("terminate", status="failure"))],
        # Qwen3-VL: the 0-1000 grid
        chat_turn(
            _tool_call("left_click", coordinate=[500, 500])
            + _tool_call("double_click", coordinate=[730, 778])
            + _tool_call("right_click", coordinate=[659, 651])
            + _tool_call("mouse_move", coordinate=[518, 825])
            + _tool_call("left_click_drag", coordinate=[659, 651])
            + _tool_call("scroll", coordinate=[500, 500], pixels=-300)
            + _tool_call("key", keys=["ctrl", "pagedown"])
            + _tool_call("type", text="hi there")
            + _tool_call("mouse_move", coordinate=[500, 500])
        ),
        recorded((1401, 840), (994, 891)),
        (960, 540),
    ),
    "opencua": Protocol(
        "",
        "/v1",
        None,
        lambda command: [
            chat_turn(_code(f"pyautogui.write({command!r})", "pyautogui.press('enter')")),
            chat_turn(_code("computer.wait()")),
            chat_turn(_code("computer.terminate(status='success')")),
        ],
        lambda: [chat_turn(_code("computer.terminate(status='failure')"))],
        # OpenCUA-7B: smart_resize pixels, 1932x1092
        chat_turn(
            _code(
                "pyautogui.click(x=966, y=546)",
                "pyautogui.doubleClick(1409, 850)",
                "pyautogui.rightClick(1273, 711)",
                "pyautogui.moveTo(1000, 900)",
                "pyautogui.dragTo(1273, 711)",
                "pyautogui.scroll(-3, x=966, y=546)",
                "pyautogui.hotkey('ctrl', 'pgdn')",
                "pyautogui.write('hi there')",
                "pyautogui.moveTo(966, 546)",
            )
        ),
        recorded((1400, 840), (993, 890)),
        (960, 540),
    ),
}


def other_kinds(press_at: tuple[int, int], hscroll: int = 2) -> list[str]:
    """What the desktop records of the other action kinds: a triple and a middle click, a
    horizontal scroll, a press and release of the left button, and Ctrl held and let go."""
    return [
        "pyautogui.tripleClick(960, 540)",
        "pyautogui.middleClick(1265, 703)",
        f"pyautogui.hscroll({hscroll}, x=960, y=540)",
        f"pyautogui.click({press_at[0]}, {press_at[1]})",
        "pyautogui.press('ctrl')",
    ]


#: Per agent: one turn with the action kinds the first test leaves out, and their record.
OTHER_KINDS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "claude-cu": (
        anthropic_turn(
            {"action": "triple_click", "coordinate": [683, 384]},
            {"action": "middle_click", "coordinate": [900, 500]},
            {"action": "scroll", "coordinate": [683, 384], "scroll_direction": "right", "scroll_amount": 2},
            {"action": "left_mouse_down", "coordinate": [996, 597]},
            {"action": "left_mouse_up"},
            {"action": "hold_key", "text": "ctrl", "duration": 0.3},
        ),
        other_kinds((1399, 839)),
    ),
    "openai-cu": (
        responses_turn(
            {"type": "click", "x": 1265, "y": 703, "button": "wheel"},
            {"type": "scroll", "x": 960, "y": 540, "scroll_x": 200, "scroll_y": 0},
            {"type": "click", "x": 1400, "y": 840, "button": "left", "keys": ["SHIFT"]},
            {"type": "click", "x": 960, "y": 540, "button": "back"},
            {"type": "keypress", "keys": ["CTRL"]},
        ),
        [
            "pyautogui.middleClick(1265, 703)",
            "pyautogui.hscroll(2, x=960, y=540)",
            "pyautogui.keyDown('shift')",
            "pyautogui.click(1400, 840)",
            "pyautogui.keyUp('shift')",
            "pyautogui.hotkey('alt', 'left')",
            "pyautogui.press('ctrl')",
        ],
    ),
    "gemini-cu": (
        gemini_turn(
            ("triple_click", {"x": 500, "y": 500}),
            ("middle_click", {"x": 659, "y": 651}),
            ("scroll", {"x": 500, "y": 500, "direction": "right", "magnitude": 104}),
            ("mouse_down", {"x": 730, "y": 778}),
            ("mouse_up", {}),
            ("key_down", {"key": "Control"}),
            ("key_up", {"key": "Control"}),
        ),
        other_kinds((1401, 840)),
    ),
    "ui-tars": (
        chat_turn(
            "Thought: more\nAction: scroll(start_box='(966,546)', direction='right')\n"
            "click(start_box='(1409,850)')\nkeydown(key='ctrl')\nkeyup(key='ctrl')"
        ),
        ["pyautogui.hscroll(5, x=960, y=540)", "pyautogui.click(1400, 840)", "pyautogui.press('ctrl')"],
    ),
    "qwen-vl": (
        chat_turn(
            _tool_call("triple_click", coordinate=[500, 500])
            + _tool_call("middle_click", coordinate=[659, 651])
            + _tool_call("hscroll", coordinate=[500, 500], pixels=200)
            + _tool_call("left_click", coordinate=[730, 778])
            + _tool_call("key", keys=["ctrl"])
        ),
        other_kinds((1401, 840)),
    ),
    "opencua": (
        chat_turn(
            _code(
                "pyautogui.tripleClick(966, 546)",
                "pyautogui.middleClick(1273, 711)",
                "pyautogui.hscroll(2, x=966, y=546)",
                "pyautogui.moveTo(1409, 850)",
                "pyautogui.mouseDown()",
                "pyautogui.mouseUp()",
                "pyautogui.keyDown('ctrl')",
                "pyautogui.keyUp('ctrl')",
            )
        ),
        other_kinds((1400, 840)),
    ),
}


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderServer]:
    """A stand-in model API on the host; no real key or endpoint reaches the agents."""
    for name in (
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_GENAI_USE_VERTEXAI",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    state = ProviderServer()
    server = start(state)
    yield state
    server.shutdown()
    server.server_close()


def _agent(name: str, standin: ProviderServer, monkeypatch: pytest.MonkeyPatch) -> Agent:
    protocol = PROTOCOLS[name]
    if protocol.key_env:
        monkeypatch.setenv(protocol.key_env, FAKE_KEY)
    args = {"base_url": standin.url + protocol.path, "backoff": "0.01"}
    return AGENTS.get(name)(AgentConfig(name=name, model=protocol.model, args=args))


def _recorded(desktop, standin, monkeypatch, name: str, turn: dict[str, Any]) -> tuple[Any, list[str]]:
    """The restored desktop's guest, and its input record of the agent's answer to ``turn``
    (each action run without an error)."""
    guest = desktop.restore("init_state").guest
    standin.play(turn)
    step = _agent(name, standin, monkeypatch).act("x", observe(guest, "x", "screenshot"))
    assert step.parse_error is None
    guest.start_input_recording()
    try:
        errors = [run_action(guest, action, to_pyautogui) for action in step.actions]
    finally:
        recorded = [action["code"] for action in guest.stop_input_recording()]
    assert errors == [None] * len(step.actions)
    return guest, recorded


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_every_action_kind_reaches_the_desktop(desktop, standin, monkeypatch, name: str) -> None:
    protocol = PROTOCOLS[name]
    guest, recorded = _recorded(desktop, standin, monkeypatch, name, protocol.kinds)
    assert recorded == protocol.recorded
    assert guest.cursor_position() == protocol.pointer


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_the_other_action_kinds_reach_the_desktop(desktop, standin, monkeypatch, name: str) -> None:
    turn, expected = OTHER_KINDS[name]
    _, recorded = _recorded(desktop, standin, monkeypatch, name, turn)
    assert recorded == expected


@pytest.mark.parametrize("task", sorted(COMMANDS))
@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_an_own_task_is_solved_through_the_sdk(
    desktop, standin, monkeypatch, tmp_path, name: str, task: str
) -> None:
    protocol = PROTOCOLS[name]
    turns = protocol.solve(COMMANDS[task])
    standin.play(*turns)
    agent = _agent(name, standin, monkeypatch)
    episode, evaluation = run_task(desktop, TASKS / f"{task}.json", tmp_path, max_steps=5, agent=agent)
    assert evaluation.score == 1.0, (episode.describe(5), evaluation)
    assert len(standin.requests) == len(turns)


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_an_infeasible_own_task_is_answered_fail(desktop, standin, monkeypatch, tmp_path, name: str) -> None:
    standin.play(*PROTOCOLS[name].give_up())
    agent = _agent(name, standin, monkeypatch)
    episode, evaluation = run_task(desktop, TASKS / f"{INFEASIBLE}.json", tmp_path, max_steps=5, agent=agent)
    assert episode.last_action is not None and episode.last_action.kind == "FAIL"
    assert evaluation.score == 1.0
