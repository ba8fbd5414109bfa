"""Scores and statistics of a debate study, from the stored outcomes and events alone.

Two measures on an ambiguous instruction, reported side by side:

- **detection**, the paper's measure (its Figures 2 to 5): the final verdict is
  ``ambiguous``; the paper counts recognising the ambiguity as success.
- **right-slot question**, a stricter measure of this project's: detected, and the
  question asks about the ambiguous slot and no other, by the rule of
  :mod:`lexicoord.tasks.clarifying`. A question that asks about several slots at once
  is a *shotgun* question, counted apart and never as success.

On an unambiguous twin the answer is ``clear`` (right), a question (a false alarm),
or an unreadable reply (an error), three shares of one denominator. A debate ends
in consensus, without consensus after R rounds, or in error, again three shares of
one denominator (Figure 7 shows non-consensus and errors apart). An episode that
ended in error counts in every rate of its configuration, as a failure; an episode
that failed outright (a model that could not be reached) is in no rate, and is
counted per configuration beside them. Every rate carries its count and
denominator (:class:`Share`).

An LLM judge, when the run had one, gives a second opinion on the right-slot
measure; its agreement with the rule is reported (share and Cohen's kappa, which
is undefined when chance agreement is 1) over the questions it answered. A judge
that was asked and gave no verdict (unreachable, or a reply neither yes nor no)
is counted as failed, "k of n questions", and is in no rate: a failure is not a
"no". A run whose judge failed throughout still had a judge. The rule is
re-applied at report time, so improving it needs no re-run.

Table 2 times episodes, so it leaves out every episode one of whose model calls was
answered from the reply cache (a cached reply takes no time), and the report prints
the concurrency the run used beside the times.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from statistics import mean
from typing import Any

from pydantic import BaseModel, Field, computed_field

from lexicoord.analysis.compare import Outcome
from lexicoord.analysis.intervals import Interval, mean_ci
from lexicoord.analysis.reading import keeping_failed
from lexicoord.core.events import Event
from lexicoord.models.observe import ModelCallEvent
from lexicoord.protocols.debate import DebateStudy
from lexicoord.protocols.debate.common import DebateOutcome
from lexicoord.runs.records import EpisodeRecord
from lexicoord.tasks.instructions import TASK, question_kind

TYPES = ("attribute", "numerical", "spatial")


class Share(BaseModel):
    """A rate with what it is a rate of: ``k`` of ``n``."""

    k: int = 0
    n: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None

    @classmethod
    def of(cls, flags: Iterable[bool | None]) -> Share:
        """The share of true flags among those that are not ``None``."""
        values = [f for f in flags if f is not None]
        return cls(k=sum(values), n=len(values))


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
    #: The paper's measure on an ambiguous instruction: the verdict is ``ambiguous`` (``None`` on a twin).
    detected: bool | None
    #: What the final question asks about, by rule: slot, shotgun, other, none (``None``: not judgeable).
    asks: str | None = None
    #: The stricter measure: on an ambiguous instruction, a right-slot question; on a twin, ``clear``.
    rule: bool | None
    #: The judge's verdict on the final question (``None``: not asked, or it failed; see ``judge_failure``).
    judge: bool | None
    #: The judge the run was configured with, whether or not this episode gave it anything to judge.
    judge_model: str | None = None
    #: Whether the judge was asked about this episode's final question.
    judge_asked: bool = False
    #: Why the judge gave no verdict when it was asked (unreachable, unreadable).
    judge_failure: str | None = None
    #: The paper's success: detection on an ambiguous instruction, ``clear`` on a twin.
    success: bool | None
    false_alarm: bool | None
    wall_time: float
    model_time: float
    calls: int
    #: Model calls answered from the reply cache (the episode is then left out of Table 2).
    cached_calls: int = 0
    error: str | None = None
    #: The debate as it went: one entry per proposal, feedback or judgement, in order.
    moves: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def ended_in_error(self) -> bool:
        return self.termination == "error"


def config_label(condition: str, model: str) -> str:
    short = model.split("/", 1)[-1] if model else "?"
    return f"Single({short})" if condition == "single" else f"Debate({short})"


def episodes_from(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> list[Episode]:
    """Finished episodes (done, with an outcome); failed episodes are counted apart by the caller."""
    out = []
    for record, events in rows:
        if record.status != "done" or not record.outcome:
            continue
        o, item = DebateStudy.outcome_of(record), record.spec.get("item", {})
        condition, model, verdict, question = o.condition, o.config_model, o.verdict, o.question
        rule = TASK.score(item, o)  # the stricter measure; an error is never a success
        judge = o.judge.asks_slot if o.judge else None
        judge_failure = _judge_failure(o, events)
        ambiguous = bool(item.get("ambiguous"))
        # The judge scores the episode; its call is not part of the debate's time.
        calls = [e for e in events if isinstance(e, ModelCallEvent) and e.agent != "judge"]
        judging = sum(e.latency for e in events if isinstance(e, ModelCallEvent) and e.agent == "judge")
        detected = (verdict == "ambiguous" and o.termination != "error") if ambiguous else None
        out.append(Episode(
            episode_id=record.id, item_id=record.item_id, pair=item.get("pair"), type=item.get("type", "other"),
            subtype=item.get("subtype", ""), ambiguous=ambiguous, instruction=item.get("instruction", ""),
            condition=condition, config=config_label(condition, model), model=model,
            termination=o.termination, consensus=o.consensus if condition == "debate" else None,
            rounds=o.rounds, verdict=verdict, question=question,
            detected=detected, asks=question_kind(item, verdict if o.termination != "error" else None, question),
            rule=rule, judge=judge, judge_model=(record.spec.get("settings") or {}).get("judge") or None,
            judge_asked=o.judge is not None, judge_failure=judge_failure,
            success=detected if ambiguous else (verdict == "clear" and o.termination != "error"),
            false_alarm=None if ambiguous else (verdict == "ambiguous" and o.termination != "error"),
            wall_time=max(0.0, (record.finished_at or 0) - (record.started_at or 0) - judging),
            model_time=sum(c.latency for c in calls), calls=len(calls), cached_calls=sum(1 for c in calls if c.cached),
            error=o.error, moves=[_move(e) for e in events if e.type in ("proposal", "feedback", "judge")],
        ))
    return _unique_labels(out)


def _judge_failure(o: DebateOutcome, events: list[Event]) -> str | None:
    """Why an asked judge gave no verdict: the outcome's reason, else its event's (runs stored before the
    outcome kept it), else "no verdict"."""
    if o.judge is None or o.judge.asks_slot is not None:
        return None
    from_event = next((str(getattr(e, "failure", "") or "") for e in events if e.type == "judge"), "")
    return o.judge.failure or from_event or "no verdict"


def failed_by_config(records: Iterable[EpisodeRecord]) -> Counter[tuple[str, bool]]:
    """Failed episodes (a model that could not be reached, a prompt too long) by configuration label and
    by whether the instruction was ambiguous."""
    out: Counter[tuple[str, bool]] = Counter()
    for record in records:
        if record.status == "failed":
            settings, lineup = record.spec.get("settings", {}), record.spec.get("lineup", [])
            condition = settings.get("condition", "debate")
            label = config_label(condition, (lineup[0].get("model") if lineup else "") or "")
            out[(label, bool(record.spec.get("item", {}).get("ambiguous")))] += 1
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


class ConfigStats(BaseModel):
    """One configuration's figures; every rate is a :class:`Share` of finished episodes."""

    config: str
    condition: str
    model: str
    # ambiguous instructions (the paper's Figures 2 to 5): denominators are the finished ambiguous episodes
    ambiguous: int
    detection: Share
    detection_by_type: dict[str, Share]
    right_slot: Share
    right_slot_by_type: dict[str, Share]
    shotgun: Share
    ambiguous_errors: int
    failed_ambiguous: int = 0
    # unambiguous twins: clear, false alarm and error are shares of the finished twins
    unambiguous: int
    clear: Share
    false_alarms: Share
    unambiguous_errors: int
    failed_unambiguous: int = 0
    # Table 2: ambiguous episodes (all episodes when there are none) without a cached reply
    timed: int
    cached_excluded: int
    mean_time: float | None
    mean_model_time: float | None
    #: The mean time's 95% interval over the timed episodes (:data:`lexicoord.analysis.intervals.METHOD`).
    mean_time_ci: Interval | None = None
    # debates only (Table 1, Figures 6 and 7), over the ambiguous instructions debated
    consensus: Share | None = None
    non_consensus: Share | None = None
    debate_errors: Share | None = None
    mean_rounds_to_consensus: float | None = None
    #: Its 95% interval over the debates that reached consensus (the same bootstrap).
    mean_rounds_ci: Interval | None = None
    consensus_detection: Share | None = None
    consensus_right_slot: Share | None = None
    rounds_to_consensus: dict[int, int] = Field(default_factory=dict)

    @property
    def failed(self) -> int:
        return self.failed_ambiguous + self.failed_unambiguous


