"""Who may see an event: the one rule every prompt and page is built from."""

import pytest
from pydantic import ValidationError

from lexicoord.core.audience import EVERYONE, Audience, Viewer, can_see, visible
from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event, MessageEvent
from lexicoord.core.recorder import Recorder
from lexicoord.core.spec import EpisodeSpec

WOLF = Viewer(name="w1", groups=frozenset({"wolves"}))
VILLAGER = Viewer(name="v1", groups=frozenset({"villagers"}))
SEER = Viewer(name="seer")
SPECTATOR = Viewer()
OMNISCIENT = Viewer(omniscient=True)


def test_everyone_is_the_default_and_everyone_sees_it() -> None:
    assert Event().audience == EVERYONE == Audience() and EVERYONE.public
    assert all(can_see(v, EVERYONE) for v in (WOLF, VILLAGER, SEER, SPECTATOR, OMNISCIENT))


def test_a_group_audience_reaches_its_members_only() -> None:
    wolves = Audience.group("wolves")
    assert wolves.kind == "group" and not wolves.public
    assert can_see(WOLF, wolves)
    assert not can_see(VILLAGER, wolves) and not can_see(SEER, wolves) and not can_see(SPECTATOR, wolves)
    assert can_see(VILLAGER, Audience.group("wolves", "villagers")), "any of the named groups"


def test_named_agents_see_it_and_nobody_else() -> None:
    private = Audience.only("seer", "w1")
    assert private.kind == "agents" and private.agents == ("seer", "w1")
    assert can_see(SEER, private) and can_see(WOLF, private)
    assert not can_see(VILLAGER, private) and not can_see(SPECTATOR, private)
    assert not can_see(Viewer(name="x", groups=frozenset({"seer"})), private), "a group is not a name"
    assert Audience.only("a", None, "") == Audience.only("a"), "a missing name is dropped"
    assert not can_see(SPECTATOR, Audience.only(None)), "no name matches a spectator"


def test_a_spectator_sees_public_events_only_and_an_omniscient_one_everything() -> None:
    audiences = [EVERYONE, Audience.group("wolves"), Audience.only("seer"), Audience.only()]
    assert [can_see(SPECTATOR, a) for a in audiences] == [True, False, False, False]
    assert all(can_see(OMNISCIENT, a) for a in audiences)


def test_visible_keeps_the_order_and_filters_by_viewer() -> None:
    events = [
        MessageEvent(content="hello all", seq=0),
        MessageEvent(content="wolves plot", audience=Audience.group("wolves"), seq=1),
        MessageEvent(content="seer learns", audience=Audience.only("seer"), seq=2),
        MessageEvent(content="morning", seq=3),
    ]
    assert [e.seq for e in visible(events, WOLF)] == [0, 1, 3]
    assert [e.seq for e in visible(events, SEER)] == [0, 2, 3]
    assert [e.seq for e in visible(events, SPECTATOR)] == [0, 3]
    assert [e.seq for e in visible(events, OMNISCIENT)] == [0, 1, 2, 3]


def test_an_episode_context_shows_each_seat_what_its_name_and_groups_allow() -> None:
    ctx = EpisodeContext(spec=EpisodeSpec(item_id="x"), seed=0)
    ctx.join("w1", "wolves")
    ctx.join("w2", "wolves")
    ctx.recorder.round, ctx.recorder.phase = 1, "night"
    ctx.emit(MessageEvent(content="kill v1", audience=Audience.group("wolves")))
    ctx.recorder.phase = "day"
    ctx.emit(MessageEvent(content="v1 is gone"))
    ctx.emit(MessageEvent(content="w1 is a wolf", audience=Audience.only("seer")))
    assert [e.content for e in ctx.visible_to("w2")] == ["kill v1", "v1 is gone"]
    assert [e.content for e in ctx.visible_to("seer")] == ["v1 is gone", "w1 is a wolf"]
    assert [e.content for e in ctx.visible_to(None)] == ["v1 is gone"]
    assert ctx.viewer("w1") == Viewer(name="w1", groups=frozenset({"wolves"}))
    assert [(e.seq, e.round, e.phase) for e in ctx.recorder.events] == [(0, 1, "night"), (1, 1, "day"), (2, 1, "day")]


def test_the_recorder_keeps_round_and_phase_an_event_sets_itself() -> None:
    rec = Recorder()
    rec.round, rec.phase = 2, "round"
    e = rec.emit(MessageEvent(content="x", round=0, phase="announce"))
    assert (e.seq, e.round, e.phase) == (0, 0, "announce")


def test_an_audience_survives_the_store_round_trip() -> None:
    from lexicoord.core.events import event_from_dict

    e = MessageEvent(content="psst", audience=Audience.only("a", "b"))
    back = event_from_dict(e.model_dump(mode="json"))
    assert isinstance(back, MessageEvent) and back.audience == Audience.only("a", "b")
    assert not can_see(Viewer(name="c"), back.audience)


@pytest.mark.parametrize("kind", ["everyone", "group", "agents"])
def test_audiences_are_frozen(kind) -> None:
    with pytest.raises(ValidationError):
        Audience(kind=kind).kind = "everyone"  # type: ignore[misc]
