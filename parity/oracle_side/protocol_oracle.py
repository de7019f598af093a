"""Run OSWorld's native agents' mappings (mm_agents) on protocol cases; runs INSIDE .parity-venv.

    .parity-venv/bin/python parity/oracle_side/protocol_oracle.py CASES.json RESULTS.json

CASES.json: {"screen": [w, h], "cases": [{"protocol", "input", ...}]} (parity/protocol_cases.py).
RESULTS.json: {"results": [...]}, one per case: {"value": [action, ...]} where each action is
what OSWorld's agent hands its environment (a pyautogui code string or WAIT/DONE/FAIL), or
{"raised": "ExceptionType"} when OSWorld's code raised.

What is called, per protocol (desktop-env 1.0.2):

- ``claude``: ``AnthropicAgent.parse_actions_from_tool_call`` on one ``tool_use`` block;
- ``openai``: ``OpenAICUAAgent._convert_cua_action_to_pyautogui_action`` on one computer
  action (``None``, no action, is an empty list); drag points are objects with ``x``/``y``
  as the OpenAI SDK gives them;
- ``ui-tars``: ``UITARSAgent.predict`` on one answer, its model client replaced by one that
  answers the case's text every time (so an unreadable answer goes through OSWorld's
  retries to its ending), on a 1920x1080 screenshot;
- ``qwen3-vl`` / ``qwen2.5-vl``: ``parse_response`` of ``Qwen3VLAgent`` / ``Qwen25VLAgent``;
- ``opencua``: ``OpenCUAAgent.predict`` with ``call_llm`` answering the case's text.

The model-client libraries these modules import at module level (and never use here) are
replaced by inert stand-ins before the import, as in agent_oracle.py; so is
``mm_agents.utils.qwen_vl_utils``, which the 1.0.2 wheel does not ship (the Qwen agents
import its ``smart_resize`` only for their screenshots, which are not used here).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import logging
import os
import sys
import types
from typing import Any

_CLIENTS = (
    "anthropic",
    "anthropic.types",
    "anthropic.types.beta",
    "openai",
    "loguru",
    "httpx",
    "dashscope",
    "backoff",
    "google.api_core",
    "google.api_core.exceptions",
    "google.generativeai",
    "groq",
    "tiktoken",
    "mm_agents.utils",
    "mm_agents.utils.qwen_vl_utils",
)
LOG = logging.getLogger("protocol_oracle")
LOG.addHandler(logging.NullHandler())
LOG.propagate = False


def _inert_init(self: Exception, *_args: Any, **_kwargs: Any) -> None:
    Exception.__init__(self)


class _Permissive(types.ModuleType):
    """A stand-in module: capitalised names are exception classes (made with any arguments),
    others decorators."""

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr[:1].isupper():
            made = type(attr, (Exception,), {"__init__": _inert_init})
            setattr(self, attr, made)
            return made
        return lambda *args, **kwargs: lambda function=None, *a, **k: function


def _stub_clients() -> None:
    for name in _CLIENTS:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            sys.modules[name] = _Permissive(name)
    loguru = sys.modules.get("loguru")
    if isinstance(loguru, _Permissive):
        loguru.logger = LOG  # type: ignore[attr-defined]
    os.environ.setdefault("DOUBAO_API_URL", "http://127.0.0.1:9/v1")
    os.environ.setdefault("DOUBAO_API_KEY", "none")


def _ns(**fields: Any) -> types.SimpleNamespace:
    return types.SimpleNamespace(**fields)


class _Chat:
    """An OpenAI-style client whose every completion is ``text``."""

    def __init__(self) -> None:
        self.text = ""
        self.chat = _ns(completions=_ns(create=self._create))

    def _create(self, **_kwargs: Any) -> types.SimpleNamespace:
        return _ns(choices=[_ns(message=_ns(content=self.text))])


def _png(size: tuple[int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, (40, 90, 160)).save(out, format="PNG")
    return out.getvalue()


class Oracle:
    """One instance of each of OSWorld's agents, reset before every case."""

    def __init__(self, screen: tuple[int, int], qwen25_processed: tuple[int, int]) -> None:
        from mm_agents.anthropic.main import AnthropicAgent
        from mm_agents.openai_cua_agent import OpenAICUAAgent
        from mm_agents.opencua.opencua_agent import OpenCUAAgent
        from mm_agents.qwen3vl_agent import Qwen3VLAgent
        from mm_agents.qwen25vl_agent import Qwen25VLAgent
        from mm_agents.uitars15_v1 import UITARSAgent

        self.screen = screen
        self.qwen25_processed = qwen25_processed
        self.png = _png(screen)
        self.claude = AnthropicAgent(screen_size=screen)
        self.openai = OpenAICUAAgent(env=None, screen_width=screen[0], screen_height=screen[1])
        conf = {
            "temperature": 0.0,
            "top_k": -1,
            "top_p": 0.9,
            "max_tokens": 500,
            "infer_mode": "qwen25vl_normal",
            "prompt_style": "qwen25vl_normal",
            "input_swap": True,
            "language": "English",
            "max_pixels": 16384 * 28 * 28,
            "min_pixels": 100 * 28 * 28,
            "callusr_tolerance": 3,
            "history_n": 5,
        }
        self.chat = _Chat()
        self.uitars = {}
        for model_type in ("qwen25vl", "qwen2vl"):
            agent = UITARSAgent(model="ui-tars", runtime_conf=conf, model_type=model_type)
            agent.vlm = self.chat
            self.uitars[model_type] = agent
        self.qwen3 = Qwen3VLAgent(coordinate_type="relative")
        self.qwen3.reset(LOG)
        self.qwen25 = Qwen25VLAgent()
        self.qwen25.reset(LOG)
        self.opencua = {}
        for kind in ("qwen25", "relative"):
            agent = OpenCUAAgent(
                model="opencua", history_type="action_history", max_steps=100, coordinate_type=kind
            )
            agent.reset(LOG)
            agent.call_llm = lambda payload, model: self.chat.text
            self.opencua[kind] = agent

    def run(self, case: dict[str, Any]) -> dict[str, Any]:
        """OSWorld's actions for one case, or the exception's type."""
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                value = self._actions(case)
        except Exception as error:  # the oracle's exception is a result here
            return {"raised": type(error).__name__}
        return {"value": value}

    def _actions(self, case: dict[str, Any]) -> list[Any]:
        protocol, data = case["protocol"], case["input"]
        if protocol == "claude":
            return [self.claude.parse_actions_from_tool_call({"name": "computer", "id": "t", "input": data})]
        if protocol == "openai":
            args = {k: v for k, v in data.items() if k != "type"}
            if isinstance(args.get("path"), list):
                args["path"] = [_ns(**p) if isinstance(p, dict) else p for p in args["path"]]
            code = self.openai._convert_cua_action_to_pyautogui_action(data.get("type"), args)
            return [] if code is None else [code]
        self.chat.text = data
        if protocol in ("ui-tars", "ui-tars-relative"):
            agent = self.uitars["qwen25vl" if protocol == "ui-tars" else "qwen2vl"]
            agent.reset()
            agent.cur_callusr_count = 0
            _prediction, actions = agent.predict("the task", {"screenshot": self.png})
            return list(actions)
        if protocol == "qwen3-vl":
            _instruction, codes = self.qwen3.parse_response(data, *self.screen, *self.screen)
            return list(codes)
        if protocol == "qwen2.5-vl":
            _instruction, codes = self.qwen25.parse_response(data, *self.screen, *self.qwen25_processed)
            return list(codes)
        if protocol in ("opencua", "opencua-relative"):
            agent = self.opencua["qwen25" if protocol == "opencua" else "relative"]
            agent.reset(LOG)
            _response, actions, _cot = agent.predict("the task", {"screenshot": self.png})
            return list(actions)
        raise ValueError(f"unknown protocol {protocol!r}")


def main() -> int:
    _stub_clients()
    with open(sys.argv[1], encoding="utf-8") as handle:
        cases = json.load(handle)
    oracle = Oracle(tuple(cases["screen"]), tuple(cases["qwen25_processed"]))
    results = [oracle.run(case) for case in cases["cases"]]
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        json.dump({"results": results}, handle, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
