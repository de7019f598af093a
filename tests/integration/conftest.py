"""Integration fixtures: one real local desktop shared by the tests of a session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.local import LocalProvider


@pytest.fixture(scope="session")
def desktop(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[LocalProvider]:
    """A started local desktop provider (restore it per test with ``desktop.restore(...)``)."""
    provider = LocalProvider(
        ProviderConfig(worker_id=f"it-{worker_id}", work_dir=str(tmp_path_factory.mktemp("desktop")))
    )
    provider.start()
    yield provider
    provider.stop()
