"""The trajectories level's page: agreement per agent and domain and per cause, then each
disagreement with its documented cause, the recorded actions and the replay's screenshots step
by step.

A static HTML file beside the level's JSON; screenshots are linked from the replay's results
folder (kept beside it), so the page is read where the run was made.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}
.case{border-top:2px solid #888;margin-top:24px;padding-top:8px}
.shots{display:flex;flex-wrap:wrap;gap:6px}.shots figure{margin:0;width:320px}
.shots img{width:320px;border:1px solid #aaa}figcaption{font-size:12px;white-space:pre-wrap}
.doc{color:#555}.undoc{color:#b00;font-weight:bold}
"""


def write_page(data: dict[str, Any], path: Path) -> Path:
    """Write the page for the level's JSON ``data`` to ``path``; return ``path``."""
    parts = [
        "<!doctype html><meta charset='utf-8'><title>Trajectories parity</title>",
        f"<style>{STYLE}</style><h1>Real agents' trajectories, replayed</h1>",
        f"<p>Subset {html.escape(str(data['subset']))}, {data['pause']} s after each action, "
        f"{data['seconds']} s in all.</p>",
        _shares(data),
        _table(data["domains"]),
        _causes(data.get("causes", [])),
    ]
    for case in data["disagreements"]:
        parts.append(_case(case, path.parent))
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _shares(data: dict[str, Any]) -> str:
    wins, losses = data["successes_replayed_to_1"], data["short_failures_replayed_below_1"]
    return (
        f"<p>Recorded successes replayed to 1: <b>{wins['agree']} of {wins['of']}</b> "
        f"({wins['percent']}%). Recorded failures of up to 30 steps replayed below 1: "
        f"<b>{losses['agree']} of {losses['of']}</b> ({losses['percent']}%).</p>"
    )


def _table(rows: list[dict[str, Any]]) -> str:
    names = ("agent, domain, recorded", "cases", "agree", "documented", "undocumented")
    head = "<tr>" + "".join(f"<th>{name}</th>" for name in names) + "</tr>"
    body = "".join(
        f"<tr><td>{html.escape(row['name'])}</td><td>{row['cases']}</td><td>{row['agree']}</td>"
        f"<td>{row['documented']}</td><td>{row['undocumented']}</td></tr>"
        for row in rows
    )
    return f"<table>{head}{body}</table>"


def _causes(groups: list[dict[str, Any]]) -> str:
    """The disagreements per documented cause, each name a link to its case below."""
    if not groups:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(group['cause'])}</td><td>{group['cases']}</td><td>"
        + ", ".join(f"<a href='#{html.escape(name)}'>{html.escape(name)}</a>" for name in group["names"])
        + "</td></tr>"
        for group in groups
    )
    head = "<tr><th>cause</th><th>cases</th><th>replays</th></tr>"
    return f"<h2>Disagreements per cause</h2><table>{head}{rows}</table>"


def _case(case: dict[str, Any], page_dir: Path) -> str:
    cause = (
        f"<p class='doc'>Documented: {html.escape(case['documented'])}</p>"
        if case["documented"]
        else "<p class='undoc'>Not documented in docs/fidelity.md: a defect until explained.</p>"
    )
    replayed = "no score" if case["replayed"] is None else f"{case['replayed']:g}"
    shots = _shots(case, page_dir)
    return (
        f"<div class='case' id='{html.escape(case['name'])}'><h2>{html.escape(case['name'])}</h2>"
        f"<p>Recorded {case['recorded']:g}, replayed {replayed} ({html.escape(case['outcome'])}, "
        f"{case['steps']} steps): {html.escape(case['message'][:500])}</p>{cause}"
        f"<div class='shots'>{shots}</div></div>"
    )


def _shots(case: dict[str, Any], page_dir: Path) -> str:
    """The replay's screenshot before step 1 and after each step, captioned with the action."""
    folder = Path(case["folder"]) if case["folder"] else None
    figures = []
    actions = ["(the first observation)", *case["actions"]]
    for index, action in enumerate(actions):
        image = _screenshot(folder, index) if folder else None
        img = (
            f"<img loading='lazy' src='{html.escape(os.path.relpath(image, page_dir))}'>"
            if image
            else "<p>(no screenshot)</p>"
        )
        caption = html.escape(f"{index}: {action[:300]}")
        figures.append(f"<figure>{img}<figcaption>{caption}</figcaption></figure>")
    return "".join(figures)


def _screenshot(folder: Path, index: int) -> Path | None:
    """The screenshot a results folder keeps for step ``index`` (0: before the first step)."""
    for pattern in (f"step_{index}.png", f"step_{index}_*.png"):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    return None
