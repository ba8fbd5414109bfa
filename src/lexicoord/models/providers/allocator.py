"""Large buffers go back to the system when they are freed, so a long campaign on the embedded model stays flat.

Every call of the embedded model with the RAM prefix cache saves llama.cpp's state: for a prompt of 1,500 tokens
a 35 MB buffer, copied twice on the way (llama-cpp-python's 100 MB logits table is no longer copied with it:
see lean_state.py); and the cache evicts states of the same size as new ones come. glibc hands out blocks that large from ``mmap`` at first,
but its threshold for doing so is dynamic: each such block freed raises the threshold to its size, after which
blocks of that size come from the heaps of the threads that asked for them (one per llama.cpp context) and are
kept there when freed, scattered between live ones. The process then grows past what the cache and the contexts
hold. Fixing the threshold (which turns its adjustment off) keeps every block of 1 MiB or more in its own
mapping, returned whole when freed: measured on a Werewolf campaign on SmolLM2 (two contexts, a 256 MB prefix
cache), the resident set held at 1.10 GB instead of 1.28 GB over seven minutes, with the same cache contents
(``benchmarks/werewolf_memory.py``). Small blocks are untouched, so Python's own allocations cost the same.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading

#: glibc's ``mallopt`` parameter number for the mmap threshold (malloc.h).
M_MMAP_THRESHOLD = -3
#: Blocks from this size up get a mapping of their own.
THRESHOLD = 1 << 20

_done = threading.Lock()
_applied: bool | None = None
log = logging.getLogger(__name__)


def return_large_blocks() -> bool:
    """Fix glibc's mmap threshold at :data:`THRESHOLD` for this process, once; whether it applies (not on another
    C library, such as musl or macOS's, whose allocators do not keep large blocks this way)."""
    global _applied
    with _done:
        if _applied is None:
            _applied = _mallopt(M_MMAP_THRESHOLD, THRESHOLD)
            if _applied:
                log.debug("glibc mmap threshold fixed at %d bytes", THRESHOLD)
        return _applied


def _mallopt(parameter: int, value: int) -> bool:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(parameter, value))
