"""``claude-cu`` through the real Anthropic SDK against a stand-in Messages API."""

from __future__ import annotations

import base64
import io

import pytest
from agent_wire import recording
from PIL import Image
from protocol_wire import anthropic_turn

from pytest_osworld.agent.contract import Observation


def screen_png(size: tuple[int, int] = (1920, 1080)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (30, 30, 30)).save(out, format="PNG")
    return out.getvalue()


SCREEN = Observation(instruction="x", screenshot=screen_png())


@pytest.fixture
def claude(native_agent):
    return lambda **args: native_agent("claude-cu", **args)


def _image_size(block: dict) -> tuple[int, int]:
    png = base64.b64decode(block["source"]["data"])
    return Image.open(io.BytesIO(png)).size


def test_a_batch_runs_in_order_as_one_step_with_screen_coordinates(claude, provider_server) -> None:
    provider_server.play(
        anthropic_turn(
            {"action": "key", "text": "ctrl+shift+Page_Down"},
            {"action": "left_click", "coordinate": [683, 384], "text": "shift"},
            {"action": "type", "text": "héllo\n"},
            thinking="plan",
        ),
        anthropic_turn(text="All done."),
    )
    agent = claude()
    step = agent.act("do it", SCREEN)
    codes = [a.code for a in step.actions]
    assert step.parse_error is None
    assert "pyautogui.hotkey('ctrl', 'shift', 'pagedown')" in codes[0]
    # 1366x768 declared for 1920x1080: (683, 384) is the screen's centre
    assert "pyautogui.keyDown('shift')" in codes[1] and "pyautogui.click(960, 540," in codes[1]
    assert "pyautogui.write('h'" in codes[2] and "pyperclip.copy('é')" in codes[2]
    assert "pyautogui.press('enter')" in codes[2]
    first = provider_server.requests[0]
    assert first.headers["anthropic-beta"] == "computer-use-2025-11-24"
    (tool,) = first.body["tools"]
    assert tool == {
        "type": "computer_20251124",
        "name": "computer",
        "display_width_px": 1366,
        "display_height_px": 768,
        "enable_zoom": True,
    }
    assert _image_size(first.body["messages"][0]["content"][0]) == (1366, 768)

    done = agent.act("do it", SCREEN)
    assert [a.kind for a in done.actions] == ["DONE"]
    second = provider_server.requests[1].body["messages"]
    assert second[1]["content"][0] == {
        "type": "thinking",
        "thinking": "plan",
        "signature": second[1]["content"][0]["signature"],
    }
    results = second[2]["content"]
    assert [r["type"] for r in results] == ["tool_result"] * 3
    assert [r["tool_use_id"] for r in results] == [b["id"] for b in second[1]["content"][1:]]
    assert all(not r["is_error"] for r in results)
    # only the last result carries the screenshot
    assert [sum(p["type"] == "image" for p in r["content"]) for r in results] == [0, 0, 1]


def test_an_unknown_key_is_a_step_error_sent_back_and_the_rest_of_the_batch_is_skipped(
    claude, provider_server
) -> None:
    provider_server.play(
        anthropic_turn({"action": "key", "text": "Hyper_Q"}, {"action": "type", "text": "x"}),
        anthropic_turn(text="ok"),
    )
    agent = claude()
    step = agent.act("do it", SCREEN)
    assert step.actions == [] and "unknown key 'Hyper_Q'" in (step.parse_error or "")
    agent.act("do it", SCREEN)
    bad, skipped = provider_server.requests[1].body["messages"][2]["content"]
    assert bad["is_error"] and "unknown key 'Hyper_Q'" in bad["content"][0]["text"]
    assert skipped["is_error"] and "not run" in skipped["content"][0]["text"]


@pytest.mark.parametrize(
    ("text", "kind"), [("The task is [INFEASIBLE]: no such app.", "FAIL"), ("Done.", "DONE")]
)
def test_a_turn_without_tool_calls_ends_the_episode(claude, provider_server, text, kind) -> None:
    provider_server.play(anthropic_turn(text=text))
    assert [a.kind for a in claude().act("do it", SCREEN).actions] == [kind]


def test_off_screen_points_zoom_and_cursor_position(claude, provider_server) -> None:
    provider_server.play(
        anthropic_turn(
            {"action": "mouse_move", "coordinate": [100, 50]},
            {"action": "cursor_position"},
            {"action": "zoom", "region": [0, 0, 683, 384]},
        ),
        anthropic_turn({"action": "left_click", "coordinate": [1500, 10]}),
        anthropic_turn(text="done"),
    )
    agent = claude()
    agent.act("x", SCREEN)
    step = agent.act("x", SCREEN)
    assert "outside the 1366x768" in (step.parse_error or "")
    agent.act("x", SCREEN)
    _move, cursor, zoom = provider_server.requests[1].body["messages"][2]["content"]
    assert cursor["content"][0]["text"] == "X=100,Y=50"
    assert _image_size(zoom["content"][1]) == (960, 540)  # the region at full resolution
    (off,) = provider_server.requests[2].body["messages"][4]["content"]
    assert off["is_error"] and "outside" in off["content"][0]["text"]


