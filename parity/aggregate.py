"""Run every parity level, print one table, exit 1 on any undocumented disagreement.

    .venv/bin/python -m parity.aggregate [--quick] [--out-dir parity-results] [--level NAME]
        [-- LEVEL OPTIONS]

``scripts/parity`` calls this. Each level is a module ``parity.<level>`` with the CLI
``--out FILE.json [--quick]`` (and its own options, given after ``--``); a level whose
module does not exist yet is skipped with a message. A level that fails (non-zero exit or
no JSON) also makes the run fail. The ``trajectories`` level (real agents' runs replayed on
our desktop, :mod:`parity.trajectories`) runs only when named.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from parity.oracle_venv import OracleVenvError, ensure_oracle_venv

ROOT = Path(__file__).resolve().parent.parent
LEVELS: tuple[str, ...] = ("metrics", "end_to_end", "agent_facing", "protocols")
#: Levels run only when named (``--level trajectories``): they take an hour in full.
BY_NAME_ONLY: tuple[str, ...] = ("trajectories",)


def run_level(level: str, out_dir: Path, quick: bool, extra: list[str]) -> dict[str, Any] | None:
    """Run ``parity.<level>`` (``extra``: its own options); its report, or ``None`` when it failed."""
    out = out_dir / f"{level}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", f"parity.{level}", "--out", str(out), *(["--quick"] if quick else [])]
    cmd += extra
    print(f"parity: running level {level}", flush=True)
    code = subprocess.run(cmd, cwd=ROOT).returncode
    if code != 0 or not out.is_file():
        print(f"parity: level {level} failed (exit {code})", flush=True)
        return None
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def table(reports: dict[str, dict[str, Any]]) -> str:
    """The printed table: one line per row of every level, then totals."""
    lines = [f"{'level':<13} {'name':<46} {'cases':>6} {'agree':>6} {'doc':>5} {'undoc':>6}"]
    for level, report in reports.items():
        for row in report.get("rows", []):
            lines.append(
                f"{level:<13} {row['name'][:46]:<46} {row['cases']:>6} {row['agree']:>6} "
                f"{row['documented']:>5} {row['undocumented']:>6}"
            )
        for skipped in report.get("not_compared", []):
            lines.append(f"{level:<13} {skipped['name'][:46]:<46} not compared: {skipped['why'][:80]}")
        rows = report.get("rows", [])
        total = {
            key: sum(int(row[key]) for row in rows)
            for key in ("cases", "agree", "documented", "undocumented")
        }
        lines.append(
            f"{level:<13} {'TOTAL (' + str(report.get('seconds', 0)) + ' s)':<46} {total['cases']:>6} "
            f"{total['agree']:>6} {total['documented']:>5} {total['undocumented']:>6}"
        )
    return "\n".join(lines)


def exit_code(reports: dict[str, dict[str, Any] | None]) -> int:
    """1 when a level failed or any row has an undocumented disagreement, else 0."""
    for report in reports.values():
        if report is None:
            return 1
        if any(int(row.get("undocumented", 0)) for row in report.get("rows", [])):
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """CLI: set up the oracle, run the levels, print the table, return the exit code."""
    parser = argparse.ArgumentParser(description="Parity with OSWorld's own code (issue #17)")
    parser.add_argument("--quick", action="store_true", help="a fraction of the cases of each level")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "parity-results")
    parser.add_argument(
        "--level", action="append", choices=LEVELS + BY_NAME_ONLY, help="run only this level (repeatable)"
    )
    parser.add_argument("extra", nargs="*", help="after --: options for the levels (trajectories: its own)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    levels = args.level or list(LEVELS)
    try:
        if set(levels) - set(BY_NAME_ONLY):  # the trajectories level needs no oracle
            print(f"parity: oracle venv {ensure_oracle_venv(ROOT)}", flush=True)
    except OracleVenvError as error:
        print(f"parity: {error}", file=sys.stderr)
        return 1
    args.out_dir.mkdir(parents=True, exist_ok=True)
    reports: dict[str, dict[str, Any] | None] = {}
    for level in levels:
        if not (ROOT / "parity" / f"{level}.py").is_file():
            print(f"parity: level {level} skipped: parity/{level}.py does not exist yet", flush=True)
            continue
        reports[level] = run_level(level, args.out_dir, args.quick, args.extra)
    print(table({name: report for name, report in reports.items() if report is not None}))
    code = exit_code(reports)
    verdict = "undocumented disagreements or a failed level" if code else "no undocumented disagreement"
    print(f"parity: {verdict}; {time.monotonic() - started:.0f} s; JSON in {args.out_dir}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
