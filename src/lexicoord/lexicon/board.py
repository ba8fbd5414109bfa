"""Coined entries and who may see them: agent-private lexicons and shared boards in one place.

An entry is private to its coiner when coined; sharing widens its audience (to a
faction, or to everyone) and is recorded with a snapshot of what that audience
now sees. Every reader asks the board for the entries a seat may see, through
the same audience rules as events (:mod:`lexicoord.core.audience`), so a
faction's terms never reach a prompt outside the faction.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, Field

from lexicoord.core.audience import EVERYONE, Audience, Viewer, can_see
from lexicoord.lexicon.events import TermsSharedEvent


@lru_cache(maxsize=4096)  # asked for every entry each time a board is read: an episode reads it every turn
def normal(term: str) -> str:
    """A term as compared: case and spacing do not make a new term."""
    return " ".join(term.lower().split())


class Provenance(BaseModel):
    agent: str
    round: int | None = None
    coin_pass: int | None = None
    episode: str | None = None


class Entry(BaseModel):
    term: str
    definition: str
    provenance: Provenance
    audience: Audience = Field(default_factory=lambda: Audience())

    @property
    def key(self) -> str:
        return normal(self.term)


class Board:
    """Every entry of an episode, each with its audience."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def coin(self, term: str, definition: str, provenance: Provenance) -> Entry:
        """A new entry, private to its coiner."""
        entry = Entry(term=term, definition=definition, provenance=provenance,
                      audience=Audience.only(provenance.agent))
        self.entries.append(entry)
        return entry

    def visible(self, viewer: Viewer) -> list[Entry]:
        """The entries ``viewer`` may see, first coinage first (a term seen twice is listed once)."""
        seen: dict[str, Entry] = {}
        for e in self.entries:
            if can_see(viewer, e.audience) and e.key not in seen:
                seen[e.key] = e
        return list(seen.values())

    def knows(self, term: str, viewer: Viewer) -> bool:
        return any(e.key == normal(term) for e in self.visible(viewer))

    def share(self, coiners: list[str], audience: Audience = EVERYONE, viewer: Viewer | None = None,
              entries: list[Entry] | None = None) -> TermsSharedEvent:
        """Widen the audience of every entry coined by ``coiners`` (the paper's L_pub = L_A ∪ L_B when
        ``audience`` is everyone), or of just ``entries`` (a term coined in a public speech goes public
        without the coiner's faction terms); the event's snapshot is the board as ``viewer`` (default: a
        member of that audience) now sees it. Entries already visible to a wider audience keep it."""
        shared: list[str] = []
        chosen = None if entries is None else {id(e) for e in entries}
        for i, e in enumerate(self.entries):
            if chosen is not None and id(e) not in chosen:
                continue
            if e.provenance.agent in coiners and e.audience != audience and not e.audience.public:
                self.entries[i] = e.model_copy(update={"audience": audience})
                shared.append(e.term)
        if viewer is None:
            viewer = Viewer(name=audience.agents[0] if audience.agents else None,
                            groups=frozenset(audience.groups))
        return TermsSharedEvent(terms=shared, snapshot=self.snapshot(viewer), audience=audience)

    def snapshot(self, viewer: Viewer) -> list[dict[str, object]]:
        return [e.model_dump(mode="json") for e in self.visible(viewer)]

    def block(self, viewer: Viewer, audiences: bool = False) -> str:
        """The KNOWN_TERMS block a prompt shows: one ``term = definition (coined by X)`` line per visible entry;
        with ``audiences``, each line also says who can see the entry (so a faction knows its secret terms)."""
        lines = [f"- {e.term} = {e.definition} (coined by {e.provenance.agent}"
                 + (f"; known to {e.audience.describe()})" if audiences else ")") for e in self.visible(viewer)]
        return "\n".join(lines) if lines else "(none yet)"
