"""One evaluated check, scored by its benchmark's own rule: did the robot end up doing what the person meant?

A check that is not ``clear`` (the gate refused or could not decide) never succeeds: the robot did nothing.
Asking helps only when the person could answer it, as in KnowNo, where help succeeds when the set put to the
person holds what they meant: the person chose an offered option, or the question a model wrote was about the
ambiguous element (the judge model's verdict when there is one, else the rule of :mod:`.judge`). A clear check
is scored on what it agreed to:

- **KnowNo** (Ren et al. 2023: a plan succeeds when the action taken is one the person intended). The agreed
  reading is resolved to an action: an offered option it names; else the option the person chose; else, when
  the person answered a question about the element in words, their intent; else the instruction as given,
  which is right exactly when the benchmark says it has no reading the person did not intend (an unambiguous,
  multi-label or Winograd task). ``single`` and ``debate`` agree on the instruction, not on an option, so this
  last case credits them on clear tasks without checking which object they would pick.
- **AmbiK** (Ivanova et al. 2025, its code's ``success_rate``): the share of the intent's elements named by what
  the robot agreed to (its own reading, or the option chosen), with the person's words added only when the
  help counts; whole words, ``-x`` elements counting when absent.

What the evaluation also reads: whether it asked (help), the conformal set's overlap with the benchmark's
ambiguous set (AmbiK's set-size correctness, intersection over union), and whether the first question a model
wrote was about the ambiguous element (by the rule, and by the judge model's verdict when there was one). A
judge's calls and seconds are the evaluation's, not the gate's: they are left out of the check's cost (its
tokens are not, the backend reports them per episode).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from lexicoord.core.events import Event
from lexicoord.gate.evaluation.judge import QuestionJudgedEvent, asks_about, written_by_a_model
from lexicoord.gate.evaluation.person import meant
from lexicoord.runs.records import EpisodeRecord
from lexicoord.tasks.ambik import intent_share
from lexicoord.tasks.asking import normalise


class Scored(BaseModel):
    """One check of an evaluation, with everything its metrics count."""

    item_id: str
    policy: str
    benchmark: str
    category: str
    ambiguous: bool
    #: ``clear``, ``refuse`` or ``error`` (a failed episode is ``error``).
    status: str
    asked: bool
    #: 1 or 0 (KnowNo); the share of intent elements named (AmbiK).
    success: float
    #: Conformal only, ambiguous items with an ambiguous set: |kept ∩ set| / |kept ∪ set|.
    set_overlap: float | None = None
    set_size: int | None = None
    question: str | None = None
    #: Whether the first question asked about the ambiguous element: by the rule, and by the judge model if any.
    about_rule: bool | None = None
    about_judge: bool | None = None
    judge: str | None = None
    model_calls: int = 0
    tokens: int = 0
    latency_s: float = 0.0


def _named_option(reading: str, options: Sequence[str]) -> str | None:
    return next((o for o in options if normalise(o) == normalise(reading)), None)


def _answered(outcome: dict[str, Any]) -> dict[str, Any] | None:
    """The last clarification the person answered (not refused), or ``None``."""
    said = [c for c in outcome.get("clarifications") or [] if not c.get("refused") and (c.get("choice") or c.get("text"))]
    return said[-1] if said else None


def _own_words(outcome: dict[str, Any]) -> str:
    """What the robot agreed to, without the person's words the gate appended (`` (clarified: ...)``)."""
    return str(outcome.get("interpretation") or "").split(" (clarified: ", 1)[0]


def knowno_success(outcome: dict[str, Any], gold: dict[str, Any], options: Sequence[str],
                   about: Callable[[str], bool] = lambda q: False) -> float:
    """KnowNo's plan success: the action taken is one the person meant. Help counts when the person could give the
    answer: an option they mean was offered and chosen, or, answering in words, the question was about the
    ambiguous element (``about``)."""
    if outcome.get("status") != "clear":
        return 0.0
    intended = list(gold.get("intended") or [])
    option = _named_option(str(outcome.get("interpretation") or ""), options)
    if option is not None:
        return float(meant(option, intended))
    last = _answered(outcome)
    if last is not None and last.get("choice"):
        return float(meant(last["choice"], intended))
    if last is not None and about(str(last.get("question") or "")):
        return 1.0
    return float(not gold.get("ambiguous"))


