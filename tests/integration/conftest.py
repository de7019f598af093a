"""Integration fixtures: one real local desktop shared by the tests of a session, and bare
Xvfb servers for tests of single desktop parts."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.local import DEFAULT_SESSION, LocalProvider


def _started_provider(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str, name: str, options: dict[str, str]
) -> Iterator[LocalProvider]:
    provider = LocalProvider(
        ProviderConfig(
            worker_id=f"{name}-{worker_id}", work_dir=str(tmp_path_factory.mktemp(name)), options=options
        )
    )
    provider.start()
    yield provider
    provider.stop()


@pytest.fixture(scope="session")
def desktop(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[LocalProvider]:
    """A started local desktop provider (restore it per test with ``desktop.restore(...)``)."""
    yield from _started_provider(tmp_path_factory, worker_id, "it", {})


@pytest.fixture(scope="session")
def gnome(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> Iterator[LocalProvider]:
    """A started local desktop provider on the ``gnome`` session (GNOME Shell): the
    ``desktop`` one while gnome is the default session, so that a worker does not keep two
    such desktops (and their warm spares) running all session."""
    if DEFAULT_SESSION == "gnome":
        yield request.getfixturevalue("desktop")
        return
    yield from _started_provider(tmp_path_factory, worker_id, "gnome", {"session": "gnome"})


@pytest.fixture
def xvfb() -> Iterator[Callable[[], str]]:
    """Starts fresh Xvfb servers (``-displayfd`` picks a free display); returns ``:N``."""
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed")
    servers: list[subprocess.Popen[bytes]] = []

    def start() -> str:
        read, write = os.pipe()
        argv = [
            "Xvfb",
            "-displayfd",
            str(write),
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ]
        proc = subprocess.Popen(argv, pass_fds=(write,), stderr=subprocess.DEVNULL)
        servers.append(proc)
        os.close(write)
        number = b""
        deadline = time.monotonic() + 30
        while not number.endswith(b"\n") and time.monotonic() < deadline:
            chunk = os.read(read, 16)
            if not chunk:
                break
            number += chunk
        os.close(read)
        if not number.strip().isdigit():
            pytest.fail("Xvfb did not report its display")
        return f":{number.decode().strip()}"

    yield start
    for proc in servers:
        proc.terminate()
        proc.wait(10)
