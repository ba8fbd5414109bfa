"""Statistics of coordination games, from the stored events and outcomes alone.

The paper reports win-loss and the clarification-depth distribution (its
Figure 1). Beyond it: first-round convergence, what preceded failures,
revisions per agent, accuracy against the intended meaning, pairwise
agreement, and moves toward the leader's announcement. Simulated players are
counted as people (they stand in for them) and labelled simulated everywhere.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field

from lexicoord.core.events import ChoiceEvent, Event
from lexicoord.core.seat import SeatInfo
from lexicoord.protocols.coordination.rules import CoordinationOutcome
from lexicoord.runs.records import EpisodeRecord

PEOPLE = {"human", "simulated"}


class Game(BaseModel):
    """One finished game: its outcome and every choice, by round and agent."""

    episode_id: int | None
    item_id: str
    repetition: int
    converged: bool
    reason: str
    depth: int | None
    interpretation: str | None
    intended: str | None
    correct: bool | None
    announcement: str | None
    leader: str
    agents: dict[str, SeatInfo]
    rounds: dict[int, dict[str, str | None]] = Field(default_factory=dict)


def games_from(episodes: Iterable[tuple[EpisodeRecord, list[Event]]]) -> list[Game]:
    games = []
    for episode, events in episodes:
        if episode.status != "done" or not episode.outcome or "converged" not in episode.outcome:
            continue
        out = CoordinationOutcome.model_validate(episode.outcome)
        agents = {a.name: a for a in out.agents}
        rounds: dict[int, dict[str, str | None]] = defaultdict(dict)
        for e in events:
            if isinstance(e, ChoiceEvent) and e.round is not None and e.round >= 1:
                rounds[e.round][e.agent or ""] = e.choice
        games.append(
            Game(
                episode_id=episode.id, item_id=episode.item_id, repetition=episode.repetition,
                converged=out.converged, reason=out.reason, depth=out.depth, interpretation=out.interpretation,
                intended=out.intended, correct=out.correct, announcement=out.announcement,
                leader=next(iter(agents), ""), agents=agents, rounds=dict(rounds),
            )
        )
    return games


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _failure_cause(game: Game) -> str:
    """What the first round looked like in a game that failed."""
    first = game.rounds.get(1, {})
    if game.reason == "leader_ended":
        return "leader ended the game"
    if any(c is None for c in first.values()):
        return "a failed move in round 1"
    kinds = {n: game.agents[n].kind if n in game.agents else None for n in first}
    people = {c for n, c in first.items() if kinds[n] in PEOPLE}
    machines = {c for n, c in first.items() if kinds[n] not in PEOPLE}
    who = "people" if "human" in kinds.values() else "simulated people"
    if len(people) > 1:
        return f"{who} disagreed in round 1"
    if len(machines) > 1:
        return "LLM agents disagreed in round 1"
    if people and machines and people != machines:
        return f"{who} and LLM agents split in round 1"
    return "other"


class CoordinationStats(BaseModel):
    games: int
    converged: int
    failed: int
    failure_reasons: dict[str, int]
    depth_distribution: dict[int, int]
    first_round_rate: float | None
    mean_depth: float | None
    failure_causes: dict[str, int]
    accuracy: float | None
    accuracy_games: int
    revisions: dict[str, dict[str, Any]]
    pairwise_agreement: dict[str, float]
    toward_leader: dict[str, dict[str, Any]]
    bound: int | None = None


def compute(games: list[Game], bound: int | None = None) -> CoordinationStats:
    converged = [g for g in games if g.converged]
    failed = [g for g in games if not g.converged]
    depths = Counter(g.depth for g in converged if g.depth is not None)
    top = max([*depths, bound or 0], default=0)
    scored = [g for g in converged if g.correct is not None]

    revisions: dict[str, dict[str, Any]] = {}
    toward: dict[str, dict[str, Any]] = {}
    agree: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for g in games:
        ordered = [g.rounds[r] for r in sorted(g.rounds)]
        for name, info in g.agents.items():
            row = revisions.setdefault(
                name, {"kind": info.kind, "model": info.model, "simulated": info.simulated,
                       "revisions": 0, "games": 0, "opportunities": 0, "leads": False},
            )
            row["games"] += 1
            row["leads"] = row["leads"] or name == g.leader
            for before, after in zip(ordered, ordered[1:]):
                if before.get(name) is not None and after.get(name) is not None:
                    row["opportunities"] += 1
                    row["revisions"] += before[name] != after[name]
            if name == g.leader or not g.announcement:
                continue
            t = toward.setdefault(name, {"moved": 0, "opportunities": 0})
            for before, after in zip(ordered, ordered[1:]):
                if before.get(name) not in (None, g.announcement):
                    t["opportunities"] += 1
                    t["moved"] += after.get(name) == g.announcement
        for round_choices in ordered:
            for a, b in combinations(sorted(round_choices), 2):
                ca, cb = round_choices[a], round_choices[b]
                if ca is not None and cb is not None:
                    agree[(a, b)][1] += 1
                    agree[(a, b)][0] += ca == cb
    for t in toward.values():
        t["rate"] = _rate(t["moved"], t["opportunities"])
    return CoordinationStats(
        games=len(games),
        converged=len(converged),
        failed=len(failed),
        failure_reasons=dict(Counter(g.reason for g in failed)),
        depth_distribution={d: depths.get(d, 0) for d in range(top + 1)},
        first_round_rate=_rate(depths.get(0, 0), len(games)),
        mean_depth=_rate(sum(d * n for d, n in depths.items()), len(converged)),
        failure_causes=dict(Counter(_failure_cause(g) for g in failed)),
        accuracy=_rate(sum(1 for g in scored if g.correct), len(scored)),
        accuracy_games=len(scored),
        revisions=revisions,
        pairwise_agreement={f"{a} / {b}": n / d for (a, b), (n, d) in sorted(agree.items()) if d},
        toward_leader=toward,
        bound=bound,
    )


def statistics(rows: Iterable[tuple[EpisodeRecord, list[Event]]], bound: int | None = None) -> CoordinationStats:
    """The game's statistics of a run's stored episodes (registered for the protocol)."""
    return compute(games_from(rows), bound=bound)
