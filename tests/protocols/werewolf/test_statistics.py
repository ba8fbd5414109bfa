"""Werewolf's metrics on a small game record built by hand, every count worked out in the comments."""

from __future__ import annotations

from typing import Any

import pytest

from lexicoord.core.audience import EVERYONE, Audience
from lexicoord.core.events import Event
from lexicoord.lexicon.events import TermCandidateEvent, TermsSharedEvent, TermUsedEvent
from lexicoord.protocols.werewolf.events import (
    ActionEvent,
    CheckResultEvent,
    NightEvent,
    RoleEvent,
    SpeechEvent,
)
from lexicoord.protocols.werewolf.statistics import compute, game_from, games_from, pseudo_lexicon
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import Store
from tests.protocols.werewolf.test_rules import play

ROLES = {"Ann": "werewolf", "Bo": "seer", "Cy": "villager", "Di": "villager"}
WOLVES = Audience.group("wolves")


def at(event: Event, day: int, phase: str) -> Event:
    event.round, event.phase = day, phase
    return event


def record(condition: str, days: int, seed: int = 7) -> EpisodeRecord:
    outcome = {"condition": condition, "winner": "villagers", "days": days, "roles": ROLES}
    return EpisodeRecord(run_id="r", key=f"k{condition}", item_id="g", status="done", outcome=outcome,
                         spec={"item": {"id": "g", "seed": seed}}, started_at=0, finished_at=1)


def cogent_game() -> list[Event]:
    return [
        *[at(RoleEvent(agent=p, role=r, audience=Audience.only(p)), 0, "setup") for p, r in ROLES.items()],
        # Night 1: Ann (alone) coins "redzone" in the wolves' channel (3 words of speech).
        at(SpeechEvent(agent="Ann", channel="wolves", text="redzone is Bo", audience=WOLVES), 1, "night"),
        at(TermCandidateEvent(agent="Ann", term="redzone", definition="the seer's seat", accepted=True,
                              audience=Audience.only("Ann")), 1, "night"),
        at(TermsSharedEvent(terms=["redzone"], audience=WOLVES), 1, "night"),
        at(ActionEvent(agent="Bo", action="check", target="Ann", audience=Audience.only("Bo")), 1, "night"),
        at(CheckResultEvent(agent="Bo", target="Ann", wolf=True, audience=Audience.only("Bo")), 1, "night"),
        at(NightEvent(attacked="Cy", protected=None, saved=False, deaths=[], audience=Audience.only()), 1, "night"),
        # Day 1: Bo coins "wolfmark" in public (4 words), Cy reuses it (3 words), one candidate rejected.
        at(SpeechEvent(agent="Bo", channel="public", text="Ann wears the wolfmark", audience=EVERYONE), 1, "day"),
        at(TermCandidateEvent(agent="Bo", term="wolfmark", definition="a checked wolf", accepted=True,
                              audience=Audience.only("Bo")), 1, "day"),
        at(TermCandidateEvent(agent="Bo", term="vote", definition="a vote", accepted=False, reason="dictionary_word",
                              audience=Audience.only("Bo")), 1, "day"),
        at(TermsSharedEvent(terms=["wolfmark"], audience=EVERYONE), 1, "day"),
        at(SpeechEvent(agent="Cy", channel="public", text="wolfmark means Ann", audience=EVERYONE), 1, "day"),
        at(TermUsedEvent(agent="Cy", term="wolfmark", coiner="Bo", count=1, public=True), 1, "day"),
        at(ActionEvent(agent="Cy", action="vote", target="Ann"), 1, "vote"),
        at(ActionEvent(agent="Di", action="vote", target="Bo"), 1, "vote"),
        # Night 2: Ann reuses "redzone" twice in the channel (2 words).
        at(SpeechEvent(agent="Ann", channel="wolves", text="redzone redzone", audience=WOLVES), 2, "night"),
        at(TermUsedEvent(agent="Ann", term="redzone", coiner="Ann", count=2, public=False, audience=WOLVES), 2, "night"),
        # Day 2: Di and Bo reuse "wolfmark" (3 + 2 words).
        at(SpeechEvent(agent="Di", channel="public", text="wolfmark is real", audience=EVERYONE), 2, "day"),
        at(TermUsedEvent(agent="Di", term="wolfmark", coiner="Bo", count=1, public=True), 2, "day"),
        at(SpeechEvent(agent="Bo", channel="public", text="wolfmark again", audience=EVERYONE), 2, "day"),
        at(TermUsedEvent(agent="Bo", term="wolfmark", coiner="Bo", count=1, public=True), 2, "day"),
        at(ActionEvent(agent="Bo", action="vote", target=None), 2, "vote"),
        # Day 3: a vote, and nobody says a term.
        at(ActionEvent(agent="Bo", action="vote", target=None), 3, "vote"),
    ]


