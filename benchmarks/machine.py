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


def run(main: Callable[[], None]) -> None:
    """Run a benchmark's ``main`` between two load lines: what else ran before its figures, and during them
    (the benchmark's own load included). A worker process the benchmark starts prints nothing of its own."""
    if "--worker" in sys.argv:
        main()
        return
    print(f"before: {load_line()}", flush=True)
    main()
    print(f"after:  {load_line()}", flush=True)
