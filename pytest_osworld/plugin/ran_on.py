"""Which host and worker ran a task, recorded in ``result.json`` and the JUnit properties.

A run spread over several machines (pytest-xdist workers started over SSH, see
docs/scaling.md) writes one report on the controller; these names say where each task
ran. ``socket.gethostname()`` alone cannot tell apart two "hosts" that are network
namespaces of one machine (they share the hostname), so the name of the process's network
namespace is added when it has one (what ``ip netns identify`` prints).
"""

from __future__ import annotations

import functools
import os
import socket
from pathlib import Path

#: Where ``ip netns add`` keeps its named network namespaces (bind mounts of nsfs files).
NETNS_RUN_DIR = Path("/run/netns")


def network_namespace(run_dir: Path = NETNS_RUN_DIR) -> str | None:
    """The ``ip netns`` name of this process's network namespace, or None if it has none.

    Like ``ip netns identify``: the namespace file of this process and a named one are the
    same namespace when their device and inode numbers are equal.
    """
    try:
        own = os.stat("/proc/self/ns/net")
        entries = sorted(run_dir.iterdir())
    except OSError:
        return None
    for entry in entries:
        try:
            info = entry.stat()
        except OSError:
            continue
        if (info.st_dev, info.st_ino) == (own.st_dev, own.st_ino):
            return entry.name
    return None


@functools.cache
def host_name() -> str:
    """This host: ``hostname``, or ``hostname:netns`` inside a named network namespace."""
    name = socket.gethostname()
    netns = network_namespace()
    return f"{name}:{netns}" if netns else name


def worker_name() -> str:
    """The xdist worker id (``gw0``...) of this process, or ``main`` without xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")