def ambik_success(outcome: dict[str, Any], gold: dict[str, Any], about: Callable[[str], bool] = lambda q: False) -> float:
    """AmbiK's success rule on what the robot agreed to; the person's words count as part of it only when the
    person could give them: they chose an offered option, or the question was about the ambiguous element."""
    if outcome.get("status") != "clear":
        return 0.0
    parts = [_own_words(outcome)]
    last = _answered(outcome)
    if last is not None and last.get("choice"):
        parts.append(str(last["choice"]))
    elif last is not None and about(str(last.get("question") or "")):
        parts.append(str(last.get("text") or ""))
    return intent_share(" ".join(p for p in parts if p), list(gold.get("intent_elements") or []))


def overlap(kept: Sequence[str], target: Sequence[str]) -> float:
    a, b = {normalise(k) for k in kept}, {normalise(t) for t in target}
    return len(a & b) / len(a | b) if a | b else 0.0


def score(record: EpisodeRecord, events: Sequence[Event]) -> Scored | None:
    """The check's score, or ``None`` when its item carries no gold fields (not an evaluation's check)."""
    item = record.spec.get("item") or {}
    gold = item.get("gold")
    if not isinstance(gold, dict):
        return None
    outcome: dict[str, Any] = (record.outcome or {}) if record.status == "done" else {"status": "error"}
    options = list(item.get("candidates") or [])
    element = list(gold.get("element") or [])
    judged = [e for e in events if isinstance(e, QuestionJudgedEvent)]
    verdicts = {e.question: e.asks_about for e in judged}

    def about(question: str) -> bool:
        """Whether the person, asked ``question``, could say what they meant: the judge's verdict when there is one,
        else the rule; never for the set policies' fixed questions (their options are the question)."""
        if not written_by_a_model(question):
            return False
        if question in verdicts:
            return bool(verdicts[question])
        return asks_about(question, element)

    if gold.get("benchmark") == "ambik":
        success = ambik_success(outcome, gold, about)
    else:
        success = knowno_success(outcome, gold, options, about)
    asked = bool(outcome.get("clarifications")) or any(e.type == "gate_question" for e in events)
    questions = [str(getattr(e, "question", "")) for e in events if e.type == "gate_question"]
    question = next((q for q in questions if written_by_a_model(q)), None)
    first = next((e for e in judged if e.question == question), None)
    conformal = outcome.get("conformal") or {}
    kept = conformal.get("kept") if conformal else None
    target = list(gold.get("ambiguous_set") or [])
    return Scored(
        item_id=record.item_id, policy=str((record.spec.get("settings") or {}).get("policy", "?")),
        benchmark=str(gold.get("benchmark", "?")), category=str(gold.get("category", "?")),
        ambiguous=bool(gold.get("ambiguous")), status=str(outcome.get("status", "error")), asked=asked,
        success=success,
        set_overlap=overlap(kept, target) if kept is not None and gold.get("ambiguous") and target else None,
        set_size=len(kept) if kept is not None else None,
        question=question or (questions[0] if questions else None),
        about_rule=asks_about(question, element) if question and gold.get("ambiguous") and element else None,
        about_judge=first.asks_about if first is not None else None,
        judge=first.judge if first is not None else None,
        # the judge is the evaluation's, not the gate's: its calls and time are left out of the check's cost
        model_calls=max(0, record.model_calls - len(judged)), tokens=record.prompt_tokens + record.completion_tokens,
        latency_s=max(0.0, record.finished_at - record.started_at - sum(e.seconds for e in judged)),
    )
