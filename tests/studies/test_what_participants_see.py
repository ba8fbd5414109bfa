"""What the others in a study's room are told when a participant drops out: the seat a model took over is
shown as played by an agent (the frame's ``played_by``), not as a person who left, through a restart too;
the group's later games, which leave that seat out, show it as left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.studies.conftest import Participant, one_stays_one_never_comes, play_out, serving, short_grace, values


def person(state: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in state["room"]["people"] if p["name"] == name)


def test_the_others_see_a_dropped_participants_seat_as_played_by_an_agent(db: Path) -> None:
    with serving(db, values(group={"games": 2}), tune=short_grace) as (client, part):
        stay, leave, browser = one_stays_one_never_comes(client, part)
        first = person(browser.state or {}, "Person 2")
        assert first["played_by"] is None  # the seat is still the person's (for a moment)
        seen = browser.until(lambda s: person(s, "Person 2")["played_by"] is not None)
        assert person(seen, "Person 2")["played_by"] == "scripted/first"
        assert person(seen, "Person 1")["played_by"] is None
        assert leave.until("done")["outcome"] == "dropped"
        assert seen["room"]["phase"] == "playing"  # said while the game the model took over is played
        token = stay.token
        part.study.file.dropout.grace = 600  # the server stops next: "stay" is not taken over as its page closes
    # A restart in the middle of that game: the others still see the seat as the model's, not as left.
    with serving(db, values(group={"games": 2}), tune=short_grace) as (client, part):
        stay = Participant(client, "stay")
        stay.token = token
        assert stay.enter()["stage"] == "game"
        browser = stay.play()
        again = browser.until(lambda s: s["room"]["phase"] == "playing")
        assert person(again, "Person 2")["absent"] and person(again, "Person 2")["played_by"] == "scripted/first"
        # Before a replayed game reaches the takeover again (a seat that had moved first), the room knows only
        # that the study marked the person absent: at the table being replayed, that is the model's seat too.
        room = client.app.state.rooms.get(part.study.state.groups["g1"].room)
        taken, room.game.taken = room.game.taken, {}
        seat = next(p for p in room.broadcast.public().people if p.name == "Person 2")
        room.game.taken = taken
        assert seat.played_by == "scripted/first"
        browser.vote(0)  # the announcement, then round 1's choice: everyone picks the first meaning
        browser.vote(0)
        # The group's second game leaves the dropped seat out: it is no one's now, so it shows as left.
        later = browser.until(lambda s: s["room"]["phase"] == "playing" and (s["room"]["game"] or {}).get("number") == 2)
        assert [p["name"] for p in later["room"]["game"]["players"] if p["kind"] == "human"] == ["Person 1"]
        assert person(later, "Person 2")["absent"] and person(later, "Person 2")["played_by"] is None
        play_out(browser)
        stay.until("survey")

