"""The store's one journal and its games in progress, on a SQLite file and on a real PostgreSQL server.

The journal holds the answers of a game still in play under its episode (run and key), whoever plays it;
a live game in progress is an episode row a spectator's view fills as it happens, and the save that ends
the game turns that row into the ended episode, as if it had been written only then."""

from __future__ import annotations

import time

from lexicoord.core.audience import Audience
from lexicoord.core.events import ChoiceEvent, Event, MessageEvent, OutcomeEvent
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.types import ChatMessage
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import PLAYING, LiveGame, LiveWrite, Move, Store

SPEC = EpisodeSpec(item_id="game-1", item={"seed": 987654321, "answer": "the secret"}, settings={"wolves": 1},
                   lineup=[AgentSpec(name="Ann", kind="human"), AgentSpec(name="bot", model="scripted/x")], repetition=1)


def game_events() -> list[Event]:
    """A public line, a private role, a model call (its seat's), a public choice, the outcome."""
    events: list[Event] = [
        MessageEvent(agent="Ann", content="hello all"),
        Event(type="role", agent="bot", role="werewolf", audience=Audience.only("bot")),
        ModelCallEvent(model="scripted/x", agent="bot", messages=[ChatMessage(role="user", content="you are a wolf")],
                       text="ok", audience=Audience.only("bot")),
        ChoiceEvent(agent="Ann", round=1, choice="river", justification="water", options=["river", "money"]),
        OutcomeEvent(outcome={"agreed": True}),
    ]
    for i, e in enumerate(events):
        e.seq = i
    return events


def ended(events: list[Event]) -> EpisodeRecord:
    now = time.time()
    return EpisodeRecord(run_id="room-x", key=SPEC.key, position=1, item_id=SPEC.item_id, repetition=1, seed=42,
                         spec=SPEC.model_dump(mode="json"), status="done", outcome={"agreed": True}, started_at=now,
                         finished_at=now + 1, model_calls=1)


def dumps(events: list[Event]) -> list[dict]:
    return [e.model_dump(mode="json") for e in events]


def test_a_live_game_is_kept_as_a_spectator_sees_it_and_its_end_replaces_it_in_place(store_url: str) -> None:
    store = Store(store_url)
    store.open_run("room-x", "toy", {}, 0)
    game, events = LiveGame.of("room-x", SPEC, 1), game_events()
    store.keep_live([LiveWrite(game, events[:1], start=True), LiveWrite(game, events[1:3])])
    [live] = store.episode_page("room-x", limit=10)
    assert live.status == PLAYING and live.key == SPEC.key and live.position == 1 and live.attempt == 1
    assert live.spec["item"] == {} and live.seed == 0, "no item (a task's answer, a deal's seed) and no seed"
    assert live.spec["lineup"] == SPEC.model_dump(mode="json")["lineup"] and live.spec["settings"] == {"wolves": 1}
    assert live.id is not None
    assert dumps(store.events(live.id)) == dumps(events[:1]), "the role and the model call are not kept"
    assert store.episodes("room-x") == [], "a game in progress is no result"
    # Played again from its start (a restart): the row is made anew, nothing twice.
    store.keep_live([LiveWrite(game, events[:1], start=True), LiveWrite(game, events[1:4])])
    assert [e.seq for e in store.events(live.id)] == [0, 3]
    assert store.event_span(live.id) == (2, 0, 3), "a game in play holds its public events only: counted, not spanned"
    [again] = store.episode_page("room-x", limit=10)
    assert again.id == live.id
    # The end: the same row, every event, the record as the game gave it.
    saved = store.save_episode(ended(events), events)
    assert saved == live.id
    assert store.event_span(saved) == (5, 0, 4), "an ended episode has every event, numbered without a gap"
    [(record, stored)] = list(store.iter_run_events("room-x"))
    assert record.id == live.id and record.status == "done" and record.attempt == 1 and record.seed == 42
    assert record.spec == SPEC.model_dump(mode="json") and record.model_calls == 1
    assert dumps(stored) == dumps(events)
    # A write that arrives after the end (it was queued before it) changes nothing.
    store.keep_live([LiveWrite(game, [events[3]]), LiveWrite(game, events[:1], start=True)])
    [(record, stored)] = list(store.iter_run_events("room-x"))
    assert record.status == "done" and dumps(stored) == dumps(events)


def test_events_without_a_started_game_are_dropped_and_a_closed_rooms_game_goes(store_url: str) -> None:
    store = Store(store_url)
    store.open_run("room-x", "toy", {}, 0)
    store.keep_live([LiveWrite(LiveGame.of("room-x", SPEC, 1), game_events()[:1])])
    assert store.episode_page("room-x", limit=10) == [], "only a game's first write makes its row"
    other = SPEC.model_copy(update={"repetition": 2})
    store.save_episode(ended(game_events()), game_events())
    store.keep_live([LiveWrite(LiveGame.of("room-x", other, 2), game_events()[:1], start=True)])
    assert [e.status for e in store.episode_page("room-x", limit=10)] == ["done", PLAYING]
    store.drop_live("room-x")
    [kept] = store.episode_page("room-x", limit=10)
    assert kept.status == "done" and kept.id is not None and len(store.events(kept.id)) == len(game_events())


def test_one_journal_for_every_episode_written_together_read_and_cleared_per_episode(store_url: str) -> None:
    store = Store(store_url)
    for run in ("camp", "room-x"):
        store.open_run(run, "toy", {}, 0)
    store.add_episode_moves([
        Move("room-x", SPEC.key, "Ann", 1, {"kind": "vote", "answer": {"n": 2}}),
        Move("camp", "k1", "A", 0, {"kind": "vote", "answer": {"n": 0}}),
        Move("room-x", SPEC.key, "Ann", 0, {"kind": "vote", "answer": {"n": 1}}),
        Move("room-x", SPEC.key, "#control", 0, {"kind": "end", "end": False}),
    ])
    store.add_episode_move("camp", "k1", "B", 0, {"kind": "vote", "error": "the server is down"})
    assert store.episode_moves("room-x", SPEC.key) == {
        "#control": [{"kind": "end", "end": False}],
        "Ann": [{"kind": "vote", "answer": {"n": 1}}, {"kind": "vote", "answer": {"n": 2}}]}
    assert store.episode_moves("camp", "k1") == {"A": [{"kind": "vote", "answer": {"n": 0}}],
                                                  "B": [{"kind": "vote", "error": "the server is down"}]}
    # A failed save keeps the answers (a retry replays them) and drops the failed move.
    store.save_episode(EpisodeRecord(run_id="camp", key="k1", item_id="i", status="failed", error="down",
                                     started_at=1.0, finished_at=2.0), [])
    assert store.episode_moves("camp", "k1") == {"A": [{"kind": "vote", "answer": {"n": 0}}]}
    store.clear_episode_moves("room-x", SPEC.key)
    assert store.episode_moves("room-x", SPEC.key) == {}
    assert store.episode_moves("camp", "k1") != {}, "another episode's journal stays"
