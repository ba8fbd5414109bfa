"""Live rooms under load: vote-to-broadcast latency and server CPU at 50, 200 and 500 WebSocket clients.

A real ``lexicoord serve`` runs as a subprocess on loopback with a temporary store. For each level of
N clients, N/4 rooms are created over HTTP, each with 4 people, one ``scripted/random`` agent and a
clarification bound of 10, so random choices rarely agree and games run many rounds. Every person is
a WebSocket client in this one asyncio process and plays as a browser would: it answers each
announce/choose request once, after a think time; the leader answers clarify requests with an empty
statement and starts the next game when one is over. Rooms start their first game at random times
within the first seconds (--stagger), so that games do not run, and end, in lockstep.

Latency runs from sending a vote to receiving the first ``state`` that shows it: the voter's
``game.status`` is ``chosen`` (or ``failed``) for that game and round or, since a connection keeps
only the newest state, a later state in which the round has closed (counted under "closed"). It
covers validation, the journal write on the rooms' one store thread, and the broadcast to the room.

Why a think time (uniform 0.5-2.0 s): people take seconds to choose, so the server sees a steady
stream of votes spread over the rooms (a round lasts as long as its slowest person). Without it each
round would close the instant it opened, and the benchmark would measure a tight loop of round trips
rather than a server with N people on it.

After a warm-up, votes sent within a fixed window count, timed from the send to the arrival of the
state (before this client parses it). ``states/s`` and ``KB/state`` say how many state frames the
people received and how large: a page is sent a frame only when its own state changed. CPU over the
window (100 = one core) is given for the server, its main thread (the event loop; the store thread is
most of the rest), this client, and everything else on the machine ("other": was the machine shared?).
The client's CPU and event-loop lag say whether this one client process, not the server, is the
bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
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
import machine
import psutil
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

VENV_BIN = Path(sys.executable).parent
#: The printed table: header, key of a level's figures, format.
COLUMNS = [("clients", "clients", "d"), ("rooms", "rooms", "d"), ("votes/s", "votes_s", ".1f"),
           ("samples", "samples", "d"), ("closed", "closed", "d"), ("pending", "pending", "d"),
           ("p50 ms", "p50", ".1f"), ("p99 ms", "p99", ".1f"), ("max ms", "max", ".1f"),
           ("states/s", "states_s", ".0f"), ("KB/state", "kb_state", ".1f"), ("srv CPU%", "server_cpu", ".0f"),
           ("srv loop%", "loop_cpu", ".0f"), ("cli CPU%", "client_cpu", ".0f"), ("other CPU%", "other_cpu", ".0f"),
           ("cli lag p99 ms", "lag_p99", ".1f")]


@dataclass
class Tally:
    """What the clients of one level measured; only votes sent inside ``window`` count."""

    window: tuple[float, float] = (float("inf"), float("inf"))
    latencies: list[float] = field(default_factory=list)
    closed: int = 0  # samples resolved by a later state in which the round had already closed
    votes: int = 0
    states: int = 0  # state frames received inside the window, and their size
    state_bytes: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def inside(self, t: float) -> bool:
        return self.window[0] <= t < self.window[1]


class Client:
    """One person in one room, over one WebSocket."""

    def __init__(self, ws: ClientConnection, name: str, args: argparse.Namespace, tally: Tally) -> None:
        self.ws, self.name, self.tally = ws, name, tally
        self.think: tuple[float, float] = tuple(args.think)
        self.stagger: float = args.stagger
        self.done: set[tuple[str, int, int]] = set()  # (kind, game, round) already answered
        self.sent: tuple[int, int, float] | None = None  # game, round, t_send of the vote awaiting its broadcast
        self.started_for = -1
        self.stopping = False  # set at the end of a level: answer nothing more
        self.tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        async for raw in self.ws:
            now = time.perf_counter()  # on arrival: parsing it is this client's work, not the server's
            msg = json.loads(raw)
            if msg["type"] == "state":
                if self.tally.inside(now):
                    self.tally.states += 1
                    self.tally.state_bytes += len(raw)
                self.on_state(msg["room"], msg["you"], now)
            elif msg["type"] == "error" and not self.stopping:
                self.tally.errors[msg["code"]] += 1

    def on_state(self, room: dict[str, Any], you: dict[str, Any], now: float) -> None:
        if self.stopping:
            return
        game = room.get("game")
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
            first = self.started_for < 0  # rooms start their first game at staggered times, not in lockstep
            self.started_for = room["games"]
            self.spawn(self.send({"type": "start"}, random.uniform(0, self.stagger) if first else 0.0))
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

    async def send(self, msg: dict[str, Any], delay: float = 0.0) -> None:
        await asyncio.sleep(delay)
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


def cpu_seconds(server: psutil.Process, me: psutil.Process) -> tuple[float, float, float, float]:
    """CPU seconds so far: the server, its main thread (the event loop), this client, everything else."""
    srv, cli, all_ = server.cpu_times(), me.cpu_times(), psutil.cpu_times()
    loop = next((t.user_time + t.system_time for t in server.threads() if t.id == server.pid), 0.0)
    busy = sum(all_) - all_.idle - getattr(all_, "iowait", 0.0)
    return srv.user + srv.system, loop, cli.user + cli.system, busy - srv.user - srv.system - cli.user - cli.system


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
            clients.append(Client(ws, f"p{i + 1}", args, tally))

    await asyncio.gather(*(open_one(code, i, t) for code, tokens in rooms for i, t in enumerate(tokens)))
    runs = [asyncio.create_task(c.run()) for c in clients]
    lags: list[float] = []
    probe = asyncio.create_task(lag_probe(lags))
    me = psutil.Process()
    await asyncio.sleep(args.warmup)
    lags.clear()
    before = cpu_seconds(server, me)
    tally.window = (time.perf_counter(), time.perf_counter() + args.seconds)
    await asyncio.sleep(args.seconds)
    span = time.perf_counter() - tally.window[0]
    server_cpu, loop_cpu, client_cpu, other_cpu = (100 * (b - a) / span for a, b in zip(before, cpu_seconds(server, me)))
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
    # A vote whose broadcast never came within the grace is a failure, never left out: it counts as an infinite
    # latency, so that p99 cannot look better by losing the slowest answers.
    ms = [x * 1000 for x in tally.latencies] + [math.inf] * pending
    return {"clients": n, "rooms": len(rooms), "votes_s": tally.votes / args.seconds, "samples": len(ms),
            "closed": tally.closed, "pending": pending, "p50": pct(ms, 0.50), "p99": pct(ms, 0.99),
            "max": max(ms, default=float("nan")), "states_s": tally.states / args.seconds,
            "kb_state": tally.state_bytes / max(1, tally.states) / 1024, "server_cpu": server_cpu,
            "loop_cpu": loop_cpu, "client_cpu": client_cpu, "other_cpu": other_cpu, "lag_p99": pct(lags, 0.99) * 1000,
            "errors": dict(tally.errors)}


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base}/api/offer", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the server did not come up within {timeout:g} s (exit status {proc.poll()}); see its log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, nargs="+", default=[50, 200, 500], help="levels of concurrent clients")
    parser.add_argument("--per-room", type=int, default=4, help="people per room (plus one scripted agent)")
    parser.add_argument("--bound", type=int, default=10, help="clarification bound of every room")
    parser.add_argument("--think", type=float, nargs=2, default=[0.5, 2.0], metavar=("MIN", "MAX"),
                        help="seconds a client thinks before each vote, uniform")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before the window, per level")
    parser.add_argument("--stagger", type=float, default=10.0, help="rooms start their first game within this")
    parser.add_argument("--seconds", type=float, default=20.0, help="measurement window per level")
    parser.add_argument("--grace", type=float, default=1.0, help="seconds after the window for late broadcasts")
    parser.add_argument("--target", type=float, nargs=2, action="append", metavar=("CLIENTS", "MS"),
                        help="a p99 target: under MS milliseconds at CLIENTS clients (repeat for several; "
                             "default: 20 ms at 200, 50 ms at 500)")
    parser.add_argument("--server-log", type=Path, default=None, help="keep the server's output here")
    args = parser.parse_args()
    targets = [(int(n), ms) for n, ms in args.target or [(200, 20.0), (500, 50.0)]]
    if args.per_room < 1 or min(args.clients) < 1:
        parser.error("--per-room and every --clients level must be at least 1")

    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as home:
        log_path = args.server_log or Path(home) / "server.log"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        cmd = [str(VENV_BIN / "lexicoord"), "serve", "--port", str(port), "--db", f"{home}/bench.db",
               "--model", "scripted/random", "--join-rate", "100000", "--no-cache",
               # every client is on loopback: one address, so its shares are lifted like the join rate
               "--connections-per-address", "100000", "--rooms-per-address", "100000"]
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
            if len(rows) < len(args.clients):  # stopped part-way: the server's last words may say why
                print(server_log[-4000:], file=sys.stderr)

    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"think {args.think[0]:g}-{args.think[1]:g} s, {args.per_room} people + 1 scripted agent per room, "
          f"bound {args.bound}, first games staggered over {args.stagger:g} s, warm-up {args.warmup:g} s, "
          f"window {args.seconds:g} s")
    print(" ".join(f"{head:>7}" for head, _, _ in COLUMNS), " errors")
    for r in rows:
        print(" ".join(f"{r[key]:>{max(7, len(head))}{fmt}}" for head, key, fmt in COLUMNS), "", r["errors"] or "-")
    for clients, target_ms in targets:
        target = next((r for r in rows if r["clients"] == clients), None)
        verdict = "MEETS" if target and target["p99"] < target_ms else "MISSES" if target else "was not run for"
        shown = f"p99 {target['p99']:.1f} ms: " if target else ""
        print(f"verdict: {shown}{verdict} the target of p99 < {target_ms:g} ms at {clients} clients")
    print(f"wall time {time.perf_counter() - started:.0f} s")
    problems = [line for line in server_log.splitlines() if "Traceback" in line or "ERROR" in line]
    if problems:
        print(f"server log: {len(problems)} error lines; last 40 lines:")
        print("\n".join(server_log.splitlines()[-40:]))


if __name__ == "__main__":
    machine.run(main)
