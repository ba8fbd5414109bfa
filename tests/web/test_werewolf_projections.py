"""How many projections of a Werewolf game a broadcast builds: one per living seat (their own), one shared by
every spectator, and once the end is announced one shared by everyone, since everyone then sees everything.

The room and game are the ones of :mod:`tests.web.test_werewolf_room` (Ann a wolf, Bob a villager, Cid the
seer among scripted agents); Dan and Eve join once the game is under way, to watch.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.protocols.werewolf.room_view import Projection, WerewolfView
from lexicoord.web.app import create_app
from tests.web.test_werewolf_room import (
    PEOPLE,
    WANT,
    Page,
    create,
    join,
    make_services,
    play_out,
    policy,
    seed_dealing,
)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(make_services(tmp_path / "ww.db"), http_rate=1000, http_burst=1000, allowed_hosts=["testserver"])
    with TestClient(app) as c:
        yield c


def views(client: TestClient, code: str, monkeypatch: pytest.MonkeyPatch, *, change: bool = True
          ) -> tuple[dict[str, Any], list[str]]:
    """Every person's own part as one broadcast builds it, in the room's loop, right after a change of the game
    (with ``change``) or with none since the last look; and as whom each projection built was built."""
    room = client.app.state.rooms.get(code)  # type: ignore[attr-defined]
    built: list[str] = []
    real = WerewolfView.project

    def project(self: WerewolfView, events: Any, viewer: Any, seen_as: Any) -> Projection:
        built.append(seen_as)
        return real(self, events, viewer, seen_as)

    async def look() -> dict[str, Any]:
        if change:  # as the end of any move does: what was built before is stale
            room.game.watcher.move_done("", "speak", None, None)
        with monkeypatch.context() as mp:
            mp.setattr(WerewolfView, "project", project)
            return {name: room.adapter.view(person) for name, person in room.people.items()}

    return client.portal.call(look), built  # type: ignore[union-attr]


def test_seats_get_their_own_projection_and_spectators_and_everyone_share_one(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    seed, _ = seed_dealing(WANT)
    code = create(client, seed)
    tokens = {p: join(client, code, p) for p in PEOPLE}
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb, \
            client.websocket_connect(f"/ws/{code}") as wc:
        pages = {"Ann": Page(wa, tokens["Ann"]), "Bob": Page(wb, tokens["Bob"]), "Cid": Page(wc, tokens["Cid"])}
        pages["Ann"].send(type="start")
        pages["Ann"].wait(lambda s: s["you"]["request"] is not None)
        for late in ("Dan", "Eve"):
            join(client, code, late)

        during, built = views(client, code, monkeypatch)
        assert sorted(built) == ["seat", "seat", "seat", "spectator"], "three seats' own, one for both spectators"
        assert during["Dan"].game is during["Eve"].game and during["Dan"].game.viewer == "spectator"
        seats = [during[n].game for n in PEOPLE]
        assert len({id(g) for g in seats}) == 3 and all(g.viewer == "seat" for g in seats)
        wolf_log = [e for e in during["Ann"].game.log if e.t == "role"]
        assert [e.who for e in wolf_log] == ["Ann"], "Ann's projection holds her role, and it is hers alone"
        assert not any(e.t == "role" for e in during["Dan"].game.log)

        play_out(pages, policy, lambda: all(p.state is not None and p.state["room"]["phase"] == "over"
                                            for p in pages.values()))
        after, built = views(client, code, monkeypatch)
        assert built == ["everyone"], "once everyone sees everything, it is built once"
        assert len({id(v.game) for v in after.values()}) == 1 and after["Bob"].game.viewer == "everyone"
        assert any(e.t == "check" for e in after["Dan"].game.log), "the seer's results, now everyone's"

        again, built = views(client, code, monkeypatch, change=False)
        assert built == [] and again["Ann"].game is after["Ann"].game, "unchanged since: not built again"
