"""Protocol parity: our native agents in ``--agent-arg parse=osworld`` mode against OSWorld's.

    .venv/bin/python -m parity.protocols --out FILE.json [--quick]

Each case of parity/protocol_cases.py (one tool call of Claude's or OpenAI's computer
tool; one whole answer of UI-TARS, Qwen-VL or OpenCUA) goes through OSWorld's own mapping
in .parity-venv (parity/oracle_side/protocol_oracle.py) and through ours, in process: the
agent built with ``parse=osworld`` as the plugin builds it, its frame for a 1920x1080 screen,
its ``_map`` for a tool call, or its ``_parse`` and the turn's assembly
(:meth:`NativeAgent._turn`) for an answer; an answer OSWorld's agent would ask for again is
asked again with the same answer, as the oracle's model answers every time.

The two sides are compared as what the desktop would do, not as strings: each side gives
either "raised" (OSWorld's code raised; ours refused the call or the answer) or a list of
actions, each WAIT/DONE/FAIL or pyautogui code. Code is read into its sequence of calls
(:func:`calls`): imports and bare strings dropped, ``pyautogui.typewrite`` read as
``pyautogui.write`` and ``pyautogui.sleep`` as ``time.sleep``, arguments evaluated and bound
to pyautogui's signatures with their defaults (``click(1, 2)`` is ``click(x=1, y=2)``),
numbers compared by value (``960.0`` is ``960``); code that is not valid Python is "invalid",
which agrees with invalid code only. A disagreement is named ``<protocol>/<kind>`` (the
action the case is about); it is documented when docs/parity.md lists that name under
``## Deliberate differences``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.documented import documented_names
from parity.protocol_cases import SCREEN, TOOL_PROTOCOLS, build_cases

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "parity" / "oracle_side" / "protocol_oracle.py"
SPECIAL = ("WAIT", "DONE", "FAIL")
#: What ``pyautogui.linear`` and ``pyautogui.PRIMARY`` stand for in a bound call.
_LINEAR, _PRIMARY = "<pyautogui.linear>", "primary"
_REQUIRED = object()
_MOUSE = (("x", None), ("y", None))
_TAIL = (("logScreenshot", None), ("_pause", True))
#: pyautogui 0.9.54's parameters (name, default) of the functions the agents write.
SIGNATURES: dict[str, tuple[tuple[str, Any], ...]] = {
    "pyautogui.click": (
        *_MOUSE, ("clicks", 1), ("interval", 0.0), ("button", _PRIMARY), ("duration", 0.0),
        ("tween", _LINEAR), *_TAIL,
    ),
    "pyautogui.leftClick": (*_MOUSE, ("interval", 0.0), ("duration", 0.0), ("tween", _LINEAR), *_TAIL),
    "pyautogui.rightClick": (*_MOUSE, ("interval", 0.0), ("duration", 0.0), ("tween", _LINEAR), *_TAIL),
    "pyautogui.middleClick": (*_MOUSE, ("interval", 0.0), ("duration", 0.0), ("tween", _LINEAR), *_TAIL),
    "pyautogui.doubleClick": (
        *_MOUSE, ("interval", 0.0), ("button", "left"), ("duration", 0.0), ("tween", _LINEAR), *_TAIL,
    ),
    "pyautogui.tripleClick": (
        *_MOUSE, ("interval", 0.0), ("button", "left"), ("duration", 0.0), ("tween", _LINEAR), *_TAIL,
    ),
    "pyautogui.mouseDown": (*_MOUSE, ("button", _PRIMARY), ("duration", 0.0), ("tween", _LINEAR), *_TAIL),
    "pyautogui.mouseUp": (*_MOUSE, ("button", _PRIMARY), ("duration", 0.0), ("tween", _LINEAR), *_TAIL),
    "pyautogui.moveTo": (
        *_MOUSE, ("duration", 0.0), ("tween", _LINEAR), ("logScreenshot", False), ("_pause", True),
    ),
    "pyautogui.dragTo": (
        *_MOUSE, ("duration", 0.0), ("tween", _LINEAR), ("button", _PRIMARY), *_TAIL, ("mouseDownUp", True),
    ),
    "pyautogui.scroll": (("clicks", _REQUIRED), *_MOUSE, *_TAIL),
    "pyautogui.hscroll": (("clicks", _REQUIRED), *_MOUSE, *_TAIL),
    "pyautogui.vscroll": (("clicks", _REQUIRED), *_MOUSE, *_TAIL),
    "pyautogui.press": (("keys", _REQUIRED), ("presses", 1), ("interval", 0.0), *_TAIL),
    "pyautogui.keyDown": (("key", _REQUIRED), *_TAIL),
    "pyautogui.keyUp": (("key", _REQUIRED), *_TAIL),
    "pyautogui.write": (("message", _REQUIRED), ("interval", 0.0), *_TAIL),
    "time.sleep": (("seconds", _REQUIRED),),
    "pyperclip.copy": (("text", _REQUIRED),),
}  # fmt: skip
#: Other names of the same function.
ALIASES = {"pyautogui.typewrite": "pyautogui.write", "pyautogui.sleep": "time.sleep"}

#: Our agent for each protocol: (registered name, model, extra --agent-arg values).
AGENTS: dict[str, tuple[str, str | None, dict[str, str]]] = {
    "claude": ("claude-cu", None, {}),
    "openai": ("openai-cu", None, {"tool": "computer_use_preview"}),
    "ui-tars": ("ui-tars", None, {"coordinates": "smart_resize"}),
    "ui-tars-relative": ("ui-tars", None, {"coordinates": "relative"}),
    "qwen3-vl": ("qwen-vl", "Qwen/Qwen3-VL-8B-Instruct", {}),
    "qwen2.5-vl": ("qwen-vl", "Qwen/Qwen2.5-VL-7B-Instruct", {}),
    "opencua": ("opencua", "xlangai/OpenCUA-7B", {}),
    "opencua-relative": ("opencua", "xlangai/OpenCUA-A3B", {}),
}
NOT_COMPARED = [
    {
        "name": "openai (tool=computer)",
        "why": "OSWorld's GPT-5.4 agent (the GA computer tool) is newer than desktop-env 1.0.2",
    },
    {
        "name": "claude [INFEASIBLE] ending",
        "why": "newer than desktop-env 1.0.2, whose AnthropicAgent has no such ending",
    },
]


# -- code as calls ------------------------------------------------------------------------------


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ast.unparse(node)


def _value(node: ast.expr) -> Any:
    """A literal argument's value; anything else as its source (``{"expr": ...}``)."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return {"expr": ast.unparse(node)}
    return _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _bind(name: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter, defaults filled in; the raw ones when they do not bind."""
    params = SIGNATURES.get(name)
    raw = {"args": args, "kwargs": kwargs}
    if name == "pyautogui.hotkey":
        return {"keys": args, **{k: v for k, v in kwargs.items() if k not in ("logScreenshot", "_pause")}}
    if params is None or len(args) > len(params):
        return raw
    bound = dict(zip((p for p, _ in params), args, strict=False))
    for key, value in kwargs.items():
        if key in bound or key not in dict(params):
            return raw
        bound[key] = value
    for key, default in params:
        if key not in bound:
            if default is _REQUIRED:
                return raw
            bound[key] = default
    return bound


def calls(code: str) -> dict[str, Any]:
    """``code`` as ``{"calls": [[function, arguments], ...]}``, or ``{"invalid": why}``."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as error:
        return {"invalid": type(error).__name__}
    found: list[list[Any]] = []
    for statement in tree.body:
        if isinstance(statement, ast.Import | ast.ImportFrom | ast.Pass):
            continue
        node = statement.value if isinstance(statement, ast.Expr) else None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            continue  # a bare string does nothing
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            found.append(["statement", ast.unparse(statement)])
            continue
        name = _dotted(node.func)
        name = ALIASES.get(name, name)
        args = [_value(a) for a in node.args]
        if any(kw.arg is None for kw in node.keywords):
            found.append([name, {"args": args, "source": ast.unparse(node)}])
            continue
        kwargs = {str(kw.arg): _value(kw.value) for kw in node.keywords}
        found.append([name, _bind(name, args, kwargs)])
    return {"calls": found}


def shape(outcome: dict[str, Any]) -> Any:
    """What an outcome does: ``"raised"``, or each action as WAIT/DONE/FAIL or its calls."""
    if "raised" in outcome:
        return "raised"
    if "crashed" in outcome:
        return {"crashed": outcome["crashed"]}
    items: list[Any] = []
    for action in outcome["value"]:
        if isinstance(action, str) and action in SPECIAL:
            items.append(action)
        elif isinstance(action, str):
            items.append(calls(action))
        else:  # OSWorld's agents hand over only strings; anything else is itself
            items.append({"other": repr(action)})
    return items


def same(ours: dict[str, Any], oracle: dict[str, Any]) -> bool:
    """True when both sides would make the desktop do the same (see the module docstring)."""
    return bool(shape(ours) == shape(oracle))


# -- our side -----------------------------------------------------------------------------------


def our_agents() -> dict[str, Any]:
    """Our agent for each protocol, built with ``parse=osworld`` (no model is ever called)."""
    from pytest_osworld.agent.contract import AGENTS as REGISTRY
    from pytest_osworld.agent.contract import AgentConfig

    os.environ.setdefault("PARITY_PROTOCOLS_KEY", "unused")
    agents = {}
    for protocol, (name, model, extra) in AGENTS.items():
        args = {
            "parse": "osworld",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": "PARITY_PROTOCOLS_KEY",
            **extra,
        }
        agents[protocol] = REGISTRY.get(name)(AgentConfig(name=name, model=model, args=args))
    return agents


def _tool_call(protocol: str, data: dict[str, Any]) -> Any:
    """The :class:`ToolCall` our agent reads from this tool input (as its ``_read`` does)."""
    from pytest_osworld.agents.native.base import ToolCall

    key = "action" if protocol == "claude" else "type"
    args = {k: v for k, v in data.items() if k != key}
    if protocol == "openai":
        args = {k: v for k, v in args.items() if v is not None}  # model_dump(exclude_none=True)
    return ToolCall("t", str(data.get(key, "")), args)


def _code_of(action: Any) -> str:
    return str(action.code) if action.kind == "code" else str(action.kind)


def ours(agent: Any, protocol: str, data: Any) -> dict[str, Any]:
    """Our outcome of one case: ``{"value": [actions]}`` or ``{"raised": why}``."""
    from pytest_osworld.agent.actions import ActionParseError
    from pytest_osworld.agents.native.base import Context

    frame = agent.frame(SCREEN)
    agent._forget()
    try:
        if protocol in TOOL_PROTOCOLS:
            outcome = agent._map(_tool_call(protocol, data), Context(frame, "osworld"))
            return {"value": [_code_of(a) for a in outcome.actions]}
        reply = agent._parse(data)
        outcomes, actions = agent._turn(reply, Context(frame, "osworld"))
        if agent._unusable(reply, outcomes):  # the model gives the same answer when asked again
            reply, outcomes, actions = agent._given_up(reply, outcomes, actions)
        if reply.error is not None:
            return {"raised": reply.error}
    except ActionParseError as error:
        return {"raised": str(error)}
    except Exception as error:  # a bug of ours: never the same as OSWorld's outcome
        return {"crashed": f"{type(error).__name__}: {error}"}
    errors = [o.error for o in outcomes if o.error]
    if errors:
        return {"raised": errors[0]}
    return {"value": [_code_of(a) for a in actions]}


# -- the level ----------------------------------------------------------------------------------


@dataclass
class Tally:
    """Counts per protocol and the disagreements found."""

    cases: dict[str, int] = field(default_factory=dict)
    agree: dict[str, int] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)

    def add(self, case: dict[str, Any], mine: dict[str, Any], theirs: dict[str, Any]) -> None:
        """Count one case; record it when the two sides differ."""
        row = case["protocol"]
        self.cases[row] = self.cases.get(row, 0) + 1
        if same(mine, theirs):
            self.agree[row] = self.agree.get(row, 0) + 1
            return
        self.disagreements.append(
            {
                "name": f"{row}/{case['kind']}",
                "row": row,
                "case": case["input"],
                "ours": mine,
                "oracle": theirs,
            }
        )

    def report(self, documented: set[str], seconds: float) -> dict[str, Any]:
        """The level's JSON report (the other levels' shape)."""
        rows = []
        for row, count in self.cases.items():
            mine = [d for d in self.disagreements if d["row"] == row]
            doc = [d for d in mine if d["name"] in documented]
            causes = sorted({d["name"] for d in mine})
            rows.append(
                {
                    "name": row,
                    "cases": count,
                    "agree": self.agree.get(row, 0),
                    "documented": len(doc),
                    "undocumented": len(mine) - len(doc),
                    "note": ("differences: " + ", ".join(causes)) if causes else "",
                }
            )
        found = [
            {**{k: d[k] for k in ("name", "case", "ours", "oracle")}, "documented": d["name"] in documented}
            for d in self.disagreements
        ]
        return {
            "level": "protocols",
            "seconds": round(seconds, 2),
            "rows": rows,
            "not_compared": NOT_COMPARED,
            "disagreements": found,
        }


