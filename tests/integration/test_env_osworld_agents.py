"""OSWorld's own PromptAgent, unchanged, completes one of our tasks under pytest.

The model is a recorded-response OpenAI-compatible server on 127.0.0.1 (PromptAgent reads
``OPENAI_BASE_URL``): it answers each chat completion with the next line of the task's
reference solution as a code block, then ``DONE``. Needs ``scripts/osworld-agents``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.agents.osworld_adapter import enable_osworld_agents

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "tasks" / "os" / "ef9ea0c2-4f77-4017-9a2c-592f165ae51f.json"


def mm_agents_installed() -> bool:
    enable_osworld_agents()
    try:
        import mm_agents.agent  # noqa: F401
    except ImportError:
        return False
    return True


needs_mm_agents = pytest.mark.skipif(
    not mm_agents_installed(), reason="OSWorld's agents are not installed: run scripts/osworld-agents"
)


class RecordedModel:
    """An OpenAI-compatible chat-completions endpoint answering from a list."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                text = model.answers.pop(0) if model.answers else "```FAIL```"
                reply = {
                    "id": f"rec-{len(model.requests)}",
                    "object": "chat.completion",
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def model() -> Iterator[RecordedModel]:
    solution = json.loads(TASK.read_text())["solution"]
    answers = [f"Next I will do this.\n```python\n{code}\n```" for code in solution[:-1]] + ["```DONE```"]
    recorded = RecordedModel(answers)
    yield recorded
    recorded.close()


def run_pytest(
    tmp_path: Path, model: RecordedModel, observation_type: str
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OPENAI_BASE_URL=model.url, OPENAI_API_KEY="recorded")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(TASK),
            "-p",
            "no:cacheprovider",
            "-q",
            "--agent=osworld:mm_agents.agent.PromptAgent",
            "--model=gpt-4o",
            "--agent-arg=max_trajectory_length=2",
            f"--observation-type={observation_type}",
            "--action-space=pyautogui",
            f"--results-dir={tmp_path / 'results'}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@needs_mm_agents
@pytest.mark.parametrize("observation_type", ["screenshot", "a11y_tree"])
def test_prompt_agent_completes_a_task_against_recorded_responses(
    tmp_path: Path, model: RecordedModel, observation_type: str
) -> None:
    result = run_pytest(tmp_path, model, observation_type)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout
    assert len(model.requests) == 5  # four code steps and DONE, one model call each
    first = model.requests[0]
    assert (first["path"], first["auth"], first["model"]) == (
        "/v1/chat/completions",
        "Bearer recorded",
        "gpt-4o",
    )
    assert (
        "fix its permissions" in first["messages"][0]["content"][0]["text"]
    )  # the instruction, in the system prompt
    content = first["messages"][-1]["content"]
    kinds = {part["type"] for part in content}
    if observation_type == "screenshot":
        assert "image_url" in kinds
        assert content[-1]["image_url"]["url"].startswith("data:image/png;base64,")
    else:  # the linearised tree, cut with tiktoken's local cl100k_base
        assert kinds == {"text"} and "tag\tname\ttext" in content[0]["text"]
    result_json = next((tmp_path / "results").rglob("result.json"))
    assert json.loads(result_json.read_text())["score"] == 1.0
