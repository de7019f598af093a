"""A whole run with each model agent: the API key reaches the provider and nowhere else."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from agent_wire import FAKE_KEY, ProviderServer, recording, with_text
from protocol_wire import anthropic_turn, gemini_turn, responses_turn

TASK = {
    "id": "22222222-0000-0000-0000-00000000aaaa",
    "instruction": "Write hello into ~/hello.txt.",
    "config": [],
    "evaluator": {
        "func": "exact_match",
        "result": {"type": "vm_command_line", "command": ["cat", "/home/user/hello.txt"]},
        "expected": {"type": "rule", "rules": {"expected": "hello; world"}},
    },
}

#: agent -> (key variable, recordings prefix, base_url suffix, --model)
AGENTS = {
    "claude3": ("ANTHROPIC_API_KEY", "anthropic", "", None),
    "claude": ("ANTHROPIC_API_KEY", "anthropic", "", None),
    "gpt-4v": ("OPENAI_API_KEY", "openai", "/v1", None),
    "gpt-4o": ("OPENAI_API_KEY", "openai", "/v1", None),
    "gemini": ("GEMINI_API_KEY", "gemini", "", None),
    "openai-compatible": ("OPENAI_API_KEY", "openai", "/v1", "qwen2.5-vl-7b"),
}


def _run(
    pytester: pytest.Pytester, task: dict[str, Any], agent: str, base_url: str, model: str | None = None
) -> pytest.RunResult:
    """Run ``task`` with ``agent`` on the fake provider, logging everything, with a JUnit file."""
    pytester.makeini(
        "[pytest]\nosworld_provider = fake\nosworld_results_dir = results\n"
        "filterwarnings = ignore::DeprecationWarning\n"
    )
    path = pytester.path / "tasks" / "os" / f"{task['id']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(task))
    return pytester.runpytest(
        "tasks",
        f"--agent={agent}",
        *([f"--model={model}"] if model else []),
        f"--agent-arg=base_url={base_url}",
        "--agent-arg=backoff=0.01",
        "--junitxml=junit.xml",
        "-v",
        "-rA",
        "--log-level=DEBUG",
    )


@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_key_is_absent_from_junit_results_and_output(
    pytester: pytest.Pytester,
    provider_server: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
) -> None:
    key_env, prefix, suffix, model = AGENTS[agent]
    monkeypatch.setenv(key_env, FAKE_KEY)
    provider_server.play(
        recording(f"{prefix}_rate_limit"),
        recording(f"{prefix}_server_error"),
        recording(f"{prefix}_step"),
        with_text(f"{prefix}_step", "Done.\n```DONE```"),
    )
    result = _run(pytester, TASK, agent, f"{provider_server.url}{suffix}", model)
    result.assert_outcomes(passed=1)
    assert len(provider_server.requests) == 4  # 429 and 500 retried, then two steps
    # The key did reach the provider, in a request header.
    assert any(FAKE_KEY in value for r in provider_server.requests for value in r.headers.values())
    assert FAKE_KEY not in result.stdout.str() + result.stderr.str()
    written = [p for p in Path(pytester.path).rglob("*") if p.is_file() and p.suffix != ".png"]
    names = {p.name for p in written}
    assert {"junit.xml", "traj.jsonl", "result.json"} <= names
    for file in written:
        if file.name in ("tox.ini", f"{TASK['id']}.json"):
            continue
        assert FAKE_KEY not in file.read_text(errors="replace"), file
    usage = json.loads(next(Path(pytester.path).rglob("result.json")).read_text())["usage"]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    root = ET.parse(pytester.path / "junit.xml").getroot()
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["agent"] == agent
    assert int(props["input_tokens"]) == usage["input_tokens"]


INFEASIBLE_TASK = {
    "id": "22222222-0000-0000-0000-00000000bbbb",
    "instruction": "Make the desktop fly.",
    "config": [],
    "evaluator": {"func": "infeasible"},
}

#: native agent -> (key variable, base_url suffix, a turn with an action, a turn that gives up)
NATIVE = {
    "claude-cu": (
        "ANTHROPIC_API_KEY",
        "",
        "anthropic",
        lambda: anthropic_turn({"action": "key", "text": "Escape"}),
        lambda: anthropic_turn(text="This cannot be done. [INFEASIBLE]"),
    ),
    "openai-cu": (
        "OPENAI_API_KEY",
        "/v1",
        "openai",
        lambda: responses_turn({"type": "keypress", "keys": ["ESC"]}),
        lambda: responses_turn(text="[INFEASIBLE]"),
    ),
    "gemini-cu": (
        "GEMINI_API_KEY",
        "",
        "gemini",
        lambda: gemini_turn(("key_combination", {"keys": "Escape"})),
        lambda: gemini_turn(text="[INFEASIBLE]"),
    ),
}


@pytest.mark.parametrize("agent", sorted(NATIVE))
def test_native_agents_keep_the_key_out_of_results_and_output(
    pytester: pytest.Pytester, provider_server: ProviderServer, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    key_env, suffix, prefix, act, give_up = NATIVE[agent]
    monkeypatch.setenv(key_env, FAKE_KEY)
    provider_server.play(
        recording(f"{prefix}_rate_limit"), recording(f"{prefix}_server_error"), act(), give_up()
    )
    result = _run(pytester, INFEASIBLE_TASK, agent, f"{provider_server.url}{suffix}")
    result.assert_outcomes(passed=1)
    assert len(provider_server.requests) == 4
    assert FAKE_KEY not in result.stdout.str() + result.stderr.str()
    for file in (p for p in Path(pytester.path).rglob("*") if p.is_file() and p.suffix != ".png"):
        assert FAKE_KEY not in file.read_text(errors="replace"), file
    steps = [
        json.loads(line) for line in next(Path(pytester.path).rglob("traj.jsonl")).read_text().splitlines()
    ]
    assert steps[-1]["actions"] == ["FAIL"]
    assert "pyautogui.press('esc" in steps[0]["actions"][0]
