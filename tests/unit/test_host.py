"""Which host and worker a result names (``pytest_osworld.plugin.ran_on``)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_osworld.plugin.ran_on import host_name, network_namespace, worker_name


def test_no_named_namespace_dir(tmp_path: Path) -> None:
    assert network_namespace(tmp_path / "missing") is None
    assert network_namespace(tmp_path) is None


def test_a_named_file_of_our_namespace_is_found(tmp_path: Path) -> None:
    # A symlink stats as its target: the same namespace file as our own.
    (tmp_path / "aaa-other").write_text("not a namespace")
    (tmp_path / "ours").symlink_to("/proc/self/ns/net")
    assert network_namespace(tmp_path) == "ours"


def test_host_name_outside_a_named_namespace() -> None:
    if network_namespace() is not None:
        pytest.skip("this test run is itself inside a named network namespace")
    assert host_name() == socket.gethostname()


def test_worker_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    assert worker_name() == "gw3"
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert worker_name() == "main"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None, reason="needs root and iproute2")
def test_host_name_inside_ip_netns() -> None:
    name = f"osw-host-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        code = "from pytest_osworld.plugin.ran_on import host_name; print(host_name())"
        out = subprocess.run(
            ["ip", "netns", "exec", name, sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
        )
        assert out.stdout.strip() == f"{socket.gethostname()}:{name}"
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)