def test_rate_limits_and_server_errors_are_retried(claude, provider_server) -> None:
    provider_server.play(
        recording("anthropic_rate_limit"), recording("anthropic_server_error"), anthropic_turn(text="done")
    )
    assert [a.kind for a in claude().act("x", SCREEN).actions] == ["DONE"]
    assert len(provider_server.requests) == 3


def test_only_the_most_recent_screenshots_stay(claude, provider_server) -> None:
    provider_server.play(*[anthropic_turn({"action": "screenshot"}) for _ in range(5)])
    agent = claude(history="2")
    for _ in range(5):
        agent.act("x", SCREEN)
    messages = provider_server.requests[-1].body["messages"]
    images = [
        part
        for m in messages
        if m["role"] == "user"
        for block in m["content"]
        for part in (block["content"] if block["type"] == "tool_result" else [block])
        if part["type"] == "image"
    ]
    assert len(images) == 2


def test_parse_osworld_maps_as_osworlds_agent(claude, provider_server) -> None:
    provider_server.play(
        anthropic_turn(
            {"action": "key", "text": "KP_0"},
            {"action": "left_click", "coordinate": [640, 360]},
            {"action": "wait", "duration": 5},
            {"action": "type", "text": "a\n"},
        ),
        anthropic_turn({"action": "zoom", "region": [0, 0, 10, 10]}, text="[INFEASIBLE]"),
    )
    agent = claude(parse="osworld")
    step = agent.act("x", SCREEN)
    codes = [a.code for a in step.actions]
    assert codes == [  # desktop-env 1.0.2's AnthropicAgent, checked by parity/protocols.py
        "pyautogui.keyDown('kp_0')\npyautogui.keyUp('kp_0')\n",  # pressed nothing: not a pyautogui key
        "pyautogui.click(960, 540)\n",  # 1280x720 scaled to 1920x1080
        "pyautogui.sleep(0.5)\n",
        'pyautogui.typewrite("""a\n""", interval=0.01)\n',
    ]
    assert provider_server.requests[0].body["tools"][0]["display_width_px"] == 1280
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["FAIL"]
    results = provider_server.requests[1].body["messages"][2]["content"]
    assert {r["content"][0]["text"] for r in results} == {"Success"}


def test_parse_osworld_asks_three_times_for_a_call_it_cannot_map_then_fails(claude, provider_server) -> None:
    provider_server.play(
        *[anthropic_turn({"action": "cursor_position"}) for _ in range(3)],
        anthropic_turn({"action": "cursor_position"}),
        anthropic_turn({"action": "left_click", "coordinate": [640, 360]}),
    )
    agent = claude(parse="osworld")
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["FAIL"]  # AnthropicAgent's 3 tries
    assert len(provider_server.requests) == 3
    step = agent.act("x", SCREEN)  # a turn that maps on the second try
    assert [a.code for a in step.actions] == ["pyautogui.click(960, 540)\n"]


@pytest.mark.parametrize(
    ("model", "tool"),
    [
        ("claude-opus-5-5", "computer_toolset_20260801"),
        ("claude-sonnet-4-6", "computer_20251124"),
        ("claude-opus-4-7", "computer_20251124"),
        ("claude-sonnet-4-5-20250929", "computer_20250124"),
        ("claude-3-7-sonnet-20250219", "computer_20250124"),
    ],
)
def test_the_tool_is_the_newest_the_model_takes(native_agent, model, tool) -> None:
    agent = native_agent("claude-cu")
    agent.model = model
    assert agent._tool_version() == tool


def test_the_claude_5_toolset_calls_member_tools_by_name_without_a_beta(claude, provider_server) -> None:
    turn = anthropic_turn({"coordinate": [960, 540]}, {"text": "ctrl+s"}, tool="left_click")
    turn["body"]["content"][1]["name"] = "key"  # two member tools in one turn
    provider_server.play(turn, anthropic_turn(text="done"))
    agent = claude(tool="computer_toolset_20260801")
    step = agent.act("x", SCREEN)
    # the screenshot goes at the screen's size: coordinates are screen pixels
    assert "pyautogui.click(960, 540," in step.actions[0].code
    assert "pyautogui.hotkey('ctrl', 's')" in step.actions[1].code
    request = provider_server.requests[0]
    assert request.path == "/v1/messages" and "anthropic-beta" not in request.headers
    assert request.body["tools"] == [{"type": "computer_toolset_20260801"}]
    assert _image_size(request.body["messages"][0]["content"][0]) == (1920, 1080)
