"""Games in a room over the WebSocket protocol: two people and a scripted agent, every phase."""

from __future__ import annotations

import sqlite3

from lexicoord.runs.store import Store
from tests.web.conftest import Browser, create_room, game_of, join


def test_two_people_and_an_agent_converge_and_the_game_is_stored(client, db) -> None:
    code = create_room(client)
    ann_token, bob_token = join(client, code, "Ann"), join(client, code, "Bob")
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(ann_token), Browser(wb).hello(bob_token)
        assert ann.state["you"]["leader"] and not bob.state["you"]["leader"]
        lobby = bob.until(lambda s: len(s["room"]["people"]) == 2 and all(p["connected"] for p in s["room"]["people"]))
        assert [p["name"] for p in lobby["room"]["people"]] == ["Ann", "Bob"]
        ann.send(type="start")
        assert ann.request()["kind"] == "announce"  # round 0: the leader announces
        ann.send(type="choose", round=0, choice=ann.options()[0], justification="money")
        ann.vote(why="zebra-secret")
        # Bob sees that Ann has chosen, but not what, until everyone has.
        seen = bob.until(lambda s: game_of(s)["status"].get("Ann", {}).get("state") == "chosen"
                         and game_of(s)["round"] == 1)
        assert seen["room"]["game"]["rounds"] == []
        assert "zebra-secret" not in str(seen)
        bob.vote(why="<script>alert(1)</script>")
        over = ann.phase("over")
        game = over["room"]["game"]
        assert game["outcome"]["converged"] and game["outcome"]["depth"] == 0
        assert game["rounds"][0]["decisions"]["Bob"]["justification"] == "<script>alert(1)</script>"
        assert set(game["rounds"][0]["decisions"]) == {"Ann", "Bob", "bot"}
        stats = ann.until(lambda s: ann.stats is not None and ann.stats["games"] == 1) and ann.stats
        assert stats["won"] == 1 and stats["lost"] == 0 and stats["depth"]["0"] == 1
        summary = {k: v for k, v in stats["summary"]}
        assert summary["people agreed in round 1: converged at once"] == "1 of 1 (100.0%)", \
            "the room's statistics page carries the people's round-1 agreement"
        assert summary["first-round convergence, of convergent games"] == "1 of 1 (100.0%)"
    store = Store(str(db))
    [run] = [r for r in store.runs() if r.id.startswith("room-")]
    [(episode, events)] = list(store.iter_run_events(run.id))
    assert episode.status == "done" and episode.outcome["converged"]
    assert [a["name"] for a in episode.outcome["agents"]] == ["Ann", "Bob", "bot"]
    assert any(e.type == "model_call" for e in events)
    csv_text = client.get(f"/api/rooms/{code}/export.csv").text
    assert "Bob" in csv_text and "<script>alert(1)</script>" in csv_text
    exported = client.get(f"/api/rooms/{code}/export.json").json()
    assert exported["games"] == 1 and exported["history"][0]["rounds"][0]["decisions"]


def test_clarification_round_then_leader_ends_the_game(client) -> None:
    code = create_room(client, clarification_bound=3)
    ann_token, bob_token = join(client, code, "Ann"), join(client, code, "Bob")
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(ann_token), Browser(wb).hello(bob_token)
        ann.send(type="start")
        ann.vote()  # announcement
        ann.vote(1)
        bob.vote(0)
        ann.clarify("I mean the <b>second</b> one")
        s = bob.until(lambda s: game_of(s)["round"] == 2 and s["you"]["request"] is not None)
        assert game_of(s)["rounds"][0]["converged"] is False
        assert s["room"]["game"]["clarification"] == "I mean the <b>second</b> one"
        ann.send(type="end_game")  # mid-round: everyone's pending move ends now
        over = bob.phase("over")
        assert over["room"]["game"]["outcome"]["reason"] == "leader_ended"
        failures = over["room"]["game"]["rounds"][1]["decisions"]["Bob"]["failure"]
        assert "ended" in failures
        ann.send(type="start")  # and the next item
        ann.request("announce")
        assert ann.state["room"]["game"]["number"] == 2


