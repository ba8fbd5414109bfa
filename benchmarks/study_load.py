"""A study with people under load: N scripted participants go through one study at once, consent to code.

A real ``lexicoord study serve`` runs as a subprocess on loopback with a temporary SQLite store, on a study
file this script writes: the coordination protocol, groups of 3 people and 1 ``scripted/first`` agent, one
game per group, a one-question quiz, a two-question survey, a lobby that fills a short group with agents
after ``--lobby-timeout`` seconds, and a code for each outcome. Every participant is a coroutine in this one
asyncio process with its own HTTP client (its own connection pool), speaking as the study's page does, and a WebSocket for
the game's room. Each one enters, consents (a ``--decline`` share declines and gets that code), reads the
instructions, passes the quiz, long-polls the lobby until its game is ready (``ready=0``, as the page does), asks for its seat (``/play``), says hello on the room's
WebSocket and votes the first option whenever asked until the game is over (a page the server closes is
opened again, after 5 s if it was told it asked too often, as the room's page does), long-polls until the
survey, answers it and is given the completion code. A seeded random think time (``--think``, 0-200 ms by
default) comes before every step and move, so arrivals spread like real ones but overlap heavily.

The pages' HTTP client is aiohttp's (``--client``): a real page's HTTP stack is its browser's, which costs the
server's machine nothing, while this instrument shares the server's two cores, so every latency it reports
carries its own CPU too. aiohttp's client parses HTTP in C, one layer above the socket; httpx (``--client
httpx``, the instrument of earlier figures) goes through httpcore, h11's pure-Python parser and anyio, and in the
burst took about twice the CPU (1.6-2.0 s against 0.8-0.9 s) and most of the pages' time beyond the server's own.

By default every participant comes from this one loopback address, as a lab's people behind one router do,
with the per-address limits the command offers lifted (``--enter-rate``, ``--connections-per-address``);
``--proxy`` serves behind a trusted proxy instead (``--forwarded-allow-ips``), each participant with an
address of their own (``X-Forwarded-For``), as Prolific's people at home.

Printed:

- stage-transition latency: the wall time of every ``POST /enter`` and ``POST /answer`` (consent,
  instructions, quiz, survey), p50 / p99 / max over all of them and per step, against the target p99 <
  ``--target-ms`` (100 ms); beside it the server's own part of each (its ``Server-Timing`` header: from the
  request reaching the app to its answer), since this one client process shares the machine's two cores
  with the server and its own delays count in the wall time. A quiz answer that puts its participant in the lobby may form groups (their rooms
  open after it returns); the answers that came back already grouped are shown apart;
- lobby wait: from sending the quiz answer to the page learning that its game is ready;
- codes: how many participants were given exactly one code (all must be), and the outcomes;
- groups: participants seated in more than one group, and rooms shared by two groups, from the
  dashboard's state (both must be 0); votes, room errors and WebSocket closes by the server;
- total wall time, the server's CPU seconds (``/proc/<pid>/stat``; its busiest second too) and peak memory
  (VmHWM), this client's CPU and event-loop lag (a busy client inflates every latency), and the machine's
  load before and after.

With ``--conditions N`` the study has N between-subjects conditions (each its own agent and clarification bound),
which the lobby deals to the groups as they form; the groups each condition got are printed, and must stay within
one of each other.

The exit status is 1 if a participant was not given exactly one code or a participant sat in two groups
(or two groups in one room), or the conditions' counts differ by more than one; the latency target is only
printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import shlex
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import machine
import uvloop
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

VENV_BIN = Path(sys.executable).parent
STUDY = "load-bench"
CODES = {"completed": "LOADDONE", "no_consent": "LOADNOPE", "failed_quiz": "LOADQUIZ", "no_group": "LOADALONE",
         "dropped": "LOADGONE"}
OUTCOME_OF = {code: outcome for outcome, code in CODES.items()}
#: The steps whose POST is a stage transition, in a participant's order.
STEPS = ("enter", "consent", "instructions", "quiz", "survey")
#: Set by ``main``: whether a participant lacked exactly one code or sat in two groups (exit status 1).
FAILED: list[bool] = []


def conditions_toml(n: int) -> str:
    """``n`` between-subjects conditions: each seats its own agent (c1 the study's own) and the first half
    another clarification bound, so every condition's room differs from the others'."""
    out = []
    for i in range(1, n + 1):
        agents = "" if i == 1 else f'agents = [{{ name = "Agent {i}", model = "scripted/first" }}]\n'
        game = f"game = {{ clarification_bound = {1 + i % 3} }}\n"
        out.append(f'[[conditions]]\nname = "c{i}"\n{agents}{game}')
    return "\n".join(out)


def study_toml(people: int, lobby_timeout: float, seat_timeout: float, conditions: int = 0) -> str:
    codes = "\n".join(f'{outcome} = "{code}"' for outcome, code in CODES.items())
    return f"""\
name = "{STUDY}"
protocol = "coordination"
title = "A load test"
items = {{ builtin = "builtin" }}

[game]
seat_timeout = {seat_timeout:g}
agent_timeout = 30

[group]
people = {people}
games = 1
agents = [{{ name = "Agent A", model = "scripted/first" }}]

[consent]
text = "Do you agree to take part?"

[instructions]
text = "Pick the meaning **everyone** picks."

[quiz]
attempts = 2

[[quiz.questions]]
id = "goal"
text = "When does a game end?"
options = ["When everyone agrees", "Never"]
answer = "When everyone agrees"

[lobby]
timeout = {lobby_timeout:g}
fill_with_agents = true

[dropout]
grace = 60
idle = true

[survey]

[[survey.questions]]
id = "clear"
kind = "likert"
text = "It was clear."
scale = 7

[[survey.questions]]
id = "colour"
kind = "choice"
text = "Choose Blue."
options = ["Red", "Blue", "Green"]
expect = "Blue"

[completion.codes]
{codes}

{conditions_toml(conditions)}
"""


class Answer:
    """An HTTP answer as :class:`Script` reads it, whichever client got it (httpx's ``Response`` reads the same)."""

    def __init__(self, status_code: int, headers: Mapping[str, str], content: bytes) -> None:
        self.status_code, self.headers, self.content = status_code, headers, content

    def json(self) -> Any:
        return json.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


class AiohttpPage:
    """One page's HTTP client on aiohttp: its own session and connection pool, as each person has a browser."""

    def __init__(self, base: str) -> None:
        self.base = base

    async def __aenter__(self) -> AiohttpPage:
        self.session = aiohttp.ClientSession(self.base, timeout=aiohttp.ClientTimeout(total=60))
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.session.close()

    async def request(self, method: str, path: str, *, headers: dict[str, str], json: Any = None,
                      params: dict[str, Any] | None = None) -> Answer:
        async with self.session.request(method, path, headers=headers, json=json, params=params) as r:
            return Answer(r.status, r.headers, await r.read())


#: What a page's client raises when a connection breaks (retried by :meth:`Script.call`), for both clients.
TRANSPORT_ERRORS = (httpx.TransportError, aiohttp.ClientConnectionError, asyncio.TimeoutError)


def page_client(kind: str, base: str, tls: ssl.SSLContext) -> contextlib.AbstractAsyncContextManager[Any]:
    """A participant's own HTTP client of ``kind`` (``--client``)."""
    if kind == "httpx":
        return httpx.AsyncClient(base_url=base, timeout=60, verify=tls)
    return AiohttpPage(base)


@dataclass
class Tally:
    """What every participant measured."""

    steps: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))  # seconds per POST
    server: list[float] = field(default_factory=list)  # the server's own seconds per POST (its Server-Timing)
    lobby: list[float] = field(default_factory=list)
    completing: list[float] = field(default_factory=list)  # quiz answers that returned with a group formed
    codes: dict[str, set[str]] = field(default_factory=dict)  # pid -> every code its page was shown
    failures: dict[str, str] = field(default_factory=dict)  # pid -> why its script stopped
    refusals: Counter[str] = field(default_factory=Counter)  # "step status code" of refused requests
    transport: Counter[str] = field(default_factory=Counter)  # connection errors, retried
    ws_closed: Counter[str] = field(default_factory=Counter)  # WebSocket closes by the server, with their code
    ws_errors: Counter[str] = field(default_factory=Counter)  # error frames in the room
    votes: int = 0
    games_seen_over: int = 0


