"""Run OSWorld's agent-facing functions (mm_agents) on cases; runs INSIDE .parity-venv.

    .parity-venv/bin/python parity/oracle_side/agent_oracle.py CASES.json RESULTS.json

CASES.json: {"trees": [{"name", "xml", "png_b64"}], "outputs": [str], "max_tokens": int,
"masks": [[x, y, w, h]]}. RESULTS.json holds, per tree, the filtered nodes, the untrimmed
and trimmed linearisation, the Set-of-Marks boxes, table and image pixels' SHA-256; per
model output, what each parser returned (or the exception's type).
The model-client libraries mm_agents/agent.py imports at module level (and never uses in
these functions) are replaced by empty modules before the import.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import json
import os
import sys
import types
import xml.etree.ElementTree as ET
from typing import Any

_CLIENTS = (
    "dashscope",
    "google.generativeai",
    "google.api_core",
    "google.api_core.exceptions",
    "openai",
    "groq",
    "backoff",
)


#: A second, small token budget so that every tree's table is cut.
SMALL_BUDGET = 300


class _Permissive(types.ModuleType):
    """A stand-in module: capitalised names are exception classes, others decorators."""

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr[:1].isupper():
            return type(attr, (Exception,), {})
        return lambda *args, **kwargs: lambda function=None, *a, **k: function


def _stub_clients() -> None:
    for name in _CLIENTS:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            continue
        module = _Permissive(name)
        sys.modules[name] = module
    if importlib.util.find_spec("tiktoken") is None:
        sys.modules["tiktoken"] = types.ModuleType("tiktoken")


def _outcome(function: object, *args: object) -> dict[str, object]:
    try:
        value = function(*args)  # type: ignore[operator]
    except Exception as error:  # the oracle's exception is a result here
        return {"raised": type(error).__name__}
    return {"value": value}


def _tree(
    agent: Any, retrieve: Any, image_type: Any, tree: dict[str, str], max_tokens: int, can_trim: bool
) -> dict[str, object]:
    """Every tree row of one tree (see the module docstring)."""
    xml = tree["xml"]
    out: dict[str, object] = {"name": tree["name"]}
    nodes = retrieve.filter_nodes(ET.fromstring(xml), platform="ubuntu")
    out["filter"] = [[n.tag, n.get("name", ""), n.text or ""] for n in nodes]
    table = agent.linearize_accessibility_tree(xml, platform="ubuntu")
    out["linearize"] = table
    out["trim"] = agent.trim_accessibility_tree(table, max_tokens) if can_trim else None
    out["trim_small"] = agent.trim_accessibility_tree(table, SMALL_BUDGET) if can_trim else None
    png = base64.b64decode(tree["png_b64"])
    marks, _drew, image, som_table = agent.tag_screenshot(png, xml, platform="ubuntu")
    out["som_boxes"] = [list(m) for m in marks]
    out["som_tags"] = som_table
    out["som_trim"] = agent.trim_accessibility_tree(som_table, max_tokens) if can_trim else None
    pixels = image_type.open(io.BytesIO(image)).convert("RGB").tobytes()
    out["som_image"] = hashlib.sha256(pixels).hexdigest()
    return out


def main() -> int:
    _stub_clients()
    from mm_agents import agent
    from mm_agents.accessibility_tree_wrap import heuristic_retrieve
    from PIL import Image

    with open(sys.argv[1], encoding="utf-8") as handle:
        cases = json.load(handle)
    max_tokens = int(cases["max_tokens"])
    # Only with the encoding file on disk: tiktoken would otherwise try to download it.
    cache = os.environ.get("TIKTOKEN_CACHE_DIR", "")
    has_file = bool(cache) and os.path.isdir(cache) and bool(os.listdir(cache))
    can_trim = has_file and hasattr(sys.modules["tiktoken"], "encoding_for_model")
    trees = []
    for tree in cases["trees"]:
        try:
            trees.append(_tree(agent, heuristic_retrieve, Image, tree, max_tokens, can_trim))
        except Exception as error:  # the oracle's exception is a result here
            trees.append({"name": tree["name"], "raised": type(error).__name__})
    outputs = []
    masks = cases["masks"]
    for text in cases["outputs"]:
        outputs.append(
            {
                "parse_actions": _outcome(agent.parse_actions_from_string, text),
                "parse_code": _outcome(agent.parse_code_from_string, text),
                "parse_code_som": _outcome(agent.parse_code_from_som_string, text, masks),
            }
        )
    with open(sys.argv[2], "w", encoding="utf-8") as handle:
        json.dump({"trees": trees, "outputs": outputs, "trimmed": can_trim}, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
