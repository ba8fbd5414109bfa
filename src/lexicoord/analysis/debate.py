"""Scores and statistics of an ambiguity study, from the stored outcomes and events alone.

Scoring rule (the paper's success): on an ambiguous instruction, the final
verdict is ``ambiguous`` and the question names the ambiguous slot: it contains
one of the slot's cues as whole words ("how many" for a quantity, "the red
bowl" for a noun that fits a block and a bowl), or it asks what the vague term
means ("what do you mean by a few?"). Repeating the vague term is not enough:
"which golden block, the leftmost?" asks about position, not colour. On an unambiguous twin, success is the verdict
``clear``, and a question there is a false alarm, so a model that calls
everything ambiguous cannot score well. An LLM judge, when the run had one,
gives a second opinion on the ambiguous instructions; its agreement with the
rule is reported (share of agreement and Cohen's kappa).

The rule is re-applied at report time, so improving the cues needs no re-run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from statistics import mean
from typing import Any

from pydantic import BaseModel, Field

from lexicoord.core.events import Event
from lexicoord.models.observe import ModelCallEvent
from lexicoord.protocols.debate.common import AmbiguityOutcome
from lexicoord.runs.records import EpisodeRecord
from lexicoord.tasks.instructions import TASK

TYPES = ("attribute", "numerical", "spatial")


class Episode(BaseModel):
    """One finished episode of the study, flattened for tables."""

    episode_id: int | None
    item_id: str
    pair: str | None
    type: str
    subtype: str
    ambiguous: bool
    instruction: str
    condition: str
    config: str
    model: str
    termination: str
    consensus: bool | None
    rounds: int
    verdict: str | None
    question: str
    detected: bool
    rule: bool | None
    judge: bool | None
    success: bool | None
    false_alarm: bool | None
    wall_time: float
    model_time: float
    calls: int
    error: str | None = None
    #: The debate as it went: one entry per proposal, feedback or judgement, in order.
    moves: list[dict[str, Any]] = Field(default_factory=list)


def config_label(condition: str, model: str) -> str:
    short = model.split("/", 1)[-1] if model else "?"
    return f"Single({short})" if condition == "single" else f"Debate({short})"


def episodes_from(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> list[Episode]:
    """Finished episodes (done, with an outcome); failed episodes are counted apart by the caller."""
    out = []
    for record, events in rows:
        if record.status != "done" or not record.outcome:
            continue
        o, item = AmbiguityOutcome.model_validate(record.outcome), record.spec.get("item", {})
        condition, model, verdict, question = o.condition, o.config_model, o.verdict, o.question
        rule = TASK.score(item, o)  # the task's own measure: the paper's rule, an error never a success
        judge = o.judge.asks_slot if o.judge else None
        ambiguous = bool(item.get("ambiguous"))
        # The judge scores the episode; its call is not part of the debate's time.
        calls = [e for e in events if isinstance(e, ModelCallEvent) and e.agent != "judge"]
        judging = sum(e.latency for e in events if isinstance(e, ModelCallEvent) and e.agent == "judge")
        out.append(Episode(
            episode_id=record.id, item_id=record.item_id, pair=item.get("pair"), type=item.get("type", "other"),
            subtype=item.get("subtype", ""), ambiguous=ambiguous, instruction=item.get("instruction", ""),
            condition=condition, config=config_label(condition, model), model=model,
            termination=o.termination, consensus=o.consensus if condition == "debate" else None,
            rounds=o.rounds, verdict=verdict, question=question,
            detected=verdict == "ambiguous", rule=rule, judge=judge,
            success=rule, false_alarm=(verdict == "ambiguous") if not ambiguous and verdict else None,
            wall_time=max(0.0, (record.finished_at or 0) - (record.started_at or 0) - judging),
            model_time=sum(c.latency for c in calls), calls=len(calls),
            error=o.error, moves=[_move(e) for e in events if e.type in ("proposal", "feedback", "judge")],
        ))
    return _unique_labels(out)


def failed_by_config(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> Counter[str]:
    """Failed episodes (a model that could not be reached, a prompt too long) by configuration label."""
    out: Counter[str] = Counter()
    for record, _ in rows:
        if record.status == "failed":
            settings, lineup = record.spec.get("settings", {}), record.spec.get("lineup", [])
            condition = settings.get("condition", "debate")
            out[config_label(condition, (lineup[0].get("model") if lineup else "") or "")] += 1
    return out


def _unique_labels(episodes: list[Episode]) -> list[Episode]:
    """Configurations are labelled by short model name unless two different models share it."""
    by_short: dict[str, set[str]] = defaultdict(set)
    for e in episodes:
        by_short[e.model.split("/", 1)[-1]].add(e.model)
    for e in episodes:
        if len(by_short[e.model.split("/", 1)[-1]]) > 1:
            e.config = ("Single" if e.condition == "single" else "Debate") + f"({e.model})"
    return episodes


def _move(e: Event) -> dict[str, Any]:
    d = e.model_dump(include={"type", "round", "agent", "role", "verdict", "question", "stance", "reasoning",
                              "alternative", "asks_slot", "failure", "raw"})
    if not d.get("failure"):
        d.pop("raw", None)  # the raw reply matters only when it could not be read
    return {k: v for k, v in d.items() if v not in (None, "")}


def _rate(flags: Iterable[bool | None]) -> float | None:
    values = [f for f in flags if f is not None]
    return sum(values) / len(values) if values else None


class ConfigStats(BaseModel):
    config: str
    condition: str
    model: str
    ambiguous: int
    success: float | None
    success_by_type: dict[str, float | None]
    unambiguous: int
    false_alarms: float | None
    errors: int
    #: Episodes that failed outright (not in any rate above; a resumed run plays them again).
    failed: int = 0
    mean_time: float | None
    mean_model_time: float | None
    # debates only
    consensus_rate: float | None = None
    non_consensus_rate: float | None = None
    mean_rounds_to_consensus: float | None = None
    consensus_success: float | None = None
    rounds_to_consensus: dict[int, int] = Field(default_factory=dict)


class Agreement(BaseModel):
    judged: int
    agree: float | None
    kappa: float | None


class StudyStats(BaseModel):
    episodes: int
    failed: int
    types: list[str]
    configs: list[ConfigStats]
    judge: Agreement | None


def cohen_kappa(a: list[bool], b: list[bool]) -> float | None:
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def _config_order(label: str) -> tuple[int, str]:
    return (0 if label.startswith("Single") else 1, label)


def compute(episodes: list[Episode], failed: int = 0, failed_configs: dict[str, int] | None = None) -> StudyStats:
    types = sorted({e.type for e in episodes if e.ambiguous}, key=lambda t: (t not in TYPES, t))
    by_config: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        by_config[e.config].append(e)
    configs = []
    for label in sorted(by_config, key=_config_order):
        eps = by_config[label]
        amb = [e for e in eps if e.ambiguous]
        clear = [e for e in eps if not e.ambiguous]
        stats = ConfigStats(
            config=label, condition=eps[0].condition, model=eps[0].model, ambiguous=len(amb),
            success=_rate(e.success for e in amb),
            success_by_type={t: _rate(e.success for e in amb if e.type == t) for t in types},
            unambiguous=len(clear), false_alarms=_rate(e.false_alarm for e in clear),
            errors=sum(1 for e in eps if e.termination == "error"), failed=(failed_configs or {}).get(label, 0),
            # Table 2 is over the ambiguous instructions, like the paper's, when there are any.
            mean_time=mean(e.wall_time for e in (amb or eps)),
            mean_model_time=mean(e.model_time for e in (amb or eps)),
        )
        if stats.condition == "debate":
            # The paper's Figures 6-7 and Table 1 are over the ambiguous instructions debated.
            done = amb or eps
            reached = [e for e in done if e.consensus]
            stats.consensus_rate = len(reached) / len(done)
            stats.non_consensus_rate = 1 - stats.consensus_rate
            stats.mean_rounds_to_consensus = mean(e.rounds for e in reached) if reached else None
            stats.consensus_success = _rate(e.success for e in reached)
            stats.rounds_to_consensus = dict(sorted(Counter(e.rounds for e in reached).items()))
        configs.append(stats)
    pairs = [(e.rule, e.judge) for e in episodes if e.ambiguous and e.rule is not None and e.judge is not None]
    judge = None
    if any(e.judge is not None for e in episodes):
        rule_v, judge_v = [bool(r) for r, _ in pairs], [bool(j) for _, j in pairs]
        judge = Agreement(judged=len(pairs), agree=_rate(r == j for r, j in zip(rule_v, judge_v)),
                          kappa=cohen_kappa(rule_v, judge_v))
    return StudyStats(episodes=len(episodes), failed=failed, types=types, configs=configs, judge=judge)


def statistics(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> StudyStats:
    """The study's statistics of a run's stored episodes, failed ones counted per configuration (registered)."""
    rows = list(rows)
    failed = sum(1 for r, _ in rows if r.status == "failed")
    return compute(episodes_from(rows), failed=failed, failed_configs=dict(failed_by_config(rows)))