class Script:
    """One participant's page."""

    def __init__(self, pid: str, http: Any, ws_base: str, tally: Tally, rng: random.Random,
                 think: tuple[float, float], decline: bool, address: str | None) -> None:
        self.pid, self.http, self.ws_base, self.tally, self.rng = pid, http, ws_base, tally, rng
        self.think_range, self.decline = think, decline
        self.token: str | None = None
        self.api = f"/api/studies/{STUDY}"
        #: The participant's own address, as a reverse proxy names it (None: everyone is this loopback client).
        self.forwarded = {"X-Forwarded-For": address} if address else {}

    def headers(self) -> dict[str, str]:
        out = {"X-Participant": self.pid, **self.forwarded}
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        return out

    async def think(self) -> None:
        await asyncio.sleep(self.rng.uniform(*self.think_range))

    def saw(self, view: dict[str, Any]) -> dict[str, Any]:
        if view.get("stage") == "done" and view.get("code"):
            self.tally.codes.setdefault(self.pid, set()).add(view["code"])
        return view

    async def call(self, method: str, path: str, step: str, **kw: Any) -> Any:
        """One request, retried after a connection error (a kept-alive connection the server closed)."""
        for attempt in range(4):
            try:
                return await self.http.request(method, f"{self.api}{path}", headers=self.headers(), **kw)
            except TRANSPORT_ERRORS as exc:
                self.tally.transport[f"{step} {type(exc).__name__}"] += 1
                if attempt == 3:
                    raise
                await asyncio.sleep(0.1 * (attempt + 1))
        raise AssertionError("unreachable")

    async def post(self, step: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """A timed stage transition; its answer's JSON."""
        t = time.perf_counter()
        r = await self.call("POST", path, step, json=body)
        took = time.perf_counter() - t
        self.tally.steps[step].append(took)
        timing = r.headers.get("server-timing", "")
        if timing.startswith("app;dur="):
            self.tally.server.append(float(timing.removeprefix("app;dur=")) / 1000)
        if step == "quiz" and r.status_code == 200 and r.json()["view"]["stage"] == "game":
            self.tally.completing.append(took)  # grouped before its answer returned (the request made rooms)
        if r.status_code not in (200, 201):
            code = r.json().get("code", "?") if r.headers.get("content-type", "").startswith("application/json") else "?"
            self.tally.refusals[f"{step} {r.status_code} {code}"] += 1
            raise RuntimeError(f"{step}: {r.status_code} {r.text[:200]}")
        return dict(r.json())

    async def me(self, stage: str | None = None, ready: int | None = None) -> dict[str, Any]:
        params = {**({"stage": stage} if stage else {}), **({"ready": ready} if ready is not None else {})}
        r = await self.call("GET", "/me", "me", params=params or None)
        if r.status_code != 200:
            self.tally.refusals[f"me {r.status_code}"] += 1
            raise RuntimeError(f"me: {r.status_code} {r.text[:200]}")
        return self.saw(r.json())

    async def run(self) -> None:
        await self.think()
        entered = await self.post("enter", "/enter", {"pid": self.pid})
        self.token = entered["token"]
        await self.think()
        view = self.saw((await self.post("consent", "/answer", {"stage": "consent", "agree": not self.decline}))["view"])
        if view["stage"] == "done":
            return
        await self.think()
        await self.post("instructions", "/answer", {"stage": "instructions"})
        await self.think()
        sent = time.perf_counter()
        view = self.saw((await self.post("quiz", "/answer", {"stage": "quiz",
                                                             "answers": {"goal": "When everyone agrees"}}))["view"])
        while not (view["stage"] == "game" and view.get("ready")):
            if view["stage"] == "done":
                return  # no group (or the study ended): the code is recorded
            if view["stage"] == "game":  # as the study's page does: wait until the game is ready (ready=0)
                view = await self.me("game", ready=0)
            else:
                view = await self.me(view["stage"] if view["stage"] == "lobby" else None)
        self.tally.lobby.append(time.perf_counter() - sent)
        await self.think()
        r = await self.call("POST", "/play", "play")
        if r.status_code != 200:
            self.tally.refusals[f"play {r.status_code}"] += 1
            raise RuntimeError(f"play: {r.status_code} {r.text[:200]}")
        await self.play(r.json()["room"], r.json()["token"])
        view = await self.me()
        while view["stage"] == "game":
            view = await self.me("game")
        if view["stage"] == "survey":
            await self.think()
            self.saw((await self.post("survey", "/answer", {"stage": "survey",
                                                            "answers": {"clear": 6, "colour": "Blue"}}))["view"])
        else:
            self.saw(view)

    async def play(self, room: str, token: str) -> None:
        """The room's page: hello, then the first option whenever asked, until the game is over. A page the
        server closes is opened again, as the room's page does (after 5 s when told it asked too often)."""
        answered: set[tuple[int, str, int]] = set()
        while True:
            async with connect(f"{self.ws_base}/ws/{room}", max_size=None, open_timeout=30,
                               additional_headers=self.forwarded) as ws:
                await ws.send(json.dumps({"type": "hello", "token": token}))
                try:
                    async for raw in ws:
                        msg = json.loads(raw)
                        if msg["type"] == "error":
                            self.tally.ws_errors[msg.get("code", "?")] += 1
                            continue
                        if msg["type"] != "state":
                            continue
                        state_room, you = msg["room"], msg["you"]
                        if state_room["phase"] == "over":
                            self.tally.games_seen_over += 1
                            return
                        request, game = you.get("request"), state_room.get("game")
                        if request is None or game is None:
                            continue
                        key = (game["number"], request["kind"], request["round"])
                        if key in answered:
                            continue
                        answered.add(key)
                        await self.think()
                        if request["kind"] == "clarify":
                            move = {"type": "clarify", "round": request["round"], "statement": "the first meaning"}
                        else:
                            move = {"type": "choose", "round": request["round"], "choice": game["item"]["options"][0],
                                    "justification": "the first meaning"}
                            self.tally.votes += 1
                        await ws.send(json.dumps(move))
                except ConnectionClosed:
                    pass
                code = ws.close_code
            self.tally.ws_closed[str(code)] += 1
            if (await self.me())["stage"] != "game":
                return  # moved on (or taken over) while away
            await asyncio.sleep(5.0 if code == 4429 else 1.0)


async def lag_probe(lags: list[float], period: float = 0.05) -> None:
    """How late this process's event loop wakes up: a busy client would inflate every latency."""
    while True:
        t = time.perf_counter()
        await asyncio.sleep(period)
        lags.append(time.perf_counter() - t - period)


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14 and 15)


