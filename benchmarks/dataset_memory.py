"""Memory to play one item of a large dataset: peak resident memory (RSS) of each way a file is loaded.

A JSONL file of --mb megabytes (220 by default) of valid ambiguity items is written to a temporary folder
(never kept). Each measurement runs in a fresh process and prints its own peak RSS (VmHWM: see
``machine.peak_mb``) and its wall time:

- ``baseline``: the process with lexicoord imported, nothing loaded;
- ``load``: every item as an object (``TASK.load``: what a caller that wants them all pays);
- ``one item``: the item ``coordination run --items 1`` plays (``dataset_from(path, 1, None, None)``);
- ``one sampled item``: the same after a seeded shuffle (``--sample 7 --items 1``);
- ``coordination run``: the whole command, ``lexicoord coordination run --dataset FILE --items 1`` with a scripted model.

Before the index (``lexicoord.tasks.indexed``) playing one item of a 220 MB file held every item: 1.25 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine

KINDS = ("baseline", "load", "one item", "one sampled item", "coord run")


def write_dataset(path: Path, megabytes: float) -> int:
    """Valid items cycled from the built-in set, each with its own id, until the file holds ``megabytes``."""
    from lexicoord.tasks.ambiguous import builtin_items

    base = [i.model_dump(mode="json") for i in builtin_items()]
    target = int(megabytes * 2**20)
    written = lines = 0
    with path.open("w", encoding="utf-8") as fh:
        while written < target:
            item = dict(base[lines % len(base)])
            item["id"] = f"{item['id']}-{lines}"
            line = json.dumps(item, ensure_ascii=False) + "\n"
            fh.write(line)
            written += len(line.encode("utf-8"))
            lines += 1
    return lines


def measure(kind: str, path: str, home: str) -> None:
    """In this (fresh) process: do ``kind``, then print the peak RSS in MB and the seconds it took."""
    started = time.perf_counter()
    from lexicoord.protocols.coordination.lineup import dataset_from
    from lexicoord.tasks.ambiguous import TASK

    imported = time.perf_counter()
    if kind == "load":
        TASK.load(path)
    elif kind == "one item":
        [item] = dataset_from(path, 1, None, None)
    elif kind == "one sampled item":
        [item] = dataset_from(path, 1, 7, None)
    elif kind == "coord run":
        from lexicoord.cli.app import main

        sys.argv = ["lexicoord", "coord", "run", "--dataset", path, "--items", "1", "--model", "scripted/first",
                    "--no-cache", "--db", str(Path(home) / "runs.db"), "--run", "one"]
        try:
            main()
        except SystemExit as stop:
            if stop.code not in (0, None):
                raise
    print(json.dumps({"peak_mb": machine.peak_mb(), "seconds": time.perf_counter() - imported,
                      "import_seconds": imported - started}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=220.0, help="Size of the generated dataset in MB (default 220).")
    parser.add_argument("--kinds", nargs="*", choices=KINDS, default=list(KINDS), help="What to measure.")
    parser.add_argument("--measure", nargs=3, metavar=("KIND", "FILE", "HOME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    with tempfile.TemporaryDirectory(prefix="lexicoord-dataset-") as tmp:
        path = Path(tmp) / "large.jsonl"
        lines = write_dataset(path, args.mb)
        size = path.stat().st_size / 2**20
        print(f"dataset: {lines:,} items, {size:.0f} MB ({path.name}, removed afterwards)")
        env = {**os.environ, "LEXICOORD_HOME": tmp, "LEXICOORD_MAX_DATASET_MB": str(int(size) + 64)}
        for kind in args.kinds:
            result = subprocess.run([sys.executable, __file__, "--measure", kind, str(path), tmp], env=env,
                                    capture_output=True, text=True)
            if result.returncode != 0:
                print(f"{kind:>17}: failed: {result.stderr.strip().splitlines()[-1:]}")
                continue
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            print(f"{kind:>17}: peak RSS {figures['peak_mb']:7.0f} MB, {figures['seconds']:6.1f} s "
                  f"(+{figures['import_seconds']:.1f} s imports)")


if __name__ == "__main__":
    machine.run(main)
