"""The leader-follower debate and COGENT in live rooms, over the WebSocket protocol, with scripted agents (rules and
visibility, not model behaviour). Each person's frames carry only what their seat may read."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lexicoord.models.model import Model
from lexicoord.models.observe import current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.runs.store import Store
from lexicoord.tasks.ambiguous import builtin_items
from lexicoord.web.app import create_app
from lexicoord.web.services import Services
from tests.web.conftest import Browser, join

GSM = [{"id": "g1", "question": "Tom has 3 apples and buys 4 more. How many apples?", "answer": "7", "solution": ""}]


def agent_reply(messages: Any, config: Any) -> Any:
    """A debater that agrees and proposes a marked question; a COGENT agent that coins a term and answers 7."""
    props = (config.json_schema or {}).get("properties", {})
    me = current_agent.get()
    if "stance" in props:
        return {"stance": "disagree", "reasoning": f"FEEDBACK-OF-{me}", "alternative": "Which one?"}
    if "verdict" in props:
        return {"reasoning": f"PROPOSAL-OF-{me}", "verdict": "ambiguous", "question": "How many blocks?"}
    if "[PRIVATE NOTE" in messages[-1].content:  # a coining pass
        return f"[PART 1] apple_sum gives seven, PRIVATE-OF-{me}.\n[PART 2]\napple_sum = three plus four"
    return "Adding the apples gives seven. Answer: 7"


@pytest.fixture
def turns(tmp_path: Path) -> Iterator[TestClient]:
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("agent", agent_reply)), "scripted/agent")
    services = Services(store=Store(str(tmp_path / "t.db")), models=pool, items={"coordination": {"builtin": builtin_items()[:2]}, "cogent": {"gsm8k": GSM}},
                        model_names=["scripted/agent"], protocols=["coordination", "debate", "cogent"])
    with TestClient(create_app(services, http_rate=1000, http_burst=1000, allowed_hosts=["testserver"])) as c:
        c.db = tmp_path / "t.db"  # type: ignore[attr-defined]
        yield c


def room(client: TestClient, **settings: Any) -> str:
    r = client.post("/api/rooms", json={"agents": [{"name": "bot", "model": "scripted/agent"}], **settings})
    assert r.status_code == 201, r.text
    return r.json()["code"]


def asked(b: Browser, kind: str) -> dict[str, Any]:
    s = b.until(lambda s: (s["you"].get("request") or {}).get("kind") == kind and
                (s["room"]["game"]["number"], kind, s["you"]["request"]["round"]) not in b.answered)
    req = s["you"]["request"]
    b.answered.add((s["room"]["game"]["number"], kind, req["round"]))
    return req


def lines_of(state: dict[str, Any]) -> str:
    return " ".join(line["text"] for line in state["you"]["transcript"])


def test_the_offer_lists_the_debate_and_cogent_with_their_fields(turns) -> None:
    offer = {p["name"]: {f["name"]: f for f in p["fields"]} for p in turns.get("/api/offer").json()["protocols"]}
    assert {"coordination", "debate", "cogent"} <= set(offer)
    assert offer["debate"]["people_lead"]["kind"] == "bool" and offer["debate"]["rounds"]["max"] == 10
    assert offer["cogent"]["source"]["choices"] == ["gsm8k", "typed"], "only what the operator served, or typed"
    bad = turns.post("/api/rooms", json={"protocol": "cogent", "source": "mmlu"})
    assert bad.status_code == 400 and "serves no 'mmlu'" in bad.json()["message"]
    bad = turns.post("/api/rooms", json={"protocol": "cogent", "source": "typed", "question": "2+2?", "answer": "four"})
    assert bad.status_code == 400 and "as a number" in bad.json()["message"]


def test_a_cogent_rooms_reply_limit_is_the_papers_unless_its_creator_sets_one() -> None:
    from pydantic import ValidationError

    from lexicoord.protocols.cogent.room import CogentRoomSettings

    assert CogentRoomSettings(protocol="cogent").rules()["max_tokens"] == 512
    assert CogentRoomSettings(protocol="cogent", max_tokens=64).run_config()["settings"]["max_tokens"] == 64
    with pytest.raises(ValidationError, match="max_tokens"):
        CogentRoomSettings(protocol="cogent", max_tokens=8)


def test_a_person_leads_a_debate_and_a_follower_person_sees_only_their_own_feedback(turns) -> None:
    code = room(turns, protocol="debate", rounds=2, agents=[{"name": "bot", "model": "scripted/agent"}])
    tokens = {n: join(turns, code, n) for n in ("Ann", "Bob")}
    with turns.websocket_connect(f"/ws/{code}") as wa, turns.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(tokens["Ann"]), Browser(wb).hello(tokens["Bob"])
        ann.send(type="start")
        req = asked(ann, "propose")
        assert {f["name"] for f in req["fields"]} == {"reasoning", "verdict", "question"}
        assert "<<<" in req["prompt"], "the person reads the request as a model would, data fenced"
        game = ann.state["room"]["game"]
        assert set(game["item"]) == {"scene", "instruction"}, "never the answer key"
        ann.send(type="reply", kind="propose", round=req["round"], value={"reasoning": "x" * 701, "verdict": "clear",
                                                                          "question": ""})
        assert ann.error()["code"] == "bad_answer", "a person's reply meets the model's schema"
        ann.send(type="reply", kind="propose", round=req["round"],
                 value={"reasoning": "ANN-REASONS", "verdict": "ambiguous", "question": "How many red blocks?"})
        review = asked(bob, "review")
        assert "ANN-REASONS" in review["prompt"]
        bob.send(type="reply", kind="review", round=review["round"],
                 value={"stance": "agree", "reasoning": "BOB-FEEDBACK", "alternative": ""})
        # Round 2: the leader revises after reading both followers' feedback.
        asked(ann, "propose")
        ann_lines = " ".join(line["text"] for line in ann.state["you"]["transcript"])
        assert "BOB-FEEDBACK" in ann_lines and "FEEDBACK-OF-bot" in ann_lines, "the leader reads all feedback"
        seen = bob.until(lambda s: "BOB-FEEDBACK" in lines_of(s) and "ANN-REASONS" in lines_of(s))
        assert "FEEDBACK-OF-bot" not in lines_of(seen), "a follower reads only their own feedback"
        assert "FEEDBACK-OF-bot" not in json.dumps(seen), "not in the page, not in the frame"
        ann.send(type="end_game")
        over = ann.until(lambda s: s["room"]["phase"] == "over")
        assert over["room"]["game"]["number"] == 1
        stats = ann.until(lambda s: ann.stats is not None and ann.stats["games"] == 1) and ann.stats
        assert "round" in stats["history"][0]["outcome"]
    [run] = [r for r in Store(str(turns.db)).runs() if r.protocol == "debate"]
    report = subprocess.run([str(Path(sys.executable).with_name("lexicoord")), "report", run.id, "--db", str(turns.db),
                             "--out", str(turns.db.parent / "rep")], capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    assert (turns.db.parent / "rep" / "report.html").is_file(), "a room's run reads like any campaign's"


def test_a_person_as_cogent_b_coins_and_answers_and_sees_the_board(turns) -> None:
    code = room(turns, protocol="cogent", source="gsm8k", people_sit="B", rounds=1, passes=1, coin_rounds=1)
    token = join(turns, code, "Bea")
    with turns.websocket_connect(f"/ws/{code}") as ws:
        bea = Browser(ws).hello(token)
        bea.send(type="start")
        first = asked(bea, "init")
        assert first["fields"] == [{"name": "text", "required": True, "kind": "text", "max_length": 3000,
                                    "min_length": 0}]
        assert "Tom has 3 apples" in bea.state["room"]["game"]["item"]["task"]
        assert "7" not in json.dumps(bea.state["room"]["game"]["item"]), "never the answer while playing"
        bea.send(type="reply", kind="init", round=first["round"], value={"text": "3 + 4 = 7. Answer: 7"})
        coin = asked(bea, "coin")
        assert "=" in coin["prompt"] and "PART 1" in coin["prompt"], "the coining rules as a model reads them"
        bea.send(type="reply", kind="coin", round=coin["round"],
                 value={"text": "[PART 1] fruit_total is seven.\n[PART 2]\nfruit_total = apples counted together"})
        use = asked(bea, "use")
        bea.send(type="reply", kind="use", round=use["round"], value={"text": "By fruit_total, 7. Answer: 7"})
        over = bea.until(lambda s: s["room"]["phase"] == "over")
        lines = " ".join(line["text"] for line in over["you"]["transcript"])
        assert "fruit_total" in lines and "apple_sum" in lines, "coined terms and the shared board reach B"
        assert "PRIVATE-OF-bot" not in lines, "the agent's coining pass is its own"
        assert "PRIVATE-OF-bot" not in json.dumps(over["room"]["spectators"]), "a coining pass is not public"
        stats = bea.until(lambda s: bea.stats is not None and bea.stats["games"] == 1) and bea.stats
        assert "final answer 7 (right" in stats["history"][0]["outcome"]


def test_a_typed_question_is_played_and_replies_out_of_turn_are_refused(turns) -> None:
    code = room(turns, protocol="cogent", source="typed", question="What is 5 times 6?", answer="30",
                people_sit="A", variant="vanilla", rounds=1)
    tokens = {n: join(turns, code, n) for n in ("Al", "Cy")}
    with turns.websocket_connect(f"/ws/{code}") as wa, turns.websocket_connect(f"/ws/{code}") as wc:
        al, cy = Browser(wa).hello(tokens["Al"]), Browser(wc).hello(tokens["Cy"])
        al.send(type="start")
        req = asked(al, "init")
        assert "5 times 6" in al.state["room"]["game"]["item"]["task"]
        cy.send(type="reply", kind="init", round=req["round"], value={"text": "Answer: 30"})
        assert cy.error()["code"] == "not_your_turn", "a spectator has no seat to answer for"
        al.send(type="reply", kind="debate", round=req["round"], value={"text": "Answer: 30"})
        assert al.error()["code"] == "round_closed"
        al.send(type="reply", kind="init", round=req["round"], value={"text": "5 times 6. Answer: 30"})
        asked(al, "debate")
        assert cy.until(lambda s: any("Answer: 30" in line["text"] for line in s["room"]["spectators"]))


def services_for(db: Path) -> Services:
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("agent", agent_reply)), "scripted/agent")
    return Services(store=Store(str(db)), models=pool, items={"coordination": {"builtin": builtin_items()[:2]}, "cogent": {"gsm8k": GSM}},
                    model_names=["scripted/agent"], protocols=["debate", "cogent"])


def test_a_reconnecting_page_gets_its_seat_and_request_back(turns) -> None:
    code = room(turns, protocol="debate", rounds=1)
    token = join(turns, code, "Ann")
    with turns.websocket_connect(f"/ws/{code}") as ws:
        ann = Browser(ws).hello(token)
        ann.send(type="start")
        first = asked(ann, "propose")
    with turns.websocket_connect(f"/ws/{code}") as ws:
        again = Browser(ws).hello(token)
        s = again.until(lambda s: s["you"].get("request") is not None)
        assert s["you"]["request"]["kind"] == "propose" and s["you"]["request"]["prompt"] == first["prompt"]
        again.send(type="reply", kind="propose", round=first["round"],
                   value={"reasoning": "after a reload", "verdict": "clear", "question": ""})
        assert again.until(lambda s: s["room"]["phase"] == "over")


def test_a_server_restart_resumes_a_debate_without_asking_twice(tmp_path) -> None:
    db = tmp_path / "r.db"
    with TestClient(create_app(services_for(db), http_rate=1000, http_burst=1000)) as first:
        code = room(first, protocol="debate", rounds=2)
        tokens = {n: join(first, code, n) for n in ("Ann", "Bob")}
        with first.websocket_connect(f"/ws/{code}") as wa, first.websocket_connect(f"/ws/{code}") as wb:
            ann, bob = Browser(wa).hello(tokens["Ann"]), Browser(wb).hello(tokens["Bob"])
            ann.send(type="start")
            req = asked(ann, "propose")
            ann.send(type="reply", kind="propose", round=req["round"],
                     value={"reasoning": "BEFORE-RESTART", "verdict": "ambiguous", "question": "How many?"})
            asked(bob, "review")  # Bob's review is outstanding when the server goes
    with TestClient(create_app(services_for(db), http_rate=1000, http_burst=1000)) as second:
        with second.websocket_connect(f"/ws/{code}") as wb, second.websocket_connect(f"/ws/{code}") as wa:
            bob, ann = Browser(wb).hello(tokens["Bob"]), Browser(wa).hello(tokens["Ann"])
            review = asked(bob, "review")
            assert "BEFORE-RESTART" in review["prompt"], "the leader's proposal came from the journal"
            bob.send(type="reply", kind="review", round=review["round"],
                     value={"stance": "agree", "reasoning": "fine", "alternative": ""})
            revise = asked(ann, "propose")
            assert revise["round"] == 2, "Ann is not asked round 1 again"
            ann.send(type="reply", kind="propose", round=2, value={"reasoning": "r2", "verdict": "clear", "question": ""})
            assert asked(bob, "review")["round"] == 2
            bob.send(type="reply", kind="review", round=2, value={"stance": "agree", "reasoning": "ok", "alternative": ""})
            assert ann.until(lambda s: s["room"]["phase"] == "over")
    [(episode, events)] = list(Store(str(db)).iter_run_events(Store(str(db)).run("room-").id))
    proposals = [(e.agent, e.round) for e in events if e.type == "proposal"]
    assert proposals == [("Ann", 1), ("Ann", 2)] and episode.status == "done"


@pytest.mark.parametrize("text", [
    '{"type": "reply", "kind": "propose", "round": 1, "value": {"reasoning": "x"}, "as": "Bob"}',  # for someone else
    '{"type": "reply", "kind": "propose", "round": -1, "value": {}}',
    '{"type": "reply", "kind": "' + "k" * 41 + '", "value": {}}',
    '{"type": "reply", "kind": "propose", "value": "not an object"}',
    '{"type": "reply", "round": 1, "value": {}}',  # which request?
    '{"type": "reply", "kind": "propose", "action": "' + "a" * 21 + '"}',
])
def test_hostile_replies_are_refused_before_any_room_sees_them(text) -> None:
    from lexicoord.web.adapters.turns import TurnsRoom
    from lexicoord.web.messages import BadMessage
    from lexicoord.web.messages import parse as parse_any

    with pytest.raises(BadMessage):
        parse_any(text, TurnsRoom.messages)
    assert parse_any('{"type": "reply", "kind": "propose", "round": 1, "value": {"a": 1}}', TurnsRoom.messages).type == "reply"
