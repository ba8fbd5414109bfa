"""A Werewolf room's statistics and history, from its stored games (outcomes only: every role is public
once a game is over, and a game in progress is never read here)."""

from __future__ import annotations

import io
from collections import Counter
from typing import Any

from lexicoord.analysis.cells import write_csv
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.store import Store

#: Games of history sent to pages after each game; the exports always hold every game.
PAGE_HISTORY = 50


def game_history(episode: EpisodeRecord) -> dict[str, Any]:
    outcome = episode.outcome or {}
    return {"number": episode.repetition, "seed": (episode.spec.get("item") or {}).get("seed"),
            "status": episode.status, "error": episode.error,
            "winner": outcome.get("winner"), "days": outcome.get("days"), "condition": outcome.get("condition"),
            "roles": outcome.get("roles", {}), "deaths": outcome.get("deaths", []),
            "survivors": outcome.get("survivors", []), "invalid_actions": outcome.get("invalid_actions", 0),
            "finished_at": episode.finished_at}


class WerewolfRecord:
    """A room's finished games, kept up to date in memory so a finished game never re-reads the run."""

    def __init__(self) -> None:
        self.history: list[dict[str, Any]] = []

    def add(self, episode: EpisodeRecord) -> None:
        self.history.append(game_history(episode))

    def stats(self, history: int | None = PAGE_HISTORY) -> dict[str, Any]:
        wins = Counter(g["winner"] for g in self.history if g["winner"])
        latest = self.history[::-1]
        return {"games": len(self.history), "wins": {k: wins.get(k, 0) for k in ("villagers", "wolves", "draw")},
                "history": latest if history is None else latest[:history]}


def load_record(store: Store, run_id: str) -> WerewolfRecord:
    record = WerewolfRecord()
    for episode in store.episodes(run_id):
        record.add(episode)
    return record


CSV_COLUMNS = ["game", "winner", "days", "player", "role", "died_day", "cause", "survived"]


def history_csv(history: list[dict[str, Any]]) -> str:
    """One row per player per game: their role and how their game ended for them."""
    rows = []
    for g in sorted(history, key=lambda g: g["number"]):
        deaths = {d["player"]: d for d in g["deaths"]}
        for player, role in g["roles"].items():
            d = deaths.get(player, {})
            rows.append([g["number"], g["winner"] or g["status"], g["days"], player, role, d.get("day", ""),
                         d.get("cause", ""), player in g["survivors"]])
    out = io.StringIO()
    write_csv(out, CSV_COLUMNS, rows)
    return out.getvalue()
