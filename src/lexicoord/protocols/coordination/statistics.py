"""Statistics of coordination games, from the stored events and outcomes alone.

The paper reports win-loss and the clarification-depth distribution (its
Figure 1), first-round convergence as a share of convergent games ("70% of
convergent cases were resolved on the first attempt"), that longer sequences
were mostly non-convergent, and how the people's round-1 agreement went with the
outcome. All of these are here, each rate with its denominator. Beyond it: what
preceded failures, revisions per agent, accuracy against the intended meaning
beside two baselines on the same games (:func:`accuracy_table`), pairwise
agreement, and moves toward the leader's announcement. Simulated
players are counted as people (they stand in for them) and labelled simulated
everywhere.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from itertools import combinations
from typing import Any, Literal

from pydantic import BaseModel, Field

from lexicoord.analysis.compare import Outcome
from lexicoord.analysis.intervals import Interval, mean_ci
from lexicoord.core.events import ChoiceEvent, Event
from lexicoord.core.seat import SeatInfo
from lexicoord.protocols.coordination.rules import CoordinationGame
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
    #: The item's candidate meanings in the item's own order (before the announcement was made t1).
    listed: list[str] = Field(default_factory=list)
    #: Rounds played (a failed game's length is kept: long sequences are mostly non-convergent in the paper).
    played: int = 0
    #: A study's participant ids by the seat each played (a study's games; empty elsewhere).
    participants: dict[str, str] = Field(default_factory=dict)


def games_from(episodes: Iterable[tuple[EpisodeRecord, list[Event]]]) -> Iterator[Game]:
    """Each finished game of ``episodes``, as they pass (a run is never held whole)."""
    for episode, events in episodes:
        if episode.status != "done" or not episode.outcome or "converged" not in episode.outcome:
            continue
        out = CoordinationGame.outcome_of(episode)
        agents = {a.name: a for a in out.agents}
        item = (episode.spec or {}).get("item") or {}
        rounds: dict[int, dict[str, str | None]] = defaultdict(dict)
        for e in events:
            if isinstance(e, ChoiceEvent) and e.round is not None and e.round >= 1:
                rounds[e.round][e.agent or ""] = e.choice
        yield Game(
            episode_id=episode.id, item_id=episode.item_id, repetition=episode.repetition,
            converged=out.converged, reason=out.reason, depth=out.depth, interpretation=out.interpretation,
            intended=out.intended, correct=out.correct, announcement=out.announcement,
            leader=next(iter(agents), ""), agents=agents, rounds=dict(rounds), played=out.rounds,
            listed=out.original_options or list(item.get("options") or []),
            participants={str(a.get("name")): str(a["options"]["participant"])
                          for a in (episode.spec or {}).get("lineup", [])
                          if isinstance(a.get("options"), dict) and a["options"].get("participant")},
        )


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


class Alignment(BaseModel):
    """Games by the people's round-1 agreement (the paper: "when humans initially agreed, the coalition almost
    always converged immediately; when they disagreed, clarification sequences lengthened")."""

    #: ``agreed``: every person made a valid choice in round 1 and all were the same; ``disagreed``: at least
    #: two different valid choices among the people in round 1.
    group: Literal["agreed", "disagreed"]
    games: int
    at_once: int
    later: int
    failed: int


class AccuracyRow(BaseModel):
    """One answer scored against the intended meaning, over two sets of games that both leave out open items.

    ``games``: converged games whose item has an intended meaning (the games the team's accuracy is
    over). ``games_all``: every game whose item has one; a game that did not converge has no agreed
    meaning and is wrong for the team, never left out. The baselines answer every game, so they are
    scored on exactly the same games in both columns.
    """

    #: ``converged meaning`` (the team's), ``first-listed sense`` or ``most frequent sense (leave-one-out)``.
    answer: str
    right: int
    games: int
    right_all: int
    games_all: int


class CoordinationStats(BaseModel):
    games: int
    converged: int
    failed: int
    failure_reasons: dict[str, int]
    depth_distribution: dict[int, int]
    #: Failed games by the number of rounds they lasted.
    failed_rounds: dict[int, int] = Field(default_factory=dict)
    #: Games converged in round 1, over all games ...
    first_round_rate: float | None
    #: ... and over convergent games (the paper's "70% of convergent cases").
    first_round_of_converged: float | None = None
    mean_depth: float | None
    #: Its 95% interval over the converged games (:data:`lexicoord.analysis.intervals.METHOD`).
    mean_depth_ci: Interval | None = None
    failure_causes: dict[str, int]
    #: Converged games whose meaning is the intended one, over converged games with an intended meaning.
    accuracy: float | None
    accuracy_games: int
    accuracy_right: int = 0
    #: The team beside the first-listed and most-frequent-sense baselines on the same games.
    accuracy_table: list[AccuracyRow] = Field(default_factory=list)
    #: Games of open items (no intended meaning), outside every accuracy row.
    open_games: int = 0
    #: Games whose sense list no other item of the run shares, so the first-listed sense stands in for the most
    #: frequent one (leave-one-out has nothing to count).
    single_item_games: int = 0
    revisions: dict[str, dict[str, Any]]
    pairwise_agreement: dict[str, float]
    toward_leader: dict[str, dict[str, Any]]
    bound: int | None = None
    #: The people's round-1 agreement and the outcome; games with fewer than two people, or with a person's
    #: failed round-1 move, are outside both groups and counted here.
    alignment: list[Alignment] = Field(default_factory=list)
    alignment_fewer_than_two: int = 0
    alignment_failed_move: int = 0
    #: Whether the people were all simulated (the rows then say "simulated people").
    people_simulated: bool = False