def test_leader_continues_without_a_person_who_left(client) -> None:
    code = create_room(client)
    tokens = {n: join(client, code, n) for n in ("Ann", "Bob", "Cyd")}
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(tokens["Ann"]), Browser(wb).hello(tokens["Bob"])
        ann.send(type="start")
        ann.vote()
        ann.vote()
        bob.vote()
        # Cyd never connected: the round waits for them until the leader lets them go.
        s = ann.until(lambda s: game_of(s)["status"].get("Cyd", {}).get("state") == "thinking")
        assert s["room"]["game"]["outcome"] is None
        ann.send(type="drop", name="Cyd")
        over = ann.phase("over")
        assert over["room"]["game"]["outcome"]["converged"] is True  # Cyd no longer counts
        assert over["room"]["game"]["rounds"][0]["decisions"]["Cyd"]["failure"] == "Cyd left the room"
        assert [p["absent"] for p in over["room"]["people"]] == [False, False, True]
        ann.send(type="start")
        ann.request("announce")
        assert [p["name"] for p in ann.state["room"]["game"]["players"]] == ["Ann", "Bob", "bot"]


def test_a_slow_agent_times_out_and_the_page_says_so(client) -> None:
    code = create_room(client, agents=[{"name": "sloth", "model": "scripted/slow"}], agent_timeout=1)
    token = join(client, code, "Ann")
    with client.websocket_connect(f"/ws/{code}") as wa:
        ann = Browser(wa).hello(token)
        ann.send(type="start")
        ann.vote()
        ann.vote()
        s = ann.until(lambda s: game_of(s)["status"].get("sloth", {}).get("state") == "failed")
        assert game_of(s)["status"]["sloth"]["detail"] == "no answer within 1 s"
        over = ann.until(lambda s: game_of(s)["rounds"] != [])
        assert over["room"]["game"]["rounds"][0]["decisions"]["sloth"]["choice"] is None


def test_manual_mode_from_the_page(client, db) -> None:
    code = create_room(client, mode="manual")
    ann_token, bob_token = join(client, code, "Ann"), join(client, code, "Bob")
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(ann_token), Browser(wb).hello(bob_token)
        ann.send(type="start")
        ann.phase("sentence")
        ann.send(type="manual_sentence", sentence="I sat by the bank.", word="table")
        assert "does not occur" in ann.error()["message"]
        ann.send(type="manual_sentence", sentence="I sat by the bank.", word="bank")
        # Every player proposes, people too, and nobody sees a proposal before all are in.
        bob.until(lambda s: (s["you"]["request"] or {}).get("kind") == "propose")
        ann.send(type="propose", meaning="the side of a river", justification="ann-secret-why")
        seen = bob.until(lambda s: "Ann" in (s["room"]["manual"] or {}).get("proposed", []))
        assert "ann-secret-why" not in str(seen) and "side of a river" not in str(seen)
        ann.send(type="propose", meaning="again", justification="twice")
        assert ann.error()["code"] == "not_your_turn"
        bob.send(type="propose", meaning="a place to keep money", justification="x" * 161)
        assert "160" in bob.error()["message"], "a person's proposal meets the model's schema"
        bob.send(type="propose", meaning="a place to keep  money", justification="coins")
        confirm = bob.phase("confirm")
        manual = confirm["room"]["manual"]
        assert manual["options"] == ["a place to keep money", "the side of a river"]
        assert manual["proposals"][0]["proposers"] == ["Bob", "bot"] and manual["proposals"][1]["proposers"] == ["Ann"]
        assert manual["silent"] == []
        ann.send(type="manual_confirm", options=["a place to keep money"])
        assert "at least 2" in ann.error()["message"]
        ann.send(type="manual_confirm", options=["a place to keep money", "A place to keep  money"])
        assert "2 to 5 distinct" in ann.error()["message"]
        ann.send(type="manual_confirm", options=["a place to keep money", "the side of a river"])
        ann.vote("a place to keep money")  # the announcement: t1, so the bot (always the first) takes it too
        ann.vote("a place to keep money")
        bob.vote("a place to keep money")
        over = bob.phase("over")
        assert over["room"]["game"]["item"]["sentence"] == "I sat by the bank."
        assert over["room"]["game"]["outcome"]["interpretation"] == "a place to keep money"
    store = Store(str(db))
    [run] = [r for r in store.runs() if r.id.startswith("room-")]
    [(episode, _)] = list(store.iter_run_events(run.id))
    kept = {p["text"]: p["proposers"] for p in episode.spec["item"]["proposals"]}
    assert kept == {"a place to keep money": ["Bob", "bot"], "the side of a river": ["Ann"]}, "the game keeps who proposed what"


