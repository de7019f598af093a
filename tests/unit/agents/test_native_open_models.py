"""``ui-tars``, ``qwen-vl`` and ``opencua`` through the real OpenAI SDK against a stand-in
vLLM-style Chat Completions server."""

from __future__ import annotations

import base64
import io
import json

import pytest
from agent_wire import recording
from PIL import Image
from protocol_wire import chat_turn
from test_native_claude import SCREEN


@pytest.fixture
def open_model(native_agent):
    return native_agent


def _sent_image_size(request) -> tuple[int, int]:
    url = request.body["messages"][-1]["content"][1]["image_url"]["url"]
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size


def _codes(step) -> list[str]:
    return [a.code for a in step.actions if a.kind == "code"]


# -- UI-TARS ---------------------------------------------------------------------------------


def test_ui_tars_reads_its_grammar_in_smart_resize_pixels(open_model, provider_server) -> None:
    provider_server.play(
        chat_turn(
            "Thought: open the file menu\nAction: click(start_box='<|box_start|>(966,546)<|box_end|>')\n"
            "hotkey(key='ctrl shift arrowleft')\ntype(content='héllo\\n')\n"
            "scroll(start_box='(0,0,100,100)', direction='up')"
        ),
        chat_turn("Thought: done\nAction: finished(content='ok')"),
    )
    agent = open_model("ui-tars")
    step = agent.act("x", SCREEN)
    codes = _codes(step)
    # 1920x1080 is sent as 1932x1092; (966, 546) is the screen's centre
    assert _sent_image_size(provider_server.requests[0]) == (1932, 1092)
    assert "pyautogui.click(960, 540," in codes[0]
    assert "pyautogui.hotkey('ctrl', 'shift', 'left')" in codes[1]
    assert "pyperclip.copy('é')" in codes[2] and "press('enter')" in codes[2]
    assert "pyautogui.scroll(5, x=49, y=49)" in codes[3]
    assert step.thought == "open the file menu"
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["DONE"]


def test_ui_tars_garbage_is_a_step_error_told_to_the_model_and_call_user_is_fail(
    open_model, provider_server
) -> None:
    provider_server.play(
        chat_turn("I think I should click somewhere."), chat_turn("Thought: stuck\nAction: call_user()")
    )
    agent = open_model("ui-tars")
    step = agent.act("x", SCREEN)
    assert step.actions == [] and "no 'Action:' line" in (step.parse_error or "")
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["FAIL"]
    assert "no 'Action:' line" in provider_server.requests[1].body["messages"][-1]["content"][0]["text"]


def test_ui_tars_parse_osworld_pastes_text_and_waits_on_call_user(open_model, provider_server) -> None:
    provider_server.play(
        chat_turn("Thought: t\nAction: type(content='abc\\n')"),
        chat_turn("Thought: t\nAction: call_user()"),
    )
    agent = open_model("ui-tars", parse="osworld")
    (code,) = _codes(agent.act("x", SCREEN))
    assert "pyperclip.copy('abc')" in code and "pyautogui.press('enter')" in code
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["WAIT"]


# -- Qwen-VL ---------------------------------------------------------------------------------


def _tool_call(action: str, **args) -> str:
    return (
        "<tool_call>\n"
        + json.dumps({"name": "computer_use", "arguments": {"action": action, **args}})
        + "\n</tool_call>"
    )


def test_qwen3_reads_tool_calls_on_the_1000_grid_with_pixel_scrolls(open_model, provider_server) -> None:
    provider_server.play(
        chat_turn(
            "I will click.\n"
            + _tool_call("left_click", coordinate=[500, 500])
            + _tool_call("scroll", pixels=-300)
            + _tool_call("key", keys=["ctrl", "Page_Down"])
        ),
        chat_turn(_tool_call("terminate", status="failure")),
    )
    agent = open_model("qwen-vl")
    codes = _codes(agent.act("x", SCREEN))
    assert "pyautogui.click(960, 540," in codes[0]
    assert "pyautogui.scroll(-3)" in codes[1]
    assert "pyautogui.hotkey('ctrl', 'pagedown')" in codes[2]
    system = provider_server.requests[0].body["messages"][0]["content"]
    assert "The screen's resolution is 1000x1000" in system and "<tools>" in system
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["FAIL"]


def test_qwen25_uses_smart_resize_pixels_and_bad_json_is_a_step_error(open_model, provider_server) -> None:
    provider_server.play(
        chat_turn('<tool_call>{"name": "computer_use", "arguments": {"action": </tool_call>')
    )
    assert open_model("qwen-vl").coordinates == "relative"
    step = open_model("qwen-vl", coordinates="absolute").act("x", SCREEN)
    assert "is not JSON" in (step.parse_error or "")
    assert _sent_image_size(provider_server.requests[0]) == (1316, 728)
    assert "The screen's resolution is 1316x728" in provider_server.requests[0].body["messages"][0]["content"]


