"""SIGTERM stops a run as Ctrl-C does: what ended is saved, claims are given back at once, the run is marked.

A cluster stops a job with SIGTERM (SLURM at its time limit or on preemption, Kubernetes when it evicts a pod,
``docker stop``), then kills it a grace period later. Python's default for SIGTERM is to die on the spot,
which leaves the process's claims to expire and its run reading "running" until they do; treated as an
interrupt instead, the run's own clean-up gives every claim back and marks the run before the kill comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Iterator


class Terminated(Exception):
    """The run was stopped by SIGTERM (the command exits 143, as a process killed by it would)."""


@contextlib.contextmanager
def sigterm_cancels(task: asyncio.Task[object] | None) -> Iterator[list[bool]]:
    """While the block runs, SIGTERM cancels ``task`` (the run); the list it yields says whether it came. Outside
    the main thread, or where the loop cannot take signals, nothing changes."""
    came: list[bool] = []
    if task is None:
        yield came
        return
    loop = asyncio.get_running_loop()

    def stop() -> None:
        came.append(True)
        task.cancel()

    try:
        loop.add_signal_handler(signal.SIGTERM, stop)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or a loop without signals
        yield came
        return
    try:
        yield came
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
