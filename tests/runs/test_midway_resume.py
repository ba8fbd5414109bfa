"""A long episode killed mid-way (SIGKILL) resumes where it stopped: nothing asked twice, nothing lost, and
the stored game is the game an uninterrupted run stores."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = r"""
import asyncio, hashlib, random, sys
from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.observe import current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.werewolf import WerewolfGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

db, log = sys.argv[1], sys.argv[2]

def reply(messages, config):
    prompt = messages[-1].content
    with open(log, "a") as fh:  # every call the model really answers
        fh.write((current_agent.get() or "?") + "\n")
    rng = random.Random(hashlib.sha256(prompt.encode()).digest())
    if config.choices:
        return {"choice": rng.choice(list(config.choices))}
    return f"I suspect {rng.choice(['Player 2', 'Player 5', 'Player 7'])}."

pool = ModelPool(cache=False)
pool.add(Model(ScriptedProvider("slow", reply, latency=0.03)), "scripted/slow")
lineup = [AgentSpec(name=f"Player {i}", model="scripted/slow") for i in range(1, 9)]
settings = {"max_days": 4, "wolf_turns": 2, "discussion_rounds": 2, "condition": "cogent"}
runner = Runner(Store(db), WerewolfGame(), models=pool)
asyncio.run(runner.run("long", grid([{"id": "g", "seed": 11}], [lineup], settings=[settings])))
"""


def play(db: Path, log: Path) -> subprocess.Popen[bytes]:
    # A 3-second lease: the resumed process waits for the killed one's claim to run out, not a minute.
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(db), str(log)],
                            env={**os.environ, "LEXICOORD_CLAIM_SECONDS": "3"})


def moves(db: Path) -> int:
    try:
        with sqlite3.connect(db) as con:
            return con.execute("select count(*) from moves").fetchone()[0]
    except sqlite3.Error:
        return 0


def game(db: Path) -> list[tuple]:
    from lexicoord.runs.store import Store

    [(record, events)] = list(Store(str(db)).iter_run_events("long"))
    assert record.status == "done", record.error
    keep = ("type", "agent", "round", "phase", "target", "text", "term", "winner", "player", "role")
    return [tuple(getattr(e, k, None) for k in keep) for e in events]


def test_a_game_killed_midway_resumes_without_asking_anything_twice(tmp_path) -> None:
    reference_log = tmp_path / "reference.log"
    assert play(tmp_path / "reference.db", reference_log).wait(120) == 0
    reference = game(tmp_path / "reference.db")
    asked = len(reference_log.read_text().splitlines())

    db, log = tmp_path / "crash.db", tmp_path / "crash.log"
    first = play(db, log)
    deadline = time.time() + 60
    while moves(db) < asked // 3 and time.time() < deadline and first.poll() is None:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    before = len(log.read_text().splitlines())
    assert 0 < moves(db) and before < asked, "killed mid-game, with answers journaled"
    assert play(db, log).wait(120) == 0
    assert game(db) == reference, "the resumed game is the game an uninterrupted run plays"
    calls = log.read_text().splitlines()
    # A call in flight at the kill may be asked again (its answer was never journaled): at most one.
    assert asked <= len(calls) <= asked + 1, (asked, before, len(calls))
    assert moves(db) == 0, "a finished episode's journal is cleared with its save"


def test_a_saved_episode_settles_its_journal(tmp_path) -> None:
    """Done: the journal goes. Failed: only the failed moves go, so a retry replays the answered ones."""
    from lexicoord.runs.records import EpisodeRecord
    from lexicoord.runs.store import Store

    store = Store(str(tmp_path / "j.db"))
    store.open_run("r", "werewolf", {}, 2)
    for key in ("done", "failed"):
        store.add_episode_move("r", key, "A", 0, {"kind": "vote", "answer": {"value": {"choice": "B"}}})
        store.add_episode_move("r", key, "B", 0, {"kind": "vote", "error": "the server is down"})
    for key, status in (("done", "done"), ("failed", "failed")):
        store.save_episode(EpisodeRecord(run_id="r", key=key, item_id=key, status=status, started_at=0, finished_at=1,
                                         outcome={} if status == "done" else None), [])
    assert store.episode_moves("r", "done") == {}
    assert store.episode_moves("r", "failed") == {"A": [{"kind": "vote", "answer": {"value": {"choice": "B"}}}]}
