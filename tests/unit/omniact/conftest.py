"""Helpers for the OmniACT pytester tests: a project with OmniACT task files.

The plugin itself collects OmniACT files (``plugin/selection.py`` calls ``omniact_file_for``); the
project has no conftest of its own, so these tests go through the plugin's collection.
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
    """A pytester project with the fake provider (OmniACT files are collected by the plugin)."""
    pytester.makeini(
        """
        [pytest]
        osworld_provider = fake
        osworld_asset_cache = .assets
        osworld_results_dir = results/run
        filterwarnings = ignore::pytest.PytestAssertRewriteWarning
        """
    )
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
