"""Model turns in each native computer-use protocol's wire format, for the stand-in servers.

Each function returns a recording for :class:`agent_wire.ProviderServer` (``{"status",
"body"}``) whose body is what the vendor's API answers: an Anthropic Messages response
with ``tool_use`` blocks, an OpenAI Responses response with ``computer_call`` items, a
Gemini ``generateContent`` response with function calls, or a Chat Completions response
whose text carries an open model's action grammar. The vendors' SDKs read them unchanged.
"""

from __future__ import annotations

import itertools
from typing import Any

_ids = itertools.count(1)


def _id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


def anthropic_turn(
    *actions: dict[str, Any], text: str = "", thinking: str = "", tool: str = "computer"
) -> dict[str, Any]:
    """A Messages response: optional thinking and text, then one ``tool_use`` per action input."""
    content: list[dict[str, Any]] = []
    if thinking:
        content.append({"type": "thinking", "thinking": thinking, "signature": "sig-" + _id("t")})
    if text:
        content.append({"type": "text", "text": text})
    content += [{"type": "tool_use", "id": _id("toolu"), "name": tool, "input": action} for action in actions]
    return {
        "status": 200,
        "body": {
            "id": _id("msg"),
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": content,
            "stop_reason": "tool_use" if actions else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1500, "output_tokens": 60},
        },
    }


def responses_turn(
    *actions: dict[str, Any], text: str = "", batched: bool = True, safety: tuple[dict[str, str], ...] = ()
) -> dict[str, Any]:
    """A Responses response: a message with ``text`` and/or one ``computer_call`` holding
    ``actions`` (GA ``actions[]`` when ``batched``, else the preview's single ``action``)."""
    output: list[dict[str, Any]] = []
    if text:
        output.append(
            {
                "type": "message",
                "id": _id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    if actions:
        call: dict[str, Any] = {
            "type": "computer_call",
            "id": _id("cu"),
            "call_id": _id("call"),
            "status": "completed",
            "pending_safety_checks": list(safety),
        }
        if batched:
            call["actions"] = list(actions)
        else:
            (call["action"],) = actions
        output.append(call)
    return {
        "status": 200,
        "body": {
            "id": _id("resp"),
            "object": "response",
            "created_at": 1_780_000_000,
            "model": "gpt-5.4",
            "status": "completed",
            "output": output,
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": 1200,
                "output_tokens": 40,
                "total_tokens": 1240,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        },
    }


def gemini_turn(*calls: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    """A ``generateContent`` response: optional text, then one ``functionCall`` per (name, args)."""
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"name": name, "args": args}} for name, args in calls]
    return {
        "status": 200,
        "body": {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 1300, "candidatesTokenCount": 50, "totalTokenCount": 1350},
            "modelVersion": "gemini-2.5-computer-use-preview-10-2025",
        },
    }


def chat_turn(text: str, model: str = "local-model") -> dict[str, Any]:
    """A Chat Completions response whose assistant message is ``text`` (a vLLM-style server)."""
    return {
        "status": 200,
        "body": {
            "id": _id("chatcmpl"),
            "object": "chat.completion",
            "created": 1_780_000_000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1100, "completion_tokens": 30, "total_tokens": 1130},
        },
    }