def run_oracle(python: Path, cases: list[dict[str, Any]], qwen25: tuple[int, int]) -> list[dict[str, Any]]:
    """OSWorld's outcome of every case, from the oracle venv."""
    with tempfile.TemporaryDirectory() as tmp:
        cases_path, results_path = Path(tmp) / "cases.json", Path(tmp) / "results.json"
        payload = {"screen": list(SCREEN), "qwen25_processed": list(qwen25), "cases": cases}
        cases_path.write_text(json.dumps(payload, ensure_ascii=False))
        done = subprocess.run(
            [str(python), str(ORACLE), str(cases_path), str(results_path)], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"the oracle failed: {done.stderr[-3000:]}")
        results: list[dict[str, Any]] = json.loads(results_path.read_text())["results"]
        return results


def run(quick: bool) -> dict[str, Any]:
    """The level's report."""
    from parity.oracle_venv import ensure_oracle_venv

    started = time.monotonic()
    python = ensure_oracle_venv(ROOT)
    cases = build_cases(quick)
    agents = our_agents()
    qwen25 = agents["qwen2.5-vl"].frame(SCREEN).image
    print(f"protocols: {len(cases)} cases", flush=True)
    oracle = run_oracle(python, cases, qwen25)
    print(f"protocols: oracle done ({time.monotonic() - started:.1f} s)", flush=True)
    tally = Tally()
    for case, theirs in zip(cases, oracle, strict=True):
        tally.add(case, ours(agents[case["protocol"]], case["protocol"], case["input"]), theirs)
    return tally.report(documented_names(ROOT), time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    """CLI: write the level's JSON report to ``--out``."""
    parser = argparse.ArgumentParser(description="protocol parity of the native agents' parse=osworld mode")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true", help="fewer random cases per protocol")
    args = parser.parse_args(argv)
    report = run(args.quick)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    for row in report["rows"]:
        print(
            f"{row['name']:<18} cases {row['cases']:>5}  agree {row['agree']:>5}  "
            f"documented {row['documented']:>4}  undocumented {row['undocumented']:>4}  {row['note'][:200]}"
        )
    print(f"protocols: {report['seconds']:.1f} s, report in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
