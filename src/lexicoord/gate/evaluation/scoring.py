"""One evaluated check, scored by its benchmark's own rule: did the robot end up doing what the person meant?

A check that is not ``clear`` (the gate refused or could not decide) never succeeds: the robot did nothing. A
clear check is scored on what it agreed to:

- **KnowNo** (Ren et al. 2023: a plan succeeds when the action taken is one the person intended; asking for help
  lets the person pick it). The agreed reading is resolved to an action: an offered option it names; else the
  option the person chose when asked; else, when the person only said in words what they meant, their intent
  (they told the robot); else the instruction as given, which is right exactly when the benchmark says it has
  no reading the person did not intend (an unambiguous, multi-label or Winograd task).
- **AmbiK** (Ivanova et al. 2025, its code's ``success_rate``): the share of the intent's elements the agreed
  reading names (the reading with the person's answers, or the option chosen), whole words, ``-x`` elements
  counting when absent.

What the evaluation also reads: whether it asked (help), the conformal set's overlap with the benchmark's
ambiguous set (AmbiK's set-size correctness, intersection over union), and whether its first question was
about the ambiguous element (the rule, and the judge model's verdict when there was one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from lexicoord.core.events import Event
from lexicoord.gate.evaluation.judge import asks_about
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


def knowno_success(outcome: dict[str, Any], gold: dict[str, Any], options: Sequence[str]) -> float:
    if outcome.get("status") != "clear":
        return 0.0
    intended = list(gold.get("intended") or [])
    option = _named_option(str(outcome.get("interpretation") or ""), options)
    if option is not None:
        return float(meant(option, intended))
    said = [c for c in outcome.get("clarifications") or [] if not c.get("refused")]
    chosen = [c["choice"] for c in said if c.get("choice")]
    if chosen:
        return float(meant(chosen[-1], intended))
    if said:
        return 1.0
    return float(not gold.get("ambiguous"))


def ambik_success(outcome: dict[str, Any], gold: dict[str, Any]) -> float:
    if outcome.get("status") != "clear":
        return 0.0
    parts = [str(outcome.get("interpretation") or "")]
    for c in outcome.get("clarifications") or []:
        parts += [c.get("choice") or "", c.get("text") or ""]
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
    scorer = ambik_success(outcome, gold) if gold.get("benchmark") == "ambik" else knowno_success(outcome, gold, options)
    clarifications = outcome.get("clarifications") or []
    asked = bool(clarifications) or any(e.type == "gate_question" for e in events)
    first = next((e for e in events if e.type == "gate_question"), None)
    question = str(getattr(first, "question", "") or "") or None
    offered = list(getattr(first, "options", []) or [])
    judged = next((e for e in events if e.type == "gate_question_judged" and getattr(e, "question", None) == question),
                  None)
    conformal = outcome.get("conformal") or {}
    kept = conformal.get("kept") if conformal else None
    target = list(gold.get("ambiguous_set") or [])
    element = list(gold.get("element") or [])
    return Scored(
        item_id=record.item_id, policy=str((record.spec.get("settings") or {}).get("policy", "?")),
        benchmark=str(gold.get("benchmark", "?")), category=str(gold.get("category", "?")),
        ambiguous=bool(gold.get("ambiguous")), status=str(outcome.get("status", "error")), asked=asked,
        success=scorer,
        set_overlap=overlap(kept, target) if kept is not None and gold.get("ambiguous") and target else None,
        set_size=len(kept) if kept is not None else None,
        question=question,
        about_rule=asks_about(question, element, offered) if question and gold.get("ambiguous") and element else None,
        about_judge=getattr(judged, "asks_about", None) if judged is not None else None,
        judge=getattr(judged, "judge", None) if judged is not None else None,
        model_calls=record.model_calls, tokens=record.prompt_tokens + record.completion_tokens,
        latency_s=max(0.0, record.finished_at - record.started_at),
    )
