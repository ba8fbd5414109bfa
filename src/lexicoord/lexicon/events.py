"""What the lexicon layer records: every candidate with its verdict, every share, every use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from lexicoord.core.audience import Audience
from lexicoord.core.events import Event, event_type

if TYPE_CHECKING:
    from lexicoord.lexicon.coining import Candidate
    from lexicoord.lexicon.uses import Use


@event_type
class TermCandidateEvent(Event):
    """A ``term = definition`` candidate from a coining turn, accepted or rejected with its reason."""

    type: str = "term_candidate"
    term: str
    definition: str
    accepted: bool
    #: ``None`` when accepted; otherwise why (``not_used``, ``on_board``, ``dictionary_word``, ``task_word``,
    #: ``blocklisted``, ``final_answer_marker``, ``bad_form``, ``duplicate``).
    reason: str | None = None
    coin_pass: int | None = None

    def line(self) -> str:
        said = f"'{self.term}' = {self.definition}"
        where = f" (pass {self.coin_pass})" if self.coin_pass else ""
        if self.accepted:
            return f"coins {said}{where}"
        return f"proposes {said}{where}, rejected: {(self.reason or 'no reason').replace('_', ' ')}"


@event_type
class TermsSharedEvent(Event):
    """Entries made visible to a wider audience; ``snapshot`` is the board as that audience now sees it."""

    type: str = "terms_shared"
    terms: list[str] = Field(default_factory=list)
    snapshot: list[dict[str, object]] = Field(default_factory=list)

    def line(self) -> str:
        said = ", ".join(f"'{t}'" for t in self.terms) or "no new term"
        return f"the board is shared with {self.audience.describe()}: {said} ({len(self.snapshot)} entries in all)"


@event_type
class TermUsedEvent(Event):
    """A known term used in a turn: who used it, whose term it was, and whether the turn was public."""

    type: str = "term_used"
    term: str
    coiner: str
    count: int = 1
    public: bool = True

    def line(self) -> str:
        whose = "its own" if self.coiner == self.agent else f"{self.coiner}'s"
        times = f" {self.count} times" if self.count > 1 else ""
        return f"uses {whose} term '{self.term}'{times}, speaking to {self.audience.describe()}"


def candidate_events(candidates: list[Candidate], coiner: str, coin_pass: int | None = None) -> list[TermCandidateEvent]:
    """Every candidate of a coining turn as an event; coining is private, so only the coiner's."""
    return [TermCandidateEvent(agent=coiner, term=c.term, definition=c.definition, accepted=c.accepted,
                               reason=c.reason, coin_pass=coin_pass, audience=Audience.only(coiner))
            for c in candidates]


def use_events(uses: list[Use], speaker: str, audience: Audience) -> list[TermUsedEvent]:
    """Every known term used in a turn, with the turn's own audience (a public speech, a faction's channel)."""
    return [TermUsedEvent(agent=speaker, term=u.term, coiner=u.coiner, count=u.count, public=audience.public,
                          audience=audience) for u in uses]