def test_the_leader_can_stop_waiting_for_a_silent_proposer(client) -> None:
    code = create_room(client, mode="manual")
    tokens = {n: join(client, code, n) for n in ("Ann", "Bob")}
    with client.websocket_connect(f"/ws/{code}") as wa:
        ann = Browser(wa).hello(tokens["Ann"])
        ann.send(type="start")
        ann.phase("sentence")
        ann.send(type="manual_sentence", sentence="I sat by the bank.", word="bank")
        ann.until(lambda s: (s["room"]["manual"] or {}).get("agents_done"))
        ann.send(type="propose", meaning="the side of a river", justification="water")
        waiting = ann.until(lambda s: "Ann" in (s["room"]["manual"] or {}).get("proposed", []))
        assert waiting["room"]["manual"]["awaiting"] == ["Bob"] and waiting["room"]["phase"] == "proposing"
        ann.send(type="close_proposals")
        confirm = ann.phase("confirm")
        assert confirm["room"]["manual"]["silent"] == ["Bob"]
        assert confirm["room"]["manual"]["options"] == ["a place to keep money", "the side of a river"]


def test_tokens_are_stored_only_as_hashes(client, db) -> None:
    code = create_room(client)
    token = join(client, code, "Ann")
    with sqlite3.connect(db) as conn:
        [(state,)] = conn.execute("SELECT state FROM rooms").fetchall()
    assert token not in state and "token_hash" in state


def test_the_lead_is_handed_over_or_taken_when_the_leader_is_away(client) -> None:
    code = create_room(client)
    tokens = {n: join(client, code, n) for n in ("Ann", "Bob", "Cyd")}
    room = client.app.state.rooms.get(code)
    with client.websocket_connect(f"/ws/{code}") as wb, client.websocket_connect(f"/ws/{code}") as wc:
        bob, cyd = Browser(wb).hello(tokens["Bob"]), Browser(wc).hello(tokens["Cyd"])
        bob.send(type="hand_over", name="Cyd")
        assert bob.error()["code"] == "not_leader", "only the leader hands the lead over"
        # Ann leads but has no page open; the lead can be taken only after she has been away long enough.
        bob.send(type="take_lead")
        assert bob.error()["code"] == "leader_present"
        room.people.lead_after = 0.0
        bob.send(type="take_lead")
        s = bob.until(lambda s: s["room"]["leader"] == "Bob")
        assert s["you"]["leader"] and "Bob took the lead from Ann" in s["room"]["notice"]
        bob.send(type="take_lead")
        assert bob.error()["code"] == "already_leader"
        bob.send(type="hand_over", name="Nobody")
        assert bob.error()["code"] == "no_such_person"
        bob.send(type="hand_over", name="Cyd")
        cyd.until(lambda s: s["room"]["leader"] == "Cyd" and s["you"]["leader"])
        cyd.send(type="start")
        cyd.request("announce")
        assert [p["name"] for p in cyd.state["room"]["game"]["players"]][0] == "Cyd", "the new leader is Player 1"
    with client.websocket_connect(f"/ws/{code}") as wa:
        ann = Browser(wa).hello(tokens["Ann"])
        assert ann.state["room"]["leader"] == "Cyd" and not ann.state["you"]["leader"]
        ann.send(type="start")
        assert ann.error()["code"] == "not_leader"
    assert room.saved_state()["leader"] == "Cyd", "the lead is saved, so a restart keeps it"
