"""Every benchmark script starts from a fresh install with the test extras (which include the ``bench`` extra):
its imports resolve and it explains its options. What the scripts measure is printed by ``make bench``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

#: The scripts; a module they share (the machine's load) has no ``__main__`` block.
SCRIPTS = sorted(p for p in (Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py")
                 if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8"))


def test_the_benchmarks_folder_is_found() -> None:
    assert len(SCRIPTS) >= 8


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_starts(script: Path) -> None:
    result = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout


def test_make_bench_runs_every_benchmark() -> None:
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text(encoding="utf-8")
    bench = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    assert {s.name for s in SCRIPTS} == {line.split("benchmarks/")[1].split()[0] for line in bench.splitlines()
                                          if "benchmarks/" in line}


def test_the_werewolf_rooms_projection_figure_plays_its_games() -> None:
    """The in-process part of ``werewolf_rooms.py``: ten scripted games played through the protocol's own start,
    then every player's projection timed against a shared one."""
    sys.path.insert(0, str(SCRIPTS[0].parent))
    try:
        import werewolf_rooms
    finally:
        sys.path.pop(0)
    line = werewolf_rooms.projection_cost(1)
    assert "one shared state" in line and "(9 projections)" in line, line


@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
def test_the_study_load_takes_six_people_to_their_codes_with_either_pages_client(client: str) -> None:
    """``study_load.py`` against a real server, with each of its pages' HTTP clients: every stage transition is
    timed as the page saw it and as the server says it took (its ``Server-Timing``, read from either client's
    headers), and every participant gets one code."""
    script = next(p for p in SCRIPTS if p.name == "study_load.py")
    result = subprocess.run([sys.executable, str(script), "--participants", "6", "--decline", "0",
                             "--think", "0", "0.01", "--client", client],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert f"pages' HTTP client {client}" in out
    assert "participants with exactly one code: 6 of 6: all" in out
    transitions = next(line for line in out.splitlines() if line.startswith("stage transitions"))
    server = next(line for line in out.splitlines() if "the server's own time" in line)
    assert transitions.endswith("(n=30)") and server.endswith("(n=30)"), (transitions, server)  # 5 steps x 6
    assert "groups: 2 (0 filled with agents" in out and "2 finished" in out


def test_the_cogent_overhead_says_how_late_each_wait_woke() -> None:
    """``cogent_speed.py --explain`` on a small schedule: one more run and its floor, each wait's lateness counted
    for every call (4 items x 3 variants, 25 calls an item)."""
    script = next(p for p in SCRIPTS if p.name == "cogent_speed.py")
    result = subprocess.run([sys.executable, str(script), "--part", "overhead", "--items", "4", "--latency", "0.01",
                             "--concurrency", "4", "--explain", "--extra-cpu-us", "50"],
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = {line.split(":", 1)[0]: line for line in result.stdout.splitlines() if line.startswith("[explain]")}
    assert "100 waits woke late" in lines["[explain] lexicoord"], result.stdout
    assert "100 waits woke late" in lines["[explain] plain asyncio"], result.stdout
    assert "ratio" in lines["[explain] this run"]
    for name in ("lexicoord", "plain asyncio"):
        parts = next(line for line in result.stdout.splitlines() if line.startswith(f"[explain] {name}, the chain"))
        seconds = [float(x) for x in re.findall(r"(-?[0-9.]+) s\b", parts)]
        *each, together, wall = seconds
        assert len(each) == 5 and all(x >= -0.001 for x in each), parts
        # The parts are the last chain's timeline, end to end: they add up to the wall, whatever each one is.
        assert abs(sum(each) - wall) < 0.003 and abs(together - wall) < 0.001, parts
        assert each[1] > 0 and each[1] <= wall, parts  # its waits as asked: a chain's share of the calls
