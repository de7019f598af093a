"""Fixtures of the metric tests: writers into tmp_path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def save_image(tmp_path: Path) -> Callable[..., str]:
    """Save a Pillow image under tmp_path and return its path."""

    def save(image: Any, name: str) -> str:
        path = tmp_path / name
        image.save(path)
        return str(path)

    return save


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str | bytes], str]:
    """Write text or bytes to tmp_path/name and return the path."""

    def writer(name: str, content: str | bytes) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return str(path)

    return writer
