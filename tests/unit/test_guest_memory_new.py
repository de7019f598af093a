"""The guest server's allocator tuning: screenshot-sized buffers stop faulting their pages in."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_osworld.guest import memory

#: Allocates and frees screenshot-sized buffers; prints the minor page faults it took.
PROBE = """
import resource, sys
from pytest_osworld.guest.memory import keep_large_buffers
if sys.argv[1] == "tuned":
    assert keep_large_buffers()
def screenshot():
    grab = bytearray(8 << 20)    # the X image
    rgb = bytes(6 << 20)         # the packed pixels
    work = bytearray(6 << 20)    # the encoder's own buffers
    png = bytes(1 << 20)         # the answer
    del grab, rgb, work, png
for _ in range(3):
    screenshot()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    screenshot()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults(mode: str) -> int:
    """Minor page faults of 20 screenshot-like rounds in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=60, check=True
    )
    return int(done.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_large_buffers_are_reused_instead_of_faulted_in_again() -> None:
    default, tuned = faults("default"), faults("tuned")
    # 20 rounds of 21 MB are about 100,000 pages when every buffer is mapped afresh.
    assert default > 20_000
    assert tuned * 10 < default, (default, tuned)


def test_the_thresholds_keep_huge_uploads_out_of_the_heap() -> None:
    """Blocks over 32 MB are still mapped and returned at once (glibc's ceiling for it)."""
    assert memory.MMAP_THRESHOLD == 32 << 20
    assert memory.TRIM_THRESHOLD >= memory.MMAP_THRESHOLD
