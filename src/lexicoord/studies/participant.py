"""A participant and the rules of their way through a study: which stage follows which, what each accepts.

The server alone moves a participant on. A page answers the stage the server says the participant is at,
naming it, so an answer for any other stage (a forged jump, a stale second tab) is refused and changes
nothing. The lobby and the game are left only by the server's schedule. Every session ends with exactly
one outcome and its code: :func:`finish` never overwrites an outcome already given.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from lexicoord.errors import LexicoordError
from lexicoord.studies.file import Outcome, StudyFile, SurveyQuestion

Stage = Literal["consent", "instructions", "quiz", "lobby", "game", "survey", "done"]
STAGES: tuple[Stage, ...] = ("consent", "instructions", "quiz", "lobby", "game", "survey", "done")
#: A participant id as Prolific (24 hex digits) and lab pools write them: letters, digits, _ - . @ (no spaces).
PID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


class StageError(LexicoordError):
    """An answer the participant's stage does not take; ``code`` for programs, the message for people."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code, self.status = code, status


def clean_pid(value: object, name: str = "participant id") -> str:
    """A participant id from a link, or :class:`StageError`."""
    text = value.strip() if isinstance(value, str) else ""
    if not PID.match(text):
        raise StageError("bad_id", f"The link's {name} is missing or malformed; open the study from the link "
                                   "you were given.", 400)
    return text


class QuizAttempt(BaseModel):
    at: float
    answers: dict[str, str]
    wrong: list[str]
    passed: bool


class Dropped(BaseModel):
    at: float
    #: ``disconnected``, ``idle``, or the experimenter's ``ended``.
    reason: str
    game: int | None = None


class Participant(BaseModel):
    """One person's session: who (the link's ids), where they are, what they answered, how it ended."""

    pid: str
    #: Prolific's ``STUDY_ID`` and ``SESSION_ID`` from the link, kept with every record.
    study_ref: str | None = None
    session: str | None = None
    token_hash: str
    stage: Stage = "consent"
    #: When the participant entered each stage (seconds since the epoch).
    entered: dict[str, float] = Field(default_factory=dict)
    consent: bool | None = None
    quiz: list[QuizAttempt] = Field(default_factory=list)
    survey: dict[str, str | int] = Field(default_factory=dict)
    #: Attention checks by question id: passed or not.
    attention: dict[str, bool] = Field(default_factory=dict)
    #: Place in the lobby's queue (arrival order).
    arrival: int | None = None
    group: str | None = None
    seat: str | None = None
    #: The condition of the participant's group (None: the study has none).
    condition: str | None = None
    dropped: Dropped | None = None
    outcome: Outcome | None = None
    code: str | None = None

    def move_to(self, stage: Stage, now: float) -> None:
        self.stage = stage
        self.entered.setdefault(stage, now)

    def seconds_in(self, stage: Stage) -> float | None:
        """Seconds from entering ``stage`` to entering the one after it (None if never entered or not left)."""
        if stage not in self.entered:
            return None
        later = [t for s, t in self.entered.items() if _order(s) > _order(stage)]
        return round(min(later) - self.entered[stage], 3) if later else None


def _order(stage: str) -> int:
    return STAGES.index(stage)  # type: ignore[arg-type,unused-ignore]


def following(study: StudyFile, stage: Stage) -> Stage:
    """The stage after ``stage``: a quiz or survey with no questions is not a stage at all."""
    i = STAGES.index(stage) + 1
    while (STAGES[i] == "quiz" and not study.quiz.questions) or (STAGES[i] == "survey" and not study.survey.questions):
        i += 1
    return STAGES[i]


def finish(study: StudyFile, p: Participant, outcome: Outcome, now: float) -> bool:
    """End ``p``'s session with ``outcome`` and its code; False (and nothing changed) if it had ended."""
    if p.outcome is not None:
        return False
    p.outcome, p.code = outcome, study.completion.codes.of(outcome)
    p.move_to("done", now)
    return True


