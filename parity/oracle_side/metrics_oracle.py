"""Run inside .parity-venv: score metric cases with OSWorld's own metric functions.

    .parity-venv/bin/python parity/oracle_side/metrics_oracle.py CASES.json SCORES.json

CASES.json is a list of ``{"id", "metric", "result", "expected", "has_expected",
"options"}``; SCORES.json gets ``{"id": {"score": float | None, "error": str}}``. An
exception counts as 0, as OSWorld's runner records it; its text is kept. ``score`` is
``None`` only when OSWorld 1.0.2 has no function of that name and no reference scorer
in ``metrics_upstream.py`` stands in for it (``"upstream": true`` marks those scores). Standard-library only
besides desktop_env: this file must not import the plugin.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import signal
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics_upstream import UPSTREAM

TIMEOUT = 30
STUB_FLAG = "PARITY_STUB_USED"


class CaseTimeout(Exception):
    """A metric ran longer than :data:`TIMEOUT` seconds."""


def _alarm(signum: int, frame: object) -> None:
    raise CaseTimeout(f"timed out after {TIMEOUT} s")


def score_one(metrics: Any, case: dict[str, Any]) -> dict[str, Any]:
    """Score one case with OSWorld's function; exceptions score 0."""
    func = getattr(metrics, case["metric"], None)
    upstream = func is None and case["metric"] in UPSTREAM
    if upstream:
        func = UPSTREAM[case["metric"]]
    if func is None:
        return {"score": None, "error": "not in desktop-env 1.0.2"}
    args = [case["result"], case["expected"]] if case["has_expected"] else [case["result"]]
    os.environ.pop(STUB_FLAG, None)
    signal.alarm(TIMEOUT)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            raw = func(*args, **case["options"])
        value = float(raw) if raw is not None else 0.0
        stub = os.environ.get(STUB_FLAG)
        if stub:
            # OSWorld caught the stub's error: the case reached a library we do not install.
            return {
                "score": value,
                "error": f"{stub} is stubbed in the parity oracle venv",
                "upstream": upstream,
            }
        return {"score": value, "error": "", "upstream": upstream}
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        return {"score": 0.0, "error": f"{type(error).__name__}: {error}"[:300], "upstream": upstream}
    finally:
        signal.alarm(0)


def main() -> int:
    """Read the cases, score them all, write the scores."""
    cases_path, scores_path = sys.argv[1], sys.argv[2]
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    import desktop_env.evaluators.metrics as metrics

    with open(cases_path, encoding="utf-8") as handle:
        cases = json.load(handle)
    scores: dict[str, Any] = {}
    for number, case in enumerate(cases, start=1):
        scores[case["id"]] = score_one(metrics, case)
        if number % 500 == 0:
            print(f"parity: oracle scored {number}/{len(cases)} metric cases", file=sys.stderr, flush=True)
    with open(scores_path, "w", encoding="utf-8") as handle:
        json.dump(scores, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
