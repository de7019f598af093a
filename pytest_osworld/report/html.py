"""A static HTML report of a results directory: opens from disk in any browser, no server.

:func:`write_report` writes ``<results>/index.html`` (success rates overall, per category,
per domain and by feasibility, and a sortable, filterable table with one row per task)
and ``report.html`` in every task folder (the instruction, each step's screenshot beside
its actions, the agent's thought and response, errors, the evaluator's per-metric
outcomes and inputs, the recording). Screenshots are linked, not inlined, so the report
stays small; every text from results (task ids, reasons, agent output) is escaped.

It can be called again and again while a run goes on: every page is written to a
temporary file and moved into place, and pages whose content did not change are not
rewritten. A task folder with a ``traj.jsonl`` but no ``result.json`` (a crash mid-task,
an error before scoring, or a task still running) is shown as *incomplete*.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pytest_osworld.report.resume import read_result, task_folders
from pytest_osworld.report.summary import CATEGORIES

INDEX_NAME = "index.html"
TASK_PAGE_NAME = "report.html"

#: Outcomes in display order, with their labels.
OUTCOMES: dict[str, str] = {
    "passed": "passed",
    "failed": "failed",
    "eval_error": "eval error",
    "error": "error",
    "incomplete": "incomplete",
    "skipped": "skipped",
}
CATEGORY_ORDER = ["OS", "Office", "Daily", "Professional", "Workflow", "Other"]
#: Longest text shown of one response, thought or value (the rest is cut, with a note).
MAX_TEXT = 20_000


def write_report(results_dir: Path, title: str | None = None) -> Path:
    """Write the static report of ``results_dir``; return the path of its ``index.html``.

    Safe to call repeatedly (for example after every task): pages are replaced
    atomically and unchanged pages are left alone.
    """
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    tasks = [_load_task(results_dir, folder) for folder in task_folders(results_dir)]
    index = results_dir / INDEX_NAME
    for task in tasks:
        _write_if_changed(task.folder / TASK_PAGE_NAME, _task_page(task, index))
    heading = title or f"OSWorld results: {results_dir.resolve().name}"
    _write_if_changed(index, _index_page(tasks, heading))
    return index


# --------------------------------------------------------------------------- loading


@dataclass
class _Task:
    """One task folder as the report sees it."""

    folder: Path
    rel: str
    config: str
    domain: str
    task_id: str
    result: dict[str, Any] | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    traj_errors: list[str] = field(default_factory=list)
    instruction: str | None = None
    instruction_note: str = ""
    rescored: dict[str, Any] | None = None

    @property
    def outcome(self) -> str:
        if self.result is None:
            return "incomplete"
        outcome = str(self.result.get("outcome", ""))
        return outcome if outcome in OUTCOMES else "error"

    @property
    def score(self) -> float | None:
        value = self.result.get("score") if self.result else None
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    @property
    def infeasible(self) -> bool | None:
        return bool(self.result.get("infeasible")) if self.result else None

    @property
    def duration(self) -> float:
        if self.result and isinstance(self.result.get("duration_s"), int | float):
            return float(self.result["duration_s"])
        return sum(float(s.get("duration_s") or 0.0) for s in self.steps)

    @property
    def step_count(self) -> int:
        if self.result and isinstance(self.result.get("steps"), int):
            return int(self.result["steps"])
        return len(self.steps)

    @property
    def max_steps(self) -> int | None:
        value = self.result.get("max_steps") if self.result else None
        return value if isinstance(value, int) else None

    @property
    def end_reason(self) -> str:
        if self.result is None:
            return ""
        return str(self.result.get("end_reason") or "")

    @property
    def reason(self) -> str:
        if self.result is not None:
            return str(self.result.get("reason") or "")
        if self.traj_errors:
            return self.traj_errors[-1]
        return "no result.json: crashed, errored before scoring, or still running"

    @property
    def category(self) -> str:
        return CATEGORIES.get(self.domain, "Other")


def _load_task(results_dir: Path, folder: Path) -> _Task:
    rel_parts = folder.relative_to(results_dir).parts
    result = read_result(folder)
    domain = str(result.get("domain")) if result and result.get("domain") else rel_parts[-2]
    task_id = str(result.get("task_id")) if result and result.get("task_id") else rel_parts[-1]
    task = _Task(
        folder=folder,
        rel="/".join(rel_parts),
        config=" / ".join(rel_parts[:-2]),
        domain=domain,
        task_id=task_id,
        result=result,
    )
    _load_traj(task)
    _load_instruction(task)
    rescored = folder / "result.rescored.json"
    if rescored.is_file():
        try:
            data = json.loads(rescored.read_text(encoding="utf-8"))
            task.rescored = data if isinstance(data, dict) else None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            task.rescored = None
    return task


def _load_traj(task: _Task) -> None:
    try:
        text = (task.folder / "traj.jsonl").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            task.traj_errors.append(f"traj.jsonl line {number} is not valid JSON (cut short by a crash?)")
            continue
        if not isinstance(entry, dict):
            task.traj_errors.append(f"traj.jsonl line {number} is not an object")
        elif "Error" in entry and "step_num" not in entry:
            task.traj_errors.append(str(entry["Error"]))
        else:
            task.steps.append(entry)


def _load_instruction(task: _Task) -> None:
    provenance = task.result.get("provenance") if task.result else None
    name = provenance.get("task_file") if isinstance(provenance, dict) else None
    if isinstance(name, str) and name:
        try:
            data = json.loads(Path(name).read_bytes())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("instruction"), str):
            task.instruction = data["instruction"]
            task.instruction_note = f"from {name}"
            return
    kept = task.result.get("instruction") if task.result else None
    if isinstance(kept, str) and kept:
        task.instruction = kept
        task.instruction_note = "from result.json"


# --------------------------------------------------------------------------- writing


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, unless the file already holds exactly that."""
    data = text.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- helpers


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _href(relative: str) -> str:
    """A relative link to a file (path parts percent-encoded, then HTML-escaped)."""
    return _e("/".join(quote(part) for part in relative.split("/")))


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters not shown)"