def proc_peak_mb(pid: int) -> float:
    """Peak resident memory of process ``pid`` (VmHWM, as :func:`machine.peak_mb` reads its own), in MB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        hwm = next(line for line in status if line.startswith("VmHWM:"))
    return int(hwm.split()[1]) / 1024


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def spread(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"p50 {pct(ms, 0.5):7.1f} ms  p99 {pct(ms, 0.99):7.1f} ms  max {max(ms, default=float('nan')):7.1f} ms" \
           f"  (n={len(ms)})"


def address(i: int) -> str:
    """Participant ``i``'s own address, as a trusted proxy would forward it (``--proxy``)."""
    return f"10.{(i + 1) >> 16 & 255}.{(i + 1) >> 8 & 255}.{(i + 1) & 255}"


async def cpu_sampler(pid: int, samples: list[tuple[float, float]], period: float = 0.5) -> None:
    """The server's CPU seconds every ``period``: its busiest second, beside its average."""
    while True:
        samples.append((time.perf_counter(), proc_cpu(pid)))
        await asyncio.sleep(period)


def busiest_second(samples: list[tuple[float, float]]) -> float:
    """The largest share of one core the server used over any one-second stretch of the samples."""
    best = 0.0
    for i, (t0, c0) in enumerate(samples):
        later = next(((t, c) for t, c in samples[i + 1:] if t - t0 >= 0.99), None)
        if later is not None:
            best = max(best, (later[1] - c0) / (later[0] - t0))
    return best


