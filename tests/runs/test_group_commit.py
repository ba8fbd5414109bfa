"""Group commit: writers of the same moment share a transaction, each item written once as it stands last."""

from __future__ import annotations

import asyncio
from typing import Any

from lexicoord.runs.group_commit import GroupCommit


async def test_saves_of_one_moment_share_the_next_transaction_and_each_item_is_read_when_it_is_made() -> None:
    written: list[dict[str, Any]] = []
    gate = asyncio.Event()

    async def write(items: dict[str, Any]) -> None:
        if not written:
            await gate.wait()  # the first transaction is under way while the rest arrive
        written.append(items)

    commits = GroupCommit(write, "test")
    value = {"a": 0, "b": 0}
    first = asyncio.ensure_future(commits.save({"a": lambda: value["a"]}))
    await asyncio.sleep(0)
    later = []
    for n in range(1, 6):
        value["a"] = value["b"] = n
        later.append(asyncio.ensure_future(commits.save({"a": lambda: value["a"], "b": lambda: value["b"]})))
    barrier = asyncio.ensure_future(commits.save({}))
    await asyncio.sleep(0.01)
    assert not any(f.done() for f in [first, *later, barrier]), "nothing returns before its commit"
    gate.set()
    await asyncio.wait_for(asyncio.gather(first, *later, barrier), 5)
    assert written == [{"a": 5}, {"a": 5, "b": 5}]  # seven saves, two transactions, the newest values


async def test_a_failed_transaction_is_every_waiters_and_the_next_one_goes_on() -> None:
    fail = [True]
    written: list[dict[str, Any]] = []

    async def write(items: dict[str, Any]) -> None:
        if fail[0]:
            fail[0] = False
            raise RuntimeError("the disk is full")
        written.append(items)

    commits = GroupCommit(write, "test")
    results = await asyncio.gather(commits.save({"x": lambda: 1}), commits.save({"y": lambda: 2}),
                                   return_exceptions=True)
    assert [str(r) for r in results] == ["the disk is full", "the disk is full"]
    await commits.save({"z": lambda: 3})
    await commits.flushed()
    assert written == [{"z": 3}]

