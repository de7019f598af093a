"""Fixtures for the whole suite: pytester runs share the local desktop's template."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The local provider's cache (its desktop template and run records) as this process sees
#: it, read before any pytester fixture points HOME at a test's own folder.
LOCAL_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-osworld" / "local"


@pytest.fixture(autouse=True)
def _pytester_shares_the_desktop_template(request: pytest.FixtureRequest) -> None:
    """In a pytester test, link the test's own ``~/.cache/pytest-osworld/local`` to the real
    one. pytester sets HOME to the test's folder, so every plugin run it started on the
    local desktop built the desktop template again (about 80 s on a 2-core machine, in a
    test that otherwise takes 10 s). Asset caches stay the test's own."""
    if "pytester" in request.fixturenames:
        pytester: pytest.Pytester = request.getfixturevalue("pytester")
        LOCAL_CACHE.mkdir(parents=True, exist_ok=True)
        link = pytester.path / ".cache" / "pytest-osworld" / "local"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(LOCAL_CACHE, target_is_directory=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The VM tests first, in collection order. They run one module at a time (a machine-wide
    lock, ``integration/vm_lock.py``) for a quarter hour in all; started last they ended the
    run with the other workers idle, started first the first worker takes them (xdist hands
    out contiguous slices) while the others share the rest."""
    items.sort(key=lambda item: item.get_closest_marker("vagrant") is None)
