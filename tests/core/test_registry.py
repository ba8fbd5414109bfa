"""Protocols are found through entry points, the built-ins exactly as a third party's."""

import dataclasses

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
    assert coord.rules() is CoordinationGame and study.rules() is DebateStudy
    assert coord.rules().settings_model is CoordinationSettings and coord.rules().outcome_model is CoordinationOutcome
    assert study.rules().outcome_model is DebateOutcome
    assert all(issubclass(e.rules(), Protocol) and e.summary for e in known.values())
    assert get_protocol("coordination") == coord


READ_REGISTRY = """
import sys
from lexicoord.core.registry import protocols
names = sorted(protocols())
loaded = sorted(m for m in sys.modules if m.startswith(("lexicoord.protocols.", "lexicoord.gate.")))
print(names, loaded)
"""


def test_reading_the_registry_imports_no_protocols_rules() -> None:
    """What ``lexicoord --help`` and a report of one protocol's run read: names and where things are, no rules."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", READ_REGISTRY], capture_output=True, text=True, check=True).stdout
    names, loaded = out.split("] [")
    assert "coordination" in names and "werewolf" in names
    assert "rules" not in loaded and "study" not in loaded and "protocol'" not in loaded, loaded


def test_a_stored_event_of_a_protocol_whose_rules_were_never_imported_reads_back_as_its_own_type() -> None:
    import subprocess
    import sys

    code = ("from lexicoord.core.events import event_from_dict\n"
            "e = event_from_dict({'type': 'clarification', 'content': 'which bank?', 'agent': 'p1'})\n"
            "print(type(e).__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "lexicoord.protocols.coordination.rules"


@pytest.mark.parametrize("bad", ["lexicoord.protocols.coordination.rules", 42, ConfigError])
def test_an_entry_whose_protocol_is_neither_a_class_nor_module_colon_class_is_refused(bad) -> None:
    with pytest.raises(ConfigError, match="Protocol entry 'bad': protocol must be"):
        ProtocolEntry(name="bad", summary="bad", protocol=bad)


@pytest.mark.parametrize(("field", "value", "said"), [
    ("name", None, "name must be a string, not None"),
    ("summary", 3, "summary must be a string, not 3"),
    ("task", ["lexicoord.tasks:T"], "task must be a string"),
    ("room", b"lexicoord.web:Room", "room must be a string"),
    ("aliases", "cg", "aliases must be a list of names, not 'cg'"),
    ("aliases", ["cg", 2], "aliases must be a list of names"),
])
def test_an_entry_with_a_field_of_the_wrong_type_is_refused_naming_the_field(field, value, said) -> None:
    given = {"name": "odd", "summary": "odd", "protocol": "lexicoord.protocols.coordination.rules:Coordination",
             field: value}
    with pytest.raises(ConfigError, match=f"Protocol entry '[^']*': {said}"):
        ProtocolEntry(**given)


def test_an_entry_takes_its_aliases_as_a_list_and_is_frozen() -> None:
    import dataclasses

    entry = ProtocolEntry(name="c", summary="c", protocol="m:C", aliases=["cg", "co"])
    assert entry.aliases == ("cg", "co") and entry.title is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.name = "d"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ProtocolEntry("c", "c", "m:C")  # type: ignore[misc]


def test_an_entry_whose_rules_cannot_be_imported_says_which_protocol_and_field() -> None:
    entry = ProtocolEntry(name="gone", summary="gone", protocol="lexicoord.nowhere:Rules")
    with pytest.raises(ConfigError, match="Protocol 'gone': its protocol 'lexicoord.nowhere:Rules' cannot be loaded"):
        entry.rules()


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
    bare = dataclasses.replace(get_protocol("debate"), room=None)
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
    assert get_protocol("echo-test").rules() is Echo and "echo-test" in protocols()
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
    await Runner(store, coord.rules()()).run(
        "c", grid([i.as_task() for i in builtin_items()[:3]], [lineup]))
    stats = coord.statistics_reader()(store.iter_run_events("c"))
    assert stats.games == 3 and stats.converged == 3, "two first-option players agree at once"

    study = get_protocol("debate")
    solo = [AgentSpec(name="s", model="scripted/first", role="single")]
    await Runner(store, study.rules()()).run(
        "a", grid([i.as_task() for i in generated_instructions(1)[:2]], [solo], settings=[{"condition": "single"}]))
    stats = study.statistics_reader()(store.iter_run_events("a"))
    assert stats.episodes == 2 and stats.failed == 0 and [c.config for c in stats.configs] == ["Single(first)"]
