"""The run viewer on a large run: time to the first page, a page deep in the run, and the server's memory.

A temporary store gets two synthetic runs of --events events each (100,000 by default): ``many``, episodes
of --per-episode events, and ``one``, a single episode holding them all. Every fifth event is a model call
with a prompt of about 2 KB, as campaigns record them. A real ``lexicoord serve`` then runs on it as a
subprocess on loopback, and this script asks for what the page asks for:

- the run's page: the run's head (with its filters) and its first page of episodes;
- an episode's page: its head, its first page of events and the term board up to it;
- the last page of the 100,000-event episode (keyset paging: as cheap as the first), and a page of
  episodes filtered by an outcome value (filtered in the database);
- then every page of the big episode, one after the other, as a reader paging to the end would.

"cold" is the first request of a server started for that page alone: nothing was asked of it before but its
readiness, on a route that reads no run (the episodes' ids are read from the file itself). The operating
system's file cache is not emptied between servers: "cold" is the server's, not the disk's. "warm" is the
median of --repeat more of the same page on that server. Then one more server: its resident memory (RSS) is read
before its first request, after the first pages, and at its highest while every page of the big episode is
read: the viewer never reads more than a page, so it should stay flat however large the run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import machine
import psutil

from lexicoord.core.audience import Audience
from lexicoord.core.events import Event, MessageEvent
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.types import ChatMessage
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import Store

PROMPT = ("You are seat A. The task and every earlier turn follow. " * 36)[:2000]


def events(n: int, offset: int = 0) -> list[Event]:
    out: list[Event] = []
    for i in range(n):
        seq = offset + i
        if seq % 5 == 4:
            e: Event = ModelCallEvent(model="scripted/x", agent="A", messages=[ChatMessage(role="user", content=PROMPT)],
                                      text=f"reply {seq}: the first meaning", audience=Audience.only("A"))
        else:
            e = MessageEvent(agent="AB"[seq % 2], content=f"turn {seq}: I choose the first meaning because it fits.",
                             audience=Audience() if seq % 3 else Audience.only("A"), round=seq // 100)
        e.seq = i
        out.append(e)
    return out


def record(run: str, i: int) -> EpisodeRecord:
    return EpisodeRecord(run_id=run, key=f"k{i}", position=i, item_id=f"item-{i}", status="done",
                         outcome={"converged": i % 3 == 0, "depth": i % 4}, started_at=1.0 + i, finished_at=2.0 + i,
                         spec={"settings": {"bound": 1 + i % 2}, "lineup": [{"name": "A"}, {"name": "B"}]})


def build(db: Path, total: int, per_episode: int) -> None:
    store = Store(str(db))
    episodes = max(1, total // per_episode)
    store.open_run("many", "toy", {}, episodes)
    for start in range(0, episodes, 50):
        store.save_episodes([(record("many", i), events(per_episode)) for i in range(start, min(episodes, start + 50))])
    store.open_run("one", "toy", {}, 1)
    store.save_episodes([(record("one", 0), events(total))])
    store.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def timed(client: httpx.Client, *paths: str) -> tuple[float, int, dict]:  # type: ignore[type-arg]
    """Seconds for ``paths`` asked one after the other (as the page chains them), bytes, and the last JSON."""
    started, size, last = time.perf_counter(), 0, {}
    for path in paths:
        r = client.get(path)
        r.raise_for_status()
        size += len(r.content)
        if r.headers["content-type"].startswith("application/json"):
            last = r.json()
    return time.perf_counter() - started, size, last


def first_episode(db: Path, run: str) -> int:
    """The id of a run's first episode, read from the store's file, not from the server being timed."""
    import sqlite3

    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT id FROM episodes WHERE run_id = ? ORDER BY position, id LIMIT 1",
                               (run,)).fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000, help="events in each of the two runs")
    parser.add_argument("--per-episode", type=int, default=100, help="events per episode of the run 'many'")
    parser.add_argument("--repeat", type=int, default=20, help="warm requests per figure")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as home:
        db = Path(home) / "viewer.db"
        started = time.perf_counter()
        build(db, args.events, args.per_episode)
        print(f"store: 2 runs x {args.events:,} events, {db.stat().st_size / 2**20:.0f} MB, "
              f"written in {time.perf_counter() - started:.1f} s")
        many, one = first_episode(db, "many"), first_episode(db, "one")
        pages = {
            "run page (head + first 50 episodes)": ["/runs/many", "/api/runs/many", "/api/runs/many/episodes"],
            f"episode page, {args.per_episode}-event episode": [
                f"/runs/many/episodes/{many}", f"/api/runs/many/episodes/{many}",
                f"/api/runs/many/episodes/{many}/events", f"/api/runs/many/episodes/{many}/board?upto=99"],
            f"episode page, {args.events:,}-event episode": [
                f"/runs/one/episodes/{one}", f"/api/runs/one/episodes/{one}",
                f"/api/runs/one/episodes/{one}/events", f"/api/runs/one/episodes/{one}/board?upto=99"],
            "its last page (before the end)": [f"/api/runs/one/episodes/{one}/events?before={args.events}"],
            "episodes filtered by outcome": ["/api/runs/many/episodes?outcome=converged%3Dtrue&setting=bound%3D1"],
        }
        print(f"\n{'first page of':<44} {'cold ms':>8} {'warm ms':>8} {'KB':>6}")
        for name, paths in pages.items():
            with serving(db, home) as (client, _):
                cold, size, _ = timed(client, *paths)
                warm = statistics.median(timed(client, *paths)[0] for _ in range(args.repeat))
            print(f"{name:<44} {cold * 1000:>8.1f} {warm * 1000:>8.1f} {size / 1024:>6.1f}")
        with serving(db, home) as (client, server):
            rss = {"before": server.memory_info().rss}
            for paths in pages.values():
                timed(client, *paths)
            rss["after first pages"] = server.memory_info().rss
            peak, cursor, n, walk_started = 0, None, 0, time.perf_counter()
            while True:
                r = client.get(f"/api/runs/one/episodes/{one}/events",
                               params={"limit": 100, **({"after": cursor} if cursor is not None else {})}).json()
                n += len(r["events"])
                peak = max(peak, server.memory_info().rss)
                cursor = r["next"]
                if cursor is None:
                    break
            walked = time.perf_counter() - walk_started
            rss["peak, every page read"] = peak
        print(f"\nevery page of the {args.events:,}-event episode: {n:,} events in {walked:.1f} s "
              f"({walked / max(1, n // 100) * 1000:.1f} ms a page of 100)")
        print("server RSS: " + ", ".join(f"{k} {v / 2**20:.0f} MB" for k, v in rss.items()))


@contextlib.contextmanager
def serving(db: Path, home: str) -> Iterator[tuple[httpx.Client, psutil.Process]]:
    """A fresh ``lexicoord serve`` on the store, once it answers a route that reads no run; stopped after."""
    port = free_port()
    exe = Path(sys.executable).with_name("lexicoord")
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port), "--db", str(db), "--model", "scripted/echo"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "LEXICOORD_HOME": home})
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            for _ in range(300):
                try:
                    if client.get("/api/offer").status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            yield client, psutil.Process(proc.pid)
    finally:
        proc.terminate()
        proc.wait(15)

if __name__ == "__main__":
    machine.run(main)
