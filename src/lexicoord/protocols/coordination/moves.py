"""The three requests of the coordination game, the same for every seat, and how answers become moves.

``choose`` (every round), and for the leader ``announce`` (round 0) and
``clarify`` (between rounds, optional). Each is one :class:`Request`: the view
the seat may see, the prompt a model reads (the view's text, fenced), and the
answer's schema, so a person's justification has the same limit as a model's.
A failed move (a person's timeout, an unparseable reply after a retry) becomes
a :class:`Decision` with ``choice=None`` and the reason. A model that gives no
reply at all (unreachable, server errors, timeouts after retries) is not a move:
the seat raises and the episode fails, so a resume plays it again.
"""

from __future__ import annotations

from typing import Any

from lexicoord.core.seat import Answer, Request
from lexicoord.prompting import Prompts, fence
from lexicoord.protocols.coordination.views import Decision, RoundView

PROMPTS = Prompts("lexicoord.protocols.coordination")

#: The longest justification and clarifying statement, for people and models alike.
MAX_JUSTIFICATION = 160
MAX_STATEMENT = 400
CHOICE_TOKENS = 160
STATEMENT_TOKENS = 120


def choice_schema(options: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": options},
            "justification": {"type": "string", "minLength": 1, "maxLength": MAX_JUSTIFICATION},
        },
        "required": ["choice", "justification"],
        "additionalProperties": False,
    }


STATEMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"statement": {"type": "string", "minLength": 1, "maxLength": MAX_STATEMENT}},
    "required": ["statement"],
    "additionalProperties": False,
}


def _context(view: RoundView) -> str:
    """The announcement, every earlier round with the clarification that preceded it, all fenced."""
    parts: list[str] = []
    if view.announcement is not None and view.announcement.choice:
        said = f"{view.announcement.choice}: {view.announcement.justification}"
        parts.append(f"The leader ({view.leader}) announced:\n{fence(said, 'ANNOUNCEMENT')}")
    for past in view.history:
        if past.clarification:
            parts.append(f"Before round {past.round} the leader clarified:\n{fence(past.clarification, 'CLARIFICATION')}")
        lines = [
            f"- {name}: {d.choice or '(no valid choice)'}: {d.justification}" for name, d in past.decisions.items()
        ]
        parts.append(f"Round {past.round}, the players chose:\n{fence(chr(10).join(lines), 'ROUND')}")
    if view.clarification:
        parts.append(f"Now the leader clarifies:\n{fence(view.clarification, 'CLARIFICATION')}")
    return ("\n" + "\n\n".join(parts) + "\n") if parts else ""


def _options(view: RoundView) -> str:
    """The candidate meanings, fenced: they may come from a user's file or from the leader."""
    return fence("\n".join(f"- {o}" for o in view.options), "OPTIONS")


def _word(view: RoundView) -> str:
    return fence(view.word, "WORD")


def choose_request(view: RoundView, seat: str) -> Request:
    role_note = ""
    if view.leader == seat and view.announcement and view.announcement.choice:
        role_note = f" You are the leader; you announced the meaning \"{view.announcement.choice}\"."
    prompt = PROMPTS.render(
        "coord_choose", sentence=fence(view.sentence, "SENTENCE"), word=_word(view), options=_options(view),
        context=_context(view), round=str(view.round), role_note=role_note,
    )
    return Request(kind="choose", round=view.round, view=view.model_dump(), prompt=prompt,
                   schema=choice_schema(view.options), max_tokens=CHOICE_TOKENS)


def announce_request(view: RoundView) -> Request:
    prompt = PROMPTS.render(
        "coord_announce", sentence=fence(view.sentence, "SENTENCE"), word=_word(view), options=_options(view)
    )
    return Request(kind="announce", round=0, view=view.model_dump(), prompt=prompt,
                   schema=choice_schema(view.options), max_tokens=CHOICE_TOKENS)


def clarify_request(view: RoundView, *, may_end: bool = False) -> Request:
    """The leader may clarify (a statement), go on without one (``pass``), or end the game (``end``).

    A person ends it with the ``end`` action. A model answers JSON only, so without ``may_end`` it can
    clarify and nothing else; with it, the prompt and schema offer the end as ``"end": true``.
    """
    said = view.announcement.choice if view.announcement and view.announcement.choice else "(nothing)"
    prompt = PROMPTS.render(
        "coord_clarify_or_end" if may_end else "coord_clarify", sentence=fence(view.sentence, "SENTENCE"),
        word=_word(view), options=_options(view), announcement=fence(said, "ANNOUNCEMENT"), context=_context(view),
    )
    return Request(kind="clarify", round=view.round, view=view.model_dump(), prompt=prompt,
                   schema=END_SCHEMA if may_end else STATEMENT_SCHEMA, actions=("pass", "end"),
                   max_tokens=STATEMENT_TOKENS)


#: The clarification request when the leader is also offered the end of the game: ``end`` true ends it (the
#: statement then says why and is not shown as a clarification). ``end`` may be left out, which plays on, so a
#: person's plain statement still answers it.
END_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"statement": STATEMENT_SCHEMA["properties"]["statement"], "end": {"type": "boolean"}},
    "required": ["statement"],
    "additionalProperties": False,
}


def ends_game(answer: Answer) -> bool:
    """Whether a clarification answer ends the game: a person's ``end`` action, or a model's ``"end": true``."""
    return answer.action == "end" or (answer.ok and answer.value is not None and answer.value.get("end") is True)


def decision(answer: Answer) -> Decision:
    """A move as everyone sees it. A valid move keeps only its choice and justification: the raw reply stays
    in the seat's own model-call record (only that seat's audience); a failed move keeps it, to be audited."""
    if answer.ok and answer.value is not None:
        return Decision(choice=answer.value["choice"], justification=answer.value["justification"])
    return Decision(choice=None, failure=answer.failure or f"no choice ({answer.action})", raw=answer.raw)
