"""A model API that breaks during a run: bounded retries, a hang that times out, garbage.

Whole pytest runs (pytester, fake desktop) with the gpt-4o and claude agents against the
local recorded-response server. A task whose API stays down is an ERROR with the reason
and a bounded number of requests; the next task of the same session passes; garbage from
the model is a wasted step, not a crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_wire import ProviderServer, recording, with_text

#: The fake API key (defined here: ``conftest`` names another module when tests/plugin
#: runs in the same session).
FAKE_KEY = "sk-test-FAULTS-0c41d7e9a2"

BROKEN_ID = "33333333-0000-0000-0000-00000000000a"
NEXT_ID = "33333333-0000-0000-0000-00000000000b"

#: One-line model answers, as the agents' prompts ask for them.
WRITE_HELLO = "I will write the file.\n```python\n# fake: write /home/user/out.txt hello\n```"
DONE = "Done.\n```DONE```"

AGENTS = {
    "openai": ("--agent=gpt-4o", "OPENAI_API_KEY", "base_url={url}/v1"),
    "anthropic": ("--agent=claude", "ANTHROPIC_API_KEY", "base_url={url}"),
}


def task(task_id: str) -> dict[str, Any]:
    """Write hello into ~/out.txt (the fake desktop applies ``# fake: write`` lines)."""
    return {
        "id": task_id,
        "instruction": "Write hello into ~/out.txt.",
        "config": [],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": ["cat", "/home/user/out.txt"]},
            "expected": {"type": "rule", "rules": {"expected": "hello"}},
        },
    }


def run(
    pytester: pytest.Pytester,
    server: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    *args: str,
) -> pytest.RunResult:
    """Two tasks, the broken one first, in one session of the ``provider`` agent."""
    agent, key_env, base_url = AGENTS[provider]
    monkeypatch.setenv(key_env, FAKE_KEY)
    pytester.makeini("[pytest]\nosworld_provider = fake\nosworld_results_dir = results\n")
    for name, task_id in (("a_broken", BROKEN_ID), ("b_next", NEXT_ID)):
        path = pytester.path / "tasks" / "os" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(task(task_id)))
    return pytester.runpytest(
        "tasks",
        agent,
        f"--agent-arg={base_url.format(url=server.url)}",
        "--agent-arg=backoff=0.01",
        "--agent-arg=max_attempts=3",
        "-p",
        "no:randomly",
        "-rA",
        *args,
    )


def result_of(pytester: pytest.Pytester, task_id: str) -> dict[str, Any]:
    (path,) = Path(pytester.path).rglob(f"{task_id}/result.json")
    return json.loads(path.read_text())


def traj_of(pytester: pytest.Pytester, task_id: str) -> list[dict[str, Any]]:
    (path,) = Path(pytester.path).rglob(f"{task_id}/traj.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def then_the_next_task(provider: str) -> list[dict[str, Any]]:
    return [with_text(f"{provider}_step", WRITE_HELLO), with_text(f"{provider}_step", DONE)]


@pytest.mark.parametrize("provider", sorted(AGENTS))
@pytest.mark.parametrize(
    ("fault", "status"),
    [("rate_limit", "HTTP 429"), ("server_error", "HTTP 500")],
)
def test_an_api_that_keeps_failing_is_an_error_after_bounded_retries(
    pytester: pytest.Pytester,
    provider_server: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    fault: str,
    status: str,
) -> None:
    # More failures queued than attempts allowed: the agent must stop at its budget.
    provider_server.play(*[recording(f"{provider}_{fault}")] * 3)
    provider_server.play(*then_the_next_task(provider))
    result = run(pytester, provider_server, monkeypatch, provider)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"the agent failed: * still failing after 3 attempts over *: {status}*"])
    broken = result_of(pytester, BROKEN_ID)
    assert broken["outcome"] == "error" and broken["score"] is None and broken["steps"] == 0
    assert "still failing after 3 attempts" in broken["reason"] and status in broken["reason"]
    assert traj_of(pytester, BROKEN_ID) == [{"Error": broken["reason"]}]
    assert len(provider_server.requests) == 3 + 2
    assert result_of(pytester, NEXT_ID)["outcome"] == "passed"


@pytest.mark.parametrize("provider", sorted(AGENTS))
def test_a_hanging_api_hits_its_timeout_and_is_an_error(
    pytester: pytest.Pytester, provider_server: ProviderServer, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    hang = recording(f"{provider}_step")
    hang["delay"] = 30.0
    provider_server.play(hang, hang)
    provider_server.play(*then_the_next_task(provider))
    result = run(
        pytester,
        provider_server,
        monkeypatch,
        provider,
        "--agent-arg=timeout=2",
        "--agent-arg=max_attempts=2",
    )
    result.assert_outcomes(passed=1, errors=1)
    broken = result_of(pytester, BROKEN_ID)
    assert broken["outcome"] == "error"
    assert "still failing after 2 attempts" in broken["reason"]
    assert "timed out" in broken["reason"].lower() or "timeout" in broken["reason"].lower()
    assert len(provider_server.requests) == 2 + 2
    # Two 2 s timeouts (0.5 s was too tight for a loaded machine: its connect or the next
    # task's answer timed out too): a single wait for the 30 s answer would take the session
    # past 30 s (the margin below is for a loaded machine starting a pytest session).
    assert result.duration < 28


@pytest.mark.parametrize("provider", sorted(AGENTS))
def test_garbage_from_the_model_is_a_wasted_step(
    pytester: pytest.Pytester, provider_server: ProviderServer, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    provider_server.play(
        with_text(f"{provider}_step", "\x00\ufffd}{ lorem ipsum ```pyth"),
        with_text(f"{provider}_step", ""),
        with_text(f"{provider}_step", DONE),
    )
    provider_server.play(*then_the_next_task(provider))
    result = run(pytester, provider_server, monkeypatch, provider)
    # The model never acted: a FAIL with a score, not an ERROR.
    result.assert_outcomes(passed=1, failed=1)
    broken = result_of(pytester, BROKEN_ID)
    assert broken["outcome"] == "failed" and broken["score"] == 0.0 and broken["steps"] == 3
    steps = traj_of(pytester, BROKEN_ID)
    assert [bool(step["parse_error"]) for step in steps] == [True, True, False]
    assert all(step["actions"] == [] for step in steps[:2])
    assert result_of(pytester, NEXT_ID)["outcome"] == "passed"


@pytest.mark.parametrize("provider", sorted(AGENTS))
def test_a_garbage_http_body_is_retried_then_an_error_with_the_reason(
    pytester: pytest.Pytester, provider_server: ProviderServer, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    # A proxy's error page with status 200, until the attempts run out.
    provider_server.play(*[{"status": 200, "body": "<html>502 Bad Gateway</html>"}] * 3)
    provider_server.play(*then_the_next_task(provider))
    result = run(pytester, provider_server, monkeypatch, provider)
    result.assert_outcomes(passed=1, errors=1)
    broken = result_of(pytester, BROKEN_ID)
    assert broken["outcome"] == "error"
    assert "still failing after 3 attempts" in broken["reason"]
    assert "the answer is not a " in broken["reason"] and "502 Bad Gateway" in broken["reason"]
    assert len(provider_server.requests) == 3 + 2
    assert FAKE_KEY not in result.stdout.str() + json.dumps(broken)
    assert result_of(pytester, NEXT_ID)["outcome"] == "passed"
