"""The run viewer's JSON: runs, episodes and events page by page, filters, the term board, and that it only reads.

Runs are real where the claim is about real runs (a COGENT study played by the runner with scripted
models, a coordination room played over its WebSocket); paging is checked on synthetic runs large
enough to need many pages.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.core.audience import Audience
from lexicoord.core.events import Event, MessageEvent
from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.observe import ModelCallEvent, current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.models.types import ChatMessage
from lexicoord.protocols.cogent import CogentStudy
from lexicoord.runs.grid import grid
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.web.app import create_app
from tests.protocols.cogent.test_rules import COINED, ITEM, stage
from tests.web.conftest import Browser, create_room, join, make_services

HOSTILE = "<script>window.pwned=1</script><img src=x onerror=window.pwned=2>"


def cogent_reply(messages: Any, config: Any) -> str:
    """Coins eggleft (A) and sellprice (B, with a rejected 'lock'); every other reply carries hostile markup."""
    agent, kind = current_agent.get() or "?", stage(messages[-1].content)
    if kind == "coin":
        return COINED[agent]
    if kind == "use":
        return f"{agent} keeps eggleft and sellprice in view {HOSTILE}.\n#### 18"
    return f"{agent} thinks {HOSTILE}.\n#### 7"


async def cogent_run(db: Path, run_id: str = "study") -> None:
    """A real COGENT study (VANILLA and COGENT on one item), played by the runner with scripted models."""
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("c", cogent_reply)), "scripted/c")
    lineup = [AgentSpec(name=n, model="scripted/c") for n in ("A", "B")]
    settings = [{"variant": v, "task": "gsm8k", "rounds": 2, "passes": 1, "coin_rounds": 1} for v in ("vanilla", "cogent")]
    store = Store(str(db))
    await Runner(store, CogentStudy(), models=pool).run(run_id, grid([ITEM], [lineup], settings=settings))
    store.close()


def synthetic_events(n: int) -> list[Event]:
    """``n`` events: messages to everyone, to seat A and to the wolves in turn, and a model call every tenth."""
    out: list[Event] = []
    audiences = [Audience(), Audience.only("A"), Audience.group("wolves")]
    for seq in range(n):
        if seq % 10 == 9:
            e: Event = ModelCallEvent(model="scripted/x", agent="A", messages=[ChatMessage(role="user", content=f"prompt {seq}")],
                                      text=f"reply {seq}", audience=Audience.only("A"))
        else:
            e = MessageEvent(agent="A" if seq % 2 else "B", content=f"line {seq}", audience=audiences[seq % 3], round=seq // 50)
        e.seq = seq
        out.append(e)
    return out


def synthetic_run(store: Store, run_id: str, episodes: int, events: int = 3, big: int | None = None) -> None:
    """A run of ``episodes``: every tenth failed, a third converged, settings bound 1 or 2; episode 0 has ``big``
    events (the others ``events``)."""
    store.open_run(run_id, "toy", {"note": run_id}, episodes)
    batch = []
    for i in range(episodes):
        failed = i % 10 == 9
        record = EpisodeRecord(run_id=run_id, key=f"k{i}", position=i, item_id=f"item-{i}", status="failed" if failed else "done",
                               error="boom" if failed else None, started_at=1000.0 + i, finished_at=1001.0 + i,
                               outcome=None if failed else {"converged": i % 3 == 0, "depth": i % 4, "rounds": [1, 2]},
                               spec={"settings": {"bound": 1 + i % 2, "variant": "ab"[i % 2]}, "item": {"text": f"t{i}"},
                                     "lineup": [{"name": "A", "model": "scripted/x"}, {"name": "B", "kind": "human"}]})
        batch.append((record, synthetic_events(big if (i == 0 and big) else events)))
    store.save_episodes(batch)


@pytest.fixture
def viewer(db: Path) -> Iterator[TestClient]:
    """The app as ``lexicoord serve`` builds it, asked from this machine (the viewer answers only loopback)."""
    app = create_app(make_services(db), http_rate=1000, http_burst=1000, allowed_hosts=["testserver"])
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        yield c


def ok(client: TestClient, path: str, **params: Any) -> Any:
    r = client.get(path, params=params)
    assert r.status_code == 200, (path, r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    return r.json()


def walk(client: TestClient, path: str, key: str, **params: Any) -> list[list[Any]]:
    """Every page from the first, following ``next``."""
    pages, cursor = [], None
    for _ in range(1000):
        page = ok(client, path, **params, **({"after": cursor} if cursor is not None else {}))
        pages.append(page[key])
        cursor = page["next"]
        if cursor is None:
            return pages
    raise AssertionError(f"{path}: the pages never end")


def test_every_run_is_listed_newest_first_campaigns_and_rooms_alike(db: Path, viewer: TestClient) -> None:
    store = Store(str(db))
    for name in ("alpha", "beta", "gamma"):
        synthetic_run(store, name, 2)
    code = create_room(viewer)
    ann_token, bob_token = join(viewer, code, "Ann"), join(viewer, code, "Bob")
    with viewer.websocket_connect(f"/ws/{code}") as wa, viewer.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(ann_token), Browser(wb).hello(bob_token)
        bob.until(lambda s: len(s["room"]["people"]) == 2)
        ann.send(type="start")
        ann.vote()
        ann.vote(0)
        bob.vote(0, why=HOSTILE)
        ann.phase("over")
    deadline = time.monotonic() + 10
    while not any(r.id.startswith("room-") and r.done for r in store.runs()):
        assert time.monotonic() < deadline, "the room's game was not stored"
        time.sleep(0.05)
    pages = walk(viewer, "/api/runs", "runs", limit=2)
    assert [len(p) for p in pages] == [2, 2]
    runs = [r for p in pages for r in p]
    room = next(r for r in runs if r["id"].startswith("room-"))
    assert [r["id"] for r in runs] == [room["id"], "gamma", "beta", "alpha"], "newest first, each once"
    assert room["kind"] == "room" and room["protocol"] == "coordination" and room["done"] == 1
    assert {r["kind"] for r in runs if r is not room} == {"campaign"}
    assert viewer.get("/api/runs", params={"after": "yesterday"}).status_code == 400
    assert runs[1]["episodes"] == 2 and runs[1]["status"] == "running"
    # The room's game reads like any episode: its transcript holds Bob's justification as plain data.
    [episode] = ok(viewer, f"/api/runs/{room['id']}/episodes")["episodes"]
    events = ok(viewer, f"/api/runs/{room['id']}/episodes/{episode['id']}/events", limit=500)["events"]
    assert any(HOSTILE in (e["line"] or "") for e in events)
    assert {e["audience"]["text"] for e in events if e["type"] == "model_call"} == {"bot"}, "a model call is its seat's"


@pytest.fixture
def viewer_on_any(store_url: str) -> Iterator[TestClient]:
    """The viewer on a SQLite file and on a real PostgreSQL server."""
    app = create_app(make_services(store_url), http_rate=1000, http_burst=1000, allowed_hosts=["testserver"])
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        yield c


def test_episodes_page_in_grid_order_both_ways_and_filter_in_the_database(store_url: str, viewer_on_any: TestClient) -> None:
    viewer = viewer_on_any
    synthetic_run(Store(store_url), "grid", 120)
    path = "/api/runs/grid/episodes"
    pages = walk(viewer, path, "episodes")
    assert [len(p) for p in pages] == [50, 50, 20]
    assert [e["position"] for p in pages for e in p] == list(range(120))
    back, cursor = [], ok(viewer, path, after=pages[1][-1]["cursor"])["prev"]
    assert cursor == "100:101", "the last page leads back from its first episode"
    while cursor is not None:
        page = ok(viewer, path, before=cursor)
        back.insert(0, page["episodes"])
        cursor = page["prev"]
    assert back == pages[:2], "paging back gives the same pages"
    head = ok(viewer, "/api/runs/grid")
    assert head["facets"]["outcome"]["converged"] == [False, True]
    assert head["facets"]["settings"] == {"bound": [1, 2], "variant": ["a", "b"]}
    assert "rounds" not in head["facets"]["outcome"], "only flat values are offered"
    assert head["report"].startswith(f"lexicoord report grid --db {store_url.split(':')[0]}")
    failed = ok(viewer, path, status="failed")
    assert failed["count"] == 12 and {e["status"] for e in failed["episodes"]} == {"failed"}
    assert failed["episodes"][0]["error"] == "boom"
    converged = walk(viewer, path, "episodes", outcome="converged=true")
    assert [e["position"] for p in converged for e in p] == [i for i in range(120) if i % 3 == 0 and i % 10 != 9]
    both = ok(viewer, path, outcome=["converged=false", "depth=2"], setting="variant=a")
    assert both["count"] == len([i for i in range(120) if i % 3 and i % 4 == 2 and i % 2 == 0 and i % 10 != 9])
    assert all(e["settings"]["variant"] == "a" and e["outcome"]["depth"] == 2 for e in both["episodes"])
    assert ok(viewer, path, setting="bound=2")["count"] == 60
    assert ok(viewer, path, setting="variant=c")["count"] == 0
    assert ok(viewer, path, setting="variant=2")["count"] == 0, "a number never matches a text, and is no error"
    assert ok(viewer, path, outcome="converged=\"true\"")["count"] == 0, "the text 'true' is not the value true"
    for bad in ({"status": "lost"}, {"outcome": "converged"}, {"limit": "0"}, {"limit": "x"}, {"after": "12"}):
        r = viewer.get(path, params=bad)
        assert r.status_code == 400 and r.json()["detail"], bad
    assert viewer.get("/api/runs/nope").status_code == 404
    assert viewer.get("/api/runs/nope/episodes").status_code == 404


def test_events_page_by_seq_both_ways_with_audience_and_whole_model_calls(db: Path, viewer: TestClient) -> None:
    store = Store(str(db))
    synthetic_run(store, "long", 3, big=1000)
    synthetic_run(store, "other", 1)
    [first, *_] = ok(viewer, "/api/runs/long/episodes")["episodes"]
    base = f"/api/runs/long/episodes/{first['id']}"
    head = ok(viewer, base)
    assert head["events"] == {"count": 1000, "first": 0, "last": 999} and head["item"] == {"text": "t0"}
    pages = walk(viewer, f"{base}/events", "events")
    assert len(pages) == 10 and [e["seq"] for p in pages for e in p] == list(range(1000))
    back, cursor = [], 1000
    while cursor is not None:
        page = ok(viewer, f"{base}/events", before=cursor)
        back.insert(0, page["events"])
        cursor = page["prev"]
    assert back == pages
    assert ok(viewer, f"{base}/events", before=1000)["next"] is None, "the last page says it is the last"
    assert ok(viewer, f"{base}/events")["prev"] is None and ok(viewer, f"{base}/events", after=-1)["prev"] is None
    rows = pages[0]
    assert [r["audience"]["text"] for r in rows[:3]] == ["everyone", "A", "the wolves"]
    assert rows[0]["line"] == "says: line 0" and rows[0]["round"] == 0
    call = rows[9]
    assert call["type"] == "model_call" and call["call"]["messages"] == 1 and call["call"]["reply"] == "reply 9"
    assert "prompt 9" not in str(call), "a page leaves prompts out"
    whole = ok(viewer, f"{base}/events/9")
    assert whole["data"]["messages"] == [{"role": "user", "content": "prompt 9"}] and whole["data"]["text"] == "reply 9"
    assert viewer.get(f"{base}/events/5000").status_code == 404
    [foreign] = ok(viewer, "/api/runs/other/episodes")["episodes"]
    assert viewer.get(f"/api/runs/long/episodes/{foreign['id']}").status_code == 404, "an episode is read in its own run"
    assert viewer.get(f"/api/runs/long/episodes/{foreign['id']}/events").status_code == 404


async def test_a_real_cogent_episode_reads_with_its_board_as_it_grew(db: Path, viewer: TestClient) -> None:
    await cogent_run(db)
    [episode] = ok(viewer, "/api/runs/study/episodes", setting="variant=cogent")["episodes"]
    base = f"/api/runs/study/episodes/{episode['id']}"
    events = [e for p in walk(viewer, f"{base}/events", "events", limit=7) for e in p]
    assert [e["seq"] for e in events] == list(range(len(events))) and len(events) > 10
    coined = next(e for e in events if e["type"] == "term_candidate" and "eggleft" in e["line"])
    assert coined["audience"]["text"] == "A" and coined["line"].startswith("coins 'eggleft'")
    shared = next(e for e in events if e["type"] == "terms_shared")
    assert shared["audience"]["text"] == "everyone" and shared["fields"]["snapshot"]
    early = ok(viewer, f"{base}/board", upto=coined["seq"])
    assert [(t["term"], t["coiner"], t["seen_by"]) for t in early["entries"]] == [("eggleft", "A", "A")]
    final = ok(viewer, f"{base}/board")
    terms = {t["term"]: t for t in final["entries"]}
    assert set(terms) == {"eggleft", "sellprice"} and terms["eggleft"]["seen_by"] == "everyone"
    assert terms["eggleft"]["uses"] >= 2 and set(terms["eggleft"]["users"]) == {"A", "B"}
    assert any("'lock'" in s["line"] and not s["accepted"] for s in final["steps"]), "rejected candidates are steps"
    call = next(e for e in events if e["type"] == "model_call" and e["agent"] == "A")
    whole = ok(viewer, f"{base}/events/{call['seq']}")
    assert whole["data"]["messages"] and whole["data"]["text"] and whole["data"]["usage"] is not None
    assert "eggleft" in str(whole["data"]["messages"]) or "Janet" in str(whole["data"]["messages"]), "the prompt itself"
    assert any(HOSTILE in (e["call"] or {}).get("reply", "") for e in events), "raw replies arrive as they were"


def fingerprint(db: Path) -> dict[str, tuple[str, int]]:
    """Content hash and mtime of the store file and its write-ahead log."""
    out = {}
    for p in (db, db.with_name(db.name + "-wal")):
        if p.exists():
            out[p.name] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return out


async def test_the_viewer_never_writes(db: Path, viewer: TestClient) -> None:
    await cogent_run(db)
    synthetic_run(Store(str(db)), "grid", 60, big=300)
    [episode] = ok(viewer, "/api/runs/study/episodes", setting="variant=cogent")["episodes"]
    base = f"/api/runs/study/episodes/{episode['id']}"
    paths = ["/api/runs", "/api/runs/study", "/api/runs/study/episodes", base, f"{base}/events", f"{base}/events/0",
             f"{base}/board", "/runs", "/runs/study", f"/runs/study/episodes/{episode['id']}"]
    for path in paths:
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert viewer.request(method, path, json={"status": "done"}).status_code == 405, (method, path)
    time.sleep(0.05)  # a later write would show as a newer mtime
    before = fingerprint(db)
    assert before
    for path in paths:
        assert viewer.get(path).status_code == 200, path
    for params in ({"status": "failed"}, {"outcome": "converged=true"}, {"setting": "bound=2"}):
        ok(viewer, "/api/runs/grid/episodes", **params)
    [big] = ok(viewer, "/api/runs/grid/episodes", limit=1)["episodes"]
    walk(viewer, f"/api/runs/grid/episodes/{big['id']}/events", "events")
    assert fingerprint(db) == before, "browsing changed the store"
    reader = Store(str(db)).read_only()
    with pytest.raises(Exception, match="readonly|read-only|query_only"):
        reader.set_run_status("study", "done")
    assert Store(str(db)).run("study").status != "failed"


def test_reading_goes_on_while_others_write(db: Path, viewer: TestClient, tmp_path: Path) -> None:
    store = Store(str(db))
    synthetic_run(store, "live", 5)
    # Another connection holds a write open: the viewer reads what was committed, at once.
    writer = sqlite3.connect(db, timeout=30)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE episodes SET status='failed', error='held' WHERE run_id='live'")
    started = time.monotonic()
    assert ok(viewer, "/api/runs/live/episodes", status="failed")["count"] == 0
    assert time.monotonic() - started < 2, "a reader never waits for a writer"
    writer.commit()
    writer.close()
    assert ok(viewer, "/api/runs/live/episodes", status="failed")["count"] == 5
    # A campaign in another process keeps saving episodes while the viewer pages through them.
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from lexicoord.runs.store import Store
        from tests.web.test_viewer_api import synthetic_events
        from lexicoord.runs.records import EpisodeRecord
        store = Store({str(db)!r})
        for i in range(5, 125):
            record = EpisodeRecord(run_id="live", key=f"k{{i}}", position=i, item_id=f"item-{{i}}", status="done",
                                   outcome={{"converged": True}}, started_at=1.0, finished_at=2.0)
            store.save_episode(record, synthetic_events(40))
            time.sleep(0.01)
        print("written")
    """), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ})
    seen = []
    while proc.poll() is None:
        pages = walk(viewer, "/api/runs/live/episodes", "episodes", limit=40)
        positions = [e["position"] for p in pages for e in p]
        assert positions == sorted(set(positions)), "every episode once, in order, while rows are added"
        seen.append(len(positions))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "written" in out, err
    assert seen == sorted(seen) and len(seen) > 1, "the viewer saw the run grow"
    assert ok(viewer, "/api/runs/live/episodes")["count"] == 125


def test_only_this_machine_is_answered(db: Path) -> None:
    """Every seat's private prompts are in the viewer: a browser on another machine is refused."""
    app = create_app(make_services(db), http_rate=1000, http_burst=1000, allowed_hosts=["testserver"])
    with TestClient(app, client=("192.0.2.7", 50000)) as far:
        for path in ("/runs", "/api/runs", "/api/runs/x/episodes"):
            assert far.get(path).status_code == 403, path
        assert far.get("/api/offer").status_code == 200, "rooms are still served to everyone"
