"""Does the gate's question ask about the item's ambiguous element? A rule always; a judge model when given.

The debate paper's slot rule reads tabletop slots (quantity, colour, relation) and does not reach kitchen tasks,
and word overlap with the benchmark's gold question would credit a question for echoing the instruction. So a
question is judged by what it asks about: the benchmark's ambiguous element (KnowNo's possible objects or
locations, AmbiK's ``amb_shortlist``, else its variants).

- The rule (:func:`asks_about`): the question's own words name two of the element's alternatives, or name one
  of them or the noun they share ("knife" for chef's knife / butter knife) in a question that asks which
  ("which", "what kind", "or" ...). Always computed, at report time. The readings offered beside a question are
  not read (they come with every question, whatever it asks), and the fixed questions of the set policies
  (conformal, coalition: "Which of these do you mean?") are not judged: their options are the question.
- A judge model, when the evaluation names one: a yes/no on the same element, recorded as an event with the
  judge's name, so the report says which judge decided each score.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import Event, event_type
from lexicoord.core.seat import Request
from lexicoord.errors import LexicoordError
from lexicoord.gate.deliberation import DIVERGED_QUESTION, PROMPTS, SET_QUESTION
from lexicoord.gate.items import GateItem
from lexicoord.prompting import fence
from lexicoord.tasks.asking import names, normalise

#: Words of a question that asks which thing is meant.
WHICH = ("which", "what kind", "what type", "what sort", "what should", "what do you", "whether", " or ", "prefer",
         "should i use", "do you want", "do you mean", "would you like")

JUDGE_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}},
                                "required": ["verdict"], "additionalProperties": False}


@event_type
class QuestionJudgedEvent(Event):
    """A judge model's verdict on whether a question the gate asked is about the item's ambiguous element."""

    type: str = "gate_question_judged"
    question: str
    #: ``None``: the judge's reply could not be read (counted apart, never as yes).
    asks_about: bool | None
    judge: str
    seconds: float = 0.0

    def line(self) -> str:
        said = {True: "yes", False: "no", None: "unreadable"}[self.asks_about]
        return f"{self.judge} judges '{self.question}' about the ambiguous element: {said}"


def shared_nouns(element: Sequence[str]) -> set[str]:
    """The last words two or more alternatives share ("knife" of "chef's knife" and "butter knife")."""
    last = [normalise(e).split()[-1] for e in element if normalise(e)]
    return {w for w in last if last.count(w) > 1 and len(w) > 2}


def written_by_a_model(question: str) -> bool:
    """Whether a model wrote the question (``single``, ``debate``); the set policies' fixed questions are their
    options, and say nothing about a model's questioning."""
    return question.strip() not in (SET_QUESTION, DIVERGED_QUESTION)


def asks_about(question: str, element: Sequence[str]) -> bool:
    """The rule: whether ``question``'s own words ask which of ``element`` the person means (the readings offered
    beside it are not read: they are offered with every question, whatever it asks)."""
    if not question.strip() or not element:
        return False
    named = [e for e in element if names(question, e)]
    if len(named) >= 2:
        return True
    asking = f" {normalise(question)} "
    which = any(w in f" {question.casefold()} " or w.strip() in asking.split() for w in WHICH)
    return which and (bool(named) or any(names(question, n) for n in shared_nouns(element)))


async def judge_questions(ctx: EpisodeContext[GateItem], questions: Sequence[str], element: Sequence[str]) -> None:
    """Ask the line-up's ``judge`` seat about each question a model wrote; each verdict is an event of this episode,
    with the seconds it took (the evaluation leaves the judge's calls and time out of the gate's cost)."""
    judges = [s for s in ctx.spec.lineup if s.role == "judge"]
    questions = [q for q in questions if written_by_a_model(q)]
    if not judges or not element:
        return
    spec = judges[0]
    seat = ctx.seat(spec, system_prompt=PROMPTS.render("gate_system"))
    for question in questions:
        prompt = PROMPTS.render("gate_judge", element=fence("; ".join(element), "ELEMENT"),
                                question=fence(question, "QUESTION"))
        started = time.monotonic()
        try:
            answer = await seat.answer(Request(kind="judge", prompt=prompt, schema=JUDGE_SCHEMA, max_tokens=16,
                                               temperature=0.0))
        except LexicoordError:  # a judge that cannot be reached leaves the question unjudged, never the gate failed
            verdict = None
        else:
            verdict = answer.value.get("verdict") if answer.ok and answer.value else None
        ctx.emit(QuestionJudgedEvent(agent=spec.name, question=question, judge=spec.model or spec.name,
                                     asks_about=None if verdict is None else verdict == "yes",
                                     seconds=round(time.monotonic() - started, 3)))
