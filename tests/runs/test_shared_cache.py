"""On a server store, a run's replies are kept in the store: a machine that plays an episode again reuses the
replies another machine kept, whatever its own local cache holds. A SQLite store keeps the local file."""

from __future__ import annotations

import logging

from sqlalchemy import text

from lexicoord.models import Model, ResponseCache
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.shared_cache import StoreCache, shares_cache
from lexicoord.runs.store import Store
from tests.runs.toy import Toy, lineup

EPISODES = grid([{"id": f"i{k}"} for k in range(6)], [lineup("scripted/echo", 2)])


async def test_a_second_machine_replaying_a_run_reuses_the_replies_the_first_kept(postgres, tmp_path, monkeypatch):
    url = postgres.database()
    monkeypatch.setenv("LEXICOORD_CACHE_PATH", str(tmp_path / "machine-a" / "cache.db"))
    first = await Runner(Store(url), Toy(), models=ModelPool(cache=True)).run("first", EPISODES)
    assert first.model_calls == 12 and first.cached_calls == 0
    # Another machine: its own empty local cache, its own connection to the same store.
    monkeypatch.setenv("LEXICOORD_CACHE_PATH", str(tmp_path / "machine-b" / "cache.db"))
    again = await Runner(Store(url), Toy(), models=ModelPool(cache=True)).run("again", EPISODES)
    assert again.model_calls == 12 and again.cached_calls == 12
    assert len(ResponseCache(tmp_path / "machine-b" / "cache.db")) == 0, "a server store's run keeps no reply locally"
    assert len(StoreCache(Store(url))) == 12


async def test_a_run_that_keeps_no_replies_keeps_none_in_the_store_either(postgres, tmp_path) -> None:
    url = postgres.database()
    await Runner(Store(url), Toy(), models=ModelPool(cache=False)).run("uncached", EPISODES)
    assert len(StoreCache(Store(url))) == 0


async def test_a_sqlite_store_keeps_the_local_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("LEXICOORD_CACHE_PATH", str(tmp_path / "cache.db"))
    store = Store(str(tmp_path / "r.db"))
    assert not shares_cache(store)
    summary = await Runner(store, Toy(), models=ModelPool(cache=True)).run("local", EPISODES)
    assert summary.model_calls == 12 and (tmp_path / "cache.db").exists()
    assert len(StoreCache(store)) == 0


async def test_a_store_that_cannot_be_read_or_written_is_a_miss_and_the_model_is_asked(postgres, caplog) -> None:
    store = Store(postgres.database())
    model = Model(ScriptedProvider("s", lambda m, c: "fresh"), cache=StoreCache(store))
    assert (await model.generate("kept")).text == "fresh"
    assert (await model.generate("kept")).cached
    with store.writing() as s:  # the table gone from under the run: every read and write fails now
        s.execute(text("ALTER TABLE responses RENAME TO responses_gone"))
    try:
        with caplog.at_level(logging.WARNING, logger="lexicoord.runs.shared_cache"):
            out = await model.generate("kept")
    finally:
        with store.writing() as s:
            s.execute(text("ALTER TABLE responses_gone RENAME TO responses"))
    assert out.text == "fresh" and not out.cached
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "not read" in said and "not written" in said
