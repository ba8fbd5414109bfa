import asyncio

import pytest
from pydantic import BaseModel, ConfigDict

from lexicoord.core.audience import Audience
from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import ErrorEvent, MessageEvent, OutcomeEvent
from lexicoord.errors import LexicoordError
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.pool import ModelPool
from lexicoord.models.provider import calls_at_once
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from tests.runs.toy import Toy, lineup


class Loose(BaseModel):
    """An outcome model that takes any field, for protocols whose outcome is the point of the test."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)


def make_runner(tmp_path, **kw) -> Runner:
    pool = kw.pop("models", None) or ModelPool(cache=False)
    return Runner(Store(str(tmp_path / "r.db")), Toy(), models=pool, **kw)


def test_grid_has_stable_keys_and_seeds() -> None:
    items = [{"id": "a"}, {"id": "b"}]
    g = grid(items, [lineup(), lineup("scripted/random")], settings=[{"bound": 1}, {"bound": 3}], repetitions=2)
    assert len(g) == 2 * 2 * 2 * 2 and len({e.key for e in g}) == 16
    again = grid(list(reversed(items)), [lineup(), lineup("scripted/random")], settings=[{"bound": 1}, {"bound": 3}], repetitions=2)
    assert {e.key for e in g} == {e.key for e in again}
    assert g[0].seed(0) == g[0].seed(0) != g[0].seed(1)
    with pytest.raises(ValueError, match="no 'id'"):
        grid([{"text": "x"}], [lineup()])


async def test_run_records_events_and_outcomes(tmp_path) -> None:
    runner = make_runner(tmp_path)
    summary = await runner.run("r", grid([{"id": "x"}, {"id": "y"}], [lineup()]))
    assert (summary.done, summary.failed, summary.skipped, summary.model_calls) == (2, 0, 0, 4)
    episodes = runner.store.episodes("r")
    assert [e.item_id for e in episodes] == ["x", "y"]
    events = runner.store.events(episodes[0].id)
    types = [type(e) for e in events]
    assert types.count(ModelCallEvent) == 2 and types.count(MessageEvent) == 2 and types[-1] is OutcomeEvent
    calls = [e for e in events if isinstance(e, ModelCallEvent)]
    assert {c.agent for c in calls} == {"a0", "a1"} and all(c.round == 1 for c in calls)
    assert all(c.audience == Audience.only(c.agent) for c in calls), "a model call is seen by its caller only"
    assert episodes[0].outcome == {"texts": ["item x", "item x"]}


async def test_each_episode_is_saved_under_its_specs_key_and_seed(tmp_path) -> None:
    runner = make_runner(tmp_path, seed=7)
    specs = grid([{"id": "x"}, {"id": "y"}, {"id": "z"}], [lineup(), lineup("scripted/random")])
    await runner.run("r", specs)
    assert {(e.key, e.seed) for e in runner.store.episodes("r")} == {(s.key, s.seed(7)) for s in specs}
    assert len({s.seed(7) for s in specs}) == len(specs) and specs[0].seed(7) != specs[0].seed(8)
    assert EpisodeContext(spec=specs[0], seed=0).key == specs[0].key, "a context made without its key works it out"


async def test_a_failing_episode_is_recorded_and_the_run_goes_on(tmp_path) -> None:
    runner = make_runner(tmp_path)
    items = [{"id": "ok1"}, {"id": "bad", "fail": True}, {"id": "ok2"}]
    summary = await runner.run("r", grid(items, [lineup()]))
    assert (summary.done, summary.failed) == (2, 1)
    assert "item bad is set to fail" in summary.errors[0]
    bad = next(e for e in runner.store.episodes("r") if e.item_id == "bad")
    assert bad.status == "failed" and "RuntimeError" in bad.error
    [error] = runner.store.events(bad.id)
    assert isinstance(error, ErrorEvent) and "Traceback" in error.raw


async def test_rerun_skips_done_and_retries_failed(tmp_path) -> None:
    runner = make_runner(tmp_path)
    items = [{"id": "ok"}, {"id": "bad", "fail": True}]
    await runner.run("r", grid(items, [lineup()]))
    again = await make_runner(tmp_path).run("r", grid(items, [lineup()]))
    assert (again.skipped, again.failed, again.done) == (1, 1, 0)
    fixed = await make_runner(tmp_path).run("r", grid([{"id": "ok"}, {"id": "bad"}], [lineup()]))
    assert fixed.done == 1 and fixed.skipped == 1, "the changed item is a new episode"
    keep = await make_runner(tmp_path, retry_failed=False).run("r", grid(items, [lineup()]))
    assert keep.skipped == 2 and keep.done == 0


async def test_concurrency_is_bounded(tmp_path) -> None:
    active = 0
    peak = 0

    class Counting(Toy):
        outcome_model = Loose

        async def play(self, ctx):
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.02)
            active -= 1
            return Loose()

    runner = Runner(Store(str(tmp_path / "c.db")), Counting(), concurrency=3)
    summary = await runner.run("c", grid([{"id": str(i)} for i in range(12)], [lineup()]))
    assert summary.done == 12 and peak == 3


@pytest.mark.parametrize(("concurrency", "episodes", "expected"), [(3, 12, 3), (4, 2, 2), (1, 5, 1)])
async def test_the_workers_calls_know_how_many_run_at_once_and_the_caller_is_left_as_it_was(
        tmp_path, concurrency: int, episodes: int, expected: int) -> None:
    seen: set[int] = set()

    class Asking(Toy):
        outcome_model = Loose

        async def play(self, ctx):
            seen.add(calls_at_once.get())
            return Loose()

    runner = Runner(Store(str(tmp_path / "c.db")), Asking(), concurrency=concurrency)
    summary = await runner.run("c", grid([{"id": str(i)} for i in range(episodes)], [lineup()]))
    assert summary.done == episodes
    assert seen == {expected}, "the workers at once: the concurrency, or fewer when fewer episodes are left"
    assert calls_at_once.get() == 1, "the run's setting stays inside the run"


async def test_cancel_keeps_finished_episodes_and_marks_the_run(tmp_path) -> None:
    runner = make_runner(tmp_path, models=ModelPool(cache=False, latency=0.05), concurrency=2)
    task = asyncio.create_task(runner.run("r", grid([{"id": str(i)} for i in range(40)], [lineup()])))
    while runner.store.run("r").done < 4 if _exists(runner) else True:
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    run = runner.store.run("r")
    assert run.status == "interrupted" and 4 <= run.done < 40
    assert all(e.status == "done" for e in runner.store.episodes("r"))


def _exists(runner: Runner) -> bool:
    try:
        runner.store.run("r")
        return True
    except LexicoordError:
        return False


async def test_duplicate_episodes_are_refused(tmp_path) -> None:
    with pytest.raises(LexicoordError, match="same episode twice"):
        await make_runner(tmp_path).run("r", grid([{"id": "a"}, {"id": "a"}], [lineup()]))


async def test_missing_key_fails_before_any_episode(tmp_path) -> None:
    from lexicoord.core.spec import AgentSpec
    from lexicoord.errors import MissingKeyError

    runner = make_runner(tmp_path)
    with pytest.raises(MissingKeyError, match="OPENAI_API_KEY"):
        await runner.run("k", grid([{"id": "a"}], [[AgentSpec(name="x", model="openai/gpt-4o-mini")]]))


@pytest.mark.parametrize(
    "bad,expected",
    [
        (Loose(tags={"a"}), None),  # a set: stored as a list
        (Loose(obj=object()), "Unable to serialize"),
        (["not", "a", "dict"], "returned list, not its outcome model Loose"),
        ({"ok": True}, "returned dict, not its outcome model Loose"),
    ],
)
async def test_an_outcome_that_cannot_be_stored_fails_only_its_episode(tmp_path, bad, expected) -> None:
    class Odd(Toy):
        outcome_model = Loose

        async def play(self, ctx):
            return bad if ctx.spec.item_id == "3" else Loose(ok=True)

    runner = Runner(Store(str(tmp_path / "o.db")), Odd())
    summary = await runner.run("o", grid([{"id": str(i)} for i in range(8)], [lineup()]))
    episodes = {e.item_id: e for e in runner.store.episodes("o")}
    assert len(episodes) == 8, "every episode is saved"
    assert all(episodes[str(i)].outcome == {"ok": True} for i in range(8) if i != 3)
    if expected is None:
        assert summary.failed == 0 and episodes["3"].outcome == {"tags": ["a"]}
    else:
        assert summary.failed == 1 and episodes["3"].status == "failed" and expected in episodes["3"].error
    assert runner.store.run("o").status == "finished"


async def test_an_event_that_cannot_be_stored_fails_its_episode_with_the_reason(tmp_path) -> None:
    from lexicoord.core.events import Event

    class Leaky(Toy):
        outcome_model = Loose

        async def play(self, ctx):
            if ctx.spec.item_id == "bad":
                ctx.emit(Event(type="custom", thing=object()))
            return Loose(ok=True)

    runner = Runner(Store(str(tmp_path / "l.db")), Leaky())
    summary = await runner.run("l", grid([{"id": "a"}, {"id": "bad"}, {"id": "c"}], [lineup()]))
    episodes = {e.item_id: e for e in runner.store.episodes("l")}
    assert summary.done == 2 and summary.failed == 1 and len(episodes) == 3
    assert episodes["bad"].status == "failed" and "could not be saved" in episodes["bad"].error
    [error] = runner.store.events(episodes["bad"].id)
    assert error.type == "error"


async def test_when_the_store_stops_saving_the_run_stops_with_the_stores_error(tmp_path) -> None:
    """Nobody could keep what is played after the store failed for good: playing stops and the store's error,
    not a bare cancellation, reaches the caller; the episodes never saved are played again on resume."""
    from sqlalchemy.exc import OperationalError

    class Gone(Store):
        def save_episodes(self, batch):
            raise OperationalError("INSERT INTO episodes", {}, Exception("disk I/O error"))

    plays = []

    class Counted(Toy):
        async def play(self, ctx):
            plays.append(ctx.spec.item_id)
            return await super().play(ctx)

    store = Gone(str(tmp_path / "g.db"))
    runner = Runner(store, Counted(), models=ModelPool(cache=False, latency=0.02), concurrency=2)
    with pytest.raises(OperationalError, match="disk I/O error"):
        await asyncio.wait_for(runner.run("g", grid([{"id": str(i)} for i in range(50)], [lineup()])), 60)
    assert len(plays) < 50, "playing stopped"
    assert store.run("g").status == "interrupted" and store.episodes("g") == []