def test_table_7_on_a_hand_built_game() -> None:
    game = game_from(record("cogent", days=3), cogent_game())
    assert game is not None
    lex = compute([game]).lexical
    assert lex is not None
    # Terms: redzone (wolves), wolfmark (public). Reuses: redzone 2, wolfmark 3 (Cy, Di, Bo).
    assert (lex.accepted_terms, lex.reuses, lex.uptake) == (2, 5, 2.5)
    # Lexicon: "redzone = the seer's seat" (5 words) + "wolfmark = a checked wolf" (5 words) = 10.
    # Public speech: 4 + 3 + 3 + 2 = 12 words.
    assert (lex.lexicon_tokens, lex.footprint_ratio, lex.reuse_per_100_lexicon_tokens) == (10, 10 / 12, 50.0)
    assert (lex.public_terms, lex.public_reuses, lex.wolf_terms, lex.wolf_reuses) == (1, 3, 1, 2)
    assert lex.public_reuse_share == pytest.approx(3 / 5) and lex.public_uptake_advantage == pytest.approx(1.5)
    # wolfmark: public speakers Cy, Di, Bo (3); redzone: none in public.
    assert (lex.terms_used_in_public, lex.terms_with_two_public_speakers) == (1, 1)
    assert lex.mean_public_speakers_per_term == pytest.approx(1.5)
    # wolfmark coined on day 1; the game reached day 3: days 2 (used) and 3 (not) -> 1/2.
    assert lex.public_checkpoint_persistence == pytest.approx(0.5) and lex.rejected == {"dictionary_word": 1}
    # Checkpoints: day 1 public 4 + 3 = 7; personal: Ann's channel (3) seen by Ann; public 7 seen by 4 players.
    assert game.checkpoints[1] == (7, 3 + 4 * 7)
    assert (game.checks, game.checks_on_wolves, game.village_votes, game.village_votes_on_wolves) == (1, 1, 2, 1)
    assert game.complete_days == 3


def test_a_day_the_game_did_not_complete_is_no_checkpoint() -> None:
    """A game the wolves won at dawn of day 3 completed two days: persistence looks at day 2 only."""
    events = [e for e in cogent_game() if e.round != 3]
    game = game_from(record("cogent", days=3), events)
    assert game is not None and game.complete_days == 2
    lex = compute([game]).lexical
    assert lex is not None and lex.public_checkpoint_persistence == pytest.approx(1.0)


def test_matched_checkpoints_pair_games_of_the_same_seed() -> None:
    origin_events: list[Any] = [
        *[at(RoleEvent(agent=p, role=r, audience=Audience.only(p)), 0, "setup") for p, r in ROLES.items()],
        at(SpeechEvent(agent="Bo", channel="public", text="Ann is the wolf I checked", audience=EVERYONE), 1, "day"),
        at(ActionEvent(agent="Bo", action="vote", target="Ann"), 1, "vote"),
    ]
    cogent = game_from(record("cogent", days=3), cogent_game())
    origin = game_from(record("origin", days=1), origin_events)
    assert cogent is not None and origin is not None
    [pair] = compute([origin, cogent]).matched
    # Both completed day 1: ORIGIN 6 public words (24 personal); COGENT 7 (31).
    assert (pair.checkpoint_day, pair.origin_public, pair.cogent_public) == (1, 6, 7)
    assert (pair.origin_personal, pair.cogent_personal) == (24, 31)
    assert compute([origin, game_from(record("cogent", 3, seed=8), cogent_game())]).matched == [], "seeds differ"


