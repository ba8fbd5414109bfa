"""Start-up time of the ``lexicoord`` command: what a user waits for before anything happens.

Each command runs in a fresh process, once unmeasured (to warm the file cache and create the store), then
``--repeat`` times (5 by default); the median wall time is printed beside the machine's load average (1, 5 and
15 minutes) read just before, since a shared machine's load moves every figure:

- ``python -c pass``: the interpreter alone, the floor;
- ``lexicoord --help``: the command listing (target ≤ 0.25 s on an idle machine);
- ``lexicoord runs list --db FILE``: a light command on an empty store in a temporary folder (target ≤ 0.4 s);
- ``lexicoord coordination --help``: a protocol's own group, imported because it is asked for;
- ``lexicoord ask local/smollm2-135m "Say yes." --max-tokens 1``: a one-shot question to the embedded model,
  to its first token (target ≤ 1.5 s on an idle machine): start-up, the weights mapped, one context made;
- ``lexicoord serve``: from launch to its start page answered on loopback (target ≤ 2 s on an idle machine).

Then the ten imports that cost the most, cumulatively (``python -X importtime``), of ``import lexicoord.cli.app``
and of ``lexicoord --help`` (which reads the protocols' registry and renders the page).
The ``lexicoord`` next to the interpreter is used, so ``PYTHONPATH=OTHER/src python benchmarks/startup.py``
measures another checkout of the source with the same environment.

lexicoord's modules are compiled to bytecode first, as ``pip install`` does for an installed package: an editable
install run with ``PYTHONDONTWRITEBYTECODE`` set (as many container images set it) never writes that cache, and
every start would compile the modules it imports (10-20 ms of ``runs list``'s 0.46 s on the development machine,
2026-11-30). The script says how many modules it compiled.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import machine

HELP_TARGET, RUNS_TARGET = 0.25, 0.4


def compile_package(env: dict[str, str]) -> tuple[Path, int]:
    """Write the bytecode of the ``lexicoord`` the commands will import (found as they will find it, through
    ``PYTHONPATH`` if set); returns its folder and how many of its modules lacked bytecode."""
    found = subprocess.run([sys.executable, "-c", "import lexicoord, os; print(os.path.dirname(lexicoord.__file__))"],
                           env=env, capture_output=True, text=True, check=True)
    package = Path(found.stdout.strip())
    sources = list(package.rglob("*.py"))
    missing = sum(not Path(importlib.util.cache_from_source(str(f))).exists() for f in sources)
    if not compileall.compile_dir(str(package), quiet=1):
        raise SystemExit(f"could not compile {package}")
    return package, missing


def lexicoord() -> list[str]:
    """The installed command as a user runs it, or the module when the environment has no script."""
    script = Path(sys.executable).with_name("lexicoord")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lexicoord.cli.app"]


def median_wall(argv: list[str], env: dict[str, str], repeat: int) -> float:
    """Median wall time of ``argv`` over ``repeat`` fresh processes, after one unmeasured run; each must succeed."""
    times = []
    for i in range(repeat + 1):
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        if i:
            times.append(elapsed)
    return statistics.median(times)


#: Seconds to the first token of a one-shot ``ask`` on the embedded model, on an idle machine.
ASK_TARGET = 1.5
#: Seconds from starting ``lexicoord serve`` to its first page answered, on an idle machine.
SERVE_TARGET = 2.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_first_page(db: str, env: dict[str, str], repeat: int) -> float:
    """Median seconds from launching ``lexicoord serve`` to its start page answering 200, each a fresh process."""
    times = []
    for i in range(repeat + 1):
        port = free_port()
        started = time.perf_counter()
        proc = subprocess.Popen([*lexicoord(), "serve", "--port", str(port), "--db", db, "--model", "scripted/echo"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"lexicoord serve ended with {proc.returncode} before answering")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as page:
                        if page.status == 200:
                            break
                except OSError:
                    time.sleep(0.01)
            if i:
                times.append(time.perf_counter() - started)
        finally:
            proc.terminate()
            proc.wait(30)
    return statistics.median(times)

#: ``lexicoord --help`` in-process, as the entry point runs it.
HELP = "import sys; sys.argv = ['lexicoord', '--help']; from lexicoord.cli.app import main; main()"


def top_imports(code: str, env: dict[str, str], count: int = 10) -> list[tuple[float, str]]:
    """The ``count`` imports of running ``code`` with the largest cumulative time, in seconds."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env,
                          capture_output=True, text=True, timeout=300)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|")
        rows.append((int(cumulative) / 1e6, name.rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="Measured runs of each command (the median is shown).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lexicoord-startup-") as home:
        env = {**os.environ, "LEXICOORD_HOME": home, "COLUMNS": "120"}
        db = str(Path(home) / "runs.db")
        cases = [
            ("python -c pass", [sys.executable, "-c", "pass"], None),
            ("lexicoord --help", [*lexicoord(), "--help"], HELP_TARGET),
            ("lexicoord runs list --db FILE", [*lexicoord(), "runs", "list", "--db", db], RUNS_TARGET),
            ("lexicoord coordination --help", [*lexicoord(), "coordination", "--help"], None),
            ("lexicoord ask, embedded, 1 token",
             [*lexicoord(), "ask", "local/smollm2-135m", "Say yes.", "--max-tokens", "1", "--no-cache"], ASK_TARGET),
        ]
        package, missing = compile_package(env)
        print(f"bytecode: {missing} of lexicoord's modules in {package} had none and were compiled first, as "
              "`pip install` compiles an installed package's")
        print(f"median of {args.repeat} wall times, each in a fresh process")
        for label, argv, target in cases:
            before = machine.load_line()
            seconds = median_wall(argv, env, args.repeat)
            goal = f"  (target ≤ {target} s on an idle machine)" if target else ""
            print(f"{label:32} {seconds:6.3f} s   [{before}]{goal}")
        before = machine.load_line()
        seconds = serve_first_page(db, env, args.repeat)
        print(f"{'lexicoord serve, first page':32} {seconds:6.3f} s   [{before}]  (target ≤ {SERVE_TARGET} s on an idle machine)")
        for label, code in (("import lexicoord.cli.app", "import lexicoord.cli.app"), ("lexicoord --help", HELP)):
            print(f"\n{label}: the 10 largest cumulative import times   [{machine.load_line()}]")
            for seconds, name in top_imports(code, env):
                print(f"  {seconds:6.3f} s  {name}")


if __name__ == "__main__":
    machine.run(main)
