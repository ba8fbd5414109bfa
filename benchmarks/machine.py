"""What every benchmark prints beside its figures: how busy the machine was while they were taken.

A figure taken while other work ran is an upper bound, not the project's speed; above one runnable
process per core it is flagged so that nobody reads it as an idle machine's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def load_line() -> str:
    """The load averages and core count, flagged when the last minute's load exceeds the cores."""
    one, five, fifteen = os.getloadavg()
    cores = os.cpu_count() or 1
    flag = f"  ** BUSY: load above {cores} cores, figures are upper bounds **" if one > cores else ""
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {cores} CPUs{flag}"


#: Options a benchmark passes to itself when it runs a part in a process of its own: that process's output
#: is read by its parent, so it prints nothing of its own.
WORKER_FLAGS = ("--worker", "--raw", "--memory-of", "--measure")


def run(main: Callable[[], None]) -> None:
    """Run a benchmark's ``main`` between two load lines: what else ran before its figures, and during them
    (the benchmark's own load included)."""
    if any(flag in sys.argv for flag in (*WORKER_FLAGS, "-h", "--help")):
        main()
        return
    print(f"before: {load_line()}", flush=True)
    main()
    print(f"after:  {load_line()}", flush=True)


def peak_mb() -> float:
    """This process's own peak resident memory, in MB.

    Read from VmHWM, the high-water mark of the process's own address space. ``getrusage``'s ``ru_maxrss`` is
    not that: Linux carries it across fork and exec, so a child started by a large parent reports the
    parent's peak as its own.
    """
    with open("/proc/self/status", encoding="ascii") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    return int(hwm.split()[1]) / 1024