class Agreement(BaseModel):
    """The run's LLM judge: how often it was asked and failed, and its agreement with the rule on the
    right-slot measure over the answers both gave (a failed question is in no rate)."""

    #: The judge model(s) the run was configured with.
    models: list[str] = Field(default_factory=list)
    #: Final questions of ambiguous instructions sent to the judge.
    asked: int = 0
    #: Of those, the ones it gave no verdict on (unreachable, unreadable).
    failed: int = 0
    #: The distinct reasons it failed, most frequent first (a few).
    failures: list[str] = Field(default_factory=list)
    judged: int
    agree: Share
    kappa: float | None
    #: Why kappa is missing, when it is.
    kappa_note: str = ""


class StudyStats(BaseModel):
    episodes: int
    failed: int
    types: list[str]
    configs: list[ConfigStats]
    judge: Agreement | None
    #: Instructions played at once when the run was made (``None`` when the run did not record it).
    #: Every concurrency the run was executed at (a resume may use another), for Table 2.
    concurrency: list[int] = Field(default_factory=list)


def cohen_kappa(a: list[bool], b: list[bool]) -> float | None:
    """Cohen's kappa; ``None`` (undefined) without answers or when chance agreement is 1."""
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def _config_order(label: str) -> tuple[int, str]:
    return (0 if label.startswith("Single") else 1, label)


