"""The participant's calls answered before the app's routing give the routes' own answers, headers included, and
leave every call they do not read plainly to the routes."""

from __future__ import annotations

from pathlib import Path

import pytest

from lexicoord.studies.calls import where_query
from tests.studies.conftest import Participant, serving, values


@pytest.mark.parametrize(("raw", "read"), [
    (b"", (None, None)), (b"stage=lobby", ("lobby", None)), (b"stage=game&ready=0", ("game", 0)),
    (b"ready=-3", (None, -3)),
    # anything else is the routes' to read (and to refuse as they do)
    (b"ready=abc", None), (b"ready=1.5", None), (b"stage=", None), (b"stage=a&stage=b", None),
    (b"other=1", None), (b"stage", None), (b"ready=" + b"9" * 12, None),
])
def test_only_a_plain_query_is_read_here(raw: bytes, read: tuple[str | None, int | None] | None) -> None:
    assert where_query(raw) == read


def test_the_calls_answer_as_the_routes_do(tmp_path: Path) -> None:
    with serving(tmp_path / "s.db", values()) as (client, _):
        p = Participant(client, "calls-1")
        r = client.post(f"{p.api}/enter", json={"pid": p.pid}, headers=p.headers())
        assert r.status_code == 201 and r.json()["view"]["stage"] == "consent"
        # the app's security headers and its timing are on the answers given before the routing too
        assert r.headers["x-frame-options"] == "DENY" and r.headers["server-timing"].startswith("app;dur=")
        p.token = r.json()["token"]
        assert p.answer("consent", agree=True)["view"]["stage"] == "instructions"
        assert p.me()["stage"] == "instructions"
        assert p.answer("quiz", expect=409)  # not the participant's stage: refused, nothing changed
        # a query the fast path does not read is the routes': FastAPI's own validation answers it
        bad = client.get(f"{p.api}/me?ready=abc", headers=p.headers())
        assert bad.status_code == 422
        # another method is the routes' too (method not allowed)
        assert client.get(f"{p.api}/answer", headers=p.headers()).status_code == 405
        # without the token: the same refusal as before
        assert client.post(f"{p.api}/answer", json={"stage": "instructions"}).status_code == 401


def test_a_host_the_app_does_not_answer_to_is_refused_before_the_calls(tmp_path: Path) -> None:
    with serving(tmp_path / "s.db", values()) as (client, _):
        r = client.post("/api/studies/pilot/enter", json={"pid": "calls-2"}, headers={"host": "evil.example"})
        assert r.status_code == 400
