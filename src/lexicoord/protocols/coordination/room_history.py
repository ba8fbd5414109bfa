"""A room's statistics and history, computed from its stored games like any run's report."""

from __future__ import annotations

import io
from typing import Any

from lexicoord.analysis.cells import write_csv
from lexicoord.core.audience import Viewer, visible
from lexicoord.core.events import ChoiceEvent, Event, MessageEvent
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.protocols.coordination.report import summary_rows
from lexicoord.protocols.coordination.statistics import Tally, games_from
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import Store


def game_history(episode: EpisodeRecord, events: list[Event]) -> dict[str, Any]:
    """One stored game as people read it: the item, the announcement, every decision and clarification.

    Built from the events everyone may see, like the live view of the game."""
    events = list(visible(events, Viewer()))
    item = (episode.spec or {}).get("item", {})
    rounds: dict[int, dict[str, Any]] = {}
    announcement = None
    for e in events:
        if isinstance(e, ChoiceEvent):
            entry = {"agent": e.agent, "choice": e.choice, "justification": e.justification, "failure": e.failure,
                     "kind": getattr(e, "agent_kind", None)}
            if getattr(e, "move", None) == "announcement":
                announcement = entry
            elif e.round is not None:
                rounds.setdefault(e.round, {"round": e.round, "clarification": None, "decisions": []})["decisions"].append(entry)
        elif e.type == "clarification" and isinstance(e, MessageEvent) and e.content and e.round is not None:
            rounds.setdefault(e.round + 1, {"round": e.round + 1, "clarification": None, "decisions": []})
            rounds[e.round + 1]["clarification"] = e.content
    outcome = CoordinationGame.outcome_of(episode) if episode.outcome else None
    return {
        "number": episode.repetition, "item_id": episode.item_id, "sentence": item.get("sentence"),
        "word": item.get("word"), "options": item.get("options", []), "status": episode.status,
        "error": episode.error, "converged": outcome.converged if outcome else None,
        "reason": outcome.reason if outcome else None, "depth": outcome.depth if outcome else None,
        "interpretation": outcome.interpretation if outcome else None,
        "announcement": announcement, "rounds": [rounds[k] for k in sorted(rounds) if rounds[k]["decisions"]],
        "finished_at": episode.finished_at,
    }


#: Games of history sent to pages after each game; the exports always hold every game.
PAGE_HISTORY = 50


class RoomRecord:
    """A room's finished games, kept up to date in memory so a finished game never re-reads the run."""

    def __init__(self, bound: int | None) -> None:
        self.tally = Tally(bound)
        self.history: list[dict[str, Any]] = []

    def add(self, episode: EpisodeRecord, events: list[Event]) -> None:
        for game in games_from([(episode, events)]):
            self.tally.add(game)
        self.history.append(game_history(episode, events))

    def stats(self, history: int | None = PAGE_HISTORY) -> dict[str, Any]:
        stats = self.tally.stats() if self.tally.games else None
        latest = self.history[::-1]
        return {
            "games": self.tally.games,
            "won": stats.converged if stats else 0,
            "lost": stats.failed if stats else 0,
            "depth": {str(k): v for k, v in (stats.depth_distribution.items() if stats else [])},
            "summary": [list(r) for r in summary_rows(stats)] if stats else [],
            "history": latest if history is None else latest[:history],
        }


def load_record(store: Store, run_id: str, bound: int | None) -> RoomRecord:
    record = RoomRecord(bound)
    for episode, events in store.iter_run_events(run_id):
        record.add(episode, events)
    return record


def room_stats(store: Store, run_id: str, bound: int | None, history: int | None = PAGE_HISTORY) -> dict[str, Any]:
    return load_record(store, run_id, bound).stats(history)


CSV_COLUMNS = ["game", "item", "sentence", "word", "outcome", "depth", "agreed", "round", "clarification", "agent",
               "kind", "choice", "justification", "failure"]


def history_csv(history: list[dict[str, Any]]) -> str:
    """One row per decision, announcements included (round 0), with its game's outcome on every row."""
    rows = []
    for g in history:
        outcome = "converged" if g["converged"] else (g["reason"] or g["status"])
        common = [g["number"], g["item_id"], g["sentence"], g["word"], outcome, g["depth"], g["interpretation"]]
        moves = [(0, None, g["announcement"])] if g["announcement"] else []
        moves += [(r["round"], r["clarification"], d) for r in g["rounds"] for d in r["decisions"]]
        rows += [[*common, round_, clarification or "", d["agent"], d["kind"], d["choice"] or "", d["justification"],
                  d["failure"] or ""] for round_, clarification, d in moves]
    out = io.StringIO()
    write_csv(out, CSV_COLUMNS, rows)
    return out.getvalue()
