"""Comparing our agent-facing results with OSWorld's, and naming each disagreement's cause.

A disagreement is named ``<function>/<cause>`` when :func:`cause_of` recognises why the
two sides differ (a deliberate difference documented in docs/parity.md), else plain
``<function>``, which no bullet documents: a new kind of difference fails the level.

The answers are read in both parse modes (``--agent-arg parse=``). The ``ours`` rows
compare as above. The ``osworld`` rows (``<function> [osworld]``) compare the values
exactly, with no normalisation, and every difference counts as undocumented whatever
docs/parity.md says: that mode exists to read answers exactly as OSWorld does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from parity import agent_ours

TREE_ROWS = ("filter", "linearize", "trim", "som_boxes", "som_tags", "som_trim", "som_image")
PARSE_ROWS = ("parse_actions", "parse_code", "parse_code_som")
SPECIAL = ("WAIT", "DONE", "FAIL")
#: The parse modes compared (pytest_osworld.agent.parse_osworld.PARSERS).
MODES = ("ours", "osworld")


def row_name(row: str, mode: str) -> str:
    """The report row of parser ``row`` in parse ``mode``."""
    return row if mode == "ours" else f"{row} [{mode}]"


@dataclass
class Tally:
    """Counts per compared function and the disagreements found."""

    cases: dict[str, int] = field(default_factory=dict)
    agree: dict[str, int] = field(default_factory=dict)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    #: The parse mode of each parser row.
    modes: dict[str, str] = field(default_factory=dict)
    #: Rows where no difference can be documented (the ``osworld`` parse mode).
    strict: set[str] = field(default_factory=set)

    def add(self, row: str, case: str, ours: Any, oracle: Any, same: bool, cause: str | None = None) -> None:
        """Count one case of ``row``; record it when the two sides differ."""
        self.cases[row] = self.cases.get(row, 0) + 1
        if same:
            self.agree[row] = self.agree.get(row, 0) + 1
            return
        name = f"{row}/{cause}" if cause else row
        self.disagreements.append({"name": name, "row": row, "case": case, "ours": ours, "oracle": oracle})

    def report(
        self, documented: set[str], seconds: float, not_compared: list[dict[str, str]]
    ) -> dict[str, Any]:
        """The level's JSON report (PARITY.md's shape)."""
        rows = []
        out = []
        modes: dict[str, dict[str, int]] = {}
        for row, cases in self.cases.items():
            mine = [d for d in self.disagreements if d["row"] == row]
            doc = [d for d in mine if self._documented(d, documented)]
            causes = sorted({d["name"] for d in mine})
            entry: dict[str, Any] = {
                "name": row,
                "cases": cases,
                "agree": self.agree.get(row, 0),
                "documented": len(doc),
                "undocumented": len(mine) - len(doc),
                "note": ("differences: " + ", ".join(causes)) if causes else "",
            }
            if row in self.modes:
                entry["mode"] = self.modes[row]
                total = modes.setdefault(self.modes[row], {"cases": 0, "agree": 0, "differences": 0})
                total["cases"] += cases
                total["agree"] += entry["agree"]
                total["differences"] += len(mine)
            rows.append(entry)
        for d in self.disagreements:
            found = {k: d[k] for k in ("name", "case", "ours", "oracle")}
            found["documented"] = self._documented(d, documented)
            if d["row"] in self.modes:
                found["mode"] = self.modes[d["row"]]
            out.append(found)
        return {
            "level": "agent_facing",
            "seconds": round(seconds, 2),
            "rows": rows,
            "parse_modes": modes,
            "not_compared": not_compared,
            "disagreements": out,
        }

    def _documented(self, disagreement: dict[str, Any], documented: set[str]) -> bool:
        return disagreement["row"] not in self.strict and disagreement["name"] in documented


def compare_trees(tally: Tally, ours: dict[str, Any], oracle: dict[str, Any]) -> None:
    """One recorded tree: every tree row, ours against the oracle's."""
    if "raised" in oracle:
        tally.add("filter", ours["name"], ours["filter"], oracle, False, "oracle_raised")
        return
    for key in (*TREE_ROWS, "trim_small"):
        row = "trim" if key == "trim_small" else key
        if row in ("trim", "som_trim") and (ours[key] is None or oracle[key] is None):
            continue
        case = ours["name"] + (" (300 tokens)" if key == "trim_small" else "")
        tally.add(row, case, _short(ours[key]), _short(oracle[key]), ours[key] == oracle[key])


def _short(value: Any) -> Any:
    """Long strings in a disagreement are cut so the report stays readable."""
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return value if len(text) <= 400 else text[:400] + "..."


def _effective(outcome: dict[str, Any]) -> dict[str, Any]:
    """``outcome`` without empty code strings (the oracle's no-op actions, e.g. from ``` ```)."""
    value = outcome.get("value")
    if not isinstance(value, list):
        return outcome
    kept = [v for v in value if not (isinstance(v, str) and not agent_ours.split_bindings(v)[1].strip())]
    return {"value": kept}


def _failed(outcome: dict[str, Any]) -> bool:
    """True when a side produced no actions (our error; the oracle's raise, message or [])."""
    if "error" in outcome or "raised" in outcome:
        return True
    value = outcome["value"]
    return isinstance(value, str) or value == []


