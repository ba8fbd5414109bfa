"""The gate's own events: the question put to the person and the person's answer, both public.

The models' moves are the protocols' own events (a proposal, a follower's feedback, a choice), recorded by
the rules the policy ran; these two are what the gate adds, so the record says who agreed to what.
"""

from __future__ import annotations

from pydantic import Field

from lexicoord.core.events import Event, event_type


@event_type
class QuestionEvent(Event):
    """The gate asks the person ``question``, offering ``options`` (may be empty: a free answer)."""

    type: str = "gate_question"
    question: str
    options: list[str] = Field(default_factory=list)
    ambiguity: str = "underspecified"

    def line(self) -> str:
        offered = f" [{' | '.join(self.options)}]" if self.options else ""
        return f"gate asks the person: {self.question}{offered}"


@event_type
class PersonAnswerEvent(Event):
    """The person's move: an option, a free text, both, or a refusal to clarify."""

    type: str = "gate_answer"
    choice: str | None = None
    text: str | None = None
    refused: bool = False

    def line(self) -> str:
        if self.refused:
            return f"{self.agent}: refused to clarify"
        return f"{self.agent}: " + " - ".join(p for p in (self.choice, self.text) if p)


@event_type
class ScoresEvent(Event):
    """A conformal check: each option's normalised probability, the threshold and the set it kept."""

    type: str = "gate_scores"
    probabilities: dict[str, float]
    qhat: float
    kept: list[str]
    letter_mass: float | None = None

    def line(self) -> str:
        shown = ", ".join(f"{k}: {v:.2f}" for k, v in self.probabilities.items())
        return f"{self.agent}: {shown}; kept {len(self.kept)} at qhat {self.qhat:.3f}"
