"""The term board of an episode as it stood at one point of its transcript, rebuilt from the lexicon events.

COGENT and Werewolf record every coinage (``term_candidate``), every widening of who sees a term
(``terms_shared``) and every use (``term_used``); replaying them up to an event gives the board a
reader of that page would have had in front of them: each entry, who coined it, who may see it, how
often it was used, and each step by which the board grew.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lexicoord.core.events import Event
from lexicoord.lexicon.board import normal
from lexicoord.lexicon.events import TermCandidateEvent, TermsSharedEvent, TermUsedEvent

#: The event types the board is built from (read alone, through the events' type index).
LEXICON_TYPES = ("term_candidate", "terms_shared", "term_used")


def board(events: Iterable[Event]) -> dict[str, Any]:
    """Entries in order of coinage, and the steps (``seq`` and one line) that made them."""
    entries: dict[str, dict[str, Any]] = {}
    steps: list[dict[str, Any]] = []
    for e in events:
        if isinstance(e, TermCandidateEvent):
            steps.append({"seq": e.seq, "agent": e.agent, "line": e.line(), "accepted": e.accepted})
            key = normal(e.term)
            if e.accepted and key not in entries:
                entries[key] = {"term": e.term, "definition": e.definition, "coiner": e.agent, "coined": e.seq,
                                "seen_by": e.audience.describe(), "public": e.audience.public, "uses": 0, "users": []}
        elif isinstance(e, TermsSharedEvent):
            steps.append({"seq": e.seq, "agent": e.agent, "line": e.line(), "accepted": True})
            for term in e.terms:
                entry = entries.get(normal(term))
                if entry is not None and not entry["public"]:
                    entry["seen_by"], entry["public"] = e.audience.describe(), e.audience.public
        elif isinstance(e, TermUsedEvent):
            entry = entries.get(normal(e.term))
            if entry is not None:
                entry["uses"] += e.count
                if e.agent and e.agent not in entry["users"]:
                    entry["users"].append(e.agent)
    return {"entries": list(entries.values()), "steps": steps}
