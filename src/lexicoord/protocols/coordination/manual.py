"""Manual mode: the leader brings a sentence and a word; the players populate the options.

Every player, people and models alike, proposes one interpretation with a
justification (the paper: "prompting all agents to submit an interpretation and a
brief justification"), through the same request, so a person's gloss has the
same limits as a model's. Proposals that
say the same thing are merged: glosses are reduced to their content words
(lower case, punctuation and common function words dropped, a plural -s
removed), and two proposals are one option when those word sets are equal or
overlap by at least 60% (Jaccard), unless one is negated and the other not. A
proposal joins a group only when it is equivalent to every member, taking the
proposals in a canonical order so that the options never depend on who answered
first. Each group keeps its first wording in that order, and every proposer and
justification stays attached. The leader may then add, edit or remove options
before play; the result is an ordinary item with an open meaning.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pydantic import BaseModel, Field

from lexicoord.core.seat import Request, Seat
from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.prompting import Prompts, fence
from lexicoord.tasks.ambiguous import AmbiguityItem, word_span

PROMPTS = Prompts("lexicoord.protocols.coordination")

MAX_SENTENCE = 400
MAX_WORD = 40
MAX_GLOSS = 80
SIMILARITY = 0.6
STOPWORDS = frozenset(
    "a an the of to in on at for by with from as or and is are be it its this that which who into "
    "something someone some any kind sort type thing way".split()
)

PROPOSAL_SCHEMA = {
    "type": "object",
    "properties": {
        "meaning": {"type": "string", "minLength": 2, "maxLength": MAX_GLOSS},
        "justification": {"type": "string", "minLength": 1, "maxLength": 160},
    },
    "required": ["meaning", "justification"],
    "additionalProperties": False,
}


class Proposal(BaseModel):
    agent: str
    meaning: str
    justification: str = ""


class Option(BaseModel):
    text: str
    proposers: list[str] = Field(default_factory=list)
    justifications: list[str] = Field(default_factory=list)


def validate_manual(sentence: str, word: str) -> tuple[str, str]:
    """The leader's input, checked: bounded lengths, and the word really is in the sentence."""
    sentence, word = " ".join(sentence.split()), " ".join(word.split())
    if not 3 <= len(sentence) <= MAX_SENTENCE:
        raise ConfigError(f"The sentence must be 3 to {MAX_SENTENCE} characters.")
    if not 1 <= len(word) <= MAX_WORD:
        raise ConfigError(f"The word must be 1 to {MAX_WORD} characters.")
    if not word_span(sentence, word):
        raise ConfigError(f"'{word}' does not occur as a word in the sentence.")
    return sentence, word


def content_words(gloss: str) -> frozenset[str]:
    words = re.findall(r"[a-z0-9]+", gloss.lower().replace("n't", " nt"))
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                     for w in words if w not in STOPWORDS)


NEGATIONS = frozenset({"not", "no", "never", "non", "without", "nt"})


def equivalent(a: str, b: str) -> bool:
    """Same content words, or 60% of them shared; never a gloss and its negation."""
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return a.strip().lower() == b.strip().lower()
    if (wa & NEGATIONS) != (wb & NEGATIONS):
        return False
    return wa == wb or len(wa & wb) / len(wa | wb) >= SIMILARITY


def merge_proposals(proposals: list[Proposal]) -> list[Option]:
    """Group proposals; a proposal joins a group only if it is equivalent to every member.

    The result does not depend on the order the proposals arrived in (players answer
    at once, so that order is an accident of timing): proposals are taken in a
    canonical order (gloss without case, then proposer, then justification), so the
    same proposals always give the same options, worded the same, in the same order.
    """
    def canonical(p: Proposal) -> tuple[str, str, str, str]:
        text = " ".join(p.meaning.split())[:MAX_GLOSS]
        return (text.lower(), text, p.agent, p.justification)

    groups: list[list[tuple[str, Proposal]]] = []
    for p in sorted(proposals, key=canonical):
        text = " ".join(p.meaning.split())[:MAX_GLOSS]
        if not text:
            continue
        home = next((g for g in groups if all(equivalent(t, text) for t, _ in g)), None)
        if home is None:
            groups.append([(text, p)])
        else:
            home.append((text, p))
    return [
        Option(text=g[0][0], proposers=[p.agent for _, p in g], justifications=[p.justification for _, p in g])
        for g in groups
    ]


def propose_request(sentence: str, word: str) -> Request:
    prompt = PROMPTS.render("coord_propose", sentence=fence(sentence, "SENTENCE"), word=fence(word, "WORD"))
    return Request(kind="propose", view={"sentence": sentence, "word": word}, prompt=prompt, schema=PROPOSAL_SCHEMA,
                   max_tokens=100)


async def propose(seat: Seat, sentence: str, word: str) -> Proposal | None:
    """One seat's proposal; ``None`` when it could not give one (the caller names who gave none)."""
    try:
        answer = await seat.answer(propose_request(sentence, word))
    except LexicoordError:  # a model that gives no reply proposes nothing; it is named as silent
        return None
    return Proposal(agent=seat.name, **answer.value) if answer.ok and answer.value is not None else None


async def gather_proposals(seats: list[Seat], sentence: str, word: str) -> list[Proposal]:
    """Every seat's proposal at once (a person's seat waits for the person), so none sees another's."""
    found = await asyncio.gather(*(propose(s, sentence, word) for s in seats))
    return [p for p in found if p is not None]


def with_proposals(task: dict[str, Any], options: list[Option]) -> dict[str, Any]:
    """The item to play, carrying who proposed what: the stored game keeps how its option set was made."""
    return {**task, "proposals": [o.model_dump() for o in options]}


def manual_item(sentence: str, word: str, options: list[str], item_id: str = "manual") -> AmbiguityItem:
    """The confirmed option set as an item to play (its meaning is open: only the leader knows it)."""
    sentence, word = validate_manual(sentence, word)
    distinct: list[str] = []
    for o in (" ".join(o.split())[:MAX_GLOSS] for o in options):
        if o and not any(o.lower() == d.lower() for d in distinct):
            distinct.append(o)
    if not 2 <= len(distinct) <= 5:
        raise ConfigError(f"A game needs 2 to 5 distinct options; there are {len(distinct)}.")
    return AmbiguityItem(id=item_id, sentence=sentence, word=word, options=distinct, intended=None, open=True,
                         category="homonym", domain="general", note="manual mode")
