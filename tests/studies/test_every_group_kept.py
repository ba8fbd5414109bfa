"""Every group's games are kept, for every protocol with a room: two groups that play the same items with the same
seats are two sets of episodes of the study's run, each with its own outcome, named in the exports and paid by
the bonus for the participant who played it, and every one counted by the protocol's report.

The defect this guards against: every group's room built the same spec (item, seats, settings, repetition), so
both groups' games had one episode key; the store kept the first and dropped the second, and the second group's
participant was exported and paid on the first group's game. Scripted agents and pages that answer every
request (:mod:`tests.studies.autoplay`): the rules of the record are checked, not a model.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_args

import pytest

from lexicoord.analysis.report import Report, report_run
from lexicoord.core.registry import get_protocol, unregister_protocol
from lexicoord.core.spec import EpisodeSpec
from lexicoord.runs.store import Store
from tests.studies.autoplay import AutoPage
from tests.studies.conftest import KEY, Participant, serving, values

BOTS = [{"name": f"Bot {i}", "model": "scripted/first"} for i in range(1, 7)]
SMOKE = Path(__file__).resolve().parents[2] / "experiments" / "smoke"
PLUGIN = Path(__file__).resolve().parents[1] / "core" / "plugin_dist"

#: Each protocol's study: one person per group (the pick differs between the groups), two games per group.
STUDIES: dict[str, dict[str, Any]] = {
    "coordination": {"group": {"people": 1, "games": 2, "agents": BOTS[:1]}},
    "debate": {"group": {"people": 1, "games": 2, "agents": BOTS[:1]}},
    "werewolf": {"group": {"people": 1, "games": 2, "agents": BOTS}},
    "cogent": {"group": {"people": 1, "games": 2, "agents": BOTS[:1]}, "game": {"seat_timeout": 30, "source": "gsm8k"},
               "items": {"gsm8k": str(SMOKE / "gsm8k.jsonl")}},
    "same-word": {"group": {"people": 1, "games": 2, "agents": BOTS[:1]}},
}


def _in_title(pattern: str) -> Callable[[Report], int]:
    """The count a report's first table names in its title (``4 games``, ``4 finished episodes`` ...)."""
    return lambda report: int(re.search(pattern, report.tables[0].title).group(1))  # type: ignore[union-attr]


def _column(name: str) -> Callable[[Report], int]:
    """The sum of a column of a report's first table (its games per condition, per variant ...)."""
    return lambda report: sum(int(row[report.tables[0].head.index(name)]) for row in report.tables[0].rows)


#: How many games each protocol's report says it counted, read from its own first table.
COUNTED: dict[str, Callable[[Report], int]] = {
    "coordination": _in_title(r": (\d+) games$"), "debate": _in_title(r"\((\d+) finished episodes"),
    "werewolf": _column("games"), "cogent": _in_title(r"\((\d+) episodes"), "same-word": _column("games"),
}


@pytest.fixture
def plugin() -> Iterator[None]:
    """The plugin distribution of ``tests/core`` registered through its own entry point's hook, as lexicoord's
    loader would call it (the subprocess tests there install it for real)."""
    sys.path.insert(0, str(PLUGIN))
    import same_word_game

    same_word_game.register()
    try:
        yield
    finally:
        unregister_protocol("same-word")
        sys.path.remove(str(PLUGIN))


def yes_no_field(protocol: str) -> str | None:
    """The outcome's first yes-or-no field, which a bonus per game can read (Werewolf's outcome has none)."""
    fields = get_protocol(protocol).rules().outcome_model.model_fields
    return next(iter(sorted(n for n, f in fields.items() if f.annotation is bool or bool in get_args(f.annotation))),
                None)


def admin_csv(client: Any, name: str) -> str:
    r = client.get(f"/api/studies/pilot/admin/{name}", headers={"X-Admin-Key": KEY})
    assert r.status_code == 200, r.text
    return r.text


