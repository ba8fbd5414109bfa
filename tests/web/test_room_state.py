"""A room's saved state is a versioned model; rooms saved before it was versioned read and upgrade in place."""

from lexicoord.protocols.coordination.room import CoordinationState
from lexicoord.web.room import RoomState

OLD = {"people": [{"name": "Ann", "token_hash": "ab" * 32, "joined_at": 1.0, "absent": False}], "phase": "playing",
       "cursor": 2, "games": 3, "current": {"number": 3, "spec": {"item_id": "x"}, "seed": 9}, "manual": None,
       "leader": "Ann"}


def test_the_first_layout_upgrades_to_version_one() -> None:
    state = RoomState.model_validate(OLD)
    assert state.version == 1 and state.leader == "Ann" and [p.name for p in state.people] == ["Ann"]
    game = CoordinationState.model_validate(state.game)
    assert (game.phase, game.cursor, game.games) == ("playing", 2, 3)
    assert game.current is not None and game.current.number == 3 and game.current.seed == 9


def test_a_saved_state_reads_back_as_it_was_written() -> None:
    state = RoomState(people=[], leader=None, game=CoordinationState(phase="over", games=1).model_dump())
    again = RoomState.model_validate(state.model_dump(mode="json"))
    assert again == state and again.game["phase"] == "over"
