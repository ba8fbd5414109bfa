"""Every WebSocket message type, good and bad, and hostile input: nothing is accepted that should not be."""

from __future__ import annotations

import json

import pytest
from starlette.websockets import WebSocketDisconnect

from lexicoord.protocols.coordination.room import CoordinationRoom
from lexicoord.web.messages import MAX_MESSAGE, BadMessage
from lexicoord.web.messages import parse as parse_any
from lexicoord.web.tokens import ALPHABET, new_room_code, normalize_code
from tests.web.conftest import Browser, create_room, join


def parse(text: str):
    """A frame as a coordination room reads it: every room's messages and the game's moves."""
    return parse_any(text, CoordinationRoom.messages)

GOOD = [
    {"type": "hello", "token": "x" * 32},
    {"type": "choose", "round": 1, "choice": "a", "justification": "why"},
    {"type": "clarify", "round": 1, "statement": ""},
    {"type": "start"},
    {"type": "end_game"},
    {"type": "manual_sentence", "sentence": "I sat by the bank.", "word": "bank"},
    {"type": "manual_confirm", "options": ["a", "b"]},
    {"type": "drop", "name": "Bob"},
    {"type": "hand_over", "name": "Bob"},
    {"type": "take_lead"},
    {"type": "ping"},
]


@pytest.mark.parametrize("msg", GOOD, ids=[m["type"] for m in GOOD])
def test_every_message_type_parses(msg) -> None:
    assert parse(json.dumps(msg)).type == msg["type"]


BAD = [
    ("not json", "bad_message"),
    ("[1, 2]", "bad_message"),
    ('{"type": "fly"}', "bad_message"),
    ('{"type": "choose", "round": 1}', "bad_message"),  # no choice
    ('{"type": "choose", "round": -1, "choice": "a"}', "bad_message"),
    ('{"type": "choose", "round": 1, "choice": "a", "as": "Bob"}', "bad_message"),  # no acting for someone else
    ('{"type": "clarify", "round": 1, "statement": "' + "x" * 1601 + '"}', "bad_message"),
    ('{"type": "manual_confirm", "options": ["a", "b", "c", "d", "e", "f"]}', "bad_message"),
    ('{"type": "hello", "token": "short"}', "bad_message"),
    ('{"type": "ping", "extra": 1}', "bad_message"),
    ('{"type": "hand_over"}', "bad_message"),  # to whom?
    ('{"type": "hand_over", "name": "' + "x" * 41 + '"}', "bad_message"),
    ('{"type": "take_lead", "name": "Bob"}', "bad_message"),  # the lead is taken for oneself only
    ('{"type": "ping", "pad": "' + "x" * MAX_MESSAGE + '"}', "too_large"),
]


@pytest.mark.parametrize("text,code", BAD)
def test_bad_messages_are_refused_with_a_reason(text, code) -> None:
    with pytest.raises(BadMessage) as caught:
        parse(text)
    assert caught.value.code == code and str(caught.value)


def test_room_codes_are_long_random_and_forgiving_to_type() -> None:
    codes = {new_room_code() for _ in range(2000)}
    assert len(codes) == 2000
    assert all(len(c) == 11 and c[5] == "-" and set(c.replace("-", "")) <= set(ALPHABET) for c in codes)
    code = next(iter(codes))
    assert normalize_code(code.lower().replace("-", " ")) == code


def connect(client, code: str, token: str | None = None) -> Browser:
    ws = client.websocket_connect(f"/ws/{code}").__enter__()
    b = Browser(ws)
    if token:
        b.hello(token)
    return b


def test_socket_errors_do_not_end_the_connection(client) -> None:
    code = create_room(client)
    token = join(client, code, "Ann")
    with client.websocket_connect(f"/ws/{code}") as ws:
        b = Browser(ws)
        b.send(type="start")
        assert b.error()["code"] == "not_authenticated"
        ws.send_text("{{{")
        assert b.error()["code"] == "bad_message"
        ws.send_bytes(b"\x00\x01")
        assert b.error()["code"] == "bad_message"
        b.hello(token)
        b.send(type="ping")
        assert b.receive() == {"type": "pong"}
        b.send(type="choose", round=1, choice="x")
        assert b.error()["code"] == "not_your_turn"
        b.send(type="clarify", round=1, statement="hi")
        assert b.error()["code"] == "not_your_turn"
        b.send(type="end_game")
        assert b.error()["code"] == "wrong_phase"


