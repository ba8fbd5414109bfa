"""A protocol names its item, settings and outcome types; ``start`` (the item), ``play``, ``settings_of`` and
``outcome_of`` give exactly those, a bad item fails its own episode with the field named, and a stored outcome
that no longer fits its model is refused with the field named."""

from __future__ import annotations

import re
import time
from typing import Any, get_args, get_type_hints

import pytest
from pydantic import BaseModel, Field, ValidationError

from lexicoord.core import EpisodeContext, EpisodeSpec, Protocol
from lexicoord.core.spec import AgentSpec
from lexicoord.protocols.cogent import CogentStudy
from lexicoord.protocols.coordination import CoordinationGame, CoordinationOutcome
from lexicoord.protocols.debate import DebateStudy, LeaderFollowerDebate, SingleAgent
from lexicoord.protocols.werewolf import WerewolfGame
from lexicoord.runs.grid import grid
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items


class Tally(BaseModel):
    start: int = 0
    step: int = Field(default=1, ge=1)


class Count(BaseModel):
    total: int
    seats: list[str]


class Counting(Protocol[dict[str, Any], Tally, Count]):
    """Counts ``n`` steps from ``start``; keeps what it returned, to compare with what comes back."""

    name = "counting"
    settings_model = Tally
    outcome_model = Count

    def __init__(self) -> None:
        self.returned: list[Count] = []

    async def play(self, ctx: EpisodeContext) -> Count:
        settings = self.settings_of(ctx)
        out = Count(total=settings.start + settings.step * ctx.item["n"], seats=[s.name for s in ctx.spec.lineup])
        self.returned.append(out)
        return out


def stored(outcome: dict[str, Any] | None) -> EpisodeRecord:
    now = time.time()
    return EpisodeRecord(run_id="r", key="k", item_id="i", status="done", outcome=outcome, started_at=now,
                         finished_at=now)


BUILT_INS = [CoordinationGame, DebateStudy, LeaderFollowerDebate, SingleAgent, CogentStudy, WerewolfGame]


@pytest.mark.parametrize("protocol", [Counting, *BUILT_INS], ids=lambda p: p.__name__)
def test_the_declared_types_are_the_models_and_what_play_returns(protocol: type[Protocol]) -> None:
    declared = next(get_args(b) for b in protocol.__orig_bases__ if getattr(b, "__origin__", None) is Protocol)
    item, settings, outcome = declared
    if protocol is Counting:  # names no item model: the item is the dict the episode spec carries
        assert item == dict[str, Any] and protocol.item_model is dict
    else:  # every built-in reads its items as a model of its own, and plays a context typed with it
        assert item is protocol.item_model and issubclass(item, BaseModel)
        assert get_type_hints(protocol.play)["ctx"] == EpisodeContext[item]
    assert settings is protocol.settings_model and outcome is protocol.outcome_model
    assert get_type_hints(protocol.play)["return"] is outcome


class Thing(BaseModel):
    n: int = Field(ge=0)


class Stepping(Protocol[Thing, Tally, Count]):
    """Counting again, on an item model: its rules read ``ctx.item.n``."""

    name = "stepping"
    item_model = Thing
    settings_model = Tally
    outcome_model = Count

    async def play(self, ctx: EpisodeContext[Thing]) -> Count:
        settings = self.settings_of(ctx)
        return Count(total=settings.start + settings.step * ctx.item.n, seats=[s.name for s in ctx.spec.lineup])


def test_the_item_is_read_as_the_item_model_once_on_the_same_context() -> None:
    ctx = EpisodeContext(EpisodeSpec(item_id="i", item={"id": "i", "n": "4", "note": "a column"}), seed=0)
    with pytest.raises(RuntimeError, match="has not been read"):
        ctx.item  # noqa: B018 - no protocol has read it yet
    started = Stepping().start(ctx)
    assert started is ctx and type(started.item) is Thing and started.item.n == 4
    assert ctx.spec.item == {"id": "i", "n": "4", "note": "a column"}, "the spec keeps the item as JSON"
    plain = Counting().start(EpisodeContext(EpisodeSpec(item_id="i", item={"n": 2}), seed=0))
    assert plain.item == {"n": 2}, "a protocol that names no item model reads the spec's dict"


