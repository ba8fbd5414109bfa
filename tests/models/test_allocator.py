"""Large blocks get a mapping of their own, returned whole when freed, however many came and went before: what
keeps a long campaign on the embedded model from growing (see allocator.py), checked in a real process by
reading its mappings."""

from __future__ import annotations

import subprocess
import sys

from lexicoord.models.providers import allocator

PROBE = """
import sys
from lexicoord.models.providers.allocator import return_large_blocks
if sys.argv[1] == "fixed":
    assert return_large_blocks()
def mapped():
    return sum(1 for line in open("/proc/self/maps") if len(line.split()) == 5)  # anonymous mappings
big = bytearray(16 << 20); del big   # a mapped block freed: glibc's dynamic threshold rises to its size
before = mapped()
state = bytearray(4 << 20)           # a saved state of a few megabytes
print(mapped() - before)
"""


def new_mappings(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


def test_with_the_threshold_fixed_a_state_sized_block_is_mapped_on_its_own() -> None:
    assert new_mappings("fixed") == 1


def test_without_it_the_same_block_comes_from_the_heap_after_a_large_one_was_freed() -> None:
    """The behaviour the fix is for, shown on this machine's C library: otherwise the test above proves nothing."""
    assert new_mappings("dynamic") == 0


def test_it_applies_once_and_says_whether_it_did() -> None:
    first = allocator.return_large_blocks()
    assert first is True, "glibc: the threshold can be fixed"
    assert allocator.return_large_blocks() is first
