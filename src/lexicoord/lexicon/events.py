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
        verdict = "coins" if self.accepted else f"proposes (rejected: {self.reason})"
        return f"{verdict} '{self.term}' = {self.definition}"


@event_type
class TermsSharedEvent(Event):
    """Entries made visible to a wider audience; ``snapshot`` is the board as that audience now sees it."""

    type: str = "terms_shared"
    terms: list[str] = Field(default_factory=list)
    snapshot: list[dict[str, object]] = Field(default_factory=list)

    def line(self) -> str:
        return f"shares {', '.join(self.terms) or 'no terms'} ({len(self.snapshot)} on the board)"


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
        return f"uses {whose} term '{self.term}'" + (f" ({self.count}x)" if self.count > 1 else "")


def candidate_events(candidates: list[Candidate], coiner: str, coin_pass: int | None = None) -> list[TermCandidateEvent]:
    """Every candidate of a coining turn as an event; coining is private, so only the coiner's."""
    return [TermCandidateEvent(agent=coiner, term=c.term, definition=c.definition, accepted=c.accepted,
                               reason=c.reason, coin_pass=coin_pass, audience=Audience.only(coiner))
            for c in candidates]


def use_events(uses: list[Use], speaker: str, audience: Audience) -> list[TermUsedEvent]:
    """Every known term used in a turn, with the turn's own audience (a public speech, a faction's channel)."""
    return [TermUsedEvent(agent=speaker, term=u.term, coiner=u.coiner, count=u.count, public=audience.public,
                          audience=audience) for u in uses]