@pytest.mark.parametrize("protocol", list(STUDIES))
def test_two_groups_on_the_same_items_keep_every_game_with_its_own_outcome(
        db: Path, protocol: str, request: pytest.FixtureRequest) -> None:
    if protocol == "same-word":
        request.getfixturevalue("plugin")
    when = yes_no_field(protocol)
    per_game = 0.5 if when else 0.0
    data = values(protocol=protocol, bonus={"per_game": per_game, "when": when or "converged", "completed": 0.0},
                  dropout={"grace": 60, "idle": False}, **STUDIES[protocol])
    with serving(db, data) as (client, part):
        pages = []
        for pid, pick in (("first", 0), ("second", 1)):
            p = Participant(client, pid)
            p.to_lobby()
            p.until("game")
            room, token = p.seat()
            ws = client.websocket_connect(f"/ws/{room}")
            client.sockets.append(ws)  # type: ignore[attr-defined]
            pages.append((p, AutoPage(ws.__enter__(), token, pick=pick, tag=f"group-of-{pid}")))
        for p, page in pages:
            assert page.closed.wait(120), f"{p.pid}'s games never ended: {str(page.state)[:600]}"
            p.until("survey")
            p.survey()
        rows = {r["participant_id"]: r for r in csv.DictReader(io.StringIO(admin_csv(client, "participants.csv")))}
        bonus = dict(line.split(",") for line in admin_csv(client, "bonus.csv").splitlines())
        groups = {g.id: g for g in part.study.state.groups.values()}
    store = Store(str(db))
    episodes = store.episodes("study-pilot")
    assert len(episodes) == 4 and all(e.status == "done" for e in episodes), [(e.key, e.status) for e in episodes]
    assert len({e.key for e in episodes}) == 4
    by_place = {(e.spec["place"]["group"], e.spec["place"]["game"]): e for e in episodes}
    assert sorted(by_place) == [("g1", 1), ("g1", 2), ("g2", 1), ("g2", 2)]
    # Both groups played the same items with the same seats: only where they played tells their games apart.
    for n in (1, 2):
        a, b = by_place[("g1", n)].spec, by_place[("g2", n)].spec
        assert a["item_id"] == b["item_id"]
        assert EpisodeSpec.model_validate({**a, "place": None}).model_dump(exclude={"lineup"}) == \
            EpisodeSpec.model_validate({**b, "place": None}).model_dump(exclude={"lineup"})
    for gid, pid in (("g1", "first"), ("g2", "second")):
        mine = [by_place[(gid, n)] for n in (1, 2)]
        people = [a for e in mine for a in e.spec["lineup"] if a["kind"] == "human"]
        assert [a["options"].get("participant") for a in people] == [pid, pid], "each seat names who played it"
        # The group's record holds what its own person wrote, never the other group's person's words.
        written = " ".join(str(e.model_dump()) for m in mine for e in store.events(m.id or 0))
        other = "second" if pid == "first" else "first"
        assert f"group-of-{pid}" in written and f"group-of-{other}" not in written
        assert [g.key for g in groups[gid].games] == [e.key for e in mine]
        row = rows[pid]
        assert row["games"].split() == [e.key for e in mine], "the export names the participant's own games"
        assert row["games_played"] == "2"
        counted = sum(bool((e.outcome or {}).get(when or "converged")) for e in mine)
        assert row["games_counted"] == str(counted)
        assert bonus.get(pid, "0.00") == f"{per_game * counted:.2f}", "paid on the participant's own games"
    if protocol == "coordination":  # the first group agrees with the agent; the second never does
        assert [bool(by_place[("g1", n)].outcome["converged"]) for n in (1, 2)] == [True, True]
        assert [bool(by_place[("g2", n)].outcome["converged"]) for n in (1, 2)] == [False, False]
    # The protocol's report reads every game of the run.
    read: list[int] = []

    class Counting:
        def __init__(self, inner: Store) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def iter_run_events(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
            for record, events in self.inner.iter_run_events(*args, **kwargs):
                read.append(record.id or 0)
                yield record, events

    report = report_run(Counting(store), "study-pilot", db.parent / "report")  # type: ignore[arg-type]
    assert set(read) == {e.id for e in episodes}
    assert COUNTED[protocol](report) == 4, [(t.title, t.rows[:2]) for t in report.tables]


@pytest.mark.parametrize("shared", [False, True], ids=["own-runs", "one-run"])
def test_two_rooms_of_the_server_playing_the_same_item_at_once_keep_both_games(tmp_path: Path, shared: bool) -> None:
    """Two rooms of ``lexicoord serve`` with the same settings play the same first item at the same time, each in
    its own run (as the start page makes them) or both in one run (as a study's groups are): two games, each under
    its own place, with its own outcome."""
    from fastapi.testclient import TestClient

    from lexicoord.web.app import create_app
    from tests.web.conftest import Browser, create_room, join, make_services

    db = tmp_path / "rooms.db"
    services = make_services(db)
    app = create_app(services, allowed_hosts=["testserver"])
    body = {"agents": [{"name": "Ava", "model": "scripted/first"}], "seat_timeout": 30}
    with TestClient(app) as client:
        if shared:
            services.store.open_run("both", "coordination", {}, 0)
            rooms = client.app.state.rooms  # type: ignore[attr-defined]
            codes = [client.portal.call(lambda: rooms.create(dict(body), run="both")).code for _ in range(2)]
        else:
            codes = [create_room(client, **body) for _ in range(2)]
        tokens = [join(client, code, "Ann") for code in codes]
        sockets = [client.websocket_connect(f"/ws/{code}") for code in codes]
        pages = [Browser(ws.__enter__()).hello(token) for ws, token in zip(sockets, tokens, strict=True)]
        try:
            for page in pages:  # both games begin before either is played
                page.send(type="start")
            for page in pages:
                page.until(lambda s: s["room"]["phase"] == "playing")
            for page, pick in zip(pages, (0, 1), strict=True):
                while True:
                    s = page.until(lambda s, page=page: s["room"]["phase"] == "over" or (  # type: ignore[misc]
                        s["you"].get("request") is not None and page._key(s) not in page.answered))
                    if s["room"]["phase"] == "over":
                        break
                    if s["you"]["request"]["kind"] == "clarify":
                        page.clarify("the other one")
                    else:
                        page.vote(pick)
        finally:
            for ws in sockets:
                ws.__exit__(None, None, None)
    store = Store(str(db))
    games = {e.spec["place"]["room"]: e for run in store.runs() for e in store.episodes(run.id)}
    assert len(games) == 2, "one game per room, each under its own room"
    first, second = games.values()
    assert first.item_id == second.item_id and first.key != second.key
    assert (first.run_id == second.run_id == "both") if shared else first.run_id != second.run_id
    assert sorted(bool(e.outcome["converged"]) for e in games.values()) == [False, True]
