"""Secrets stay with their audience, as a property over whole scripted games: every turn of talk carries a
unique marker (and under COGENT coins a unique term); no prompt of a player outside a message's audience,
or outside a term's pool, ever contains it. Players choose at random (seeded), so games differ."""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from typing import Any

import pytest

from lexicoord.core.audience import Audience, Viewer, can_see
from lexicoord.lexicon.events import TermCandidateEvent, TermsSharedEvent, TermUsedEvent
from lexicoord.models.observe import ModelCallEvent
from lexicoord.protocols.werewolf.events import CheckResultEvent, SpeechEvent, VictimEvent
from tests.protocols.werewolf.test_rules import play, roles

COUNTER = itertools.count()


def random_policy(agent: str, role: str, action: str, choices: tuple[str, ...], prompt: str) -> str:
    return random.Random(hashlib.sha256(prompt.encode()).digest()).choice(choices)


def marked_speech(agent: str, role: str, prompt: str) -> str:
    n = next(COUNTER)
    wolfish = "talk with the other wolves" in prompt.rsplit("HISTORY>>>", 1)[-1]
    word = f"zq{n}{'wolfish' if wolfish else 'plain'}"
    secret = re.findall(r"zq\d+wolfish", prompt.rsplit("HISTORY>>>", 1)[-1])  # a wolf term this wolf knows
    slip = f" and {secret[-1]}" if secret and not wolfish else ""  # said in public: the term must stay the wolves'
    return f"[PART 1] MARK{n}X says {word}{slip} matters.\n[PART 2]\n{word} = a marker term number {n}\n"


@pytest.mark.parametrize("condition", ["origin", "cogent"])
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_no_prompt_outside_an_audience_holds_its_secrets(tmp_path, condition: str, seed: int) -> None:
    outcome, events = await play(tmp_path, random_policy, marked_speech, seed=seed, condition=condition,
                                 wolf_turns=2, max_days=4, last_words="all")
    dealt = roles(events)
    wolves = {p for p, r in dealt.items() if r == "werewolf"}
    viewer = {p: Viewer(name=p, groups=frozenset({"wolves"} if p in wolves else set())) for p in dealt}
    prompts = [(e.agent, e.messages[-1].content) for e in events if isinstance(e, ModelCallEvent)]
    secrets: list[tuple[str, Any]] = []
    for e in events:
        if isinstance(e, SpeechEvent) and not e.audience.public:
            secrets += [(m, e.audience) for m in re.findall(r"MARK\d+X", e.text)]
        elif isinstance(e, CheckResultEvent):
            secrets.append((f"you checked {e.target}:", e.audience))
        elif isinstance(e, VictimEvent):
            secrets.append((f"the wolves attacked {e.victim}", e.audience))
        elif isinstance(e, TermsSharedEvent) and not e.audience.public:
            secrets += [(f"{t} = ", e.audience) for t in e.terms]
    private_talk = [s for s in secrets if s[0].startswith("MARK")]
    assert private_talk, "the wolves talked in their channel"
    if condition == "cogent":
        assert any(s[0].startswith("zq") for s in secrets), "the wolves coined private terms"
        assert any(isinstance(e, TermCandidateEvent) and e.accepted for e in events)
    if condition == "cogent":
        wolf_terms = {t for e in events if isinstance(e, TermsSharedEvent) and not e.audience.public for t in e.terms}
        slips = [e for e in events if isinstance(e, TermUsedEvent) and e.term in wolf_terms and e.public]
        assert slips, "a wolf said a wolf term in public"
        assert all(e.audience == Audience.group("wolves") for e in slips), "its use is recorded for the wolves only"
        assert "known to the wolves" in " ".join(p for w, p in prompts if w in wolves), "wolves see which terms are theirs"
    leaks = [(who, secret) for secret, audience in secrets for who, prompt in prompts
             if secret in prompt and not can_see(viewer[who], audience)]
    assert not leaks, leaks[:3]
    # The property is not vacuous: each secret does reach someone in its audience.
    reached = {secret for secret, audience in secrets for who, prompt in prompts
               if secret in prompt and can_see(viewer[who], audience)}
    assert any(s.startswith("MARK") for s in reached) and outcome["winner"] in ("villagers", "wolves", "draw")
