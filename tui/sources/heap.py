"""Memory given back once a large answer is let go.

An answer is read into buffers of megabytes (its body, its inflated pieces, a label value
of a megabyte). glibc maps a buffer past its threshold on its own and unmaps it when it is
freed; but the first such buffer freed raises the threshold to its size, so every later one
comes from the heaps of the threads that read answers, and those heaps keep it: 1 MB label
values left a process that polled them at 232 MB instead of 36, for good, with nothing of
theirs alive. The threshold is fixed instead (measured over the same polls: 36 to 39 MB).
Elsewhere than glibc there is nothing to do.
"""

from __future__ import annotations

import ctypes
import functools
import sys

M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h)
MAPPED_FROM_BYTES = 64 * 1024  # smaller buffers stay on the heaps: a map costs a syscall


@functools.cache
def map_large_buffers() -> bool:
    """Have every buffer of ``MAPPED_FROM_BYTES`` or more mapped on its own, so that freeing
    it gives it back (once per process); whether the allocator took it."""
    if not sys.platform.startswith("linux"):
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    return bool(mallopt and mallopt(M_MMAP_THRESHOLD, MAPPED_FROM_BYTES))
