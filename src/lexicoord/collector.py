"""Garbage-collector settings for long-running processes (a server, a campaign).

Rooms and runs make many small, short-lived records; Python's default thresholds then run full passes over
everything that exists, which stops a server's rooms for 100 ms and more and costs a campaign a few per
cent of its wall time (`benchmarks/cogent_speed.py`). Never applied to apps or runners built in tests.
"""

from __future__ import annotations

import gc


def tune_for_long_runs() -> None:
    """Keep what exists at start-up out of full passes, and collect young objects less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