def _duration(seconds: float) -> str:
    if seconds <= 0:
        return "-"
    minutes, secs = divmod(round(seconds), 60)
    if minutes >= 60:
        hours, minutes = divmod(minutes, 60)
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _badge(outcome: str) -> str:
    return f'<span class="badge o-{_e(outcome)}">{_e(OUTCOMES.get(outcome, outcome))}</span>'


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


_CSS = """
:root { --fg:#1f2328; --muted:#656d76; --line:#d0d7de; --bg:#f6f8fa; --link:#0969da; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--fg);
  margin: 0; background: #fff; }
main { max-width: 1400px; margin: 0 auto; padding: 20px 28px 60px; }
h1 { font-size: 22px; margin: 0 0 4px; word-break: break-all; }
h2 { font-size: 17px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 14px; margin: 0 0 6px; }
a { color: var(--link); text-decoration: none; } a:hover { text-decoration: underline; }
.muted { color: var(--muted); } .small { font-size: 12px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; min-width: 100px;
  background: var(--bg); }
.card .v { font-size: 22px; font-weight: 600; } .card .l { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--bg); font-weight: 600; white-space: nowrap; position: sticky; top: 0; z-index: 1; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th:hover { background: #eaeef2; }
table.sortable th[data-dir=asc]::after { content: " ▲"; font-size: 10px; }
table.sortable th[data-dir=desc]::after { content: " ▼"; font-size: 10px; }
tbody tr:hover { background: #f6f8fa; }
table.groups { width: auto; min-width: 760px; }
table.groups tr.section th { background: #fff; position: static; padding-top: 14px; color: var(--muted);
  font-size: 12px; text-transform: uppercase; letter-spacing: .04em; border-bottom: 1px solid var(--line); }
table.groups tr.total td { font-weight: 600; }
table.groups td:first-child { padding-right: 40px; }
td.zero { color: #afb8c1; }
.bar { display: inline-block; width: 90px; height: 8px; background: #eaeef2; border-radius: 4px;
  vertical-align: middle; margin-right: 6px; overflow: hidden; }
.bar > span { display: block; height: 100%; background: #2da44e; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  white-space: nowrap; border: 1px solid transparent; }
.o-passed { background: #dafbe1; color: #116329; border-color: #aceebb; }
.o-failed { background: #ffebe9; color: #a40e26; border-color: #ffcecb; }
.o-eval_error { background: #fff8c5; color: #7d4e00; border-color: #f5e08a; }
.o-error { background: #fbefff; color: #6e40c9; border-color: #e6ccff; }
.o-incomplete { background: #ddf4ff; color: #0550ae; border-color: #b6e3ff; }
.o-skipped { background: #eaeef2; color: #57606a; border-color: #d0d7de; }
.reason { max-width: 520px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tid { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; word-break: break-all; }
.toolbar { display: flex; flex-wrap: wrap; gap: 14px; align-items: center; margin: 10px 0; }
.toolbar input[type=search] { padding: 5px 10px; width: 320px; border: 1px solid var(--line);
  border-radius: 6px; }
.toolbar label { font-size: 13px; }
pre, code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px;
  margin: 4px 0; white-space: pre-wrap; word-break: break-word; max-height: 420px; overflow: auto; }
.box { border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin: 12px 0; }
.instruction { font-size: 15px; background: #f6f8fa; white-space: pre-wrap; }
.banner { border-radius: 8px; padding: 10px 16px; margin: 12px 0; }
.err { background: #ffebe9; border: 1px solid #ffcecb; color: #82071e; border-radius: 6px; padding: 6px 10px;
  margin: 4px 0; white-space: pre-wrap; word-break: break-word; font-size: 12.5px; }
.step { display: grid; grid-template-columns: minmax(320px, 560px) 1fr; gap: 18px;
  border: 1px solid var(--line); border-radius: 8px; padding: 12px; margin: 12px 0; }
.step img { width: 100%; border: 1px solid var(--line); border-radius: 4px; display: block; }
.step .noshot { border: 1px dashed var(--line); border-radius: 4px; padding: 40px 10px; text-align: center; }
.step .cap { font-size: 12px; color: var(--muted); margin-top: 4px; }
.step .body { min-width: 0; }
.label { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted);
  margin-top: 8px; }
.thought { white-space: pre-wrap; word-break: break-word; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px; margin: 0; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; word-break: break-all; }
details > summary { cursor: pointer; color: var(--link); font-size: 12.5px; }
video { max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
nav { font-size: 13px; margin-bottom: 10px; }
.facts { margin: 6px 0 4px; color: var(--muted); } .facts b { color: var(--fg); }
.foot { margin-top: 30px; color: var(--muted); font-size: 12px; }
"""