def answer(study: StudyFile, p: Participant, stage: str, body: dict[str, Any], now: float) -> dict[str, Any]:
    """Apply the page's answer to ``stage``; what the page is told back (the quiz's wrong questions)."""
    if p.stage != stage:
        raise StageError("wrong_stage", f"This page answers '{stage}', but you are at '{p.stage}'; reload the page.")
    if stage == "consent":
        agree = body.get("agree")
        if not isinstance(agree, bool):
            raise StageError("bad_answer", "Say whether you agree (agree: true or false).", 422)
        p.consent = agree
        if not agree:
            finish(study, p, "no_consent", now)
        else:
            p.move_to(following(study, "consent"), now)
        return {}
    if stage == "instructions":
        p.move_to(following(study, "instructions"), now)
        return {}
    if stage == "quiz":
        return _quiz(study, p, body, now)
    if stage == "survey":
        _survey(study, p, body, now)
        finish(study, p, "completed", now)
        return {}
    raise StageError("wait", "Nothing to answer here: the study moves you on by itself.")


def _answers(body: dict[str, Any]) -> dict[str, Any]:
    answers = body.get("answers")
    if not isinstance(answers, dict):
        raise StageError("bad_answer", "Send the answers as an object of question id to answer.", 422)
    return answers


def _quiz(study: StudyFile, p: Participant, body: dict[str, Any], now: float) -> dict[str, Any]:
    answers = _answers(body)
    known = {q.id: q for q in study.quiz.questions}
    unknown = sorted(set(answers) - set(known))
    if unknown:
        raise StageError("bad_answer", f"The quiz has no question '{unknown[0][:40]}'.", 422)
    given = {k: v for k, v in answers.items() if isinstance(v, str) and len(v) <= 500}
    wrong = [q.id for q in study.quiz.questions if given.get(q.id) != q.answer]
    p.quiz.append(QuizAttempt(at=now, answers=given, wrong=wrong, passed=not wrong))
    if not wrong:
        p.move_to(following(study, "quiz"), now)
    elif len(p.quiz) >= study.quiz.attempts:
        finish(study, p, "failed_quiz", now)
    return {"wrong": wrong, "attempts_left": max(0, study.quiz.attempts - len(p.quiz))}


def _survey(study: StudyFile, p: Participant, body: dict[str, Any], now: float) -> None:
    answers = _answers(body)
    known = {q.id: q for q in study.survey.questions}
    unknown = sorted(set(answers) - set(known))
    if unknown:
        raise StageError("bad_answer", f"The survey has no question '{unknown[0][:40]}'.", 422)
    kept: dict[str, str | int] = {}
    for q in study.survey.questions:
        value = answers.get(q.id)
        if isinstance(value, str) and not value.strip():
            value = None  # spaces alone are no answer
        if value is None:
            if q.required:
                raise StageError("bad_answer", f"Please answer: {q.text[:80]}", 422)
            continue
        kept[q.id] = _value(q, value)
    p.survey = kept
    p.attention = {q.id: kept.get(q.id) == q.expect for q in study.survey.questions if q.expect is not None}


def _point(value: Any) -> int | None:
    """A point of a scale as pages and scripts send it: 5, 5.0 or "5" (never True, 5.5 or "five")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _value(q: SurveyQuestion, value: Any) -> str | int:
    if q.kind == "likert":
        point = _point(value)
        if point is None or not 1 <= point <= q.scale:
            raise StageError("bad_answer", f"'{q.id}' is a point from 1 to {q.scale}.", 422)
        return point
    if not isinstance(value, str):
        raise StageError("bad_answer", f"'{q.id}' is answered with text.", 422)
    if q.kind == "choice":
        if value not in q.options:
            raise StageError("bad_answer", f"'{q.id}' is one of its options.", 422)
        return value
    if len(value) > q.max_length:
        raise StageError("too_long", f"'{q.id}' takes at most {q.max_length} characters; yours has {len(value)}.",
                         413)
    return value
