"""Level 2 of issue #17: OSWorld's own ``DesktopEnv`` on our desktop, scored by both sides.

    .venv/bin/python -m parity.end_to_end --out FILE.json [--quick] [--groups G,...]

Groups (one row each):

``osworld no-URL noop``  OSWorld's tasks that fetch no URL (65 of 369), noop (DONE at once);
``own noop``             our own tasks (``tasks/*/*.json``), noop;
``own reference``        our own tasks, their reference ``solution`` played through
                         OSWorld's ``DesktopEnv.step``.

Each case (on one of two desktops side by side, ``--desktops``): a fresh local desktop,
OSWorld's ``reset`` (its setup controller), the actions (OSWorld's ``step``), OSWorld's
``evaluate``, then our plugin's evaluation of the same trajectory on the same final
state (see :mod:`parity.e2e_run` for why). Scores must be equal within 1e-6. A case
where OSWorld's side raises is "not compared", with the exception as the reason (its
runner would record 0). ``--quick`` runs a handful of cases per group; the full mode runs
every OSWorld no-URL task and every own task with noop, and the reference solutions of
the quick own-task selection only (all 42 solutions do not fit the CI budget;
``--groups "own reference" --full-reference`` runs them all).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from parity.documented import documented_names
from parity.e2e_run import CaseResult, E2ESession
from parity.e2e_tasks import E2ETask, examples_dir, osworld_no_url_tasks, own_tasks

ROOT = Path(__file__).resolve().parent.parent
GROUPS = ("osworld no-URL noop", "own noop", "own reference")
#: ``--quick``'s OSWorld tasks: the two whose getters once disagreed, and two plain OS tasks.
QUICK_OSWORLD = (
    "multi_apps/937087b6-f668-4ba6-9110-60682ee33441",
    "chrome/99146c54-4f37-4ab8-9327-5f3291665e1e",
    "os/13584542-872b-42d8-b299-866967b5c3ef",
    "os/28cc3b7e-b194-4bc9-8353-d04c0f4d56d2",
)
#: Desktops run side by side, each with its own OSWorld ``DesktopEnv``: the cases are
#: independent, and one desktop leaves a core idle while it waits for windows and files.
DESKTOPS = 2
#: ``--quick``'s own tasks (noop and reference): short, single-application tasks.
QUICK_OWN = 3


def _pick_osworld(tasks: list[E2ETask], quick: bool) -> list[E2ETask]:
    if not quick:
        return tasks
    by_name = {t.name: t for t in tasks}
    chosen = [by_name[n] for n in QUICK_OSWORLD if n in by_name]
    return chosen or tasks[:4]


def _pick_own(tasks: list[E2ETask]) -> list[E2ETask]:
    """The quick own selection: the first tasks of the ``os`` domain, else the first ones."""
    os_tasks = [t for t in tasks if t.path.parent.name == "os" and t.solution]
    return (os_tasks or [t for t in tasks if t.solution])[:QUICK_OWN]


def plan(quick: bool, groups: tuple[str, ...], full_reference: bool) -> list[tuple[str, E2ETask, list[Any]]]:
    """Every case to run: (group, task, actions)."""
    cases: list[tuple[str, E2ETask, list[Any]]] = []
    own = own_tasks(ROOT / "tasks")
    if "osworld no-URL noop" in groups:
        for task in _pick_osworld(osworld_no_url_tasks(examples_dir()), quick):
            cases.append(("osworld no-URL noop", task, ["DONE"]))
    if "own noop" in groups:
        for task in _pick_own(own) if quick else own:
            cases.append(("own noop", task, ["DONE"]))
    if "own reference" in groups:
        for task in own if full_reference else _pick_own(own):
            if task.solution:
                cases.append(("own reference", task, task.solution))
    return cases


def suspects(task: E2ETask) -> list[str]:
    """What an end-to-end disagreement of ``task`` may come from: its metrics and result getters.

    The metrics are compared one by one at level 1, the getters only here; a disagreement is
    documented when one of them has a bullet in docs/parity.md.
    """
    evaluator = task.data.get("evaluator", {})
    func = evaluator.get("func", [])
    result = evaluator.get("result", [])
    specs = result if isinstance(result, list) else [result]
    names = [str(f) for f in (func if isinstance(func, list) else [func])]
    names += [str(s.get("type")) for s in specs if isinstance(s, dict) and s.get("type")]
    return list(dict.fromkeys(names))


def report(
    results: list[tuple[str, E2ETask, CaseResult]], documented: set[str], seconds: float
) -> dict[str, Any]:
    """The level's JSON (PARITY.md's shape) from the case results."""
    rows: dict[str, dict[str, Any]] = {}
    not_compared: list[dict[str, str]] = []
    disagreements: list[dict[str, Any]] = []
    for group, task, res in results:
        row = rows.setdefault(
            group, {"name": group, "cases": 0, "agree": 0, "documented": 0, "undocumented": 0, "note": ""}
        )
        if res.oracle_error:
            not_compared.append(
                {
                    "name": f"{group}: {res.task}",
                    "why": f"OSWorld's side raised ({res.oracle_error}); ours scored {res.ours}",
                }
            )
            continue
        row["cases"] += 1
        if res.agree:
            row["agree"] += 1
            continue
        names = suspects(task)
        known = [n for n in names if n in documented]
        is_doc = bool(known)
        name = known[0] if known else ("+".join(names) or task.name)
        row["documented" if is_doc else "undocumented"] += 1
        disagreements.append(
            {
                "name": name,
                "case": f"{group}: {res.task} {res.trajectory}"
                + (f" (ours: {res.ours_error})" if res.ours_error else ""),
                "ours": res.ours,
                "oracle": res.oracle,
                "documented": is_doc,
            }
        )
    for row in rows.values():
        notes = []
        raised = sum(1 for nc in not_compared if nc["name"].startswith(row["name"] + ":"))
        if raised:
            notes.append(f"{raised} not compared (OSWorld's side raised)")
        stand_in = sorted(
            {m for g, _, r in results if g == row["name"] and not r.oracle_error for m in r.upstream}
        )
        if stand_in:
            notes.append(
                f"metrics newer than desktop-env 1.0.2 scored by upstream stand-ins: {', '.join(stand_in)}"
            )
        row["note"] = "; ".join(notes)
    return {
        "level": "end_to_end",
        "seconds": round(seconds, 1),
        "rows": list(rows.values()),
        "not_compared": not_compared,
        "disagreements": disagreements,
    }


def run(
    quick: bool,
    groups: tuple[str, ...],
    full_reference: bool,
    progress: Callable[[str], None] = print,
    only: str = "",
    desktops: int = DESKTOPS,
) -> dict[str, Any]:
    """Build the oracle venv, run every planned case on ``desktops`` desktops side by side
    (each with its own OSWorld ``DesktopEnv``), return the report in the planned order."""
    from parity.oracle_venv import ensure_oracle_venv

    started = time.monotonic()
    wanted = [part for part in only.split(",") if part] or [""]
    cases = [case for case in plan(quick, groups, full_reference) if any(w in case[1].name for w in wanted)]
    oracle_python = ensure_oracle_venv(ROOT)
    lanes = max(1, min(desktops, len(cases)))
    progress(f"end_to_end: {len(cases)} cases on {lanes} desktop(s), each with OSWorld's DesktopEnv")
    results: dict[int, tuple[str, E2ETask, CaseResult]] = {}
    lock = threading.Lock()

    def lane(indexes: list[int]) -> None:
        session = E2ESession(oracle_python, ROOT / "tasks")
        try:
            for index in indexes:
                group, task, actions = cases[index]
                trajectory = "noop" if actions == ["DONE"] else f"reference ({len(actions)} actions)"
                res = session.run_case(task, trajectory, actions)
                verdict = "raised" if res.oracle_error else ("agree" if res.agree else "DISAGREE")
                with lock:
                    results[index] = (group, task, res)
                    progress(
                        f"[{len(results)}/{len(cases)}] {group} {task.name}: ours={res.ours} "
                        f"oracle={res.oracle} {verdict} ({res.seconds:.1f} s)"
                        f"{' ' + res.oracle_error[:120] if res.oracle_error else ''}"
                    )
        finally:
            session.close()

    with ThreadPoolExecutor(max_workers=lanes) as pool:
        done = [pool.submit(lane, list(range(k, len(cases), lanes))) for k in range(lanes)]
        for future in done:
            future.result()  # a lane's desktop that broke fails the level, as it did with one
    ordered = [results[index] for index in sorted(results)]
    return report(ordered, documented_names(ROOT), time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: write the report JSON and exit 0 (the aggregator decides)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="where to write the JSON report")
    parser.add_argument("--quick", action="store_true", help="a handful of cases per group")
    parser.add_argument("--groups", default=",".join(GROUPS), help=f"comma-separated subset of {GROUPS}")
    parser.add_argument("--full-reference", action="store_true", help="every own reference solution")
    parser.add_argument(
        "--desktops", type=int, default=DESKTOPS, help=f"desktops side by side (default {DESKTOPS})"
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated parts of task names: run only the planned cases matching one",
    )
    args = parser.parse_args(argv)
    groups = tuple(g.strip() for g in args.groups.split(",") if g.strip())
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {unknown}; choose from {GROUPS}")
    result = run(
        args.quick,
        groups,
        args.full_reference,
        progress=lambda line: print(line, flush=True),
        only=args.only,
        desktops=args.desktops,
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for row in result["rows"]:
        print(
            f"{row['name']}: {row['cases']} cases, {row['agree']} agree, {row['documented']} documented, "
            f"{row['undocumented']} undocumented {row['note']}"
        )
    print(f"end_to_end: {result['seconds']} s, {len(result['not_compared'])} not compared -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
