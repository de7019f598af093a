"""``--agent-arg parse=osworld``: answers read exactly as OSWorld's ``mm_agents`` read them.

Each difference docs/parity.md lists under "Found by agent-facing parity" is pinned here
twice: the ``osworld`` mode gives OSWorld's behaviour, the default ``ours`` mode keeps ours.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from agent_wire import FAKE_KEY, with_text

from parity import agent_ours
from parity.agent_compare import Tally, compare_outputs
from parity.agent_fuzz import handpicked
from pytest_osworld.agent.actions import Action, ActionParseError
from pytest_osworld.agent.contract import AGENTS, AgentConfig
from pytest_osworld.agent.observe import Marks, Node
from pytest_osworld.agent.parse import parse_actions
from pytest_osworld.agent.parse_osworld import (
    NO_CODE,
    PARSERS,
    RAW_VALUE,
    bind_all_tags,
    parse_code,
    parse_json,
    parse_osworld,
    to_osworld,
)
from pytest_osworld.agents.llm import COMMON_ARGS, PARSE_FEEDBACK, AgentConfigError
from pytest_osworld.episode.loop import Budget, EndReason, run_episode
from pytest_osworld.errors import UnknownNameError
from pytest_osworld.providers.fake import FakeGuest

ROOT = Path(__file__).resolve().parents[3]
GOLDEN = ROOT / "tests" / "data" / "a11y_trees" / "osworld_results.json.gz"
#: The masks parity/agent_facing.py resolves tags against (the golden file's SoM answers).
MASKS = [[10 * i, 20 * i + 3, 31 + i, 17 + 2 * i] for i in range(15)]
BOXES = [[10, 20, 30, 40], [100, 100, 11, 7]]
MARKS = Marks(image=b"", boxes=BOXES, nodes=[Node("mark", "", "", *box) for box in BOXES], table="")


def code(text: str) -> Action:
    return Action("code", code=text)


def c13(params: dict[str, Any]) -> Action:
    return Action("computer_13", params=params)


def check(mode: str, answer: str, action_space: str, expected: list[Action] | str) -> None:
    """``mode`` reads ``expected`` from ``answer``; a str is the start of the parse error."""
    try:
        got: list[Action] | str = PARSERS[mode].parse(answer, action_space)
    except ActionParseError as exc:
        got = f"error: {exc}"
    if isinstance(expected, str):
        assert isinstance(got, str), (mode, got)
        assert got.startswith(expected), (mode, got)
    else:
        assert got == expected, mode


PRESS_A = '{"action_type": "PRESS", "parameters": {"key": "a"}}'
CLICK = {"action_type": "CLICK", "parameters": {"x": 1, "y": 2}}

# (documented name, action space, answer, ours-mode result, osworld-mode result); a str
# result is the start of the parse error's message.
DIFFERENCES = [
    (
        "semicolons",
        "pyautogui",
        "```python\npyautogui.typewrite('a;b')\n```",
        [code("pyautogui.typewrite('a;b')")],
        [code("pyautogui.typewrite('a\nb')")],
    ),
    (
        "semicolons (indentation lost)",
        "pyautogui",
        "```python\nfor i in range(2):\n    x = 1; y = 2\n```",
        [code("for i in range(2):\n    x = 1; y = 2")],
        [code("for i in range(2):\n    x = 1\ny = 2")],
    ),
    (
        "refused_code (forbidden call)",
        "pyautogui",
        "```python\npyautogui.screenshot()\n```",
        "error: code block 1 calls screenshot()",
        [code("pyautogui.screenshot()")],
    ),
    (
        "refused_code (syntax)",
        "pyautogui",
        "```python\npyautogui.click(10, \n```",
        "error: code block 1 is not valid Python",
        [code("pyautogui.click(10,")],
    ),
    ("special_in_prose", "pyautogui", "All set.\nDONE", [Action("DONE")], f"error: {NO_CODE}"),
    (
        "first_word_eaten",
        "pyautogui",
        "```import time\ntime.sleep(1)\n```",
        [code("import time\ntime.sleep(1)")],
        [code("time\ntime.sleep(1)")],
    ),
    ("first_word_eaten (special)", "pyautogui", "```DONE\n```", [Action("DONE")], [code("")]),
    (
        "indented_special",
        "pyautogui",
        "```python\npyautogui.click(1, 2)\n DONE\n```",
        [code("pyautogui.click(1, 2)"), Action("DONE")],
        [code("pyautogui.click(1, 2)\n DONE")],
    ),
    (
        "validated",
        "computer_13",
        '```json\n{"action_type": "BOGUS", "parameters": {}}\n```',
        "error: unknown computer_13 action_type 'BOGUS'",
        [c13({"action_type": "BOGUS", "parameters": {}})],
    ),
    (
        "more_shapes (python block)",
        "computer_13",
        f"```python\n{PRESS_A}\n```",
        [c13(json.loads(PRESS_A))],
        "error: OSWorld's parser finds no action: the answer has no JSON block",
    ),
    (
        "more_shapes (json blocks only)",
        "computer_13",
        f"```json\n{json.dumps(CLICK)}\n```\n```python\n{PRESS_A}\n```",
        [c13(CLICK), c13(json.loads(PRESS_A))],
        [c13(CLICK)],
    ),
    (
        "list_flattened",
        "computer_13",
        f'```json\n[{json.dumps(CLICK)}, {{"action_type": "DONE"}}]\n```',
        [c13(CLICK), Action("DONE")],
        [c13({RAW_VALUE: [CLICK, {"action_type": "DONE"}]})],
    ),
]


@pytest.mark.parametrize(
    ("action_space", "answer", "ours", "osworld"),
    [case[1:] for case in DIFFERENCES],
    ids=[case[0] for case in DIFFERENCES],
)
def test_documented_difference_in_both_modes(action_space: str, answer: str, ours: Any, osworld: Any) -> None:
    check("ours", answer, action_space, ours)
    check("osworld", answer, action_space, osworld)


def test_unknown_tag_is_left_to_fail_in_the_environment() -> None:
    answer = "```python\npyautogui.click(tag_9)\n```"
    (action,) = parse_code(answer)
    with pytest.raises(ActionParseError, match="tag_9 is not a mark"):
        PARSERS["ours"].bind_tags(action.code, MARKS)
    bound = PARSERS["osworld"].bind_tags(action.code, MARKS)
    assert bound == "tag_1=(25, 40)\ntag_2=(105, 103)\npyautogui.click(tag_9)"


def test_every_mark_is_bound_before_code_but_not_before_a_special() -> None:
    assert bind_all_tags("", MARKS) == "tag_1=(25, 40)\ntag_2=(105, 103)\n"
    assert bind_all_tags("DONE ", MARKS) == "DONE "  # code (it fails), but OSWorld binds nothing
    assert PARSERS["ours"].bind_tags("pyautogui.click(tag_2)", MARKS) == (
        "tag_2 = (105, 103)\npyautogui.click(tag_2)"
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (" DONE\n", [Action("DONE")]),
        ("```WAIT```", [Action("WAIT")]),
        ("```python\nx = 1\nFAIL\n```", [code("x = 1"), Action("FAIL")]),
        ("```python\nWAIT\nDONE\n```", [Action("WAIT"), Action("DONE")]),
        ("```python\nDONE \nWAIT\n```", [code("DONE "), Action("WAIT")]),  # "DONE " is code
        ("```\n```", [code("")]),  # OSWorld's no-op action
        ("a ```python x = 1``` b ```y = 2```", [code("x = 1"), code("= 2")]),  # "y " is a "tag"
        ("DONE; ", [Action("DONE")]),
        ("```python\nunterminated", f"error: {NO_CODE}"),
        ("", f"error: {NO_CODE}"),
    ],
)
def test_pyautogui_answers_as_osworld_reads_them(answer: str, expected: Any) -> None:
    check("osworld", answer, "pyautogui", expected)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("WAIT", [Action("WAIT")]),
        ('"FAIL"', [Action("FAIL")]),
        # Not a special action: OSWorld's environment does not end the episode on it.
        ('{"action_type": "DONE"}', [c13({"action_type": "DONE"})]),
        ('{"x": 1}', [c13({"x": 1})]),
        ("3", [c13({RAW_VALUE: 3})]),
        ("``` \n[] \n```", [c13({RAW_VALUE: []})]),
        ('```json\n{"a": 1}\n```\n```json\n{oops\n```', "error: OSWorld's parser finds no action: block 2"),
        ("plain words", "error: OSWorld's parser finds no action: the answer has no JSON block"),
    ],
)
def test_computer13_answers_as_osworld_reads_them(answer: str, expected: Any) -> None:
    check("osworld", answer, "computer_13", expected)


def test_to_osworld_gives_back_osworlds_values() -> None:
    assert [to_osworld(a) for a in parse_json("```json\n[1, 2]\n```")] == [[1, 2]]
    assert [to_osworld(a) for a in parse_json('{"osworld_value": 5}')] == [{"osworld_value": 5}]
    assert [to_osworld(a) for a in parse_code("```\nx = 1\nDONE\n```")] == ["x = 1", "DONE"]


def test_unknown_action_space_is_named() -> None:
    with pytest.raises(UnknownNameError, match="unknown action space 'computer_14'"):
        parse_osworld("DONE", "computer_14")


def test_the_modes_are_a_registry_and_ours_is_the_default() -> None:
    assert sorted(PARSERS) == ["osworld", "ours"]
    assert COMMON_ARGS["parse"] == "ours"
    assert PARSERS["ours"].parse is parse_actions
    assert (PARSERS["ours"].feedback, PARSERS["osworld"].feedback) == (True, False)


def test_osworld_mode_equals_osworlds_recorded_results() -> None:
    """OSWorld's own results on the hand-picked answers (recorded by parity/agent_facing.py)."""
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    answers = handpicked()
    assert len(answers) == len(golden["outputs"])
    tally = Tally()
    compare_outputs(tally, answers, golden["outputs"], MASKS, "osworld")
    assert tally.cases == {f"{row} [osworld]": len(answers) for row in golden["outputs"][0]}
    assert tally.disagreements == []
    ours = Tally()
    compare_outputs(ours, answers, golden["outputs"], MASKS)
    assert ours.disagreements  # the default mode does differ on these answers


