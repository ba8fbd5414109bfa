"""A study's participants in the store, on a SQLite file and on a real PostgreSQL server: written with group
commit, upserted, read back whole."""

from __future__ import annotations

import asyncio

from lexicoord.runs.store import Store
from lexicoord.studies.participant import Participant
from lexicoord.studies.persistence import StudyStore


def test_saves_are_upserted_read_back_whole_and_share_their_commits(store_url: str) -> None:
    store = StudyStore(Store(store_url), "pilot")
    store.open({"name": "pilot"}, {"status": "open"})
    commits: list[int] = []
    write = store._write

    def counted(people, state):  # type: ignore[no-untyped-def]
        commits.append(len(people))
        write(people, state)

    store._write = counted  # type: ignore[method-assign]

    async def go() -> None:
        people = [Participant(pid=f"p{i:03d}", token_hash="h") for i in range(120)]
        await asyncio.gather(*(store.save([p]) for p in people))  # 120 at once
        for p in people[:10]:
            p.move_to("quiz", 2.0)
            p.survey = {"comments": "=1+1 <b>é</b>"}
        await asyncio.gather(store.save(people[:10], lambda: {"status": "paused"}), store.save(people[:5]))

    asyncio.run(go())
    state, people = store.load()
    store.close()
    assert state == {"status": "paused"}
    assert len(people) == 120 and len({p.pid for p in people}) == 120
    by = {p.pid: p for p in people}
    assert by["p003"].stage == "quiz" and by["p003"].survey == {"comments": "=1+1 <b>é</b>"}
    assert by["p050"].stage == "consent"
    assert sum(commits) < 120 + 15 and len(commits) < 120  # the 120 saves went in fewer transactions


def test_a_study_row_is_made_once_and_its_first_file_kept(store_url: str) -> None:
    base = Store(store_url)
    first = StudyStore(base, "pilot")
    first.open({"title": "first"}, {"status": "open"})
    first.open({"title": "second"}, {"status": "ended"})
    assert first.load() == ({"status": "open"}, [])
    first.close()
