"""Protocols are found through entry points, the built-ins exactly as a third party's."""

import pytest

from lexicoord.core.protocol import Protocol
from lexicoord.core.registry import ProtocolEntry, get_protocol, protocols, register_protocol
from lexicoord.errors import ConfigError
from lexicoord.protocols.coordination import CoordinationGame, CoordinationOutcome, CoordinationSettings
from lexicoord.protocols.debate import DebateOutcome, DebateStudy


def test_the_built_in_protocols_are_registered() -> None:
    known = protocols()
    assert {"coordination", "debate"} <= set(known)
    coord, study = known["coordination"], known["debate"]
    assert coord.protocol is CoordinationGame and study.protocol is DebateStudy
    assert coord.protocol.settings_model is CoordinationSettings and coord.protocol.outcome_model is CoordinationOutcome
    assert study.protocol.outcome_model is DebateOutcome
    assert all(issubclass(e.protocol, Protocol) and e.summary for e in known.values())
    assert get_protocol("coordination") == coord


def test_a_protocol_nobody_installed_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"No protocol 'nope' is installed; known: cogent, coordination, debate, gate, werewolf"):
        get_protocol("nope")


def test_each_built_in_report_can_be_found() -> None:
    for name in ("coordination", "debate", "cogent", "werewolf"):
        assert callable(get_protocol(name).report_writer()) and callable(get_protocol(name).statistics_reader())
    from lexicoord.web.adapters.base import RoomAdapter

    for name in ("coordination", "debate", "cogent"):
        room = get_protocol(name).room_adapter()
        assert issubclass(room, RoomAdapter) and room.protocol == name
    bare = get_protocol("debate").model_copy(update={"room": None})
    with pytest.raises(ConfigError, match="'debate' has no room"):
        bare.room_adapter()


@pytest.fixture
def echo_removed():
    """The test registers a protocol; take it out again so later tests see the installed protocols only."""
    yield
    from lexicoord.core import registry

    registry.unregister_protocol("echo-test")


def test_a_registered_protocol_is_listed(echo_removed) -> None:
    class Echo(Protocol):
        name = "echo-test"

        async def play(self, ctx):  # pragma: no cover - never played here
            raise NotImplementedError

    register_protocol(ProtocolEntry(name="echo-test", summary="a test protocol", protocol=Echo))
    assert get_protocol("echo-test").protocol is Echo and "echo-test" in protocols()
    with pytest.raises(ConfigError, match="known: .*echo-test"):
        get_protocol("nope")


async def test_each_protocol_s_statistics_are_computed_from_stored_events(tmp_path) -> None:
    """The registry's statistics function of each built-in reads a stored run (no re-run)."""
    from lexicoord.core.spec import AgentSpec
    from lexicoord.runs.grid import grid
    from lexicoord.runs.runner import Runner
    from lexicoord.runs.store import Store
    from lexicoord.tasks.ambiguous import builtin_items
    from lexicoord.tasks.instructions import generated_instructions

    store = Store(str(tmp_path / "s.db"))
    coord = get_protocol("coordination")
    lineup = [AgentSpec(name="l", kind="simulated", options={"policy": "first"}),
              AgentSpec(name="p", kind="simulated", options={"policy": "first"})]
    await Runner(store, coord.protocol()).run(
        "c", grid([i.as_task() for i in builtin_items()[:3]], [lineup]))
    stats = coord.statistics_reader()(store.iter_run_events("c"))
    assert stats.games == 3 and stats.converged == 3, "two first-option players agree at once"

    study = get_protocol("debate")
    solo = [AgentSpec(name="s", model="scripted/first", role="single")]
    await Runner(store, study.protocol()).run(
        "a", grid([i.as_task() for i in generated_instructions(1)[:2]], [solo], settings=[{"condition": "single"}]))
    stats = study.statistics_reader()(store.iter_run_events("a"))
    assert stats.episodes == 2 and stats.failed == 0 and [c.config for c in stats.configs] == ["Single(first)"]
