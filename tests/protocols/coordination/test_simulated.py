"""Simulated people: every policy answers the game's own requests, built from views of the events."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import ChoiceEvent, Event
from lexicoord.core.seat import Answer, Request
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import LexicoordError
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.protocols.coordination.items import CoordinationItem
from lexicoord.protocols.coordination.moves import choose_request, clarify_request
from lexicoord.protocols.coordination.rules import ClarificationEvent
from lexicoord.protocols.coordination.simulated import POLICIES, SimulatedSeat, simulated_seat
from lexicoord.protocols.coordination.views import RoundView, round_view

RIVER, MONEY, SEAT = "the land alongside a river", "a financial institution", "a place to sit"
OPTIONS = [RIVER, MONEY, SEAT]
ITEM = CoordinationItem(id="bank", sentence="Meet me at the bank.", word="bank", options=OPTIONS, intended=MONEY)
LEADER = "lead"
SEEDS = range(200)


def announcement(choice: str) -> ChoiceEvent:
    return ChoiceEvent(agent=LEADER, round=0, choice=choice, justification="I mean it", options=OPTIONS,
                       move="announcement")


def round_of(number: int, picks: dict[str, str | None]) -> list[Event]:
    return [ChoiceEvent(agent=name, round=number, choice=c, justification="because", options=OPTIONS, move="choice",
                        failure=None if c else "no answer") for name, c in picks.items()]


def choose(seat_name: str, round_: int, events: list[Event]) -> Request:
    return choose_request(round_view(ITEM, LEADER, round_, events), seat_name)


async def pick(seat: SimulatedSeat, request: Request) -> str:
    answer = await seat.answer(request)
    assert answer.ok and answer.action is None and answer.failure is None
    assert request.check(answer.value) is None, "a simulated answer passes the same schema as any other"
    assert answer.value["justification"] == f"simulated ({seat.policy})"
    return answer.value["choice"]


def seat(policy: str, seed: int = 0, **kw) -> SimulatedSeat:
    return SimulatedSeat("sim", policy, random.Random(seed), **kw)


#: Round 1 after the leader announced MONEY; then round 2 after a round in which SEAT led 2 to 1.
ANNOUNCED = [announcement(MONEY)]
SEAT_LED = [*ANNOUNCED, *round_of(1, {LEADER: MONEY, "x": SEAT, "sim": SEAT})]


def test_every_policy_is_tested_here() -> None:
    assert set(POLICIES) == {"first", "intended", "follow-leader", "majority", "stubborn", "noisy", "random"}


async def test_first_always_takes_the_first_listed_meaning() -> None:
    s = seat("first")
    for events, round_ in (([], 1), (ANNOUNCED, 1), (SEAT_LED, 2)):
        assert await pick(s, choose("sim", round_, events)) == RIVER
    reordered = choose_request(RoundView(sentence="s", word="w", options=[SEAT, RIVER], round=1, leader=LEADER), "sim")
    assert await pick(s, reordered) == SEAT


async def test_intended_takes_the_meaning_the_sentence_settles_else_the_first() -> None:
    assert await pick(seat("intended", intended=MONEY), choose("sim", 2, SEAT_LED)) == MONEY
    assert await pick(seat("intended", intended=SEAT), choose("sim", 1, ANNOUNCED)) == SEAT
    assert await pick(seat("intended", intended=None), choose("sim", 2, SEAT_LED)) == RIVER, "open item: the first"


async def test_follow_leader_takes_the_announcement_whatever_the_others_chose() -> None:
    s = seat("follow-leader")
    assert await pick(s, choose("sim", 1, ANNOUNCED)) == MONEY
    assert await pick(s, choose("sim", 2, SEAT_LED)) == MONEY, "the others' majority does not move it"
    assert await pick(s, choose("sim", 1, [])) == RIVER, "no announcement: the first meaning"
    failed = [ChoiceEvent(agent=LEADER, round=0, choice=None, failure="timeout", options=OPTIONS, move="announcement")]
    assert await pick(s, choose("sim", 1, failed)) == RIVER, "a failed announcement: the first meaning"


async def test_majority_starts_with_the_announcement_then_follows_the_last_round() -> None:
    s = seat("majority")
    assert await pick(s, choose("sim", 1, ANNOUNCED)) == MONEY
    assert await pick(s, choose("sim", 2, SEAT_LED)) == SEAT
    # Only the last round counts: round 2 went back to MONEY.
    later = [*SEAT_LED, *round_of(2, {LEADER: MONEY, "x": MONEY, "sim": SEAT})]
    assert await pick(s, choose("sim", 3, later)) == MONEY
    # A tie that includes the announcement goes to the announcement ...
    tie = [*ANNOUNCED, *round_of(1, {LEADER: SEAT, "x": MONEY, "y": RIVER, "sim": None})]
    assert await pick(s, choose("sim", 2, tie)) == MONEY
    # ... otherwise to the leading meaning listed first; failed moves are not counted.
    tie = [*ANNOUNCED, *round_of(1, {LEADER: SEAT, "x": RIVER, "y": None, "z": None})]
    assert await pick(s, choose("sim", 2, tie)) == RIVER
    assert await pick(s, choose("sim", 1, [])) == RIVER, "no announcement, no history: the first meaning"


async def test_stubborn_keeps_its_round_one_pick_to_the_end() -> None:
    firsts = set()
    for seed in range(30):
        s = seat("stubborn", seed)
        first = await pick(s, choose("sim", 1, ANNOUNCED))
        later = [*ANNOUNCED, *round_of(1, {LEADER: MONEY, "x": MONEY, "sim": first})]
        later2 = [*later, *round_of(2, {LEADER: SEAT, "x": SEAT, "sim": first})]
        assert await pick(s, choose("sim", 2, later)) == first
        assert await pick(s, choose("sim", 3, later2)) == first
        firsts.add(first)
    assert firsts == set(OPTIONS), "the kept meaning is drawn at random, not the announcement"


async def test_random_draws_a_meaning_every_round() -> None:
    picks = [await pick(seat("random", seed), choose("sim", 2, SEAT_LED)) for seed in SEEDS]
    counts = Counter(picks)
    assert set(counts) == set(OPTIONS) and min(counts.values()) > len(SEEDS) / 6
    s = seat("random", 7)
    assert len({await pick(s, choose("sim", 2, SEAT_LED)) for _ in range(30)}) > 1, "not kept across rounds"


@pytest.mark.parametrize("events, round_", [(ANNOUNCED, 1), (SEAT_LED, 2), ([], 1)])
async def test_noisy_with_p_0_is_majority(events, round_) -> None:
    for seed in SEEDS:
        expected = await pick(seat("majority", seed), choose("sim", round_, events))
        assert await pick(seat("noisy", seed, p=0.0), choose("sim", round_, events)) == expected


async def test_noisy_with_p_1_is_always_random() -> None:
    # Majority would take SEAT every time; with p=1 every seed draws afresh, every meaning comes up.
    picks = Counter([await pick(seat("noisy", seed, p=1.0), choose("sim", 2, SEAT_LED)) for seed in SEEDS])
    assert set(picks) == set(OPTIONS) and min(picks.values()) > len(SEEDS) / 6
    assert picks[SEAT] < len(SEEDS) / 2


async def test_noisy_with_a_middle_p_mixes_both() -> None:
    picks = Counter([await pick(seat("noisy", seed, p=0.5), choose("sim", 2, SEAT_LED)) for seed in SEEDS])
    assert set(picks) == set(OPTIONS) and picks[SEAT] > max(picks[RIVER], picks[MONEY])


async def test_the_leader_clarifies_with_its_announcement_or_passes() -> None:
    s = seat("majority")
    view = round_view(ITEM, LEADER, 2, SEAT_LED).model_copy(update={"round": 1})
    request = clarify_request(view)
    answer = await s.answer(request)
    assert answer == Answer(value={"statement": f'By "bank" I mean {MONEY}.'})
    assert request.check(answer.value) is None
    unannounced = clarify_request(round_view(ITEM, LEADER, 2, round_of(1, {LEADER: SEAT})))
    silent = await s.answer(unannounced)
    assert silent == Answer(action="pass") and "pass" in unannounced.actions, "nothing announced: nothing to clarify"


async def test_a_simulated_seat_reads_only_what_its_view_shows() -> None:
    # A clarification is public and lands in the view; it does not change a policy's pick.
    said = ClarificationEvent(agent=LEADER, round=1, content="I mean money.")
    view = round_view(ITEM, LEADER, 2, [*SEAT_LED, said])
    assert view.history[0].clarification is None and view.clarification == "I mean money."
    assert await pick(seat("majority"), choose_request(view, "sim")) == SEAT


def test_an_unknown_policy_is_refused_and_the_seat_says_it_is_simulated() -> None:
    with pytest.raises(LexicoordError, match="Unknown simulated-human policy 'psychic'; known: first"):
        seat("psychic")
    described = seat("noisy", p=0.3).describe().model_dump()
    assert described == {"name": "sim", "kind": "simulated", "role": None, "simulated": True, "model": None,
                         "policy": "noisy", "p": 0.3}


def test_a_line_up_seat_gets_its_policy_p_and_the_items_intended_meaning() -> None:
    spec = AgentSpec(name="s1", kind="simulated", options={"policy": "noisy", "p": "0.4"}, role="player")
    ctx = CoordinationGame().start(EpisodeContext(spec=EpisodeSpec(item_id="bank", item=ITEM.model_dump(), lineup=[spec]),
                                                  seed=3))
    made = simulated_seat(spec, ctx)
    assert (made.name, made.policy, made.p, made.intended, made.role) == ("s1", "noisy", 0.4, MONEY, "player")
    default = simulated_seat(AgentSpec(name="s2", kind="simulated"), ctx)
    assert default.policy == "majority" and default.p == 0.2
    again = CoordinationGame().start(EpisodeContext(spec=ctx.spec, seed=3))
    assert simulated_seat(spec, again).rng.random() == random.Random(random.Random(3).random()).random(), \
        "each seat's random stream is drawn from the episode's seed"


@pytest.mark.parametrize("policy", ["random", "stubborn", "noisy"])
async def test_a_replayed_answer_leaves_the_policy_where_answering_would(policy: str) -> None:
    """After a live room's restart the journal answers the first moves; the later ones must be the same."""
    requests = [choose("sim", r, ANNOUNCED) for r in (1, 2, 3, 4)]
    for seed in range(20):
        played = seat(policy, seed, p=0.5)
        moves = [await pick(played, r) for r in requests]
        resumed = seat(policy, seed, p=0.5)
        for r, m in zip(requests[:2], moves[:2]):
            await resumed.replayed(r, Answer(value={"choice": m, "justification": f"simulated ({policy})"}))
        assert [await pick(resumed, r) for r in requests[2:]] == moves[2:], (policy, seed)
