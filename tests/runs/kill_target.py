"""Run by test_kill_resume in a subprocess that the test kills with SIGKILL mid-run."""

import asyncio
import signal
import sys

from lexicoord.models.pool import ModelPool
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from tests.runs.toy import Toy, lineup


def main(db: str, n_items: int, latency: float) -> None:
    # Ctrl-C as a user's terminal delivers it: a test session may pass SIGINT down ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    runner = Runner(Store(db), Toy(), models=ModelPool(cache=False, latency=latency), concurrency=2, progress=False)
    summary = asyncio.run(runner.run("killme", grid([{"id": f"i{k}"} for k in range(n_items)], [lineup()])))
    print(summary.model_dump_json())


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
