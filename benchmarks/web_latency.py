"""Live rooms under load: vote-to-broadcast latency and server CPU at 50, 200 and 500 WebSocket clients.

A real ``lexicoord serve`` runs as a subprocess on loopback, with ``scripted/random`` agents and a
temporary store. For each level of N clients, about N/4 rooms are created over HTTP, each with 4
people, one scripted agent and a clarification bound of 10, so random choices rarely agree and a
game runs many rounds. Every person is a WebSocket client in this one asyncio process and plays as
a browser would: it answers each announce/choose request once, after a think time; the leader
answers clarify requests with an empty statement and starts the next game when one is over.

Latency runs from sending a vote to receiving the first ``state`` that shows it: the voter's
``game.status`` entry is ``chosen`` (or ``failed``) for that game and round, or, since a connection
keeps only the newest state, a later state in which that round has already closed (those samples
are counted under "closed"). It covers validation, the journal write on the rooms' single store
thread, and the broadcast to the whole room.

Why a think time (uniform 0.5-2.0 s by default): people take seconds to choose, so the server sees
a steady stream of about N / mean-think votes per second spread over the rooms. Without it each
round would close the instant it opened, and the benchmark would measure a tight loop of round
trips rather than a server with N people on it.

After a warm-up, votes sent within a fixed window count. Server CPU is psutil's cpu_percent of the
server process over the window (100 = one core); the client's own CPU and event-loop lag say whether
this one client process, rather than the server, is the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

VENV_BIN = Path(sys.executable).parent


@dataclass
class Tally:
    """What the clients of one level measured; only votes sent inside ``window`` count."""

    window: tuple[float, float] = (float("inf"), float("inf"))
    latencies: list[float] = field(default_factory=list)
    closed: int = 0  # samples resolved by a later state in which the round had already closed
    votes: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def inside(self, t: float) -> bool:
        return self.window[0] <= t < self.window[1]


class Client:
    """One person in one room, over one WebSocket."""

    def __init__(self, ws: ClientConnection, name: str, think: tuple[float, float], tally: Tally) -> None:
        self.ws, self.name, self.think, self.tally = ws, name, think, tally
        self.done: set[tuple[str, int, int]] = set()  # (kind, game, round) already answered
        self.sent: tuple[int, int, float] | None = None  # game, round, t_send of the vote awaiting its broadcast
        self.started_for = -1
        self.stopping = False  # set at the end of a level: answer nothing more
        self.tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        async for raw in self.ws:
            msg = json.loads(raw)
            if msg["type"] == "state":
                self.on_state(msg["room"], msg["you"], time.perf_counter())
            elif msg["type"] == "error":
                self.tally.errors[msg["code"]] += 1

    def on_state(self, room: dict[str, Any], you: dict[str, Any], now: float) -> None:
        game = room.get("game")
        if self.stopping:
            return
        if self.sent is not None and game is not None:
            number, round_, t_send = self.sent
            mine = game["status"].get(self.name, {}).get("state")
            shown = game["number"] == number and game["round"] == round_ and mine in ("chosen", "failed")
            later = game["number"] > number or game["round"] > round_
            if shown or later:
                self.sent = None
                if self.tally.inside(t_send):
                    self.tally.latencies.append(now - t_send)
                    self.tally.closed += not shown
        if you["leader"] and room["phase"] in ("lobby", "over") and room["games"] != self.started_for:
            self.started_for = room["games"]
            self.spawn(self.send({"type": "start"}))
        request = you.get("request")
        if request is None or game is None:
            return
        key = (request["kind"], game["number"], request["round"])
        if key in self.done:
            return
        self.done.add(key)
        if request["kind"] == "clarify":
            self.spawn(self.send({"type": "clarify", "round": request["round"], "statement": ""}))
        else:
            self.spawn(self.vote(game["number"], request["round"], game["item"]["options"]))

    async def vote(self, number: int, round_: int, options: list[str]) -> None:
        await asyncio.sleep(random.uniform(*self.think))
        t_send = time.perf_counter()
        self.sent = (number, round_, t_send)
        self.tally.votes += self.tally.inside(t_send)
        await self.send({"type": "choose", "round": round_, "choice": random.choice(options), "justification": "bench"})

    async def send(self, msg: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps(msg))

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


async def make_rooms(http: httpx.AsyncClient, clients: int, per_room: int, bound: int) -> list[tuple[str, list[str]]]:
    """Rooms holding ``clients`` people in all (the last may be smaller), with their codes and tokens."""
    sizes = [per_room] * (clients // per_room) + ([clients % per_room] if clients % per_room else [])
    body = {"mode": "automatic", "agents": [{"name": "bot", "model": "scripted/random"}],
            "clarification_bound": bound}
    limit = asyncio.Semaphore(16)

    async def one(size: int) -> tuple[str, list[str]]:
        async with limit:
            created = await http.post("/api/rooms", json=body)
            created.raise_for_status()
            code, tokens = created.json()["code"], []
            for i in range(size):  # in order: the first to join is the leader
                joined = await http.post(f"/api/rooms/{code}/join", json={"name": f"p{i + 1}"})
                joined.raise_for_status()
                tokens.append(joined.json()["token"])
            return code, tokens

    return list(await asyncio.gather(*(one(s) for s in sizes)))


async def lag_probe(lags: list[float], period: float = 0.05) -> None:
    """How late this process's event loop wakes up: a busy client would inflate every latency."""
    while True:
        t = time.perf_counter()
        await asyncio.sleep(period)
        lags.append(time.perf_counter() - t - period)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def level(base: str, server: psutil.Process, n: int, args: argparse.Namespace) -> dict[str, Any]:
    tally = Tally()
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        rooms = await make_rooms(http, n, args.per_room, args.bound)
    ws_base = base.replace("http://", "ws://")
    clients: list[Client] = []
    limit = asyncio.Semaphore(32)

    async def open_one(code: str, i: int, token: str) -> None:
        async with limit:
            ws = await connect(f"{ws_base}/ws/{code}", max_size=None, open_timeout=30)
            await ws.send(json.dumps({"type": "hello", "token": token}))
            clients.append(Client(ws, f"p{i + 1}", tuple(args.think), tally))  # type: ignore[arg-type]

    await asyncio.gather(*(open_one(code, i, t) for code, tokens in rooms for i, t in enumerate(tokens)))
    runs = [asyncio.create_task(c.run()) for c in clients]
    lags: list[float] = []
    probe = asyncio.create_task(lag_probe(lags))
    me = psutil.Process()
    await asyncio.sleep(args.warmup)
    lags.clear()
    server.cpu_percent(None), me.cpu_percent(None)
    tally.window = (time.perf_counter(), time.perf_counter() + args.seconds)
    await asyncio.sleep(args.seconds)
    server_cpu, client_cpu = server.cpu_percent(None), me.cpu_percent(None)
    await asyncio.sleep(args.grace)  # let the broadcasts of the window's last votes arrive
    pending = sum(1 for c in clients if c.sent is not None and tally.inside(c.sent[2]))
    probe.cancel()
    for c in clients:
        c.stopping = True
        for task in list(c.tasks):
            task.cancel()
    leaders = [c for c in clients if c.name == "p1"]
    await asyncio.gather(*(c.send({"type": "end_game"}) for c in leaders), return_exceptions=True)
    await asyncio.gather(*(c.ws.close() for c in clients), return_exceptions=True)
    await asyncio.gather(*runs, return_exceptions=True)
    ms = [x * 1000 for x in tally.latencies]
    return {"clients": n, "rooms": len(rooms), "votes_s": tally.votes / args.seconds, "samples": len(ms),
            "closed": tally.closed, "pending": pending, "p50": pct(ms, 0.50), "p99": pct(ms, 0.99),
            "max": max(ms, default=float("nan")), "server_cpu": server_cpu, "client_cpu": client_cpu,
            "lag_p99": pct(lags, 0.99) * 1000, "errors": dict(tally.errors)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode}")
        try:
            if httpx.get(f"{base}/api/offer", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {timeout:g} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, nargs="+", default=[50, 200, 500], help="levels of concurrent clients")
    parser.add_argument("--per-room", type=int, default=4, help="people per room (plus one scripted agent)")
    parser.add_argument("--bound", type=int, default=10, help="clarification bound of every room")
    parser.add_argument("--think", type=float, nargs=2, default=[0.5, 2.0], metavar=("MIN", "MAX"),
                        help="seconds a client thinks before each vote, uniform")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before the window, per level")
    parser.add_argument("--seconds", type=float, default=20.0, help="measurement window per level")
    parser.add_argument("--grace", type=float, default=1.0, help="seconds after the window for late broadcasts")
    parser.add_argument("--target-clients", type=int, default=200)
    parser.add_argument("--target-ms", type=float, default=50.0, help="p99 target at --target-clients")
    parser.add_argument("--server-log", type=Path, default=None, help="keep the server's output here")
    args = parser.parse_args()

    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as home:
        log_path = args.server_log or Path(home) / "server.log"
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        cmd = [str(VENV_BIN / "lexicoord"), "serve", "--port", str(port), "--db", f"{home}/bench.db",
               "--model", "scripted/random", "--join-rate", "100000", "--no-cache"]
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "LEXICOORD_HOME": home})
        try:
            wait_ready(base, proc)
            for n in args.clients:
                rows.append(asyncio.run(level(base, psutil.Process(proc.pid), n, args)))
                print(f"  {n} clients done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        server_log = log_path.read_text(errors="replace")

    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"think {args.think[0]:g}-{args.think[1]:g} s, {args.per_room} people + 1 scripted agent per room, "
          f"bound {args.bound}, warm-up {args.warmup:g} s, window {args.seconds:g} s")
    head = (f"{'clients':>7} {'rooms':>5} {'votes/s':>7} {'samples':>7} {'closed':>6} {'pending':>7} {'p50 ms':>7} "
            f"{'p99 ms':>7} {'max ms':>7} {'srv CPU%':>8} {'cli CPU%':>8} {'cli lag p99 ms':>14}  errors")
    print(head)
    for r in rows:
        print(f"{r['clients']:>7} {r['rooms']:>5} {r['votes_s']:>7.1f} {r['samples']:>7} {r['closed']:>6} "
              f"{r['pending']:>7} {r['p50']:>7.1f} {r['p99']:>7.1f} {r['max']:>7.1f} {r['server_cpu']:>8.0f} "
              f"{r['client_cpu']:>8.0f} {r['lag_p99']:>14.1f}  {r['errors'] or '-'}")
    target = next((r for r in rows if r["clients"] == args.target_clients), None)
    if target is None:
        print(f"verdict: no level of {args.target_clients} clients was run")
    else:
        ok = target["p99"] < args.target_ms
        print(f"verdict: p99 {target['p99']:.1f} ms at {args.target_clients} clients "
              f"{'meets' if ok else 'MISSES'} the target of < {args.target_ms:g} ms")
    print(f"wall time {time.perf_counter() - started:.0f} s")
    problems = [line for line in server_log.splitlines() if "Traceback" in line or "ERROR" in line]
    if problems:
        print(f"server log: {len(problems)} error lines; last 40 lines:")
        print("\n".join(server_log.splitlines()[-40:]))


if __name__ == "__main__":
    main()
