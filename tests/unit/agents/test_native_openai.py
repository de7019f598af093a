"""``openai-cu`` through the real OpenAI SDK against a stand-in Responses API."""

from __future__ import annotations

import pytest
from agent_wire import recording
from protocol_wire import responses_turn
from test_native_claude import SCREEN


@pytest.fixture
def gpt(native_agent):
    return lambda **args: native_agent("openai-cu", **args)


def test_a_batched_call_runs_in_order_with_pixel_scrolls_as_wheel_clicks(gpt, provider_server) -> None:
    provider_server.play(
        responses_turn(
            {"type": "keypress", "keys": ["CTRL", "ARROWDOWN"]},
            {"type": "scroll", "x": 500, "y": 400, "scroll_x": 0, "scroll_y": 300},
            {"type": "click", "x": 10, "y": 20, "button": "wheel", "keys": ["SHIFT"]},
            {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 30, "y": 40}, {"x": 50, "y": 60}]},
            safety=({"id": "sc_1", "code": "malicious_instructions", "message": "Check the page."},),
        ),
        responses_turn(text="Finished."),
    )
    agent = gpt()
    step = agent.act("do it", SCREEN)
    codes = [a.code for a in step.actions]
    assert "pyautogui.hotkey('ctrl', 'down')" in codes[0]
    # 300 px is 3 wheel clicks down, not 300 (OSWorld's mapping)
    assert "pyautogui.scroll(-3, x=500, y=400)" in codes[1]
    assert "button='middle'" in codes[2] and "pyautogui.keyDown('shift')" in codes[2]
    assert codes[3].count("moveTo") == 3 and "mouseDown" in codes[3]
    assert "safety check acknowledged: malicious_instructions: Check the page." in step.response
    first = provider_server.requests[0].body
    assert first["tools"] == [{"type": "computer"}] and first["model"] == "gpt-5.4"
    assert first["input"][0]["content"][1]["detail"] == "original"

    assert [a.kind for a in agent.act("do it", SCREEN).actions] == ["DONE"]
    second = provider_server.requests[1].body
    assert second["previous_response_id"].startswith("resp_")
    (output,) = second["input"]
    assert output["type"] == "computer_call_output" and output["output"]["type"] == "computer_screenshot"
    assert output["acknowledged_safety_checks"] == [
        {"id": "sc_1", "code": "malicious_instructions", "message": "Check the page."}
    ]


def test_errors_follow_the_output_as_a_user_message(gpt, provider_server) -> None:
    provider_server.play(
        responses_turn({"type": "keypress", "keys": ["VOLUME_UP"]}),
        responses_turn(text="I cannot do this: [INFEASIBLE]"),
    )
    agent = gpt()
    assert "unknown key 'VOLUME_UP'" in (agent.act("x", SCREEN).parse_error or "")
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["FAIL"]
    output, note = provider_server.requests[1].body["input"]
    assert output["type"] == "computer_call_output"
    assert "unknown key 'VOLUME_UP'" in note["content"][0]["text"]


def test_the_preview_tool_declares_the_display_and_scales(gpt, provider_server) -> None:
    provider_server.play(
        responses_turn({"type": "click", "x": 512, "y": 384, "button": "left"}, batched=False)
    )
    step = gpt(tool="computer_use_preview", display="1024x768").act("x", SCREEN)
    body = provider_server.requests[0].body
    assert body["model"] == "computer-use-preview" and body["truncation"] == "auto"
    assert body["tools"] == [
        {"type": "computer_use_preview", "display_width": 1024, "display_height": 768, "environment": "linux"}
    ]
    assert "pyautogui.click(960, 540," in step.actions[0].code


def test_rate_limits_are_retried(gpt, provider_server) -> None:
    provider_server.play(
        recording("openai_rate_limit"), recording("openai_server_error"), responses_turn(text="ok")
    )
    assert [a.kind for a in gpt().act("x", SCREEN).actions] == ["DONE"]
    assert len(provider_server.requests) == 3


@pytest.mark.parametrize(
    ("tool", "ending", "cmd"), [("computer_use_preview", "FAIL", "cmd"), ("computer", "DONE", "command")]
)
def test_parse_osworld_maps_as_osworlds_agents(gpt, provider_server, tool, ending, cmd) -> None:
    provider_server.play(
        responses_turn(
            {"type": "scroll", "x": 5, "y": 6, "scroll_y": 300}, {"type": "keypress", "keys": ["CMD", "Q"]}
        ),
        responses_turn(text="This is impossible."),
    )
    agent = gpt(parse="osworld", tool=tool)
    codes = [a.code.split("\n", 1)[1] for a in agent.act("x", SCREEN).actions]
    # the preview agent (desktop-env 1.0.2) renames only a lowercase "cmd"
    assert codes == ["pyautogui.scroll(-300, x=5, y=6)", f"pyautogui.hotkey('{cmd}', 'q')"]
    assert [a.kind for a in agent.act("x", SCREEN).actions] == [ending]


def test_parse_osworld_preview_fails_on_an_infeasible_message_after_the_calls_before_it(
    gpt, provider_server
) -> None:
    agent = gpt(parse="osworld", tool="computer_use_preview")
    click = {"type": "click", "x": 1, "y": 2, "button": "left"}
    provider_server.play(responses_turn(click))
    agent.act("x", SCREEN)
    reply = agent._read(
        _response(
            [
                _item("computer_call", call_id="c1", action=_action(click)),
                _item("message", content=[_item("output_text", text="It is not feasible.")]),
                _item("computer_call", call_id="c2", action=_action(click)),
            ]
        )
    )
    assert len(reply.calls) == 1 and reply.ending is not None and reply.ending.kind == "FAIL"


def _item(kind: str, **fields):
    from types import SimpleNamespace

    return SimpleNamespace(type=kind, pending_safety_checks=[], **fields)


def _action(fields: dict):
    from types import SimpleNamespace

    return SimpleNamespace(model_dump=lambda exclude_none=True: dict(fields))


def _response(items: list):
    from types import SimpleNamespace

    return SimpleNamespace(output=items, usage=None)
