"""One VM test module at a time on this machine.

The Vagrant tests each bring up libvirt daemons and software-emulated VMs; two at once
would trip ``vagrant/netns.sh``'s one-libvirtd check and starve two shared cores. Under
``-n 2`` their modules may land on different workers, so each holds this lock (a file
lock, released by the kernel if the worker dies) for as long as its daemons live.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_PATH = Path("/tmp/pytest-osworld-vm-tests.lock")


@contextmanager
def vm_tests_lock() -> Iterator[None]:
    """Hold the machine-wide lock of the VM tests (blocks until the other module is done)."""
    with LOCK_PATH.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
