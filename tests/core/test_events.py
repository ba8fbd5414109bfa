"""Stored events read back typed, whatever the reading process happened to import."""

import json
import subprocess
import sys
import textwrap

from lexicoord.core.events import ChoiceEvent, Event, MessageEvent, event_from_dict, registered_types


def fresh_python(code: str) -> str:
    """Run ``code`` in a new interpreter (nothing of this test process imported) and return its output."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_protocols_event_reads_back_typed_in_a_process_that_imported_only_the_store() -> None:
    out = fresh_python("""
        import json, sys
        import lexicoord.runs.store
        before = sorted(m for m in sys.modules if m.startswith("lexicoord.protocols"))
        from lexicoord.core.events import event_from_dict
        e = event_from_dict({"type": "clarification", "agent": "lead", "round": 1, "content": "I mean money."})
        print(json.dumps({"before": before, "module": type(e).__module__, "cls": type(e).__name__,
                          "content": e.content, "mro": [c.__name__ for c in type(e).__mro__]}))
    """)
    got = json.loads(out)
    assert got["before"] == [], "the store does not import the protocols (runs and protocols never import each other)"
    assert (got["module"], got["cls"]) == ("lexicoord.protocols.coordination.rules", "ClarificationEvent")
    assert got["content"] == "I mean money." and "MessageEvent" in got["mro"]


def test_stored_events_of_every_kind_read_back_typed_in_a_fresh_process(tmp_path) -> None:
    from lexicoord.models.observe import ModelCallEvent, ModelCallRecord
    from lexicoord.protocols.coordination import ClarificationEvent
    from lexicoord.protocols.debate.replies import FeedbackEvent
    from lexicoord.runs.records import EpisodeRecord
    from lexicoord.runs.store import Store

    url = f"sqlite:///{tmp_path / 'events.db'}"
    store = Store(url)
    store.open_run("r", "coordination", {}, 1)
    events = [
        ClarificationEvent(agent="lead", round=1, content="I mean money.", seq=0),
        FeedbackEvent(agent="f1", round=1, stance="agree", reasoning="ok", seq=1),
        ModelCallEvent.of(ModelCallRecord(model="scripted/x", agent="a1", messages=[])).model_copy(update={"seq": 2}),
        Event(type="from-an-uninstalled-plugin", seq=3, colour="blue"),
    ]
    store.save_episode(EpisodeRecord(run_id="r", key="k", position=0, item_id="i", repetition=0, seed=0, spec={},
                                     status="done", started_at=0, finished_at=0), events)
    store.close()
    out = fresh_python(f"""
        import json
        from lexicoord.runs.store import Store
        store = Store({url!r})
        [episode] = store.episodes("r")
        print(json.dumps([[type(e).__name__, e.model_dump(mode="json")] for e in store.events(episode.id)]))
    """)
    got = json.loads(out)
    assert [cls for cls, _ in got] == ["ClarificationEvent", "FeedbackEvent", "ModelCallEvent", "Event"]
    assert got[2][1]["audience"] == {"kind": "agents", "groups": [], "agents": ["a1"]}, "a model call is its caller's"
    assert got[3][1]["colour"] == "blue", "an unknown type keeps its fields"


def test_every_built_in_type_is_registered_and_reads_back_as_itself() -> None:
    types = registered_types()
    for name in ("message", "choice", "round_closed", "outcome", "error", "clarification", "proposal", "feedback",
                 "judge", "model_call"):
        assert name in types, name
    e = event_from_dict(ChoiceEvent(choice=None, failure="timeout", agent="p", round=2, phase="round").model_dump())
    assert isinstance(e, ChoiceEvent) and (e.failure, e.phase) == ("timeout", "round")
    assert type(event_from_dict({"type": "message", "content": "hi"})) is MessageEvent
