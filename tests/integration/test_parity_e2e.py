"""Issue #17 level 2, quick form: OSWorld's own DesktopEnv on our desktop agrees with us.

Runs ``python -m parity.end_to_end --quick`` (OSWorld's ``DesktopEnv`` from desktop-env
1.0.2 in the oracle venv, driving one local desktop through the token relay) and asserts
that every compared case agrees or is a documented difference. Skipped, with the reason,
when the oracle venv cannot be built (no PyPI access and no venv built before).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def oracle_python() -> Path:
    sys.path.insert(0, str(ROOT))
    try:
        from parity.oracle_venv import ensure_oracle_venv

        return ensure_oracle_venv(ROOT)
    except Exception as exc:  # no network, no /usr/bin/python3 venv: say why
        pytest.skip(f"the oracle venv (desktop-env 1.0.2) cannot be built here: {type(exc).__name__}: {exc}")
    finally:
        sys.path.remove(str(ROOT))


def test_quick_end_to_end_parity(oracle_python: Path, tmp_path: Path) -> None:
    out = tmp_path / "e2e.json"
    proc = subprocess.run(
        [sys.executable, "-m", "parity.end_to_end", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    rows = {row["name"]: row for row in report["rows"]}
    assert set(rows) == {"osworld no-URL noop", "own noop", "own reference"}, report
    for row in rows.values():
        assert row["cases"] > 0, row
        assert row["undocumented"] == 0, report["disagreements"]
        assert row["agree"] + row["documented"] == row["cases"], row
    # The reference solutions must really have solved their tasks on both sides.
    assert rows["own reference"]["agree"] == rows["own reference"]["cases"], report["disagreements"]
    assert "[1/" in proc.stdout, "progress lines are printed per task"