async def test_a_bad_item_fails_its_own_episode_naming_the_field_and_the_others_play(store_url: str) -> None:
    store = Store(store_url)
    seats = [AgentSpec(name="a", model="scripted/first")]
    items = [{"id": "i1", "n": 1}, {"id": "bad", "n": -3}, {"id": "none"}, {"id": "i3", "n": 3}]
    await Runner(store, Stepping()).run("stepping", grid(items, [seats]))
    records = {r.item_id: r for r, _ in store.iter_run_events("stepping")}
    assert {i: r.status for i, r in records.items()} == {"i1": "done", "bad": "failed", "none": "failed", "i3": "done"}
    # recorded as a bad setting is: pydantic's error, the model and the field on a line of its own, then why
    assert re.search(r"^ValidationError: 1 validation error for Thing\nn\n  Input should be greater than or equal to 0",
                     records["bad"].error or "")
    assert re.search(r"for Thing\nn\n  Field required", records["none"].error or "")
    assert records["bad"].spec["item"] == {"id": "bad", "n": -3}, "the stored item stays the JSON it was given"
    assert Stepping.outcome_of(records["i3"]).total == 3


async def test_a_played_outcome_comes_back_from_the_store_as_the_declared_type(store_url: str) -> None:
    store, counting = Store(store_url), Counting()
    seats = [AgentSpec(name="a", model="scripted/first"), AgentSpec(name="b", model="scripted/first")]
    await Runner(store, counting).run("count", grid([{"id": "i1", "n": 3}], [seats], settings=[{"start": 10, "step": 2}]))
    [(record, _)] = list(store.iter_run_events("count"))
    back = Counting.outcome_of(record)
    assert type(back) is Count and back == counting.returned[0] == Count(total=16, seats=["a", "b"])

    people = [AgentSpec(name=n, kind="simulated", options={"policy": "first"}) for n in ("l", "p")]
    await Runner(store, CoordinationGame()).run("coord", grid([builtin_items()[0].as_task()], [people]))
    [(record, _)] = list(store.iter_run_events("coord"))
    game = CoordinationGame.outcome_of(record)
    assert type(game) is CoordinationOutcome and game.converged and [a.name for a in game.agents] == ["l", "p"]
    assert game.model_dump(mode="json") == record.outcome


def test_a_stored_outcome_that_does_not_fit_its_model_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match=r"total\n.*valid integer"):
        Counting.outcome_of(stored({"total": "many", "seats": []}))
    with pytest.raises(ValidationError, match=r"seats\n.*Field required"):
        Counting.outcome_of(stored({"total": 3}))
    good = CoordinationOutcome(converged=False, reason="bound", rounds=4).model_dump(mode="json")
    assert CoordinationGame.outcome_of(stored(good)).reason == "bound"
    with pytest.raises(ValidationError, match=r"reason\n"):
        CoordinationGame.outcome_of(stored({**good, "reason": "tired"}))
    with pytest.raises(ValidationError, match="CoordinationOutcome"):
        CoordinationGame.outcome_of(stored(None))  # a failed episode has no outcome to read


def test_settings_are_read_as_the_declared_model() -> None:
    ctx = EpisodeContext(EpisodeSpec(item_id="i", settings={"start": 5}), seed=0)
    settings = Counting().settings_of(ctx)
    assert type(settings) is Tally and (settings.start, settings.step) == (5, 1)
    bad = EpisodeContext(EpisodeSpec(item_id="i", settings={"step": 0}), seed=0)
    with pytest.raises(ValidationError, match=r"step\n.*greater than or equal to 1"):
        Counting().settings_of(bad)


def test_a_protocol_that_names_no_models_keeps_any_model_and_reads_none_back() -> None:
    class Echo(Protocol):
        name = "echo"

        async def play(self, ctx: EpisodeContext) -> BaseModel:  # pragma: no cover - never played here
            raise NotImplementedError

    assert Echo.settings_model is BaseModel and Echo.outcome_model is BaseModel
    with pytest.raises(TypeError, match="Echo names no outcome model"):
        Echo.outcome_of(stored({"anything": 1}))
    with pytest.raises(TypeError, match="Echo names no settings model"):
        Echo().settings_of(EpisodeContext(EpisodeSpec(item_id="i"), seed=0))