def test_qwen_parse_osworld_passes_pixels_and_ignores_the_failure_status(open_model, provider_server) -> None:
    provider_server.play(
        chat_turn(_tool_call("scroll", pixels=-300)),
        chat_turn("Action: give up\n" + _tool_call("terminate", status="failure")),
        chat_turn(_tool_call("terminate", status="success")),
    )
    agent = open_model("qwen-vl", parse="osworld")
    assert _codes(agent.act("x", SCREEN)) == ["pyautogui.scroll(-300)"]  # as Qwen3VLAgent writes it
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["DONE"]
    # without an "Action:" line, OSWorld's agent raises (IndexError) on an answer that starts
    # with WAIT or DONE: no action here
    step = agent.act("x", SCREEN)
    assert step.actions == [] and "starts with terminate" in (step.parse_error or "")


# -- OpenCUA ---------------------------------------------------------------------------------


def test_opencua_reads_pyautogui_code_and_checks_it(open_model, provider_server) -> None:
    answer = (
        "## Thought\nSave it.\n## Action\nPress ctrl+s.\n## Code\n```python\n"
        "pyautogui.click(x=658, y=364)\npyautogui.hotkey('ctrl', 's')\npyautogui.write('a')\n"
        "computer.terminate(status='success')\n```"
    )
    provider_server.play(
        chat_turn(answer), chat_turn("## Code\n```python\nimport os\nos.system('rm -rf ~')\n```")
    )
    agent = open_model("opencua")
    step = agent.act("x", SCREEN)
    codes = _codes(step)
    # OpenCUA-7B sees 1920x1080 smart-resized to 1932x1092
    assert _sent_image_size(provider_server.requests[0]) == (1932, 1092)
    assert "pyautogui.click(653, 360," in codes[0]
    assert "pyautogui.hotkey('ctrl', 's')" in codes[1]
    assert [a.kind for a in step.actions][-1] == "DONE"
    bad = agent.act("x", SCREEN)
    assert bad.actions == [] and "os.system is not a pyautogui or computer call" in (bad.parse_error or "")


def test_opencua_failure_and_relative_coordinates(open_model, provider_server) -> None:
    provider_server.play(
        chat_turn("```python\npyautogui.click(0.5, 0.5)\ncomputer.terminate(status='failure')\n```"),
    )
    step = open_model("opencua", coordinates="relative").act("x", SCREEN)
    assert "pyautogui.click(960, 540," in step.actions[0].code
    assert step.actions[-1].kind == "FAIL"


def test_open_models_retry_rate_limits(open_model, provider_server) -> None:
    provider_server.play(
        recording("openai_rate_limit"), recording("openai_server_error"), chat_turn("Action: finished()")
    )
    assert [a.kind for a in open_model("ui-tars").act("x", SCREEN).actions] == ["DONE"]
    assert len(provider_server.requests) == 3


def test_ui_tars_parse_osworld_call_user_waits_three_times_and_an_ending_drops_the_turn(
    open_model, provider_server
) -> None:
    provider_server.play(
        *[chat_turn("Thought: t\nAction: call_user()") for _ in range(4)],
        chat_turn("Thought: t\nAction: click(start_box='(966,546)')\n\nfinished()"),
    )
    agent = open_model("ui-tars", parse="osworld")
    kinds = [[a.kind for a in agent.act("x", SCREEN).actions] for _ in range(5)]
    # OSWorld's UITARSAgent (callusr_tolerance 3); finished() returns DONE alone
    assert kinds == [["WAIT"], ["WAIT"], ["WAIT"], ["FAIL"], ["DONE"]]


def test_parse_osworld_asks_again_for_an_unreadable_answer_then_ends(open_model, provider_server) -> None:
    provider_server.play(*[chat_turn("I am not sure.") for _ in range(3)])
    agent = open_model("ui-tars", parse="osworld")
    step = agent.act("x", SCREEN)
    assert [a.kind for a in step.actions] == ["DONE"]
    assert [r.body.get("temperature") for r in provider_server.requests] == [0.0, 1.0, 1.0]
    # every answer asked for is paid for
    assert (step.usage.input_tokens, step.usage.output_tokens) == (3 * 1100, 3 * 30)
    provider_server.play(
        *[chat_turn("no code") for _ in range(4)],
        chat_turn("## Action\nclick\n## Code\n```python\npyautogui.click(0.5, 0.5)\n```"),
    )
    agent = open_model("opencua", parse="osworld", coordinates="relative")
    assert _codes(agent.act("x", SCREEN)) == ["pyautogui.click(960, 540)"]  # the fifth answer
    provider_server.play(*[chat_turn("no code") for _ in range(5)])
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["FAIL"]
