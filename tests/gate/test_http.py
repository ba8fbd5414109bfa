"""The gate over HTTP (``lexicoord.gate.http``) on scripted models: the API's statuses, its key, the person's
page and its token, and every bad request refused with an error status (never a verdict)."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from lexicoord.gate import Gate, Verdict
from lexicoord.gate.http import KEY_ENV, MAX_BODY, STATIC, decide_key, gate_app, loopback_only
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import Script
from lexicoord.models.registry import get_model
from tests.conftest import free_port
from tests.gate.conftest import proposal, scripted

ASKS = {"agent": [proposal("ambiguous", "Which cup?")], "agent-2": [proposal("clear")]}
CLEARS = {"agent": [proposal("clear")]}
CUPS = ["the red cup", "the blue cup"]
HOSTILE = "Bring me the cup <img src=x onerror=alert(1)> now"

Serve = Callable[..., TestClient]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """``serve(script, key=None, latency=0)``: the gate alone (``gate_app``) on a fresh scripted model."""
    with contextlib.ExitStack() as stack:

        def make(script: Script, *, key: str | None = None, latency: float = 0.0, **options: Any) -> TestClient:
            spec = scripted(script)
            pool = ModelPool(cache=False)
            pool.add(get_model(spec, cache=False, latency=latency), spec)
            gate = Gate("single", [spec], db=str(tmp_path / "gate.db"), pool=pool, **options)
            return stack.enter_context(TestClient(gate_app(gate, key=key)))

        yield make


def page_token(verdict: dict[str, Any]) -> tuple[str, str]:
    path = verdict["answer_path"]
    match = re.fullmatch(r"/g/([0-9a-f]+)\?t=(.+)", path)
    assert match, path
    return match.group(1), match.group(2)


def check(client: TestClient, instruction: str = "Bring me the cup.", **body: Any) -> httpx.Response:
    return client.post("/api/gate/check", json={"instruction": instruction, **body})


# the API ----------------------------------------------------------------------------------------------
def test_a_clear_instruction_is_200_with_the_verdict(serve: Serve) -> None:
    r = check(serve(CLEARS), "Open the door.", context="A hallway.")
    assert r.status_code == 200, r.text
    verdict = Verdict.model_validate(r.json())
    assert verdict.status == "clear" and verdict.answer_path is None and verdict.instruction == "Open the door."
    assert r.headers["cache-control"] == "no-store"


def test_ask_then_an_answer_then_clear(serve: Serve) -> None:
    client = serve(ASKS)
    asked = check(client).json()
    assert asked["status"] == "ask" and asked["question"] == "Which cup?" and asked["answer_path"]
    r = client.post(f"/api/gate/{asked['gate_id']}/answer", json={"text": "The blue one"})
    assert r.status_code == 200, r.text
    done = r.json()
    assert done["status"] == "clear" and done["clarifications"][0]["text"] == "The blue one"
    assert client.get(f"/api/gate/{asked['gate_id']}").json()["status"] == "clear"


def test_a_slow_model_is_202_with_location_and_the_verdict_follows(serve: Serve) -> None:
    client = serve(CLEARS, latency=0.6)
    r = check(client, "Open the door.", wait_s=0)
    assert r.status_code == 202, r.text
    assert r.json()["status"] == "pending"
    location = r.headers["location"]
    assert location == f"/api/gate/{r.json()['gate_id']}"
    deadline = time.monotonic() + 10
    while (now := client.get(location).json())["status"] == "pending":
        assert time.monotonic() < deadline, now
        time.sleep(0.1)
    assert now["status"] == "clear"


def events_of(body: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: "):]) for line in body.splitlines() if line.startswith("data: ")]


@contextlib.contextmanager
def on_a_port(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port, in a thread: a stream read as it comes (the test client
    hands a response over only once it is whole)."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(15)


def test_the_event_stream_says_ask_then_clear_and_ends(tmp_path: Path) -> None:
    gate = Gate("single", [scripted(ASKS)], db=str(tmp_path / "gate.db"))
    with on_a_port(gate_app(gate, key=None)) as base:
        asked = httpx.post(f"{base}/api/gate/check", json={"instruction": "Bring me the cup."}, timeout=20).json()
        with httpx.stream("GET", f"{base}/api/gate/{asked['gate_id']}/events", timeout=20) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            lines = r.iter_lines()
            first = next(line for line in lines if line.startswith("data: "))
            assert json.loads(first[len("data: "):])["status"] == "ask"
            answered = httpx.post(f"{base}/api/gate/{asked['gate_id']}/answer", json={"text": "blue"}, timeout=20)
            assert answered.status_code == 200
            rest = [json.loads(line[len("data: "):])["status"] for line in lines if line.startswith("data: ")]
    assert rest and rest[-1] == "clear" and set(rest) <= {"pending", "clear"}


def test_a_quiet_stream_says_it_is_alive_and_ends_with_the_verdict(serve: Serve,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lexicoord.gate.http.KEEPALIVE", 0.05)
    client = serve(CLEARS, latency=0.5)
    started = check(client, "Open the door.", wait_s=0).json()
    r = client.get(f"/api/gate/{started['gate_id']}/events")
    assert ": deciding" in r.text.splitlines()
    assert [e["status"] for e in events_of(r.text)] == ["pending", "clear"]


def test_a_final_verdict_streams_once(serve: Serve) -> None:
    client = serve(CLEARS)
    done = check(client, "Open the door.").json()
    r = client.get(f"/api/gate/{done['gate_id']}/events")
    assert [e["status"] for e in events_of(r.text)] == ["clear"]


def test_the_key_is_needed_when_set(serve: Serve) -> None:
    client = serve(ASKS, key="s3cret-key")
    assert check(client).status_code == 401
    bad = client.post("/api/gate/check", json={"instruction": "x"}, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.headers["www-authenticate"] == "Bearer"
    assert client.get("/api/gate/anything").status_code == 401
    r = client.post("/api/gate/check", json={"instruction": "Bring me the cup."},
                    headers={"Authorization": "Bearer s3cret-key"})
    assert r.status_code == 200 and r.json()["status"] == "ask"
    gate_id, token = page_token(r.json())
    # The person's page needs its token, not the key.
    assert client.get(f"/g/{gate_id}/state", params={"t": token}).status_code == 200


def test_the_key_is_decided_by_where_the_server_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        assert loopback_only(host) and decide_key(host) == (None, False)
    key, made = decide_key("0.0.0.0")
    assert made and key and len(key) >= 40 and decide_key("0.0.0.0")[0] != key
    assert decide_key("192.168.1.5")[1] and decide_key("::")[1]
    # on loopback behind a proxy, or answering a public name, the callers are elsewhere: a key too
    assert decide_key("127.0.0.1", proxied=True)[1] and decide_key("127.0.0.1", public_names=True)[1]
    monkeypatch.setenv(KEY_ENV, "chosen")
    assert decide_key("127.0.0.1") == ("chosen", False) and decide_key("0.0.0.0") == ("chosen", False)


def test_an_unknown_gate_is_404(serve: Serve) -> None:
    client = serve(CLEARS)
    for r in (client.get("/api/gate/nope"), client.get("/api/gate/nope/events"),
              client.post("/api/gate/nope/answer", json={"text": "x"}),
              client.get("/g/nope", params={"t": "x"}), client.get("/g/nope/state", params={"t": "x"}),
              client.post("/g/nope/answer", params={"t": "x"}, json={"text": "x"})):
        assert r.status_code == 404, (r.request.url, r.text)


# bad requests -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("instruction", ["", "   \n "], ids=["empty", "blank"])
def test_an_empty_instruction_is_422(serve: Serve, instruction: str) -> None:
    r = check(serve(CLEARS), instruction)
    assert r.status_code == 422 and r.json()["detail"]


def test_a_megabyte_instruction_is_refused_unread(serve: Serve) -> None:
    r = check(serve(CLEARS), "x" * 1_000_000)
    assert r.status_code == 413 and str(MAX_BODY // 1024) in r.json()["detail"]
    chunked = serve(CLEARS).post("/api/gate/check", content=iter([b"{" + b" " * 40_000] * 30),
                                 headers={"Content-Type": "application/json"})
    assert chunked.status_code == 413


def test_an_instruction_just_over_its_limit_is_422(serve: Serve) -> None:
    r = check(serve(CLEARS), "x" * 4001)
    assert r.status_code == 422 and "4000" in r.text


def test_binary_is_422(serve: Serve) -> None:
    client = serve(CLEARS)
    raw = client.post("/api/gate/check", content=b"\x00\x01PK\x03\x04\x00\xff\xfe",
                      headers={"Content-Type": "application/json"})
    assert raw.status_code == 422
    nul = check(client, "open\x00\x01 the door")
    assert nul.status_code == 422 and "control or undecodable" in nul.text


def test_a_choice_not_offered_is_422_and_the_question_stands(serve: Serve) -> None:
    client = serve(ASKS)
    asked = check(client, candidates=CUPS).json()
    assert asked["status"] == "ask" and asked["options"] == CUPS
    r = client.post(f"/api/gate/{asked['gate_id']}/answer", json={"choice": "the green cup"})
    assert r.status_code == 422 and "not one of" in r.json()["detail"]
    assert client.post(f"/api/gate/{asked['gate_id']}/answer", json={}).status_code == 422
    assert client.get(f"/api/gate/{asked['gate_id']}").json()["status"] == "ask"
    assert client.post(f"/api/gate/{asked['gate_id']}/answer", json={"choice": "the blue cup"}).json()["status"] == "clear"


def test_a_key_reused_for_another_instruction_is_409(serve: Serve) -> None:
    client = serve(CLEARS)
    assert check(client, "Open the door.", key="step-1").status_code == 200
    r = check(client, "Close the door.", key="step-1")
    assert r.status_code == 409 and "another request" in r.json()["detail"]


def test_a_wait_out_of_bounds_is_422(serve: Serve) -> None:
    assert check(serve(CLEARS), wait_s=301).status_code == 422


def test_the_openapi_schema_shows_the_verdict(serve: Serve) -> None:
    schema = serve(CLEARS).get("/openapi.json").json()
    assert "Verdict" in schema["components"]["schemas"]
    assert {"/api/gate/check", "/api/gate/{gate_id}", "/api/gate/{gate_id}/answer",
            "/api/gate/{gate_id}/events"} <= set(schema["paths"])
    ok = schema["paths"]["/api/gate/check"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok["$ref"].endswith("/Verdict")
    assert not [p for p in schema["paths"] if p.startswith("/g/")]  # the person's page is not an API


# the person's page --------------------------------------------------------------------------------------
def test_the_page_needs_its_token_and_tells_nothing_without_it(serve: Serve) -> None:
    client = serve(ASKS)
    asked = check(client, HOSTILE, context="The secret kitchen.").json()
    gate_id, token = page_token(asked)
    for params in ({}, {"t": ""}, {"t": "forged"}, {"t": token[:-1]}, {"t": token + "x" * 300}):
        for path in (f"/g/{gate_id}", f"/g/{gate_id}/state"):
            r = client.get(path, params=params)
            assert r.status_code == 403, (path, params)
            assert "cup" not in r.text and "kitchen" not in r.text and "Which" not in r.text
        r = client.post(f"/g/{gate_id}/answer", params=params, json={"text": "the blue one"})
        assert r.status_code == 403 and "cup" not in r.text
    assert client.get(f"/api/gate/{gate_id}").json()["status"] == "ask"  # nothing was answered


def test_the_page_and_its_state(serve: Serve) -> None:
    client = serve(ASKS)
    asked = check(client, HOSTILE, context="A kitchen.", candidates=CUPS).json()
    gate_id, token = page_token(asked)
    page = client.get(f"/g/{gate_id}", params={"t": token})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'name="viewport"' in page.text and "onerror" not in page.text  # a static page: no check's text in it
    for header in ("content-security-policy", "x-content-type-options", "referrer-policy", "x-frame-options"):
        assert header in page.headers
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer"  # the token is in the address
    state = client.get(f"/g/{gate_id}/state", params={"t": token}).json()
    assert state["status"] == "ask" and state["instruction"] == HOSTILE and state["context"] == "A kitchen."
    assert state["question"] == "Which cup?" and state["options"] == CUPS
    text = json.dumps(state)
    assert token not in text and asked["run_id"] not in text and "episode_key" not in text and "seats" not in state
    r = client.post(f"/g/{gate_id}/answer", params={"t": token}, json={"choice": "the red cup"})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "clear" and r.json()["answered"][0]["choice"] == "the red cup"
    verdict = client.get(f"/api/gate/{gate_id}").json()
    assert verdict["status"] == "clear" and verdict["clarifications"][0]["choice"] == "the red cup"
    again = client.post(f"/g/{gate_id}/answer", params={"t": token}, json={"choice": "the blue cup"})
    assert again.status_code == 409 and "asks nothing" in again.json()["detail"]


def test_the_page_refuses(serve: Serve) -> None:
    client = serve(ASKS)
    gate_id, token = page_token(check(client).json())
    r = client.post(f"/g/{gate_id}/answer", params={"t": token}, json={"refuse": True})
    assert r.status_code == 200 and r.json()["status"] == "refuse"
    assert client.get(f"/api/gate/{gate_id}").json()["status"] == "refuse"


def test_the_page_serves_its_own_files_only(serve: Serve) -> None:
    client = serve(CLEARS)
    for name, kind in (("gate.js", "javascript"), ("gate.css", "css"), ("dom.js", "javascript")):
        r = client.get(f"/gate-static/{name}")
        assert r.status_code == 200 and kind in r.headers["content-type"]
    for name in ("../http.py", "gate.html", "..%2Fhttp.py", "style.css"):
        assert client.get(f"/gate-static/{name}").status_code == 404


def test_the_page_script_writes_no_markup() -> None:
    """Everything the page shows goes in as text nodes (dom.js's h(), textContent): never parsed as HTML."""
    script = (STATIC / "gate.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in script, sink
    html = (STATIC / "gate.html").read_text()
    assert "<script>" not in html and "style=" not in html and "on" + "click" not in html  # the CSP allows none


# in `lexicoord serve` -------------------------------------------------------------------------------------
def test_serve_mounts_the_gate(tmp_path: Path) -> None:
    from tests.web.conftest import serving

    config = tmp_path / "gate.toml"
    config.write_text(f'policy = "single"\nmodels = ["{scripted(CLEARS)}"]\n')
    with serving(tmp_path / "live.db", "--model", "scripted/first", "--gate-config", str(config)) as port:
        base = f"http://127.0.0.1:{port}"
        r = httpx.post(f"{base}/api/gate/check", json={"instruction": "Open the door."}, timeout=20)
        assert r.status_code == 200 and r.json()["status"] == "clear", r.text
        assert "content-security-policy" in r.headers
        assert httpx.get(f"{base}/api/offer").status_code == 200  # the rooms are still there


def test_guessing_page_tokens_is_slowed_down(serve: Serve) -> None:
    client = serve(ASKS)
    gate_id, token = page_token(check(client, HOSTILE).json())
    codes = [client.get(f"/g/{gate_id}/state", params={"t": f"guess{i}"}).status_code for i in range(80)]
    assert codes[:40] == [403] * 40 and 429 in codes  # a burst of ten seconds' worth, then the rate
    assert client.get(f"/api/gate/{gate_id}").status_code == 200  # the API's budget is its own
