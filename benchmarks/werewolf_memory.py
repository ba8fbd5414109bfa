"""A long Werewolf campaign on the embedded model: does its memory stay where its settings put it?

``lexicoord werewolf run`` on SmolLM2 (every seat, ``--concurrency`` games at once) runs in a child process for
``--minutes``; its resident set is read every ``--every`` seconds. The RAM prefix cache is given a small bound
(``--cache-mb``, 256 by default) so that it is full, and evicting as much as it stores, within the first minutes:
after that the campaign's memory should be its settings' (the weights, each context's KV cache and buffers, the
cache's bound) and nothing more, however long it runs. The verdict compares the median of the last third of the
samples with the median of the middle third (medians, since a sample may fall while a state is being saved):
goal, at most 5% growth. Prints every minute's figure, the two medians and the peak.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine


def rss_mb(pid: int) -> float | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return int(text.split("VmRSS:")[1].split()[0]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--cache-mb", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--every", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "lexicoord.cli.app", "werewolf", "run", "--games", "200", "--condition",
                   "origin", "--db", str(Path(tmp) / "runs.db"), "--run", "memory", "--no-cache",
                   "--concurrency", str(args.concurrency), "-o", f"prompt_cache_mb={args.cache_mb}"]
        print(f"werewolf on local/smollm2-135m, {args.concurrency} games at once, prefix cache {args.cache_mb} MB, "
              f"{args.minutes:g} minutes", flush=True)
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        samples: list[tuple[float, float]] = []
        started = time.monotonic()
        try:
            while time.monotonic() - started < args.minutes * 60 and child.poll() is None:
                time.sleep(args.every)
                rss = rss_mb(child.pid)
                if rss is None:
                    break
                elapsed = time.monotonic() - started
                samples.append((elapsed, rss))
                if len(samples) % max(1, round(60 / args.every)) == 0:
                    print(f"  {elapsed / 60:5.1f} min: {rss:7.0f} MB", flush=True)
        finally:
            child.terminate()
            _, err = child.communicate(timeout=120)
    if child.returncode not in (0, 143, -15) and len(samples) < 6:
        print(err[-2000:])
        raise SystemExit("the campaign ended before enough samples were taken")
    third = len(samples) // 3
    middle = statistics.median(r for _, r in samples[third:2 * third])
    last = statistics.median(r for _, r in samples[2 * third:])
    growth = (last - middle) / middle
    print(f"median RSS, middle third {middle:.0f} MB, last third {last:.0f} MB: {growth:+.1%} (goal <= +5%); "
          f"peak {max(r for _, r in samples):.0f} MB over {samples[-1][0] / 60:.1f} min")
    print("verdict:", "flat" if growth <= 0.05 else "GROWING")


if __name__ == "__main__":
    machine.run(main)