def test_a_difference_in_osworld_mode_is_never_documented() -> None:
    tally = Tally()
    oracle = [{"parse_actions": {"raised": "ValueError"}, "parse_code": {"value": ["x"]}}]
    oracle[0]["parse_code_som"] = oracle[0]["parse_code"]
    compare_outputs(tally, ["```python\ny\n```"], oracle, MASKS, "osworld")
    report = tally.report({"parse_code [osworld]", "parse_code"}, 0.0, [])
    rows = {row["name"]: row for row in report["rows"]}
    assert rows["parse_code [osworld]"]["undocumented"] == 1
    assert rows["parse_code [osworld]"]["mode"] == "osworld"
    assert rows["parse_actions [osworld]"]["agree"] == 1
    assert report["parse_modes"]["osworld"] == {"cases": 3, "agree": 1, "differences": 2}
    assert agent_ours.osworld_mode("y", MASKS)["parse_code"] == {"error": NO_CODE}


# -- the agent -----------------------------------------------------------------------------------


@pytest.fixture
def make_agent(provider_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)

    def make(observation_type: str = "screenshot", **args: str):
        config = AgentConfig(
            name="gpt-4o",
            args={"base_url": provider_server.url + "/v1", "backoff": "0", **args},
            observation_type=observation_type,
            action_space="pyautogui",
        )
        return AGENTS.get("gpt-4o")(config)

    return make