def _som_same(ours: list[Any], oracle: list[Any]) -> bool:
    """Same actions, our ``tag_N`` bindings a subset of the oracle's, with equal centres."""
    if len(ours) != len(oracle):
        return False
    for mine, theirs in zip(ours, oracle, strict=True):
        if not (isinstance(mine, str) and isinstance(theirs, str)):
            return False
        mine_bound, mine_body = agent_ours.split_bindings(mine)
        their_bound, their_body = agent_ours.split_bindings(theirs)
        if mine_body.rstrip() != their_body.rstrip() or any(
            their_bound.get(k) != v for k, v in mine_bound.items()
        ):
            return False
    return True


def compare_outputs(
    tally: Tally, texts: list[str], oracle: list[dict[str, Any]], masks: list[list[int]], mode: str = "ours"
) -> None:
    """Every model answer through the three parsers, in parse ``mode`` (see :data:`MODES`)."""
    if mode == "osworld":
        _compare_osworld_mode(tally, texts, oracle, masks)
        return
    for row in PARSE_ROWS:
        tally.modes[row] = mode
    for index, (text, theirs) in enumerate(zip(texts, oracle, strict=True)):
        case = f"answer {index}: {text[:160]!r}"
        mine = {
            "parse_actions": agent_ours.parse_actions(text),
            "parse_code": agent_ours.parse_code(text),
            "parse_code_som": agent_ours.parse_code_som(text, masks),
        }
        for row in PARSE_ROWS:
            ours, other = mine[row], _effective(theirs[row])
            if _failed(ours) or _failed(other):
                same = _failed(ours) and _failed(other)
            elif row == "parse_code_som":
                same = _som_same(ours["value"], other["value"])
            else:
                same = _normal(ours["value"]) == _normal(other["value"])
            cause = None if same else cause_of(row, text, ours, other)
            tally.add(row, case, ours, other, same, cause)


def _compare_osworld_mode(
    tally: Tally, texts: list[str], oracle: list[dict[str, Any]], masks: list[list[int]]
) -> None:
    """The ``osworld`` mode: OSWorld's exact values, or no action on both sides."""
    for row in PARSE_ROWS:
        tally.modes[row_name(row, "osworld")] = "osworld"
        tally.strict.add(row_name(row, "osworld"))
    for index, (text, theirs) in enumerate(zip(texts, oracle, strict=True)):
        case = f"answer {index}: {text[:160]!r}"
        mine = agent_ours.osworld_mode(text, masks)
        for row in PARSE_ROWS:
            ours, other = mine[row], theirs[row]
            if _failed(ours) or _failed(other):
                # No action: our ActionParseError; OSWorld's exception, error string or [].
                same = _failed(ours) and _failed(other)
            else:
                same = _exact(ours["value"]) == _exact(other["value"])
            tally.add(row_name(row, "osworld"), case, ours, other, same)


def _exact(value: Any) -> str:
    """``value`` as canonical JSON (NaN equal to NaN; object key order ignored)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _normal(value: Any) -> str:
    """Equal for actions OSWorld's environment runs alike: trailing blanks of code, and a
    ``{"action_type": "DONE"}`` object against ``"DONE"``."""
    items = []
    for item in value:
        if isinstance(item, str):
            item = item.rstrip()
        elif isinstance(item, dict) and set(item) == {"action_type"} and item["action_type"] in SPECIAL:
            item = item["action_type"]
        items.append(item)
    return json.dumps(items, sort_keys=True, ensure_ascii=False)


#: A word right after a fence, then a blank: OSWorld takes any such word for a language tag.
_WORD_AFTER_FENCE = re.compile(r"```(\w+)\s")
_LANGUAGES = ("python", "python3", "py", "json")


def cause_of(row: str, text: str, ours: dict[str, Any], oracle: dict[str, Any]) -> str | None:
    """The documented cause of a disagreement on ``text``, or None when it is not known."""
    error = str(ours.get("error", ""))
    value = ours.get("value")
    if isinstance(value, list) and len(value) == 1 and value[0] in SPECIAL and _failed(oracle):
        last = text.strip().splitlines()[-1].strip() if text.strip() else ""
        if last == value[0]:
            return "special_in_prose"
    if row == "parse_actions":
        their = oracle.get("value")
        if error and isinstance(their, list):
            return "validated"
        if not error and _failed(oracle):
            return "more_shapes"
        if isinstance(their, list) and any(isinstance(item, list) for item in their):
            return "list_flattened"
        mine = ours.get("value")
        if isinstance(their, list) and isinstance(mine, list) and _subsequence(their, mine):
            return "more_shapes"
    if row in ("parse_code", "parse_code_som"):
        if "is not valid Python" in error or "which is not allowed" in error:
            return "refused_code"
        if row == "parse_code_som" and "is not a mark on this screen" in error:
            return "unknown_tag"
        if ";" in text:
            return "semicolons"
        their_codes = [v for v in oracle.get("value") or [] if isinstance(v, str)]
        if any(
            c.split("\n")[-1] not in SPECIAL and c.split("\n")[-1].strip() in SPECIAL for c in their_codes
        ):
            return "indented_special"
        if any(m.group(1).lower() not in _LANGUAGES for m in _WORD_AFTER_FENCE.finditer(text)):
            return "first_word_eaten"
    return None


def _subsequence(part: list[Any], whole: list[Any]) -> bool:
    """True when ``part``'s items appear in ``whole`` in order (compared normalised)."""
    items = iter(_normal([w]) for w in whole)
    return all(any(_normal([p]) == w for w in items) for p in part)