def people_in_round_one(game: Game) -> list[str | None] | None:
    """The people's round-1 choices (``None`` for a failed move), or ``None`` with fewer than two people."""
    first = game.rounds.get(1, {})
    people = [n for n, a in game.agents.items() if a.kind in PEOPLE and n in first]
    return [first[n] for n in people] if len(people) >= 2 else None


def frequent_sense(inventory: tuple[str, ...], counts: Counter[str]) -> str:
    """The sense intended most often among ``counts`` (the other items offering ``inventory``: see
    :meth:`Tally.accuracy_table`); a tie goes to the sense listed first; no other item: the sense listed first.
    """
    counted = +counts  # senses of no other item drop out
    if not counted:
        return inventory[0]

    def order(sense: str) -> int:
        return inventory.index(sense) if sense in inventory else len(inventory)

    return min(counted, key=lambda s: (-counted[s], order(s), s))


class Tally:
    """A run's statistics, counted one game at a time so that a run of any size is read in one pass.

    A game adds to counters and leaves nothing behind: the only figures that need the whole run first
    (the most frequent sense of each sense list, items alone with their senses) are counted per item and
    per kind of game, and settled in :meth:`stats`, which may be called at any time and again after more
    games. The order of the games changes nothing.
    """

    def __init__(self, bound: int | None = None) -> None:
        self.bound = bound
        self.games = 0
        self.converged = 0
        self.depths: Counter[int] = Counter()
        self.failed_played: Counter[int] = Counter()
        self.reasons: Counter[str] = Counter()
        self.causes: Counter[str] = Counter()
        self.alignment = {g: Alignment(group=g, games=0, at_once=0, later=0, failed=0)
                          for g in ("agreed", "disagreed")}
        self.fewer_than_two = 0
        self.failed_move = 0
        self.people = 0
        self.simulated_people = 0
        self.scored = 0
        self.scored_right = 0
        self.open_games = 0
        #: Items with an intended meaning: their sense list and that meaning (an item counts once).
        self.items: dict[str, tuple[tuple[str, ...], str]] = {}
        #: Games with an intended meaning by (sense list, intended, converged, team right, first-listed right).
        self.answered: Counter[tuple[tuple[str, ...], str, bool, bool, bool]] = Counter()
        self.revisions: dict[str, dict[str, Any]] = {}
        self.toward: dict[str, dict[str, Any]] = {}
        self.agree: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])

    def add(self, g: Game) -> None:
        self.games += 1
        if g.converged:
            self.converged += 1
            if g.depth is not None:
                self.depths[g.depth] += 1
            if g.correct is not None:
                self.scored += 1
                self.scored_right += bool(g.correct)
        else:
            self.failed_played[g.played] += 1
            self.reasons[g.reason] += 1
            self.causes[_failure_cause(g)] += 1
        self._align(g)
        people = [a for a in g.agents.values() if a.kind in PEOPLE]
        self.people += len(people)
        self.simulated_people += sum(a.simulated for a in people)
        if g.intended:
            inventory = tuple(g.listed)
            self.items[g.item_id] = (inventory, g.intended)
            team = g.converged and g.interpretation == g.intended
            first = bool(g.listed) and g.listed[0] == g.intended
            self.answered[(inventory, g.intended, g.converged, team, first)] += 1
        else:
            self.open_games += 1
        self._moves(g)

    def _align(self, game: Game) -> None:
        choices = people_in_round_one(game)
        if choices is None:
            self.fewer_than_two += 1
            return
        if None in choices:
            self.failed_move += 1
            return
        row = self.alignment["agreed" if len(set(choices)) == 1 else "disagreed"]
        row.games += 1
        if not game.converged:
            row.failed += 1
        elif game.depth == 0:
            row.at_once += 1
        else:
            row.later += 1

    def _moves(self, g: Game) -> None:
        """Revisions per agent, moves toward the leader's announcement and pairwise agreement, round by round."""
        ordered = [g.rounds[r] for r in sorted(g.rounds)]
        for name, info in g.agents.items():
            row = self.revisions.setdefault(
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
            t = self.toward.setdefault(name, {"moved": 0, "opportunities": 0})
            for before, after in zip(ordered, ordered[1:]):
                if before.get(name) not in (None, g.announcement):
                    t["opportunities"] += 1
                    t["moved"] += after.get(name) == g.announcement
        for round_choices in ordered:
            for a, b in combinations(sorted(round_choices), 2):
                ca, cb = round_choices[a], round_choices[b]
                if ca is not None and cb is not None:
                    self.agree[(a, b)][1] += 1
                    self.agree[(a, b)][0] += ca == cb

    def accuracy_table(self) -> list[AccuracyRow]:
        """The team's converged meaning, the first-listed sense and the most frequent sense, on the same games.

        The first-listed sense is the first of the item's own candidates, in the order the dataset gives
        them (CoarseWSD-20: sense number 0 of the word's class map), not the order of play, where the
        leader's announcement comes first.
        """
        counts: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        for inventory, sense in self.items.values():
            counts[inventory][sense] += 1

        def left_out(inventory: tuple[str, ...], intended: str) -> str:
            """The most frequent sense of the run's *other* items with these senses: an item's own label never
            predicts it (counted on the scored items themselves, the baseline would be an answer key)."""
            others = counts[inventory].copy()
            others[intended] -= 1
            return frequent_sense(inventory, others)

        rows = {name: AccuracyRow(answer=name, right=0, games=0, right_all=0, games_all=0)
                for name in ("converged meaning", "first-listed sense", "most frequent sense (leave-one-out)")}
        for (inventory, intended, converged, team, first), n in self.answered.items():
            for name, right in (("converged meaning", team), ("first-listed sense", first),
                                ("most frequent sense (leave-one-out)",
                                 left_out(inventory, intended) == intended)):
                row = rows[name]
                row.games_all += n
                row.right_all += n * right
                if converged:
                    row.games += n
                    row.right += n * right
        return list(rows.values())

    def stats(self) -> CoordinationStats:
        converged = self.converged
        failed = self.games - converged
        top = max([*self.depths, self.bound or 0], default=0)
        items_per_inventory = Counter(inventory for inventory, _ in self.items.values())
        single = sum(n for (inventory, *_), n in self.answered.items() if items_per_inventory[inventory] == 1)
        toward = {k: {**t, "rate": _rate(t["moved"], t["opportunities"])} for k, t in self.toward.items()}
        return CoordinationStats(
            games=self.games,
            converged=converged,
            failed=failed,
            failure_reasons=dict(self.reasons),
            depth_distribution={d: self.depths.get(d, 0) for d in range(top + 1)},
            failed_rounds=dict(sorted(self.failed_played.items())),
            first_round_rate=_rate(self.depths.get(0, 0), self.games),
            first_round_of_converged=_rate(self.depths.get(0, 0), converged),
            mean_depth=_rate(sum(d * n for d, n in self.depths.items()), converged),
            mean_depth_ci=mean_ci([d for d, n in sorted(self.depths.items()) for _ in range(n)]),
            failure_causes=dict(self.causes),
            accuracy=_rate(self.scored_right, self.scored),
            accuracy_games=self.scored,
            accuracy_right=self.scored_right,
            accuracy_table=self.accuracy_table(),
            open_games=self.open_games,
            single_item_games=single,
            revisions={k: dict(v) for k, v in self.revisions.items()},
            pairwise_agreement={f"{a} / {b}": n / d for (a, b), (n, d) in sorted(self.agree.items()) if d},
            toward_leader=toward,
            bound=self.bound,
            alignment=[row.model_copy() for row in self.alignment.values()],
            alignment_fewer_than_two=self.fewer_than_two,
            alignment_failed_move=self.failed_move,
            people_simulated=self.people > 0 and self.simulated_people == self.people,
        )


def compute(games: Iterable[Game], bound: int | None = None) -> CoordinationStats:
    """The statistics of ``games``, which are read once (a list or a stream)."""
    tally = Tally(bound)
    for game in games:
        tally.add(game)
    return tally.stats()


def statistics(rows: Iterable[tuple[EpisodeRecord, list[Event]]], bound: int | None = None) -> CoordinationStats:
    """The game's statistics of a run's stored episodes (registered for the protocol)."""
    return compute(games_from(rows), bound=bound)


def outcomes(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> Iterator[Outcome]:
    """Each game for ``lexicoord compare``: right when it converged on the intended meaning (not converging is
    wrong; an open item has no right answer), and the rounds it lasted. Repetitions pair with repetitions."""
    for g in games_from(rows):
        correct = (g.converged and g.interpretation == g.intended) if g.intended else None
        yield Outcome(item=f"{g.item_id}#{g.repetition}", correct=correct, rounds=g.played)