def test_a_wrong_token_or_another_rooms_token_is_refused_and_closed(client) -> None:
    code, other = create_room(client), create_room(client)
    join(client, code, "Ann")
    foreign = join(client, other, "Eve")
    for token in ("0" * 32, foreign):
        with client.websocket_connect(f"/ws/{code}") as ws:
            b = Browser(ws)
            b.send(type="hello", token=token)
            assert b.error()["code"] == "bad_token"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == 4401


def test_unknown_room_and_foreign_origin_are_refused_with_a_reason(client) -> None:
    with client.websocket_connect("/ws/AAAAA-BBBBB") as ws:
        b = Browser(ws)
        b.send(type="hello", token="0" * 32)
        assert b.error()["code"] == "bad_token"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
    assert closed.value.code == 4401 and "join again" in closed.value.reason
    code = create_room(client)
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect(
        f"/ws/{code}", headers={"origin": "http://evil.example"}
    ) as ws:
        ws.receive_text()
    assert closed.value.code == 4403 and "another site" in closed.value.reason


def test_oversized_message_closes_the_connection(client) -> None:
    code = create_room(client)
    token = join(client, code, "Ann")
    with client.websocket_connect(f"/ws/{code}") as ws:
        Browser(ws).hello(token)
        ws.send_text("x" * (MAX_MESSAGE + 1))
        b = Browser(ws)
        assert b.error()["code"] == "too_large"
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                ws.receive_text()
        assert closed.value.code == 1009


def test_flooding_is_rate_limited_then_closed(client) -> None:
    code = create_room(client)
    token = join(client, code, "Ann")
    with client.websocket_connect(f"/ws/{code}") as ws:
        b = Browser(ws).hello(token)
        for _ in range(120):
            ws.send_text('{"type": "ping"}')
        codes = []
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                msg = b.receive()
                codes.append(msg.get("code") or msg["type"])
        assert closed.value.code == 1008
        assert codes.count("pong") <= 40 and "rate_limited" in codes


def test_only_the_leader_runs_the_room(client) -> None:
    code = create_room(client)
    ann_token, bob_token = join(client, code, "Ann"), join(client, code, "Bob")
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(ann_token), Browser(wb).hello(bob_token)
        for msg in ({"type": "start"}, {"type": "end_game"}, {"type": "drop", "name": "Ann"},
                    {"type": "manual_sentence", "sentence": "I sat by the bank.", "word": "bank"}):
            bob.send(**msg)
            assert bob.error()["code"] == "not_leader"
        ann.send(type="drop", name="Ann")
        assert ann.error()["code"] == "no_such_person"
        ann.send(type="start")
        ann.send(type="start")
        assert ann.error()["code"] == "wrong_phase"


def test_votes_are_checked_against_the_request_round_and_options(client) -> None:
    code = create_room(client)
    ann_token, bob_token = join(client, code, "Ann"), join(client, code, "Bob")
    with client.websocket_connect(f"/ws/{code}") as wa, client.websocket_connect(f"/ws/{code}") as wb:
        ann, bob = Browser(wa).hello(ann_token), Browser(wb).hello(bob_token)
        ann.send(type="start")
        bob.send(type="choose", round=0, choice="x")  # only the leader announces
        assert bob.error()["code"] == "not_your_turn"
        ann.vote()
        ann.vote()
        req = bob.request()
        bob.send(type="choose", round=req["round"], choice="<script>alert(1)</script>")
        assert bob.error()["code"] == "not_an_option"
        bob.send(type="choose", round=req["round"] + 1, choice=bob.options()[0])
        ahead = bob.error()
        assert ahead["code"] == "round_closed" and ahead["message"] == \
            f"Round {req['round'] + 1} has not started; this is round {req['round']}.", "a future round is not 'closed'"
        bob.send(type="choose", round=req["round"] - 1, choice=bob.options()[0])
        behind = bob.error()
        assert behind["code"] == "round_closed" and behind["message"] == \
            f"Round {req['round'] - 1} is closed; this is round {req['round']}."
        bob.send(type="choose", round=req["round"], choice=bob.options()[0])  # no justification: the schema wants one
        assert bob.error()["code"] == "bad_answer"
        bob.send(type="choose", round=req["round"], choice=bob.options()[0], justification="x" * 161)
        refused = bob.error()
        assert refused["code"] == "bad_answer" and "limit of 160 characters" in refused["message"], \
            "a person's justification has a model's limit, and is told so"
        bob.send(type="choose", round=req["round"], choice=bob.options()[0], justification="mine")
        bob.phase("over")
        bob.send(type="choose", round=req["round"], choice=bob.options()[0])  # after the round closed
        assert bob.error()["code"] == "not_your_turn"
        ann.send(type="choose", round=1, choice=ann.options()[0])  # twice: the first vote stands
        assert ann.error()["code"] == "not_your_turn"


