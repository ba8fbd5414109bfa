"""Werewolf rooms under load: move-to-broadcast latency with 200 WebSocket clients, each sent its own view.

A real ``lexicoord serve`` runs as a subprocess on loopback with a temporary store. ``--clients`` people
are spread over Werewolf rooms of ``--per-room`` people and ``--agents`` ``scripted/random`` agents (8
players by default: 2 wolves, a seer, a witch, a guard, 3 villagers; 5 days at most). Every person is a
WebSocket client in this one asyncio process and plays as a browser would: it answers each request once,
after a think time (a speech, or a random legal choice for a night action or the day's vote); the leader
starts the next game when one is over. Rooms start their first game at random times within ``--stagger``.

Latency runs from sending a move to receiving the first ``state`` in which that request is no longer the
person's (answered: it covers validation, the journal write on the rooms' one store thread, and the
broadcast). Unlike the coordination room, no two people in a Werewolf room are sent the same state: each
state carries that person's own projection of the game (their seat's events, or the public ones for the
dead), so every broadcast builds and serialises one projection per person instead of one shared state.
The printed ``KB/state`` and ``states/s`` say how much that sends; ``--projection`` also times, in this
process, building every projection of one late-game record against serialising one shared state.

After a warm-up, moves sent within a fixed window count. CPU over the window (100 = one core) is given
for the server, its main thread (the event loop), this client, and everything else on the machine.
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
COLUMNS = [("clients", "clients", "d"), ("rooms", "rooms", "d"), ("moves/s", "moves_s", ".1f"),
           ("samples", "samples", "d"), ("pending", "pending", "d"), ("p50 ms", "p50", ".1f"),
           ("p99 ms", "p99", ".1f"), ("max ms", "max", ".1f"), ("states/s", "states_s", ".0f"),
           ("KB/state", "kb_state", ".1f"), ("srv CPU%", "server_cpu", ".0f"), ("srv loop%", "loop_cpu", ".0f"),
           ("cli CPU%", "client_cpu", ".0f"), ("other CPU%", "other_cpu", ".0f"), ("cli lag p99 ms", "lag_p99", ".1f")]


@dataclass
class Tally:
    """What the clients of one level measured; only moves sent (and states received) inside ``window`` count."""

    window: tuple[float, float] = (float("inf"), float("inf"))
    latencies: list[float] = field(default_factory=list)
    moves: int = 0
    states: int = 0
    state_bytes: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def inside(self, t: float) -> bool:
        return self.window[0] <= t < self.window[1]


def request_key(room: dict[str, Any], you: dict[str, Any]) -> tuple[Any, ...] | None:
    """A request told apart from the person's next one of the same kind (the person's log grows in between)."""
    req, game = you.get("request"), you.get("game")
    if req is None or game is None or room.get("game") is None:
        return None
    return (room["game"]["number"], req["kind"], req["round"], req["channel"], len(game["log"]))


class Client:
    """One person in one Werewolf room, over one WebSocket."""

    def __init__(self, ws: ClientConnection, args: argparse.Namespace, tally: Tally) -> None:
        self.ws, self.tally = ws, tally
        self.think: tuple[float, float] = tuple(args.think)
        self.stagger: float = args.stagger
        self.done: set[tuple[Any, ...]] = set()
        self.sent: tuple[tuple[Any, ...], float] | None = None  # the request answered, when
        self.started_for = -1
        self.stopping = False
        self.tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        async for raw in self.ws:
            now = time.perf_counter()
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
        key = request_key(room, you)
        if self.sent is not None and key != self.sent[0]:
            t_send = self.sent[1]
            self.sent = None
            if self.tally.inside(t_send):
                self.tally.latencies.append(now - t_send)
        if you["leader"] and room["phase"] in ("lobby", "over") and room["games"] != self.started_for:
            first = self.started_for < 0
            self.started_for = room["games"]
            self.spawn(self.send({"type": "start"}, random.uniform(0, self.stagger) if first else 0.0))
        if key is None or key in self.done:
            return
        self.done.add(key)
        self.spawn(self.answer(key, you["request"]))

    async def answer(self, key: tuple[Any, ...], req: dict[str, Any]) -> None:
        await asyncio.sleep(random.uniform(*self.think))
        if req["kind"] == "speak":
            msg = {"type": "speak", "round": req["round"], "text": "I have nothing to hide; let us vote carefully."}
        else:
            msg = {"type": "act", "round": req["round"], "action": req["kind"], "target": random.choice(req["choices"])}
        t_send = time.perf_counter()
        self.sent = (key, t_send)
        self.tally.moves += self.tally.inside(t_send)
        await self.send(msg)

    async def send(self, msg: dict[str, Any], delay: float = 0.0) -> None:
        await asyncio.sleep(delay)
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps(msg))

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


async def make_rooms(http: httpx.AsyncClient, clients: int, args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """Rooms holding ``clients`` people in all (the last may be smaller), with their codes and tokens."""
    per_room = args.per_room
    sizes = [per_room] * (clients // per_room) + ([clients % per_room] if clients % per_room else [])
    body = {"protocol": "werewolf", "agents": [{"name": f"bot{i + 1}", "model": "scripted/random"}
                                               for i in range(args.agents)], "max_days": args.days}
    limit = asyncio.Semaphore(16)

    async def one(size: int) -> tuple[str, list[str]]:
        async with limit:
            created = await http.post("/api/rooms", json={**body, "seed": random.randrange(10**6)})
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


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base}/api/offer", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the server did not come up within {timeout:g} s (exit status {proc.poll()}); see its log")

async def level(base: str, server: psutil.Process, n: int, args: argparse.Namespace) -> dict[str, Any]:
    tally = Tally()
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        rooms = await make_rooms(http, n, args)
    ws_base = base.replace("http://", "ws://")
    clients: list[Client] = []
    leaders: list[Client] = []
    limit = asyncio.Semaphore(32)

    async def open_one(code: str, i: int, token: str) -> None:
        async with limit:
            ws = await connect(f"{ws_base}/ws/{code}", max_size=None, open_timeout=30)
            await ws.send(json.dumps({"type": "hello", "token": token}))
            client = Client(ws, args, tally)
            clients.append(client)
            if i == 0:
                leaders.append(client)

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
    await asyncio.sleep(args.grace)  # let the broadcasts of the window's last moves arrive
    pending = sum(1 for c in clients if c.sent is not None and tally.inside(c.sent[1]))
    probe.cancel()
    for c in clients:
        c.stopping = True
        for task in list(c.tasks):
            task.cancel()
    await asyncio.gather(*(c.send({"type": "end_game"}) for c in leaders), return_exceptions=True)
    await asyncio.gather(*(c.ws.close() for c in clients), return_exceptions=True)
    await asyncio.gather(*runs, return_exceptions=True)
    # A vote whose broadcast never came within the grace is a failure, never left out: it counts as an infinite
    # latency, so that p99 cannot look better by losing the slowest answers.
    ms = [x * 1000 for x in tally.latencies] + [math.inf] * pending
    return {"clients": n, "rooms": len(rooms), "moves_s": tally.moves / args.seconds, "samples": len(ms),
            "pending": pending, "p50": pct(ms, 0.50), "p99": pct(ms, 0.99), "max": max(ms, default=float("nan")),
            "states_s": tally.states / args.seconds,
            "kb_state": tally.state_bytes / max(1, tally.states) / 1024, "server_cpu": server_cpu,
            "loop_cpu": loop_cpu, "client_cpu": client_cpu, "other_cpu": other_cpu,
            "lag_p99": pct(lags, 0.99) * 1000, "errors": dict(tally.errors)}


def projection_cost(repeat: int) -> str:
    """One scripted 8-player game played to its end in this process, then, over its whole record: the time to
    build and serialise every player's own projection (and one spectators' one), as each broadcast does,
    against serialising one projection shared by everyone."""
    from lexicoord.core.audience import Viewer, visible
    from lexicoord.core.context import EpisodeContext
    from lexicoord.core.spec import AgentSpec, EpisodeSpec
    from lexicoord.models.pool import ModelPool
    from lexicoord.protocols.werewolf import WerewolfGame, WerewolfSettings
    from lexicoord.protocols.werewolf.room_view import SPECTATOR, WerewolfView
    from lexicoord.seats.factory import SeatFactory
    from lexicoord.web.frames import dumps

    names = [f"Player {i}" for i in range(1, 9)]
    longest: EpisodeContext | None = None
    for seed in range(10):  # random players often end a game early: take the longest of ten
        spec = EpisodeSpec(item_id="bench", item={"id": "bench", "seed": seed},
                           settings=WerewolfSettings(max_days=5).model_dump(),
                           lineup=[AgentSpec(name=n, model="scripted/random") for n in names])
        played = EpisodeContext(spec=spec, seed=seed, make_seat=SeatFactory(ModelPool(cache=False)))
        game = WerewolfGame()
        asyncio.run(game.play(game.start(played)))
        if longest is None or len(played.recorder.events) > len(longest.recorder.events):
            longest = played
    assert longest is not None
    ctx, events = longest, longest.recorder.events
    view = WerewolfView(1, [{"name": n, "kind": "human", "model": None} for n in names])

    def shared() -> int:
        return len(dumps(view.project(list(visible(events, SPECTATOR)), SPECTATOR, "spectator")))

    def per_viewer() -> int:
        size = 0
        for viewer in [ctx.viewer(n) for n in names]:
            size += len(dumps(view.project(ctx.recorder.visible_to(viewer), viewer, "seat")))
        return size + len(dumps(view.project(ctx.recorder.visible_to(Viewer()), Viewer(), "spectator")))

    timings = {}
    for name, fn in (("shared", shared), ("per-viewer", per_viewer)):
        fn()  # warm the entry cache, as a live view is warm
        t = time.perf_counter()
        for _ in range(repeat):
            size = fn()
        timings[name] = ((time.perf_counter() - t) / repeat * 1e6, size)
    (s_us, s_size), (p_us, p_size) = timings["shared"], timings["per-viewer"]
    return (f"projection of one finished 8-player game ({len(events)} events): one shared state {s_us:.0f} µs "
            f"({s_size / 1024:.1f} KB); every player's own + one spectators' (9 projections) {p_us:.0f} µs "
            f"({p_size / 1024:.1f} KB), {p_us / s_us:.1f}× the shared one")




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, nargs="+", default=[200], help="levels of concurrent clients")
    parser.add_argument("--per-room", type=int, default=4, help="people per room")
    parser.add_argument("--agents", type=int, default=4, help="scripted agents per room")
    parser.add_argument("--days", type=int, default=5, help="days before a game ends as a draw")
    parser.add_argument("--think", type=float, nargs=2, default=[0.5, 2.0], metavar=("MIN", "MAX"),
                        help="seconds a client thinks before each move, uniform")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before the window, per level")
    parser.add_argument("--stagger", type=float, default=10.0, help="rooms start their first game within this")
    parser.add_argument("--seconds", type=float, default=20.0, help="measurement window per level")
    parser.add_argument("--grace", type=float, default=1.0, help="seconds after the window for late broadcasts")
    parser.add_argument("--projection", type=int, default=200, metavar="REPEAT",
                        help="also time the projections of one game's record in this process (0: skip)")
    parser.add_argument("--target-clients", type=int, default=200)
    parser.add_argument("--target-ms", type=float, default=50.0, help="p99 target at --target-clients")
    parser.add_argument("--server-log", type=Path, default=None, help="keep the server's output here")
    args = parser.parse_args()
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
               "--model", "scripted/random", "--protocol", "werewolf", "--join-rate", "100000", "--no-cache",
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
            if len(rows) < len(args.clients):
                print(server_log[-4000:], file=sys.stderr)

    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"think {args.think[0]:g}-{args.think[1]:g} s, {args.per_room} people + {args.agents} scripted agents per "
          f"room, at most {args.days} days, first games staggered over {args.stagger:g} s, warm-up {args.warmup:g} s, "
          f"window {args.seconds:g} s")
    print(" ".join(f"{head:>7}" for head, _, _ in COLUMNS), " errors")
    for r in rows:
        print(" ".join(f"{r[key]:>{max(7, len(head))}{fmt}}" for head, key, fmt in COLUMNS), "", r["errors"] or "-")
    target = next((r for r in rows if r["clients"] == args.target_clients), None)
    verdict = "MEETS" if target and target["p99"] < args.target_ms else "MISSES" if target else "was not run for"
    shown = f"p99 {target['p99']:.1f} ms: " if target else ""
    print(f"verdict: {shown}{verdict} the target of p99 < {args.target_ms:g} ms at {args.target_clients} clients")
    if args.projection:
        print(projection_cost(args.projection))
    print(f"wall time {time.perf_counter() - started:.0f} s")
    problems = [line for line in server_log.splitlines() if "Traceback" in line or "ERROR" in line]
    if problems:
        print(f"server log: {len(problems)} error lines; last 40 lines:")
        print("\n".join(server_log.splitlines()[-40:]))


if __name__ == "__main__":
    machine.run(main)
