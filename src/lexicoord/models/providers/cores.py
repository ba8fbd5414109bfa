"""How many cores an embedded model's call may use now: the machine's share for this process, less what others
are running on it at this moment.

``os.cpu_count()`` is the wrong number twice over on a lab machine. It counts cores this process may not run on
(a SLURM job's CPU set, ``taskset``, a container's quota), and it ignores everyone else: llama.cpp's worker
threads spin while they wait for one another, so a call given every core while other jobs hold most of them
loses each wait to a thread that is not running and ran 4 to 10 times slower than a call on one thread. So a
call's threads are the cores this process may use (:func:`usable_cores`) less the runnable threads of other
processes at that instant (:func:`busy_elsewhere`), shared among the calls in flight, and never fewer than one.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

#: Where Linux says what runs: ``/proc/loadavg``'s fourth field is "runnable/total" at this instant.
LOADAVG = Path("/proc/loadavg")
OWN_TASKS = Path("/proc/self/task")
CGROUP_V2 = Path("/sys/fs/cgroup/cpu.max")
CGROUP_V1 = (Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us"))


def quota_cores(v2: str | None, v1: tuple[str, str] | None = None) -> int | None:
    """The cores a cgroup's CPU quota amounts to (rounded down, at least one), from ``cpu.max`` ("200000 100000",
    "max 100000") or cgroup v1's quota and period ("-1" for none); ``None`` when there is no quota."""
    try:
        if v2 is not None:
            quota, _, period = v2.strip().partition(" ")
            if quota == "max":
                return None
            return max(1, math.floor(int(quota) / int(period or "100000")))
        if v1 is not None:
            quota_us, period_us = int(v1[0].strip()), int(v1[1].strip())
            return None if quota_us <= 0 or period_us <= 0 else max(1, math.floor(quota_us / period_us))
    except ValueError:
        return None
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def usable_cores() -> int:
    """The cores this process may run on: its CPU set, capped by its container's quota when it has one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    v1 = (_read(CGROUP_V1[0]), _read(CGROUP_V1[1]))
    quota = quota_cores(_read(CGROUP_V2), None if None in v1 else (v1[0] or "", v1[1] or ""))
    return max(1, min(cores, quota) if quota else cores)


def runnable(loadavg: str) -> int | None:
    """The threads runnable at this instant, machine-wide, from a ``/proc/loadavg`` line (``None``: unreadable)."""
    try:
        return int(loadavg.split()[3].partition("/")[0])
    except (IndexError, ValueError):
        return None


def own_running(stats: list[str]) -> int:
    """How many of this process's threads are running, from their ``stat`` lines (state ``R``, after the name)."""
    return sum(1 for line in stats if line.rpartition(")")[2].split()[:1] == ["R"])


def busy_elsewhere() -> int:
    """Threads of other processes runnable now (0 when Linux does not say): what this process's calls would share
    the cores with."""
    loadavg = _read(LOADAVG)
    total = runnable(loadavg) if loadavg else None
    if total is None:
        return 0
    try:
        tasks = list(OWN_TASKS.iterdir())
    except OSError:
        return 0
    stats = [text for task in tasks if (text := _read(task / "stat"))]
    return max(0, total - own_running(stats))


def threads_for(calls: int) -> int:
    """llama.cpp threads for each of ``calls`` calls in flight: the cores free now, shared out, at least one."""
    cores = usable_cores()
    free = max(1, cores - busy_elsewhere())
    return max(1, free // max(1, calls))
