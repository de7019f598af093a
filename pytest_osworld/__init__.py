"""pytest-osworld: OSWorld tasks as pytest tests, run by computer-use agents on real desktops."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pytest-osworld")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
