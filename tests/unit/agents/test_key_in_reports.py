"""A whole run with a model agent: the API key reaches the provider and nowhere else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_wire import FAKE_KEY, ProviderServer, recording, with_text

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


def test_key_is_absent_from_junit_results_and_output(
    pytester: pytest.Pytester, provider_server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    provider_server.play(
        recording("openai_rate_limit"),
        recording("openai_server_error"),
        recording("openai_step"),
        with_text("openai_step", "Done.\n```DONE```"),
    )
    pytester.makeini("[pytest]\nosworld_provider = fake\nosworld_results_dir = results\n")
    path = pytester.path / "tasks" / "os" / f"{TASK['id']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(TASK))
    result = pytester.runpytest(
        "tasks",
        "--agent=gpt-4o",
        f"--agent-arg=base_url={provider_server.url}/v1",
        "--agent-arg=backoff=0.01",
        "--junitxml=junit.xml",
        "-v",
        "-rA",
    )
    result.assert_outcomes(passed=1)
    assert any(r.headers.get("authorization") == f"Bearer {FAKE_KEY}" for r in provider_server.requests)
    assert FAKE_KEY not in result.stdout.str() + result.stderr.str()
    written = [p for p in Path(pytester.path).rglob("*") if p.is_file() and p.suffix != ".png"]
    assert any(p.name == "junit.xml" for p in written) and any(p.name == "traj.jsonl" for p in written)
    for file in written:
        if file.name in ("tox.ini", f"{TASK['id']}.json"):
            continue
        assert FAKE_KEY not in file.read_text(errors="replace"), file
    usage = json.loads(next(Path(pytester.path).rglob("result.json")).read_text())["usage"]
    assert usage["input_tokens"] > 0
