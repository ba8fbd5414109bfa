"""What a Werewolf prompt says: rules that follow the flags the game is played by, COGENT's reuse line when
the speaker knows terms, and a player's words kept whole around the coining parts."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lexicoord.lexicon.uses import REUSE_LINE
from lexicoord.models.observe import ModelCallEvent
from lexicoord.protocols.werewolf import WerewolfSettings
from lexicoord.protocols.werewolf.events import DeathEvent, NightEvent, SpeechEvent
from lexicoord.protocols.werewolf.views import rules_text
from tests.protocols.werewolf.test_rules import learn_roles, play
from tests.protocols.werewolf.test_visibility import marked_speech


def prompts(events: list[Any], speaking: bool | None = None) -> list[str]:
    """Every prompt of the game; ``speaking``: only turns of talk (True) or only closed choices (False)."""
    return [e.messages[-1].content for e in events if isinstance(e, ModelCallEvent)
            and (speaking is None or speaking is not bool(e.config.get("choices")))]


def rules_line(prompt: str) -> str:
    return prompt.split("Rules: ", 1)[1].split("\n", 1)[0]


@pytest.mark.parametrize("flags,present,absent", [
    ({}, ["2 werewolves, a seer, a witch, a guard and 3 villagers", "whether they are a werewolf",
          "may protect himself", "not the same player two nights running", "cannot save herself",
          "not on a night she uses the antidote", "ends in a draw after 5 days", "the most votes",
          "a tie exiles nobody", "with their role"],
     ["learns their role", "still dies"]),
    ({"guards": 0}, ["2 werewolves, a seer, a witch and 4 villagers"], ["guard", "protect"]),
    ({"seers": 0, "witches": 0}, ["2 werewolves, a guard and 5 villagers"], ["seer", "witch", "antidote", "poison"]),
    ({"seer_learns": "role"}, ["learns their role"], ["whether they are a werewolf"]),
    ({"witch_self_save": True, "both_potions_one_night": True},
     ["may save herself", "even on the night she uses the antidote", "even the player she saved"],
     ["cannot save herself", "not on a night"]),
    ({"guard_repeat": True, "guard_and_save_kills": True, "wolves": 1, "max_days": 3},
     ["1 werewolf,", "the same player on any night", "guarded and saved still dies", "after 3 days"],
     ["two nights running", "2 werewolves"]),
    ({"exile_rule": "majority", "exile_tie": "revote"}, ["more than half of the living"], ["tie", "revote"]),
    ({"exile_tie": "random"}, ["a tie is settled at random"], []),
    ({"exile_tie": "revote"}, ["a tie goes to one more vote among the tied"], []),
    ({"reveal_roles": False}, ["the dead are announced without their role"], ["with their role"]),
])
def test_the_rules_text_follows_the_flags(flags: dict[str, Any], present: list[str], absent: list[str]) -> None:
    text = rules_text(WerewolfSettings(**flags), players=8)
    assert all(p in text for p in present), [p for p in present if p not in text]
    assert not [a for a in absent if a in text.lower()], text


async def test_every_prompt_states_the_rules_the_game_is_played_by(tmp_path) -> None:
    """No guard in the text of a game without one; the seer's finding as set; and what the text promises
    the witch is what the game lets her do (here: save a player, then poison the same player)."""
    _, plain = await play(tmp_path / "plain", lambda *a: "abstain", max_days=1, guards=0, seer_learns="role")
    said = prompts(plain)
    assert said and not [p for p in said if re.search(r"guard|protect", rules_line(p), re.I)]
    assert all("learns their role" in rules_line(p) for p in said)

    dealt = await learn_roles(tmp_path)
    victim = next(p for p, r in dealt.items() if r == "villager")

    def policy(agent: str, role: str, action: str, choices: tuple[str, ...], prompt: str) -> str:
        return victim if action in ("kill_vote", "save", "poison") else "abstain"

    _, both = await play(tmp_path / "both", policy, max_days=1, both_potions_one_night=True)
    assert all("even the player she saved" in rules_line(p) for p in prompts(both))
    [night] = [e for e in both if isinstance(e, NightEvent)]
    assert (night.attacked, night.saved, night.poisoned, night.deaths) == (victim, True, victim, [victim])
    assert [e.player for e in both if isinstance(e, DeathEvent)] == [victim]


async def test_a_speaker_who_knows_terms_is_asked_to_consider_or_reuse_one(tmp_path) -> None:
    """COGENT's debate line (the paper: if terms exist, the prompt requires at least one to be considered or
    reused); ``force_reuse=False`` drops it, as COGENT's cogent_free does."""
    for force in (True, False):
        _, events = await play(tmp_path / str(force), lambda *a: "abstain", marked_speech, seed=3,
                               condition="cogent", max_days=2, force_reuse=force)
        talk = prompts(events, speaking=True)
        knowing = [p for p in talk if "KNOWN_TERMS\n(none yet)\n" not in p]
        blank = [p for p in talk if "KNOWN_TERMS\n(none yet)\n" in p]
        assert knowing and blank, "some turns knew terms, and the first did not"
        assert all((REUSE_LINE in p) is force for p in knowing)
        assert not [p for p in blank if REUSE_LINE in p], "nothing to reuse, so nothing is required"
        assert not [p for p in talk if "reused freely" in p]
        assert not [p for p in prompts(events, speaking=False) if REUSE_LINE in p], "a closed choice is no turn of talk"


@pytest.mark.parametrize("reply,kept", [
    ("Hi all. [PART 1] Player 2 dodged the vote.\n[PART 2]\nqzdodge = dodging a vote", "Hi all. Player 2 dodged"),
    ("I think Bob is lying.\n[PART 1] His qzdodge is obvious.\n[PART 2]\nqzdodge = dodging a vote",
     "I think Bob is lying. His qzdodge"),
    ("I think Bob is lying.", "I think Bob is lying."),
])
async def test_words_before_part_1_stay_in_the_speech(tmp_path, reply: str, kept: str) -> None:
    _, events = await play(tmp_path, lambda *a: "abstain", lambda a, r, p: reply, condition="cogent", max_days=1)
    day = [e for e in events if isinstance(e, SpeechEvent) and e.channel == "public"]
    assert day and all(" ".join(e.text.split()).startswith(kept) for e in day), day[0].text
    assert "[PART" not in day[0].text and "= dodging" not in day[0].text, "the parts' markup and PART 2 stay out"
