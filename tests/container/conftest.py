"""The container image, built once per session by ``./container/build.sh`` for the tests
that run it (opt-in: they take minutes)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def image() -> str:
    """The image's name, as the last line build.sh prints (cached by the engine)."""
    built = subprocess.run(
        ["./container/build.sh"], cwd=REPO, capture_output=True, text=True, timeout=3600, check=False
    )
    assert built.returncode == 0, built.stderr[-4000:]
    return built.stdout.strip().splitlines()[-1]