async def session(base: str, args: argparse.Namespace, key: str, server_pid: int) -> dict[str, Any]:
    tally = Tally()
    n = args.participants
    rng = random.Random(args.seed)
    decliners = {i for i in range(n) if rng.random() < args.decline}  # each decides alone, as people do
    # One client (one connection pool) per participant, as each person has their own browser. One shared pool
    # would cost this process more than the server: httpcore scans every pooled connection for each request.
    tls = ssl.create_default_context()  # made once: every plain-HTTP httpx client would otherwise build its own
    lags: list[float] = []
    probe = asyncio.create_task(lag_probe(lags))
    me_cpu = time.process_time()
    cpu_before = proc_cpu(server_pid)
    cpu_samples: list[tuple[float, float]] = []
    sampler = asyncio.create_task(cpu_sampler(server_pid, cpu_samples))
    ws_base = base.replace("http://", "ws://")

    arrivals = random.Random(args.seed).sample(range(n), n)  # the order they come in, spread over --arrive-over

    async def one(i: int) -> None:
        pid = f"p{i:04d}"
        await asyncio.sleep(args.arrive_over * arrivals[i] / max(1, n))
        async with page_client(args.client, base, tls) as http:
            script = Script(pid, http, ws_base, tally, random.Random(args.seed * 7919 + i), tuple(args.think),
                            i in decliners, address(i) if args.proxy else None)
            try:
                await asyncio.wait_for(script.run(), args.deadline)
            except Exception as exc:  # recorded: the summary says who stopped, and why
                tally.failures[pid] = f"{type(exc).__name__}: {str(exc)[:160]}"

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    wall = time.perf_counter() - started
    cpu = proc_cpu(server_pid) - cpu_before
    probe.cancel()
    sampler.cancel()
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        r = await http.get(f"/api/studies/{STUDY}/admin/state", headers={"X-Admin-Key": key})
        r.raise_for_status()
        state = r.json()
    return {"tally": tally, "wall": wall, "server_cpu": cpu, "server_mb": proc_peak_mb(server_pid),
            "client_cpu": time.process_time() - me_cpu, "lag_p99": pct(lags, 0.99) * 1000,
            "lag_max": max(lags, default=float("nan")) * 1000, "state": state, "decliners": len(decliners),
            "server_peak_cpu": busiest_second(cpu_samples)}


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{base}/api/studies/{STUDY}/pages", timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the server did not come up within {timeout:g} s (exit status {proc.poll()}); see its log")


