"""``python -m lexicoord.cli.ray_child PARENT run FILE ...``: ``lexicoord run`` as a Ray task's child process.

Two things set apart a command started by a Ray worker from one started at a terminal, and this undoes both
before the command runs (see runs/ray_launcher.py):

- Ray's processes block SIGINT, and a child inherits the blocked mask: the SIGINT a cancelled task sends would
  never arrive, and the run would not hand its claims back. It is unblocked here. A cluster started in the
  background of a script (``ray start ... &`` without job control) also has SIGINT *ignored*, and an ignored
  signal stays ignored across ``exec``, where Python leaves it so: the default handlers are put back too.
- A worker killed outright (a force cancel, its node lost) would leave the command running on its own. On Linux
  the kernel sends it SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), and SIGTERM saves what ended, gives
  the claims back and marks the run, as on a cluster's preemption. Elsewhere the command plays on until the run is
  done, which is harmless: the claims keep it from playing what another process plays.
"""

from __future__ import annotations

import os
import signal
import sys

#: ``prctl`` option: the signal this process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """SIGTERM to this process when ``parent`` dies (Linux); if it died already, SIGTERM now."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request was made
        os.kill(os.getpid(), signal.SIGTERM)


def main() -> None:
    parent, *argv = sys.argv[1:]
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C as at a terminal: KeyboardInterrupt
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the command installs its own while a run plays
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    die_with_parent(int(parent))
    sys.argv = ["lexicoord", *argv]
    from lexicoord.cli.app import main as lexicoord

    lexicoord()


if __name__ == "__main__":
    main()