def _debate_stats(stats: ConfigStats, done: list[Episode]) -> None:
    """Table 1 and Figures 6 and 7: consensus, non-consensus and error are shares of the debates."""
    reached = [e for e in done if e.consensus]
    stats.consensus = Share(k=len(reached), n=len(done))
    stats.non_consensus = Share(k=sum(1 for e in done if e.termination == "max_rounds"), n=len(done))
    stats.debate_errors = Share(k=sum(1 for e in done if e.ended_in_error), n=len(done))
    stats.mean_rounds_to_consensus = mean(e.rounds for e in reached) if reached else None
    stats.mean_rounds_ci = mean_ci([e.rounds for e in reached])
    stats.consensus_detection = Share.of(e.detected for e in reached)
    stats.consensus_right_slot = Share.of(e.rule for e in reached)
    stats.rounds_to_consensus = dict(sorted(Counter(e.rounds for e in reached).items()))


def _config_stats(eps: list[Episode], types: list[str], failed: Counter[tuple[str, bool]]) -> ConfigStats:
    label = eps[0].config
    amb = [e for e in eps if e.ambiguous]
    clear = [e for e in eps if not e.ambiguous]
    # Table 2 is over the ambiguous instructions, like the paper's, when there are any; cached replies take no time.
    pool = amb or eps
    timed = [e for e in pool if not e.cached_calls]
    stats = ConfigStats(
        config=label, condition=eps[0].condition, model=eps[0].model, ambiguous=len(amb),
        detection=Share.of(e.detected for e in amb),
        detection_by_type={t: Share.of(e.detected for e in amb if e.type == t) for t in types},
        right_slot=Share.of(e.rule for e in amb),
        right_slot_by_type={t: Share.of(e.rule for e in amb if e.type == t) for t in types},
        shotgun=Share.of(e.asks == "shotgun" if e.asks is not None else None for e in amb),
        ambiguous_errors=sum(1 for e in amb if e.ended_in_error), failed_ambiguous=failed.get((label, True), 0),
        unambiguous=len(clear), clear=Share.of(e.success for e in clear),
        false_alarms=Share.of(e.false_alarm for e in clear),
        unambiguous_errors=sum(1 for e in clear if e.ended_in_error), failed_unambiguous=failed.get((label, False), 0),
        timed=len(timed), cached_excluded=len(pool) - len(timed),
        mean_time=mean(e.wall_time for e in timed) if timed else None,
        mean_time_ci=mean_ci([e.wall_time for e in timed]),
        mean_model_time=mean(e.model_time for e in timed) if timed else None,
    )
    if stats.condition == "debate":
        _debate_stats(stats, amb or eps)
    return stats