_INDEX_JS = """
(function () {
  function key(cell, numeric) {
    var v = cell.getAttribute('data-v'); if (v === null) v = cell.textContent.trim();
    if (!numeric) return v.toLowerCase();
    var f = parseFloat(v); return isNaN(f) ? -Infinity : f;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var dir = th.getAttribute('data-dir') === 'asc' ? 'desc' : 'asc';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('data-dir'); });
        th.setAttribute('data-dir', dir);
        var numeric = th.classList.contains('n'), body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
          var c = x < y ? -1 : x > y ? 1 : 0; return dir === 'asc' ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var search = document.getElementById('filter'), boxes = document.querySelectorAll('input[data-outcome]');
  var count = document.getElementById('shown');
  function apply() {
    var q = search ? search.value.toLowerCase() : '', on = {}, n = 0;
    boxes.forEach(function (b) { on[b.getAttribute('data-outcome')] = b.checked; });
    document.querySelectorAll('#tasks tbody tr').forEach(function (r) {
      var show = on[r.getAttribute('data-outcome')] !== false &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.style.display = show ? '' : 'none'; if (show) n++;
    });
    if (count) count.textContent = n;
  }
  if (search) search.addEventListener('input', apply);
  boxes.forEach(function (b) { b.addEventListener('change', apply); });
})();
"""


