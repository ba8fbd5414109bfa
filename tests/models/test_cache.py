"""The response cache saves calls and never fails one: a cache another process holds locked for writing is
skipped on write, with a warning, and the call returns its reply (reads go on: the cache is in WAL mode)."""

from __future__ import annotations

import logging
import subprocess
import sys

from lexicoord.models import Model, ResponseCache
from lexicoord.models.providers.scripted import ScriptedProvider


async def test_a_locked_cache_neither_fails_the_call_nor_hides_it(tmp_path, caplog) -> None:
    path = tmp_path / "cache.db"
    cache = ResponseCache(path)
    model = Model(ScriptedProvider("s", lambda m, c: "fresh reply"), cache=cache)
    await model.generate("kept before the lock")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, time\n"
         f"con = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
         "con.execute('BEGIN EXCLUSIVE')\n"
         "con.execute('DELETE FROM responses WHERE 0'); print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with caplog.at_level(logging.WARNING, logger="lexicoord.models.cache"):
            out = await model.generate("asked while the cache is locked")
    finally:
        holder.kill()
        holder.wait()
    assert out.text == "fresh reply" and not out.cached
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "not written" in said and str(path) in said
    assert (await model.generate("kept before the lock")).cached, "the cache works again once the lock is gone"
