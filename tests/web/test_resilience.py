"""A browser that reconnects gets its seat back; a server restart resumes the game where it stopped
(on a SQLite file and on a real PostgreSQL server)."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from lexicoord.runs.store import Store
from lexicoord.web.app import create_app
from tests.web.conftest import Browser, create_room, game_of, join, make_services


def test_reconnect_mid_round_gets_the_seat_and_the_state_back(client) -> None:
    code = create_room(client)
    ann_token, bob_token = join(client, code, "Ann"), join(client, code, "Bob")
    with client.websocket_connect(f"/ws/{code}") as wa:
        ann = Browser(wa).hello(ann_token)
        with client.websocket_connect(f"/ws/{code}") as wb:
            Browser(wb).hello(bob_token)
            ann.send(type="start")
            ann.vote()
            ann.vote()
        # Bob's page was closed mid-round; the others see it.
        ann.until(lambda s: [p["connected"] for p in s["room"]["people"]] == [True, False])
        with client.websocket_connect(f"/ws/{code}") as wb2:
            bob = Browser(wb2).hello(bob_token)
            # Ann's vote shows as made once the journal has committed it (a moment after it was sent).
            s = bob.until(lambda s: s["you"]["request"] is not None
                          and game_of(s)["status"].get("Ann", {}).get("state") == "chosen")
            assert s["you"]["name"] == "Bob" and s["you"]["request"] == {"kind": "choose", "round": 1}
            bob.vote()
            assert bob.phase("over")["room"]["game"]["outcome"]["converged"]


def test_server_restart_mid_game_resumes_without_losing_or_repeating_moves(store_url) -> None:
    """On a SQLite file and on a real PostgreSQL server."""
    with TestClient(create_app(make_services(store_url), http_rate=1000, http_burst=1000)) as first:
        code = create_room(first, clarification_bound=2)
        ann_token, bob_token = join(first, code, "Ann"), join(first, code, "Bob")
        with first.websocket_connect(f"/ws/{code}") as wa, first.websocket_connect(f"/ws/{code}") as wb:
            ann, bob = Browser(wa).hello(ann_token), Browser(wb).hello(bob_token)
            ann.send(type="start")
            ann.vote(why="announced before the restart")
            ann.vote(1, why="round 1 before the restart")
            bob.vote(0)
            ann.clarify("said before the restart")
            ann.vote(0, why="round 2 before the restart")
            bob.until(lambda s: game_of(s)["status"].get("bot", {}).get("state") == "chosen" and game_of(s)["round"] == 2)
    # The server is gone with Bob's round-2 move outstanding; a new one opens the same store.
    with create_engine(store_url).connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM moves")).scalar_one() >= 6
    with TestClient(create_app(make_services(store_url), http_rate=1000, http_burst=1000)) as second:
        with second.websocket_connect(f"/ws/{code}") as wb:
            bob = Browser(wb).hello(bob_token)
            s = bob.until(lambda s: s["you"]["request"] is not None)
            assert s["you"]["request"] == {"kind": "choose", "round": 2}
            game = game_of(s)
            assert game["announcement"]["justification"] == "announced before the restart"
            assert game["rounds"][0]["decisions"]["Ann"]["justification"] == "round 1 before the restart"
            assert game["clarification"] == "said before the restart"
            assert game["status"]["Ann"]["state"] == "chosen" and game["status"]["bot"]["state"] == "chosen"
            bob.vote(0)
            over = bob.phase("over")
            assert over["room"]["game"]["outcome"]["converged"] and over["room"]["game"]["outcome"]["depth"] == 1
    store = Store(store_url)
    run = store.run("room-")
    [(episode, events)] = list(store.iter_run_events(run.id))
    choices = [(e.agent, e.round) for e in events if e.type == "choice"]
    assert choices == [("Ann", 0), ("Ann", 1), ("Bob", 1), ("bot", 1), ("Ann", 2), ("Bob", 2), ("bot", 2)]
    assert sum(1 for e in events if e.type == "model_call") == episode.model_calls == 2  # the bot, once a round
    with create_engine(store_url).connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM moves")).scalar_one() == 0
