"""Allocator tuning of the guest server process: large buffers are reused, not re-mapped.

A screenshot allocates a few buffers of 6-8 MB (the grab, the RGB pixels, the PNG) and an
upload one of its size. glibc serves such blocks with ``mmap`` and returns them with
``munmap``, or trims them off the heap when freed, so the next request faults every page
in again: about 200,000 minor page faults per 20 screenshots, which on a busy machine
cost more than the PNG encoding itself. :func:`keep_large_buffers` raises the two
thresholds so those blocks stay in the heap and are reused; blocks over 32 MB (large
uploads, recordings) are still mapped and returned at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

_log = logging.getLogger(__name__)

#: ``mallopt`` parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: Blocks up to this size come from the heap (glibc's ceiling for this setting on 64-bit).
MMAP_THRESHOLD = 32 << 20
#: Free memory at the top of the heap kept for reuse before it is given back to the system.
TRIM_THRESHOLD = 64 << 20


def keep_large_buffers() -> bool:
    """Tune glibc's malloc for this process; False where there is no glibc ``mallopt``."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError) as exc:  # musl, or no C library found
        _log.info("malloc tuning unavailable (%s)", exc)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
