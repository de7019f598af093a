"""Helpers for the OmniACT pytester tests: a project that collects OmniACT files.

Until ``plugin.py`` calls :func:`omniact_file_for` itself, the pytester project's
conftest does: a ``pytest_collect_file`` wrapper hands OmniACT files to our collector
(and drops the OSWorld collector, which would claim them for their ``instruction``).
"""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SUITE = Path(__file__).resolve().parents[3] / "tasks" / "omniact"

PROJECT_CONFTEST = """
import pytest
from pytest_osworld.omniact.collect import MARKER_LINE, omniact_file_for


def pytest_configure(config):
    config.addinivalue_line("markers", MARKER_LINE)


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path, parent):
    found = yield
    omniact = omniact_file_for(file_path, parent)
    return found if omniact is None else [omniact]
"""


def tiny_png(width: int = 200, height: int = 100) -> bytes:
    """A valid grey PNG of the given size."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def make_png() -> Callable[..., bytes]:
    """:func:`tiny_png`, as a fixture."""
    return tiny_png


@pytest.fixture
def omniact_project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester project with the fake provider and OmniACT collection."""
    pytester.makeini(
        """
        [pytest]
        osworld_provider = fake
        osworld_asset_cache = .assets
        osworld_results_dir = results/run
        filterwarnings = ignore::pytest.PytestAssertRewriteWarning
        """
    )
    pytester.makeconftest(PROJECT_CONFTEST)
    return pytester


@pytest.fixture
def copy_suite(omniact_project: pytest.Pytester) -> Callable[[], Path]:
    """Copy the repository's sample suite into the project as ``tasks/omniact``."""

    def copy() -> Path:
        target = omniact_project.path / "tasks" / "omniact"
        shutil.copytree(SUITE, target, ignore=shutil.ignore_patterns("conftest.py", "__pycache__"))
        return target

    return copy


@pytest.fixture
def write_omniact(omniact_project: pytest.Pytester) -> Callable[..., Path]:
    """Write one small OmniACT task (and its PNG) under ``tasks/omniact``."""

    def write(task_id: str = "save-file", **changes: Any) -> Path:
        folder = omniact_project.path / "tasks" / "omniact"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "shot.png").write_bytes(tiny_png())
        task: dict[str, Any] = {
            "id": task_id,
            "instruction": "Name the report and save it",
            "image": "shot.png",
            "script": "pyautogui.click(30, 20)  # box: name\npyautogui.write('Quarterly report')\n"
            "pyautogui.hotkey('ctrl', 's')",
            "boxes": {"name": [20, 10, 20, 20]},
            "app": "LibreOffice Writer",
        }
        task.update(changes)
        path = folder / f"{task_id}.json"
        path.write_text(json.dumps(task, indent=2))
        return path

    return write
