"""Large blocks go back to the system when freed, however large a block came and went before: what keeps a long
campaign on the embedded model from growing (see allocator.py), checked in a real process by its resident set."""

from __future__ import annotations

import subprocess
import sys

from lexicoord.models.providers import allocator

PROBE = """
import sys
from lexicoord.models.providers.allocator import return_large_blocks
if sys.argv[1] == "fixed":
    assert return_large_blocks()
def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0])
big = bytearray(16 << 20); del big   # a mapped block freed: glibc's dynamic threshold rises to its size
state = bytearray(4 << 20)           # a saved state of a few megabytes, its pages written (zeroed)
held = rss()
del state
print(held - rss())                  # kilobytes the system got back when it was freed (reading may add a few)
"""


def given_back(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


def test_with_the_threshold_fixed_a_freed_state_sized_block_goes_back_to_the_system() -> None:
    assert given_back("fixed") >= 3 * 1024


def test_without_it_the_same_block_freed_after_a_large_one_stays_with_the_process() -> None:
    """The behaviour the fix is for, shown on this machine's C library: otherwise the test above proves nothing."""
    assert given_back("dynamic") < 1024, "less than a megabyte of the 4 MB block went back"


def test_it_applies_once_and_says_whether_it_did() -> None:
    first = allocator.return_large_blocks()
    assert first is True, "glibc: the threshold can be fixed"
    assert allocator.return_large_blocks() is first