def test_the_pseudo_lexicon_finds_recurring_phrases_and_which_were_taken_up() -> None:
    said = [("Ann", "the quiet corner is suspicious"), ("Bo", "I agree about the quiet corner"),
            ("Cy", "quiet corner again, and the red herring"), ("Di", "red herring"),
            ("Ann", "my soft clear stands"), ("Ann", "soft clear again"), ("Ann", "soft clear, always")]
    speeches = [SpeechEvent(agent=a, channel="public", text=t) for a, t in said]
    # "quiet corner": 3 uses by Ann, Bo, Cy (taken up); "soft clear": 3 uses, all Ann's (not taken up);
    # "red herring": 2 uses only; "the quiet" has a stop word but is not only stop words: 2 uses.
    assert pseudo_lexicon(speeches, list(ROLES)) == (2, 1)


def test_a_bigram_inside_a_counted_trigram_is_not_counted_again() -> None:
    said = [("Ann", "pressure pool vote"), ("Bo", "pressure pool vote"), ("Cy", "pressure pool vote")]
    speeches = [SpeechEvent(agent=a, channel="public", text=t) for a, t in said]
    # "pressure pool vote" (3) counts; "pressure pool" and "pool vote" occur only inside it.
    assert pseudo_lexicon(speeches, list(ROLES)) == (1, 1)


async def test_a_wolf_term_and_a_public_term_of_the_same_string_stay_two_terms(tmp_path) -> None:
    """The wolves coin a term in their channel; a villager, who cannot see it, coins the same string in
    public. Two entries, two coiners, two pools: each reuse counts for the entry its speaker could see."""
    term, coined, slipped = "zorbqix", [], []

    def speech(agent: str, role: str, prompt: str) -> str:
        task = prompt.rsplit("HISTORY>>>", 1)[-1]
        if "talk with the other wolves" in task:  # night 1: the first wolf coins, every later wolf turn reuses
            return f"{term} again" if f"- {term} = " in prompt else f"[PART 1] {term} is our plan.\n[PART 2]\n{term} = the wolves' plan"
        if role != "werewolf":
            if not coined:
                coined.append(agent)
                return f"[PART 1] {term} keeps us safe.\n[PART 2]\n{term} = a village shield"
            return f"I trust {term}."
        if "Day 2" in task and not slipped:  # a wolf says its own pool's term in public
            slipped.append(agent)
            return f"{term} is fine by me."
        return "I agree."

    _, events = await play(tmp_path, lambda *a: "abstain", speech, seed=4, condition="cogent", max_days=2)
    dealt = {e.agent: e.role for e in events if isinstance(e, RoleEvent)}
    wolves = [p for p in dealt if dealt[p] == "werewolf"]
    [game] = games_from(Store(str(tmp_path / "w.db")).iter_run_events("w"))
    by_pool = {t.pool: t for t in game.terms}
    assert sorted(by_pool) == ["public", "wolves"] and len(game.terms) == 2, game.terms
    public, wolf = by_pool["public"], by_pool["wolves"]
    assert (public.term, public.coiner, public.definition) == (term, coined[0], "a village shield")
    assert wolf.coiner in wolves and wolf.definition == "the wolves' plan"
    # Public: 5 other villagers on day 1, all 6 on day 2. Wolves: 1 reuse on night 1, 2 on night 2, and
    # one wolf's public slip (its own pool's term: the only one it sees under that string).
    assert (public.reuses, public.public_reuses, public.days_used) == (11, 11, [1, 2])
    assert sorted(public.public_speakers) == sorted(p for p in dealt if p not in wolves)
    assert (wolf.reuses, wolf.public_reuses, wolf.public_speakers) == (4, 1, slipped)
    lex = compute([game]).lexical
    assert lex is not None
    assert (lex.accepted_terms, lex.reuses, lex.uptake) == (2, 15, 7.5)
    assert (lex.public_terms, lex.public_reuses, lex.wolf_terms, lex.wolf_reuses) == (1, 11, 1, 4)
    assert lex.public_reuse_share == pytest.approx(11 / 15) and lex.public_uptake_advantage == pytest.approx(11 / 4)
    assert (lex.terms_used_in_public, lex.terms_with_two_public_speakers) == (2, 1)
    assert lex.mean_public_speakers_per_term == pytest.approx(3.5) and lex.public_checkpoint_persistence == 1.0
    # Both entries count: "zorbqix = the wolves' plan" and "zorbqix = a village shield", 5 words each.
    assert lex.lexicon_tokens == 10