def test_joining_checks_names_and_room_size(client) -> None:
    code = create_room(client, max_people=2, agents=[{"name": "bot", "model": "scripted/first"}])
    assert client.post(f"/api/rooms/{code}/join", json={"name": "<b>x</b>"}).json()["code"] == "bad_name"
    join(client, code, "Ann")
    assert client.post(f"/api/rooms/{code}/join", json={"name": "ann"}).json()["code"] == "name_taken"
    assert client.post(f"/api/rooms/{code}/join", json={"name": "BOT"}).json()["code"] == "name_taken"
    join(client, code, "Bob")
    r = client.post(f"/api/rooms/{code}/join", json={"name": "Cyd"})
    assert r.status_code == 409 and r.json()["code"] == "room_full"
    assert client.post("/api/rooms/NOPE0-NOPE0/join", json={"name": "Dan"}).status_code == 404


def test_room_settings_are_validated(client) -> None:
    r = client.post("/api/rooms", json={"agents": [{"name": "x", "model": "openai/gpt-4o"}]})
    assert r.status_code == 400 and "not offered" in r.json()["message"]
    r = client.post("/api/rooms", json={"dataset": "/etc/passwd"})
    assert r.status_code == 400 and "No coordination items '/etc/passwd' on this server" in r.json()["message"]
    assert client.post("/api/rooms", json={"clarification_bound": 99}).status_code == 422
    assert client.post("/api/rooms", json={"mode": "chaos"}).status_code == 422


def test_pages_carry_a_strict_content_security_policy(client) -> None:
    for path in ("/", "/r/ABCDE-FGHJK", "/static/room.js"):
        r = client.get(path)
        assert r.status_code == 200
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff"
    room_js = client.get("/static/room.js").text
    assert ".innerHTML" not in room_js and "insertAdjacentHTML" not in room_js and "document.write" not in room_js


def test_lookups_are_rate_limited_per_address(db) -> None:
    from fastapi.testclient import TestClient

    from lexicoord.web.app import create_app
    from tests.web.conftest import make_services

    with TestClient(create_app(make_services(db), http_rate=0.01, http_burst=5)) as c:
        statuses = [c.get("/api/rooms/AAAAA-BBBBB").status_code for _ in range(8)]
    assert statuses[:5] == [404] * 5 and statuses[5:] == [429] * 3


def test_each_protocols_page_part_is_served_from_its_adapter_only(client) -> None:
    r = client.get("/adapters/coordination.js")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
    assert "adapters.coordination" in r.text
    for name in ("debate", "nope", "..%2F..%2Fetc%2Fpasswd"):  # no room adapter, unknown, a path
        assert client.get(f"/adapters/{name}.js").status_code == 404, name


def test_every_answer_says_how_long_the_server_took(client) -> None:
    import re

    for path in ("/", "/api/offer", "/no-such-page"):
        timing = client.get(path).headers.get("server-timing", "")
        found = re.fullmatch(r"app;dur=(\d+\.\d)", timing)
        assert found and 0 <= float(found.group(1)) < 10_000, (path, timing)
