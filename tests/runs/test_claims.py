"""Claims on a run's episodes, on a SQLite file and on a real PostgreSQL server."""

from __future__ import annotations

import threading
import time

import pytest

from lexicoord.runs.claims import Claims
from lexicoord.runs.store import Store
from tests.runs.test_store import record


def opened(url: str, n: int = 5) -> Store:
    store = Store(url)
    store.open_run("r", "toy", {}, n)
    return store


def test_each_episode_goes_to_one_holder_in_grid_order(store_url) -> None:
    store = opened(store_url)
    a, b = Claims(store, "r"), Claims(store, "r")
    a.offer([(f"k{i}", i) for i in (3, 1, 4, 0, 2)])
    b.offer([(f"k{i}", i) for i in range(5)])  # the same rows offered again change nothing
    taken = [a.take(), b.take(), a.take(), b.take(), a.take()]
    assert taken == [["k0"], ["k1"], ["k2"], ["k3"], ["k4"]]
    assert a.take() == [] and b.take() == []
    left = a.remaining()
    assert (left.free, left.held) == (0, 2), "a sees b's two claims as held by another; its own three are not"
    assert 0 < left.next_expiry_in <= 60, "b's claims run out within their lease, by the database's clock"


@pytest.mark.parametrize("skew", [-600.0, 600.0], ids=["ten minutes behind", "ten minutes ahead"])
def test_machines_whose_clocks_differ_by_minutes_never_take_each_others_live_claims(store_url, skew: float,
                                                                                    monkeypatch) -> None:
    """Leases are stamped and compared with the database's clock, in the statement that takes or renews them:
    a process whose own clock is ten minutes off takes only what is free, and its claims last their lease."""
    store = opened(store_url)
    a = Claims(store, "r", lease=5)
    a.offer([(f"k{i}", i) for i in range(4)])
    assert a.take(n=2) == ["k0", "k1"]
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + skew)  # this process's machine: its clock is off
    b = Claims(store, "r", lease=5)
    assert b.take(n=4) == ["k2", "k3"], "a's live claims are a's, whatever b's clock says"
    left = b.remaining()
    assert (left.free, left.held) == (0, 2) and 0 < left.next_expiry_in <= 5
    monkeypatch.setattr(time, "time", real)
    assert a.take(n=4) == [] and a.remaining().held == 2, "and b's, taken by a clock ten minutes off, are b's"
    assert store.run("r").status == "running", "a run with live claims reads running, whoever's clock reads it"


def test_a_claim_that_is_not_renewed_expires_and_another_takes_it(store_url) -> None:
    store = opened(store_url)
    a, b = Claims(store, "r", lease=1.0), Claims(store, "r", lease=30)
    a.offer([("k0", 0)])
    assert a.take() == ["k0"] and b.take() == []  # live for a second: a busy machine's queries take far less
    deadline = time.monotonic() + 10
    while b.remaining().free == 0 and time.monotonic() < deadline:  # expires on the database's clock
        time.sleep(0.1)
    assert b.remaining().free == 1
    assert b.take() == ["k0"]
    assert a.renew({"k0"}) == {"k0"}, "a learns that it lost the claim"


def test_renewing_keeps_a_claim(store_url) -> None:
    store = opened(store_url)
    a, b = Claims(store, "r", lease=1.0), Claims(store, "r")
    a.offer([("k0", 0)])
    assert a.take() == ["k0"]
    for _ in range(4):  # 1.6 s in all, past the lease; each renewal with 0.6 s to spare on a busy machine
        time.sleep(0.4)
        assert a.renew({"k0"}) == set()
    assert b.take() == []