def _agreement(episodes: list[Episode]) -> Agreement | None:
    """``None`` only when no episode had a judge configured (nor, in runs stored without the setting,
    asked one)."""
    if not any(e.judge_model or e.judge_asked or e.judge is not None for e in episodes):
        return None
    asked = [e for e in episodes if e.judge_asked or e.judge is not None]
    failed = [e for e in asked if e.judge is None]
    reasons = Counter(e.judge_failure or "no verdict" for e in failed)
    pairs = [(bool(e.rule), bool(e.judge)) for e in episodes
             if e.ambiguous and e.rule is not None and e.judge is not None]
    rule_v, judge_v = [r for r, _ in pairs], [j for _, j in pairs]
    kappa = cohen_kappa(rule_v, judge_v)
    note = "" if kappa is not None else (
        ("undefined: the judge failed on every question it was asked" if asked and len(failed) == len(asked)
         else "undefined: no answer was judged by both") if not pairs
        else "undefined: chance agreement is 1 (rule and judge each gave the same answer throughout)")
    return Agreement(models=sorted({e.judge_model for e in episodes if e.judge_model}), asked=len(asked),
                     failed=len(failed), failures=[r for r, _ in reasons.most_common(3)], judged=len(pairs),
                     agree=Share.of(r == j for r, j in pairs), kappa=kappa, kappa_note=note)


def compute(episodes: list[Episode], failed: int = 0,
            failed_configs: Mapping[tuple[str, bool], int] | None = None) -> StudyStats:
    types = sorted({e.type for e in episodes if e.ambiguous}, key=lambda t: (t not in TYPES, t))
    by_config: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        by_config[e.config].append(e)
    counts: Counter[tuple[str, bool]] = Counter(failed_configs or {})
    configs = [_config_stats(by_config[label], types, counts) for label in sorted(by_config, key=_config_order)]
    return StudyStats(episodes=len(episodes), failed=failed, types=types, configs=configs, judge=_agreement(episodes))


def statistics(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> StudyStats:
    """The study's statistics of a run's stored episodes, failed ones counted per configuration (registered)."""
    stream, failed = keeping_failed(rows)
    episodes = episodes_from(stream)
    return compute(episodes, failed=len(failed), failed_configs=failed_by_config(failed))


def outcomes(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> list[Outcome]:
    """Each episode for ``lexicoord compare``: its instruction within its configuration (``Single(model)`` or
    ``Debate(leader)``), success on an ambiguous instruction (none on its twin), and the rounds played."""
    return [Outcome(item=e.item_id, cell={"config": e.config}, correct=e.success if e.ambiguous else None,
                    rounds=e.rounds) for e in episodes_from(rows)]
