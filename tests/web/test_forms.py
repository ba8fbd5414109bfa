"""Room settings become start-page fields from the settings model alone, with the operator's choices."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lexicoord.web.forms import protocol_fields
from lexicoord.web.settings import AgentSeat, RoomSettings


class MadeUp(RoomSettings):
    variant: Literal["a", "b", "c"] = Field(default="b", description="Variant")
    rounds: int = Field(default=3, ge=1, le=9)
    share: bool = False
    temperature_scale: float = Field(default=0.5, gt=0, lt=2)
    note: str = Field(default="", max_length=40)
    corpus: str = "x"
    extra: list[AgentSeat] = []


def test_fields_come_from_the_model_and_choices_from_the_operator() -> None:
    fields = {f.name: f for f in protocol_fields(MadeUp, {"corpus": ["alpha", "beta"]})}
    assert list(fields) == ["variant", "rounds", "share", "temperature_scale", "note", "corpus"], \
        "every room's own fields (agents, timeouts) stay out; lists are not asked for"
    assert fields["variant"].kind == "choice" and fields["variant"].choices == ["a", "b", "c"]
    assert fields["variant"].default == "b" and fields["variant"].label == "Variant"
    assert (fields["rounds"].kind, fields["rounds"].min, fields["rounds"].max) == ("int", 1, 9)
    assert fields["share"].kind == "bool" and fields["share"].default is False
    assert (fields["temperature_scale"].kind, fields["temperature_scale"].min) == ("number", 0)
    assert fields["note"].kind == "text" and fields["note"].max_length == 40
    assert fields["corpus"].kind == "choice" and fields["corpus"].choices == ["alpha", "beta"]
    assert fields["corpus"].default == "alpha", "a default the operator does not offer is not offered"


def test_the_offer_lists_each_protocol_with_its_fields(client) -> None:
    offer = client.get("/api/offer").json()
    [coordination] = [p for p in offer["protocols"] if p["name"] == "coordination"]
    fields = {f["name"]: f for f in coordination["fields"]}
    assert fields["dataset"]["choices"] == ["builtin"], "only the datasets the server was started with"
    assert fields["mode"]["choices"] == ["automatic", "manual"] and fields["clarification_bound"]["max"] == 10
    assert "LexiCoord" in coordination["summary"]


def test_the_offer_puts_the_coordination_game_first_under_a_title(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from lexicoord.web.app import create_app
    from tests.web.conftest import make_services

    services = make_services(tmp_path / "rooms.db")
    services.protocols = ["debate", "cogent", "coordination", "werewolf"]  # the registry's order: debate first
    with TestClient(create_app(services, allowed_hosts=["testserver"])) as client:
        offer = client.get("/api/offer").json()
    assert offer["default_protocol"] == "coordination" == offer["protocols"][0]["name"]
    assert [p["name"] for p in offer["protocols"]][1:] == ["debate", "cogent", "werewolf"]
    titles = {p["name"]: p["title"] for p in offer["protocols"]}
    assert titles["coordination"] == "Coordination game: agree on what a word means"
    assert titles["debate"].startswith("Ambiguous robot instructions") and titles["werewolf"].startswith("Werewolf")
    assert all(title != name and " " in title for name, title in titles.items())


def test_a_protocol_without_a_built_in_title_takes_its_summary_s_head() -> None:
    from lexicoord.web.services import protocol_title

    assert protocol_title("mygame", "My Game: two seats and a board") == "My Game"
    assert protocol_title("mygame", "no colon in this summary at all, only a long description of it") == "mygame"
