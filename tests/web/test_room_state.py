"""A room's saved state is a versioned model; rooms saved in older layouts read and upgrade in place: before
states were versioned (the game's fields beside the people), and version 1 (the room's record of its games
inside the adapter's state)."""

from lexicoord.protocols.coordination.room import CoordinationState
from lexicoord.web.room_state import Played, RoomState

OLD = {"people": [{"name": "Ann", "token_hash": "ab" * 32, "joined_at": 1.0, "absent": False}], "phase": "playing",
       "cursor": 2, "games": 3, "current": {"number": 3, "spec": {"item_id": "x"}, "seed": 9}, "manual": None,
       "leader": "Ann"}


def test_the_first_layout_upgrades_to_the_newest() -> None:
    state = RoomState.model_validate(OLD)
    assert state.version == 2 and state.leader == "Ann" and [p.name for p in state.people] == ["Ann"]
    assert (state.played.phase, state.played.games) == ("playing", 3)
    assert state.played.current is not None and state.played.current.number == 3 and state.played.current.seed == 9
    game = CoordinationState.model_validate(state.game)
    assert (game.phase, game.cursor, game.manual) == (None, 2, None)


def test_version_one_moves_the_rooms_record_of_its_games_out_of_the_adapters_state() -> None:
    v1 = {"version": 1, "people": [], "leader": None, "creator": "10.0.0.0/24",
          "game": {"version": 1, "phase": "over", "games": 2, "current": None, "cursor": 5}}
    state = RoomState.model_validate(v1)
    assert state.version == 2 and state.creator == "10.0.0.0/24"
    assert state.played == Played(phase="over", games=2) and state.game == {"version": 1, "cursor": 5}


def test_a_phase_of_the_adapters_own_stays_the_adapters() -> None:
    """Manual mode's phases were saved as the room's phase: the room is now in a phase of its adapter's own."""
    manual = {"sentence": "The bank was steep.", "word": "bank", "awaiting": ["Ann"]}
    v1 = {"version": 1, "people": [], "game": {"version": 1, "phase": "proposing", "games": 1, "cursor": 1,
                                               "manual": manual}}
    state = RoomState.model_validate(v1)
    assert (state.played.phase, state.played.games, state.played.current) == ("own", 1, None)
    game = CoordinationState.model_validate(state.game)
    assert game.phase == "proposing" and game.manual is not None and game.manual.awaiting == ["Ann"]


def test_a_saved_state_reads_back_as_it_was_written() -> None:
    state = RoomState(people=[], leader=None, played=Played(phase="over", games=1),
                      game=CoordinationState(phase="confirm", cursor=1).model_dump())
    again = RoomState.model_validate(state.model_dump(mode="json"))
    assert again == state and again.played.phase == "over" and again.game["phase"] == "confirm"