def test_a_renewal_names_every_claim_it_no_longer_holds(store_url) -> None:
    """Saved (the save deletes the claim's row) or taken by another process after it expired: both are no longer
    held, and the scheduler tells its own saves from the rest. A claim that expired and nobody took is renewed."""
    store = opened(store_url)
    a, b = Claims(store, "r", lease=0.3), Claims(store, "r", lease=30)
    a.offer([("k0", 0), ("k1", 1), ("k2", 2)])
    assert a.take(n=3) == ["k0", "k1", "k2"]
    store.save_episode(record("r", "k0"), [])
    time.sleep(0.4)
    assert b.take() == ["k1"]  # a's claim on k1 expired and b took it
    assert a.renew({"k0", "k1", "k2"}) == {"k0", "k1"}
    assert b.renew({"k1"}) == set() and b.take() == [], "k2 is a's again"


def test_release_frees_claims_at_once(store_url) -> None:
    store = opened(store_url)
    a, b = Claims(store, "r", lease=300), Claims(store, "r")
    a.offer([("k0", 0), ("k1", 1)])
    assert a.take() == ["k0"]
    a.release()
    assert b.take() == ["k0"]


def test_saving_an_episode_ends_its_claim(store_url) -> None:
    store = opened(store_url)
    a = Claims(store, "r")
    a.offer([("k0", 0), ("k1", 1)])
    assert a.take() == ["k0"]
    store.save_episode(record("r", "k0"), [])
    assert a.take() == ["k1"]
    store.save_episode(record("r", "k1", status="failed", error="boom"), [])
    left = a.remaining()
    assert (left.free, left.held) == (0, 0)


def test_a_row_offered_after_its_episode_was_saved_is_never_played(store_url) -> None:
    store = opened(store_url)
    store.save_episode(record("r", "k0"), [])
    late = Claims(store, "r")
    late.offer([("k0", 0)])  # a process that read the run before k0 was saved
    assert late.take() == []
    left = late.remaining()
    assert (left.free, left.held) == (0, 0)


def test_failed_episodes_are_skipped_when_failures_are_kept(store_url) -> None:
    store = opened(store_url)
    store.save_episode(record("r", "k0", status="failed", error="boom"), [])
    keep = Claims(store, "r", skip=("done", "failed"))
    keep.offer([("k0", 0)])
    assert keep.take() == []
    retry = Claims(store, "r")
    retry.offer([("k0", 0)])
    assert retry.take() == ["k0"]


def test_several_are_taken_at_once_in_grid_order(store_url) -> None:
    store = opened(store_url)
    a, b = Claims(store, "r"), Claims(store, "r")
    a.offer([(f"k{i}", i) for i in (4, 2, 0, 3, 1)])
    assert a.take(n=3) == ["k0", "k1", "k2"]
    assert b.take(n=3) == ["k3", "k4"]
    assert a.take(n=3) == []


def test_excluded_keys_are_not_taken(store_url) -> None:
    store = opened(store_url)
    a = Claims(store, "r")
    a.offer([("k0", 0), ("k1", 1)])
    assert a.take(exclude={"k0"}) == ["k1"]
    assert a.take(exclude={"k0"}) == []
    assert a.remaining(exclude={"k0"}).free == 0 and a.remaining().free == 1


def test_many_takers_at_once_never_share_an_episode(store_url) -> None:
    """Eight threads, each its own holder and connection, race for 120 episodes."""
    n = 120
    store = opened(store_url, n)
    Claims(store, "r").offer([(f"k{i}", i) for i in range(n)])
    got: dict[str, list[str]] = {f"t{i}": [] for i in range(8)}
    errors: list[BaseException] = []
    holders = {name: Claims(Store(store_url), "r") for name in got}  # each its own engine and connections
    start = threading.Barrier(8, timeout=60)

    def take_all(name: str) -> None:
        try:
            start.wait()
            while keys := holders[name].take(n=1 + len(got[name]) % 3):  # one, two or three at a time
                got[name].extend(keys)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=take_all, args=(name,), daemon=True) for name in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    every = [k for keys in got.values() for k in keys]
    assert sorted(every) == sorted(f"k{i}" for i in range(n)), "each episode taken exactly once"
    assert sum(1 for keys in got.values() if keys) >= 2, "the work was shared"