def test_an_unknown_mode_is_refused_naming_the_choices(make_agent) -> None:
    with pytest.raises(AgentConfigError, match=r"--agent-arg parse='lenient' is not one of: osworld, ours"):
        make_agent(parse="lenient")
    assert make_agent().parse_mode is PARSERS["ours"]
    assert make_agent(parse=" osworld ").parse_mode is PARSERS["osworld"]


def test_osworld_mode_episode(make_agent, provider_server, task) -> None:
    provider_server.play(
        with_text("openai_step", "Type it.\n```python\npyautogui.typewrite('hello; world')\n```"),
        with_text("openai_step", "Nothing to run here."),
        with_text("openai_step", "```python\npyautogui.screenshot()\nDONE\n```"),
    )
    guest = FakeGuest({})
    agent = make_agent(parse="osworld")
    episode = run_episode(task, guest, agent, Budget(max_steps=5))
    assert episode.end_reason is EndReason.DONE
    assert guest.actions == ["pyautogui.typewrite('hello\nworld')", "pyautogui.screenshot()"]
    assert episode.steps[1].parse_error == NO_CODE
    # OSWorld's agent gives the model no feedback on an answer without an action.
    next_turn = json.dumps(provider_server.requests[2].body)
    assert PARSE_FEEDBACK.split("{")[0] not in next_turn
    assert "Nothing to run here." in next_turn  # the answer itself is in the history
