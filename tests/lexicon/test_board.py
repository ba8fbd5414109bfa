"""Boards: entries are their coiner's until shared; a faction's terms stay in the faction."""

from lexicoord.core.audience import Audience, Viewer
from lexicoord.lexicon import Board, Provenance
from lexicoord.lexicon.events import TermsSharedEvent


def board() -> Board:
    b = Board()
    b.coin("unitcost", "price of one", Provenance(agent="A", round=1, coin_pass=1))
    b.coin("speedtime", "distance per time", Provenance(agent="B", round=1, coin_pass=2))
    b.coin("pressure pool", "who is under suspicion", Provenance(agent="W1", round=2))
    return b


def terms(b: Board, viewer: Viewer) -> list[str]:
    return [e.term for e in b.visible(viewer)]


def test_an_entry_is_its_coiners_until_shared() -> None:
    b = board()
    assert terms(b, Viewer(name="A")) == ["unitcost"] and terms(b, Viewer(name="B")) == ["speedtime"]
    assert terms(b, Viewer()) == [], "a spectator sees nothing private"


def test_sharing_is_a_visibility_change_recorded_with_a_snapshot() -> None:
    b = board()
    event = b.share(["A", "B"])
    assert isinstance(event, TermsSharedEvent) and event.terms == ["unitcost", "speedtime"]
    assert event.audience.public and [s["term"] for s in event.snapshot] == ["unitcost", "speedtime"]
    assert terms(b, Viewer(name="B")) == ["unitcost", "speedtime"]
    assert b.share(["A"]).terms == [], "sharing again changes nothing"
    assert "- unitcost = price of one (coined by A)" in b.block(Viewer(name="B"))


def test_a_factions_terms_stay_with_the_faction() -> None:
    b = board()
    event = b.share(["W1"], Audience.group("wolves"))
    wolf, villager = Viewer(name="W2", groups=frozenset({"wolves"})), Viewer(name="V1", groups=frozenset({"village"}))
    assert terms(b, wolf) == ["pressure pool"] and terms(b, villager) == []
    assert event.audience == Audience.group("wolves") and [s["term"] for s in event.snapshot] == ["pressure pool"]
    assert "pressure pool" not in b.block(villager)


def test_sharing_one_public_coinage_leaves_the_coiners_faction_terms_in_the_faction() -> None:
    b = board()
    b.share(["W1"], Audience.group("wolves"))
    core_lock = b.coin("core lock", "two players who always vote together", Provenance(agent="W1", round=3))
    event = b.share(["W1"], entries=[core_lock])
    villager = Viewer(name="V1", groups=frozenset({"village"}))
    assert event.terms == ["core lock"] and terms(b, villager) == ["core lock"]
    assert "pressure pool" not in b.block(villager), "the wolf's night term did not go public with it"


def test_candidates_and_uses_are_events_with_their_audiences_and_read_back_typed(tmp_path) -> None:
    import subprocess
    import sys

    from lexicoord.lexicon import find_uses, judge_turn, read_turn
    from lexicoord.lexicon.events import TermCandidateEvent, candidate_events, use_events

    b = board()
    turn = read_turn("[PART 1] zorp rules.\n[PART 2]\nzorp = a unit\nfoo = unused thing\n")
    events = candidate_events(judge_turn(turn, coiner="A", board=b, viewer=Viewer(name="A")), "A", coin_pass=1)
    assert [(e.term, e.accepted, e.reason) for e in events] == [("zorp", True, None), ("foo", False, "not_used")]
    assert all(e.audience == Audience.only("A") for e in events), "coining is private to the coiner"
    b.share(["A", "B"])
    used = use_events(find_uses("My unitcost beats speedtime? unitcost!", b.visible(Viewer(name="B"))), "B",
                      Audience())
    assert sorted((u.term, u.coiner, u.count, u.public) for u in used) == [("speedtime", "B", 1, True),
                                                                          ("unitcost", "A", 2, True)]
    # A fresh process that imports only the store reads these events back typed (entry point lexicoord.events).
    code = ("from lexicoord.core.events import event_from_dict; import sys, json;"
            "e = event_from_dict(json.loads(sys.argv[1])); print(type(e).__name__, e.line())")
    out = subprocess.run([sys.executable, "-c", code, events[0].model_dump_json()], capture_output=True, text=True)
    assert out.stdout.strip() == "TermCandidateEvent coins 'zorp' = a unit (pass 1)", out.stderr
    assert isinstance(events[0], TermCandidateEvent)
