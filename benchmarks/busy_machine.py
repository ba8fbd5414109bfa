"""A lone embedded call on a machine other processes keep busy: the default thread count against one thread and
against every core.

``--hogs`` processes (default: one per core this process may use) spin for the whole benchmark, standing for
other jobs on a shared lab machine. Then the same call (SmolLM2, 48 tokens, temperature 0) is made in a fresh
process with the default threads (``cores.threads_for``: the cores free now), with one thread, and with every
core, alternating, ``--repeat`` sittings each. The goal: the default is never slower than one thread by more than
the noise (the median within 1.25x of one thread's), where every core collapses. Prints each sitting's wall
seconds and the medians; the threads the default chose are printed too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import machine

from lexicoord.models.providers import cores

CALL = """
import asyncio, json, sys, time
from lexicoord.models import get_model
from lexicoord.models.providers import local
threads = None if sys.argv[1] == "default" else int(sys.argv[1])
chosen = []
real = local.LocalProvider._complete
def spy(self, loaded, context, messages, config, threads_):
    chosen.append(threads_)
    return real(self, loaded, context, messages, config, threads_)
local.LocalProvider._complete = spy
model = get_model("local/smollm2-135m", cache=False, contexts=1, n_threads=threads)
async def main():
    await model.provider.prepare()
    started = time.perf_counter()
    out = await model.generate("Write three sentences about rivers.", max_tokens=48, temperature=0.0, seed=1)
    print(json.dumps({"seconds": time.perf_counter() - started, "tokens": out.usage.completion_tokens,
                      "threads": chosen[-1]}))
asyncio.run(main())
"""


def sitting(threads: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", CALL, threads], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hogs", type=int, default=cores.usable_cores())
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    every = str(cores.usable_cores())
    print(f"{args.hogs} busy processes on {every} usable cores; a lone call of 48 tokens, {args.repeat} sittings")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    times: dict[str, list[float]] = {"default": [], "1": [], every: []}
    chosen: list[int] = []
    try:
        time.sleep(1.0)
        for _ in range(args.repeat):
            for threads in times:
                result = sitting(threads)
                times[threads].append(result["seconds"])
                if threads == "default":
                    chosen.append(int(result["threads"]))
                print(f"  threads {threads:>7}: {result['seconds']:.2f} s ({result['tokens']} tokens, "
                      f"ran on {result['threads']})", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    medians = {k: statistics.median(v) for k, v in times.items()}
    print(f"median seconds: default {medians['default']:.2f} (chose {sorted(set(chosen))} threads), one thread "
          f"{medians['1']:.2f}, every core ({every}) {medians[every]:.2f}")
    ratio = medians["default"] / medians["1"]
    print(f"default / one thread: {ratio:.2f} (goal <= 1.25); every core / one thread: "
          f"{medians[every] / medians['1']:.2f}")
    print("verdict:", "met" if ratio <= 1.25 else "MISSED")


if __name__ == "__main__":
    machine.run(main)
