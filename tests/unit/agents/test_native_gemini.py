"""``gemini-cu`` through the real google-genai SDK against a stand-in Gemini API."""

from __future__ import annotations

import pytest
from agent_wire import recording
from protocol_wire import gemini_turn
from test_native_claude import SCREEN


@pytest.fixture
def gemini(native_agent):
    return lambda **args: native_agent("gemini-cu", **args)


def test_grid_points_magnitudes_and_keys_reach_the_screen(gemini, provider_server) -> None:
    provider_server.play(
        gemini_turn(
            ("click_at", {"x": 500, "y": 500}),
            ("scroll_at", {"x": 0, "y": 999, "direction": "down", "magnitude": 500}),
            ("key_combination", {"keys": "Control+Shift+ArrowLeft"}),
            ("type_text_at", {"x": 100, "y": 100, "text": "hi", "press_enter": True}),
            text="Working on it.",
        ),
        gemini_turn(text="Done."),
    )
    agent = gemini()
    step = agent.act("do it", SCREEN)
    codes = [a.code for a in step.actions]
    assert "pyautogui.click(960, 540," in codes[0]
    # 500 of 1000 on a 1080 px screen is 540 px: 5 wheel clicks
    assert "pyautogui.scroll(-5, x=0, y=1078)" in codes[1]
    assert "pyautogui.hotkey('ctrl', 'shift', 'left')" in codes[2]
    assert "pyautogui.click(192, 108," in codes[3] and "'backspace'" in codes[5] and "'enter'" in codes[-1]
    body = provider_server.requests[0].body
    assert body["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}]
    assert [a.kind for a in agent.act("do it", SCREEN).actions] == ["DONE"]
    answers = provider_server.requests[1].body["contents"][2]["parts"]
    assert [a["functionResponse"]["name"] for a in answers] == [
        "click_at",
        "scroll_at",
        "key_combination",
        "type_text_at",
    ]
    # the SDK writes function-response parts in snake case, which the API also reads
    (blob,) = answers[-1]["functionResponse"]["parts"][0].values()
    assert set(blob.values()) >= {"image/png"}


def test_safety_decisions_are_acknowledged_and_recorded(gemini, provider_server) -> None:
    decision = {"decision": "require_confirmation", "explanation": "About to accept cookies."}
    provider_server.play(
        gemini_turn(("click_at", {"x": 1, "y": 1, "safety_decision": decision})), gemini_turn(text="ok")
    )
    agent = gemini(environment="desktop")
    step = agent.act("x", SCREEN)
    assert "safety check acknowledged: require_confirmation: About to accept cookies." in step.response
    agent.act("x", SCREEN)
    (answer,) = provider_server.requests[1].body["contents"][2]["parts"]
    assert answer["functionResponse"]["response"] == {"result": "done", "safety_acknowledgement": "true"}
    assert provider_server.requests[0].body["tools"] == [
        {"computerUse": {"environment": "ENVIRONMENT_DESKTOP"}}
    ]


def test_unknown_functions_are_reported_and_infeasible_is_fail(gemini, provider_server) -> None:
    provider_server.play(
        gemini_turn(("teleport", {"x": 1})), gemini_turn(text="[INFEASIBLE] no such setting")
    )
    agent = gemini()
    assert "unknown computer-use function 'teleport'" in (agent.act("x", SCREEN).parse_error or "")
    assert [a.kind for a in agent.act("x", SCREEN).actions] == ["FAIL"]
    (answer,) = provider_server.requests[1].body["contents"][2]["parts"]
    assert "unknown computer-use function" in answer["functionResponse"]["response"]["result"]


def test_screenshots_stay_in_the_three_most_recent_turns_and_errors_are_retried(
    gemini, provider_server
) -> None:
    provider_server.play(
        recording("gemini_rate_limit"),
        recording("gemini_server_error"),
        *[gemini_turn(("wait_5_seconds", {})) for _ in range(5)],
    )
    agent = gemini()
    for _ in range(5):
        agent.act("x", SCREEN)
    contents = provider_server.requests[-1].body["contents"]
    with_images = [
        c
        for c in contents
        if any("inlineData" in p or (p.get("functionResponse") or {}).get("parts") for p in c["parts"])
    ]
    assert len(with_images) == 3
    assert len(provider_server.requests) == 7