def report(result: dict[str, Any], args: argparse.Namespace) -> bool:
    """Print the figures; whether every participant got one code and no one sat in two groups."""
    tally: Tally = result["tally"]
    state: dict[str, Any] = result["state"]
    n = args.participants
    every = [t for step in STEPS for t in tally.steps.get(step, [])]
    p99 = pct(every, 0.99) * 1000
    print(f"stage transitions (POST /enter and /answer): {spread(every)}")
    for step in STEPS:
        print(f"  {step:<13} {spread(tally.steps.get(step, []))}")
        if step == "quiz":
            print(f"    answered into a group {spread(tally.completing)}")
    print(f"  the server's own time (Server-Timing, request in to answer out): {spread(tally.server)}")
    met = "met" if p99 < args.target_ms else "NOT met"
    server_p99 = pct(tally.server, 0.99) * 1000
    print(f"verdict: stage-transition p99 {p99:.1f} ms as the participants' pages saw it (the server's own "
          f"p99 {server_p99:.1f} ms): target p99 < {args.target_ms:g} ms {met}")
    print(f"lobby wait (quiz answer sent -> game ready): {spread(tally.lobby)}")

    one_code = sum(1 for pid in (f"p{i:04d}" for i in range(n)) if len(tally.codes.get(pid, ())) == 1)
    several = {pid: sorted(c) for pid, c in tally.codes.items() if len(c) > 1}
    outcomes = Counter(OUTCOME_OF.get(next(iter(c)), "?") for c in tally.codes.values() if len(c) == 1)
    print(f"participants with exactly one code: {one_code} of {n}: {'all' if one_code == n else 'NOT all'}"
          + (f"; {len(several)} shown several codes: {dict(list(several.items())[:5])}" if several else ""))
    print(f"outcomes (pages): {dict(sorted(outcomes.items()))}; declined by script: {result['decliners']}")
    print(f"outcomes (dashboard): {dict(sorted(state['outcomes'].items()))}; participants {state['participants']}, "
          f"by stage {{{', '.join(f'{k}: {v}' for k, v in state['by_stage'].items() if v)}}}")

    groups = state["groups"]
    seated: Counter[str] = Counter(s["participant"] for g in groups for s in g["seats"] if s["kind"] == "person")
    twice = sorted(pid for pid, k in seated.items() if k > 1)
    rooms = Counter(g["room"] for g in groups if g["room"])
    shared = sorted(code for code, k in rooms.items() if k > 1)
    filled = sum(1 for g in groups if any(s["kind"] == "stand-in" for s in g["seats"]))
    print(f"groups: {len(groups)} ({filled} filled with agents at the lobby's timeout, "
          f"{sum(1 for g in groups if not g['room'])} without a room, "
          f"{sum(1 for g in groups if g['status'] == 'finished')} finished); seated people {sum(seated.values())}")
    balanced = True
    if state.get("conditions"):
        counts = {c["name"]: c["groups"] for c in state["conditions"]}
        balanced = max(counts.values()) - min(counts.values()) <= 1 and sum(counts.values()) == len(groups)
        print(f"conditions (groups dealt each): {counts}: {'balanced, within one' if balanced else 'NOT balanced'}")
    print(f"groups formed twice: {len(twice)} participant(s) in more than one group"
          + (f" {twice[:10]}" if twice else "") + f"; rooms shared by two groups: {len(shared)}"
          + (f" {shared[:10]}" if shared else ""))
    print(f"votes sent {tally.votes}, games seen over {tally.games_seen_over}; "
          f"room errors {dict(tally.ws_errors) or '-'}; WebSocket closes by the server {dict(tally.ws_closed) or '-'}")
    if tally.refusals or tally.transport:
        print(f"refused requests {dict(tally.refusals) or '-'}; connection errors (retried) {dict(tally.transport) or '-'}")
    if tally.failures:
        print(f"scripts that stopped: {len(tally.failures)}; first: {list(tally.failures.items())[:3]}")
    wall = result["wall"]
    print(f"wall time {wall:.1f} s for {n} participants; server CPU {result['server_cpu']:.1f} s "
          f"({100 * result['server_cpu'] / wall:.0f}% of one core; busiest second "
          f"{100 * result['server_peak_cpu']:.0f}%), server peak memory (VmHWM) "
          f"{result['server_mb']:.0f} MB; client CPU {result['client_cpu']:.1f} s, client loop lag "
          f"p99 {result['lag_p99']:.1f} ms max {result['lag_max']:.1f} ms")
    return one_code == n and not several and not twice and not shared and balanced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=300, help="scripted participants, all at once")
    parser.add_argument("--decline", type=float, default=0.05,
                        help="chance that a participant declines consent (drawn for each, seeded)")
    parser.add_argument("--people", type=int, default=3, help="people per group (plus one scripted agent)")
    parser.add_argument("--think", type=float, nargs=2, default=[0.0, 0.2], metavar=("MIN", "MAX"),
                        help="seconds a participant thinks before each step and move, uniform")
    parser.add_argument("--arrive-over", type=float, default=0.0,
                        help="seconds over which the participants open their links, evenly (0: all in the same "
                             "instant, the hardest case; a study's link posted to a pool brings them over seconds)")
    parser.add_argument("--lobby-timeout", type=float, default=20.0,
                        help="seconds before the lobby fills a short group with agents")
    parser.add_argument("--seat-timeout", type=float, default=60.0, help="seconds a person has for each move")
    parser.add_argument("--deadline", type=float, default=600.0, help="seconds a participant's script may take")
    parser.add_argument("--target-ms", type=float, default=100.0, help="p99 target of a stage transition")
    parser.add_argument("--proxy", action="store_true",
                        help="serve behind a trusted proxy (--forwarded-allow-ips 127.0.0.1): each participant comes "
                             "with an address of their own (X-Forwarded-For), as Prolific's people do, instead of "
                             "all sharing this loopback client's address as a lab's people behind one router do")
    parser.add_argument("--seed", type=int, default=3,
                        help="seeds who declines and every think time (3: at 300 participants, 16 decline and the "
                             "lobby's last 2 people are a short group that the lobby fills with an agent)")
    parser.add_argument("--conditions", type=int, default=0,
                        help="between-subjects conditions of the study (0: none), dealt to the groups by the lobby")
    parser.add_argument("--client", choices=("aiohttp", "httpx"), default="aiohttp",
                        help="the pages' HTTP client: aiohttp (C parser, the lighter instrument on the server's "
                             "cores) or httpx (the instrument of earlier figures)")
    parser.add_argument("--server-log", type=Path, default=None, help="keep the server's output here")
    args = parser.parse_args()
    if args.participants < 1 or not 0 <= args.decline <= 1 or args.people < 1:
        parser.error("--participants and --people must be at least 1, --decline a share from 0 to 1")

    result: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory() as home:
        log_path = args.server_log or Path(home) / "server.log"
        study = Path(home) / "study.toml"
        study.write_text(study_toml(args.people, args.lobby_timeout, args.seat_timeout, args.conditions),
                         encoding="utf-8")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        key = secrets.token_urlsafe(18)
        cmd = [str(VENV_BIN / "lexicoord"), "study", "serve", str(study), "--host", "127.0.0.1", "--port", str(port),
               "--db", f"{home}/study.db", "--enter-rate", "100000",  # its burst is 60: 300 arrivals in 0.2 s need the rate
               # every participant is on loopback: one address, holding a long poll and a WebSocket each
               "--connections-per-address", str(4 * args.participants + 100)]
        if args.proxy:
            cmd += ["--forwarded-allow-ips", "127.0.0.1"]
        env = {**os.environ, "LEXICOORD_HOME": home, "LEXICOORD_ADMIN_KEY": key}
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            wait_ready(base, proc)
            # On uvloop, as the server is (uvicorn takes it when installed): a lighter instrument, whose own
            # delays (its loop's lag is printed) count in every latency it measures.
            result = uvloop.run(session(base, args, key, proc.pid))
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            server_log = log_path.read_text(errors="replace")
            if result is None:  # stopped part-way: the server's last words may say why
                print(server_log[-4000:], file=sys.stderr)

    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))
    print(f"{args.participants} participants (each declines with chance {args.decline:.0%}), groups of {args.people} people + 1 "
          f"scripted/first agent, 1 game each, arriving over {args.arrive_over:g} s, "
          f"think {args.think[0]:g}-{args.think[1]:g} s before each step, "
          f"lobby timeout {args.lobby_timeout:g} s (fills with agents), seed {args.seed}, "
          f"{args.conditions or 'no'} condition(s); "
          + ("each from an address of their own through a trusted proxy" if args.proxy
             else "all from one address (this loopback client)") + f"; pages' HTTP client {args.client}")
    assert result is not None
    ok = report(result, args)
    problems = [line for line in server_log.splitlines() if "Traceback" in line or "ERROR" in line]
    if problems:
        print(f"server log: {len(problems)} error lines; last 40 lines:")
        print("\n".join(server_log.splitlines()[-40:]))
    print(f"result: {'every participant got exactly one code and no group was formed twice' if ok else 'FAILED'}"
          + (" and the conditions stayed balanced" if ok and args.conditions else ""))
    FAILED.append(not ok)


if __name__ == "__main__":
    machine.run(main)  # the load line after the figures is printed before the exit status is given
    sys.exit(1 if any(FAILED) else 0)