def _page(title: str, body: str, script: str = "") -> str:
    js = f"<script>{script}</script>" if script else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
        f"<body><main>{body}</main>{js}</body></html>\n"
    )


# --------------------------------------------------------------------------- index


@dataclass
class _Group:
    name: str
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    score_sum: float = 0.0
    scored: int = 0

    def add(self, task: _Task) -> None:
        self.counts[task.outcome] += 1
        if task.outcome not in ("skipped", "incomplete"):
            self.scored += 1
            self.score_sum += task.score or 0.0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def ran(self) -> int:
        """Everything but skips: errors and incomplete tasks count as not passed."""
        return self.total - self.counts["skipped"]

    @property
    def rate(self) -> float | None:
        return self.counts["passed"] / self.ran if self.ran else None

    @property
    def mean(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None


def _group_table(sections: list[tuple[str, list[_Group]]]) -> str:
    """One table of success rates, with a heading row per section (overall, by category, ...)."""
    out = [
        '<table class="groups"><thead><tr><th></th><th class="n">success rate</th>'
        '<th class="n">passed / ran</th><th class="n">failed</th><th class="n">eval error</th>'
        '<th class="n">error</th><th class="n">incomplete</th><th class="n">skipped</th>'
        '<th class="n">mean score</th></tr></thead>'
    ]
    for label, groups in sections:
        out.append("<tbody>")
        if label:
            out.append(f'<tr class="section"><th colspan="9">{_e(label)}</th></tr>')
        for group in groups:
            rate = group.rate
            width = 100 * rate if rate is not None else 0.0
            c = group.counts
            cls = ' class="total"' if not label else ""
            out.append(
                f"<tr{cls}><td>{_e(group.name)}</td>"
                f'<td class="n"><span class="bar"><span style="width:{width:.1f}%"></span></span>'
                f"{f'{100 * rate:.1f}%' if rate is not None else '-'}</td>"
                f'<td class="n">{c["passed"]} / {group.ran}</td>'
                + "".join(
                    f'<td class="n{" zero" if not c[o] else ""}">{c[o]}</td>'
                    for o in ("failed", "eval_error", "error", "incomplete", "skipped")
                )
                + f'<td class="n">{_score(group.mean)}</td></tr>'
            )
        out.append("</tbody>")
    out.append("</table>")
    return "".join(out)


def _index_page(tasks: list[_Task], title: str) -> str:
    overall = _Group("overall")
    domains: dict[str, _Group] = {}
    categories: dict[str, _Group] = {}
    feasibility: dict[str, _Group] = {}
    configs: dict[str, _Group] = {}
    for task in tasks:
        overall.add(task)
        domains.setdefault(task.domain, _Group(task.domain)).add(task)
        categories.setdefault(task.category, _Group(task.category)).add(task)
        kind = {True: "infeasible", False: "feasible", None: "unknown (incomplete)"}[task.infeasible]
        feasibility.setdefault(kind, _Group(kind)).add(task)
        configs.setdefault(task.config, _Group(task.config)).add(task)
    generated = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    parts = [
        f"<h1>{_e(title)}</h1>",
        f'<div class="muted small">{_run_line(tasks)} · generated {generated}</div>',
    ]
    if not tasks:
        parts.append('<div class="box">No task folders found yet.</div>')
        return _page(title, "".join(parts))
    rate = overall.rate
    tokens_in = sum(int((t.result or {}).get("usage", {}).get("input_tokens") or 0) for t in tasks)
    tokens_out = sum(int((t.result or {}).get("usage", {}).get("output_tokens") or 0) for t in tasks)
    cost = sum(float((t.result or {}).get("usage", {}).get("cost_usd") or 0.0) for t in tasks)
    cards = [
        ("success rate", f"{100 * rate:.1f}%" if rate is not None else "-"),
        ("passed / ran", f"{overall.counts['passed']} / {overall.ran}"),
        ("mean score", _score(overall.mean)),
        ("tasks", str(overall.total)),
    ]
    if overall.total and overall.ran != overall.total:
        cards.insert(2, ("rate over all tasks", f"{100 * overall.counts['passed'] / overall.total:.1f}%"))
    cards += [(OUTCOMES[o], str(overall.counts[o])) for o in OUTCOMES if o != "passed" and overall.counts[o]]
    cards.append(("agent time", _duration(sum(t.duration for t in tasks))))
    if tokens_in or tokens_out:
        cards.append(("tokens in / out", f"{tokens_in:,} / {tokens_out:,}"))
    if cost:
        cards.append(("cost", f"${cost:,.2f}"))
    parts.append(
        '<div class="cards">'
        + "".join(
            f'<div class="card"><div class="v">{_e(v)}</div><div class="l">{_e(k)}</div></div>'
            for k, v in cards
        )
        + "</div>"
    )
    parts.append(
        '<p class="muted small">Success rate = passed / ran, where <i>ran</i> is every task but the skipped '
        "ones: errors, evaluation errors and incomplete tasks (a <code>traj.jsonl</code> but no "
        "<code>result.json</code>: crashed, errored before scoring, or still running) count as not passed. "
        "Mean score is over tasks with a verdict or an error. The rate over all tasks counts skipped "
        "ones as not passed, as a paper that divides by its whole benchmark does.</p>"
    )
    sections: list[tuple[str, list[_Group]]] = [("", [overall])]
    if len(configs) > 1:
        sections.append(("by configuration", sorted(configs.values(), key=lambda g: g.name)))
    sections.append(("by category", [categories[c] for c in CATEGORY_ORDER if c in categories]))
    sections.append(("by feasibility", [feasibility[k] for k in sorted(feasibility)]))
    sections.append(("by domain", [domains[d] for d in sorted(domains)]))
    parts.append(f"<h2>Success rates</h2>{_group_table(sections)}")
    parts.append(_task_table(tasks, len(configs) > 1))
    parts.append(
        '<div class="foot">Static report written by pytest-osworld. Click a column heading to sort; '
        "each task links to its page with screenshots, actions and the evaluator's reasons.</div>"
    )
    return _page(title, "".join(parts), _INDEX_JS)


def _run_line(tasks: list[_Task]) -> str:
    """Agent, model, provider and plugin version(s), from the results' provenance."""
    seen: dict[str, set[str]] = {"agent": set(), "model": set(), "provider": set(), "plugin_version": set()}
    for task in tasks:
        provenance = (task.result or {}).get("provenance")
        if isinstance(provenance, dict):
            for key, values in seen.items():
                if provenance.get(key):
                    values.add(str(provenance[key]))
    shown = [
        f"{key.replace('_', ' ')}: {', '.join(sorted(values))}" for key, values in seen.items() if values
    ]
    return _e(" · ".join(shown)) if shown else "no finished task yet"


def _task_table(tasks: list[_Task], show_config: bool) -> str:
    checks = "".join(
        f'<label><input type="checkbox" data-outcome="{_e(o)}" checked> {_badge(o)}</label>'
        for o in OUTCOMES
        if any(t.outcome == o for t in tasks)
    )
    config_head = "<th>configuration</th>" if show_config else ""
    head = (
        f'<h2>Tasks (<span id="shown">{len(tasks)}</span> of {len(tasks)} shown)</h2>'
        '<div class="toolbar">'
        '<input type="search" id="filter" placeholder="Filter: task id, domain, reason…">'
        f"{checks}</div>"
        f'<table class="sortable" id="tasks"><thead><tr>{config_head}'
        "<th>domain</th><th>task</th><th>outcome</th>"
        '<th class="n">score</th><th class="n">steps</th><th class="n">time</th><th>end</th>'
        "<th>first reason</th></tr></thead><tbody>"
    )
    rows = []
    for task in sorted(tasks, key=lambda t: (t.config, t.domain, t.task_id)):
        link = _href(f"{task.rel}/{TASK_PAGE_NAME}")
        score = task.score
        steps = f"{task.step_count}/{task.max_steps}" if task.max_steps else str(task.step_count)
        reason = task.reason
        tip = f' title="{_e(task.instruction[:300])}"' if task.instruction else ""
        infeasible = ' <span class="muted small">(infeasible)</span>' if task.infeasible else ""
        config_cell = f"<td>{_e(task.config)}</td>" if show_config else ""
        rows.append(
            f'<tr data-outcome="{_e(task.outcome)}">{config_cell}<td>{_e(task.domain)}</td>'
            f'<td class="tid"><a href="{link}"{tip}>{_e(task.task_id)}</a>{infeasible}</td>'
            f'<td data-v="{list(OUTCOMES).index(task.outcome)}">{_badge(task.outcome)}</td>'
            f'<td class="n" data-v="{score if score is not None else -1}">{_score(score)}</td>'
            f'<td class="n" data-v="{task.step_count}">{_e(steps)}</td>'
            f'<td class="n" data-v="{task.duration:.3f}">{_duration(task.duration)}</td>'
            f"<td>{_e(task.end_reason)}</td>"
            f'<td class="reason" title="{_e(reason[:1000])}">{_e(reason[:300])}</td></tr>'
        )
    return head + "".join(rows) + "</tbody></table>"


# --------------------------------------------------------------------------- task page


def _task_page(task: _Task, index: Path) -> str:
    back = _href(Path(os.path.relpath(index, task.folder)).as_posix())
    result = task.result or {}
    parts = [
        f'<nav><a href="{back}">← all tasks</a> · <span class="muted">{_e(task.config)}</span></nav>',
        f'<h1>{_e(task.domain)} / <span class="tid" style="font-size:20px">{_e(task.task_id)}</span></h1>',
    ]
    facts = [_badge(task.outcome)]
    if task.result is not None:
        threshold = result.get("threshold")
        facts.append(
            f"score <b>{_score(task.score)}</b>" + (f" / {_e(threshold)}" if threshold is not None else "")
        )
    steps = f"{task.step_count}/{task.max_steps}" if task.max_steps else str(task.step_count)
    facts += [f"{_e(steps)} steps", _duration(task.duration)]
    if task.end_reason:
        facts.append(f"ended: {_e(task.end_reason)}")
    if task.infeasible:
        facts.append("infeasible task")
    if task.steps:
        facts.append('<a href="#final">last screen</a>')
    parts.append(f'<div class="facts">{" · ".join(facts)}</div>')
    if task.result is None:
        parts.append(
            '<div class="banner o-incomplete"><b>Incomplete.</b> This task has a trajectory but no '
            "<code>result.json</code>: the run crashed or errored before scoring, or the task is still "
            "running.</div>"
        )
    if task.rescored and isinstance(task.rescored.get("rescore"), dict):
        info = task.rescored["rescore"]
        parts.append(
            f'<div class="box small">Rescored ({_e(info.get("status"))}): score '
            f"{_e(_score(_num(task.rescored.get('score'))))}, outcome {_e(task.rescored.get('outcome'))}"
            f"{' — ' + _e(info.get('reason')) if info.get('reason') else ''} "
            '(<a href="result.rescored.json">result.rescored.json</a>)</div>'
        )
    parts.append("<h2>Instruction</h2>")
    if task.instruction is not None:
        parts.append(f'<div class="box instruction">{_e(task.instruction)}</div>')
        parts.append(f'<div class="muted small">{_e(task.instruction_note)}</div>')
    else:
        why = (
            "unknown until the task has a result.json (it names the task file)"
            if task.result is None
            else "the task file is gone and result.json has no instruction"
        )
        parts.append(f'<div class="box muted">Instruction not available: {why}.</div>')
    if task.result is not None and result.get("reason"):
        parts.append(f'<h2>Reason</h2><div class="box">{_e(_clip(str(result["reason"]), 4000))}</div>')
    if task.traj_errors:
        parts.append(
            "<h2>Errors</h2>"
            + "".join(f'<div class="err">{_e(_clip(m, 4000))}</div>' for m in task.traj_errors)
        )
    if task.result is not None:
        parts.append(_evaluator_section(task))
    if (task.folder / "recording.mp4").is_file():
        parts.append(
            '<h2>Recording</h2><video controls preload="metadata" src="recording.mp4"></video>'
            '<div class="small"><a href="recording.mp4">recording.mp4</a></div>'
        )
    parts.append(_steps_section(task))
    parts.append(_details_section(task))
    return _page(f"{task.domain}/{task.task_id} — {OUTCOMES.get(task.outcome, task.outcome)}", "".join(parts))


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _evaluator_section(task: _Task) -> str:
    result = task.result or {}
    metrics = [m for m in result.get("metrics", []) if isinstance(m, dict)]
    out = ["<h2>Evaluator</h2>"]
    if not metrics:
        out.append('<div class="box muted">No metric outcome was recorded.</div>')
    else:
        out.append(
            '<table><thead><tr><th>metric</th><th>status</th><th class="n">value</th><th>result</th>'
            "<th>expected</th><th>reason</th></tr></thead><tbody>"
        )
        for metric in metrics:
            status = str(metric.get("status", ""))
            value = _num(metric.get("value"))
            cls = (
                "o-passed"
                if value is not None and value >= 1.0
                else "o-failed"
                if value is not None
                else "o-skipped"
            )
            if status == "error":
                cls = "o-eval_error"
            out.append(
                f"<tr><td><code>{_e(metric.get('func', ''))}</code></td>"
                f'<td><span class="badge {cls}">{_e(status.replace("_", " "))}</span></td>'
                f'<td class="n">{_score(value)}</td><td><code>{_e(metric.get("result", ""))}</code></td>'
                f"<td><code>{_e(metric.get('expected', ''))}</code></td>"
                f'<td class="thought">{_e(_clip(str(metric.get("reason", "")), 4000))}</td></tr>'
            )
        out.append("</tbody></table>")
    inputs = [i for i in result.get("evaluator_inputs", []) if isinstance(i, dict)]
    if inputs:
        out.append(
            '<details style="margin-top:10px"><summary>Evaluator inputs (saved for rescoring)</summary>'
        )
        for item in inputs:
            out.append(f'<div class="box"><h3><code>{_e(item.get("func", ""))}</code></h3><dl class="kv">')
            if item.get("options"):
                out.append(
                    f"<dt>options</dt><dd><pre>{_e(_clip(_json_text(item['options']), 4000))}</pre></dd>"
                )
            for key in ("result", "expected"):
                if key in item:
                    out.append(f"<dt>{key}</dt><dd>{_input_value(task.folder, item[key])}</dd>")
                else:
                    out.append(f'<dt>{key}</dt><dd class="muted">not fetched (the getter failed)</dd>')
            out.append("</dl></div>")
        out.append("</details>")
    return "".join(out)


def _input_value(folder: Path, value: Any) -> str:
    """A saved getter value: links for files under ``eval_inputs/``, else the value itself."""
    if isinstance(value, dict) and set(value) == {"file"} and isinstance(value["file"], str):
        name = value["file"]
        base = (folder / "eval_inputs").resolve()
        path = (base / name).resolve()
        if path.is_relative_to(base) and path.is_file():
            size = path.stat().st_size
            link = _href("eval_inputs/" + Path(name).as_posix())
            unit = "byte" if size == 1 else "bytes"
            return f'<a href="{link}">{_e(name)}</a> <span class="muted small">({size:,} {unit})</span>'
        return f'<code>{_e(name)}</code> <span class="muted small">(file not in eval_inputs/)</span>'
    if isinstance(value, list) and value and all(isinstance(v, dict) and set(v) == {"file"} for v in value):
        return "<br>".join(_input_value(folder, v) for v in value)
    return f"<pre>{_e(_clip(_json_text(value), 4000))}</pre>"


def _screenshot(folder: Path, name: str | None, caption: str) -> str:
    if name and "/" not in name and (folder / name).is_file():
        link = _href(name)
        return (
            f'<a href="{link}" target="_blank"><img src="{link}" loading="lazy" alt="{_e(caption)}"></a>'
            f'<div class="cap">{_e(caption)} · <a href="{link}">{_e(name)}</a></div>'
        )
    return f'<div class="noshot muted">no screenshot</div><div class="cap">{_e(caption)}</div>'


def _steps_section(task: _Task) -> str:
    out = [f"<h2>Trajectory ({len(task.steps)} step{'s' if len(task.steps) != 1 else ''})</h2>"]
    if not task.steps:
        out.append('<div class="box muted">No step was recorded.</div>')
    previous: str | None = "step_0.png"
    for step in task.steps:
        number = step.get("step_num", "?")
        body = [f"<h3>Step {_e(number)}</h3>"]
        meta = []
        if isinstance(step.get("duration_s"), int | float):
            meta.append(_duration(float(step["duration_s"])))
        usage = step.get("usage")
        if isinstance(usage, dict) and (usage.get("input_tokens") or usage.get("output_tokens")):
            meta.append(
                f"{usage.get('input_tokens') or 0:,} in / {usage.get('output_tokens') or 0:,} out tokens"
            )
        if step.get("action_timestamp"):
            meta.append(str(step["action_timestamp"]))
        if meta:
            body.append(f'<div class="muted small">{_e(" · ".join(meta))}</div>')
        if step.get("thought"):
            body.append(
                '<div class="label">thought</div>'
                f'<div class="thought">{_e(_clip(str(step["thought"])))}</div>'
            )
        actions = step.get("actions")
        body.append('<div class="label">actions</div>')
        if isinstance(actions, list) and actions:
            body += [f"<pre>{_e(_clip(_json_text(a), 8000))}</pre>" for a in actions]
        else:
            body.append('<div class="muted">(no action)</div>')
        if step.get("parse_error"):
            body.append(
                f'<div class="err"><b>parse error:</b> {_e(_clip(str(step["parse_error"]), 4000))}</div>'
            )
        errors = step.get("action_errors")
        if isinstance(errors, list):
            body += [
                f'<div class="err"><b>action error:</b> {_e(_clip(str(err), 4000))}</div>' for err in errors
            ]
        if step.get("response"):
            body.append(
                f"<details><summary>model response ({len(str(step['response'])):,} characters)</summary>"
                f"<pre>{_e(_clip(str(step['response'])))}</pre></details>"
            )
        shot = _screenshot(task.folder, previous, "the screen the agent saw")
        anchor = f' id="step-{_e(number)}"' if isinstance(number, int) else ""
        out.append(
            f'<div class="step"{anchor}><div>{shot}</div><div class="body">{"".join(body)}</div></div>'
        )
        after = step.get("screenshot_file")
        previous = str(after) if isinstance(after, str) else None
    if task.steps:
        out.append(
            '<div class="step" id="final"><div>'
            + _screenshot(task.folder, previous, "the screen after the last step")
            + '</div><div class="body"><h3>Final screen</h3><div class="muted small">'
            + _e(f"end: {task.end_reason}" if task.end_reason else "no result yet")
            + "</div></div></div>"
        )
    elif (task.folder / "step_0.png").is_file():
        first = _screenshot(task.folder, "step_0.png", "the screen before the first step")
        out.append(f'<div class="step"><div>{first}</div><div></div></div>')
    return "".join(out)


def _details_section(task: _Task) -> str:
    result = task.result or {}
    rows: list[tuple[str, Any]] = []
    provenance = result.get("provenance")
    if isinstance(provenance, dict):
        rows += [(str(k), v) for k, v in provenance.items()]
    usage = result.get("usage")
    if isinstance(usage, dict):
        rows += [(f"usage: {k}", v) for k, v in usage.items()]
    if result.get("nodeid"):
        rows.append(("pytest node id", result["nodeid"]))
    files = [
        f'<a href="{_href(name)}">{_e(name)}</a>'
        for name in ("traj.jsonl", "result.json", "result.txt", "result.rescored.json")
        if (task.folder / name).is_file()
    ]
    if (task.folder / "eval_inputs").is_dir():
        files.append('<a href="eval_inputs/">eval_inputs/</a>')
    out = ['<h2>Run details</h2><dl class="kv">']
    out += [f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows]
    out.append(f"<dt>files</dt><dd>{' · '.join(files) or '-'}</dd></dl>")
    return "".join(out)
