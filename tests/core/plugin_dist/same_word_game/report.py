"""Statistics, outcomes for ``lexicoord compare``, and the report of a stored run: agreement by seats."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from lexicoord.analysis.compare import Outcome
from lexicoord.analysis.html import render
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.core.events import Event
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.store import Store
from same_word_game.rules import SameWord
from same_word_game.things import TASK

Rows = Iterable[tuple[EpisodeRecord, list[Event]]]


class Cell(BaseModel):
    games: int = 0
    agreed: int = 0


class SameWordStats(BaseModel):
    games: int
    agreed: int
    #: Finished games by the number of seats that played them.
    by_seats: dict[int, Cell]


def statistics(rows: Rows) -> SameWordStats:
    cells: dict[int, Cell] = {}
    for record, _ in rows:
        if record.status == "done" and record.outcome:
            outcome = SameWord.outcome_of(record)
            cell = cells.setdefault(len(outcome.words), Cell())
            cell.games += 1
            cell.agreed += int(outcome.agreed)
    return SameWordStats(games=sum(c.games for c in cells.values()), agreed=sum(c.agreed for c in cells.values()),
                         by_seats=dict(sorted(cells.items())))


def outcomes(rows: Rows) -> list[Outcome]:
    """Each finished game within its cell (the seats), right when all named it alike (the task's score)."""
    out = []
    for record, _ in rows:
        if record.status == "done" and record.outcome:
            outcome = SameWord.outcome_of(record)
            out.append(Outcome(item=record.item_id, cell={"seats": str(len(outcome.words))}, rounds=1,
                               correct=TASK.score(record.spec.get("item", {}), outcome),
                               tokens=record.completion_tokens))
    return out


def report(store: Store, run: RunInfo, out_dir: Path) -> Report:
    stats = statistics(store.iter_run_events(run.id))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "same_word.json"
    path.write_text(stats.model_dump_json(indent=2))
    games = [(r.item_id, SameWord.outcome_of(r)) for r, _ in store.iter_run_events(run.id) if r.outcome]
    rows = [[item, str(o.agreed), ", ".join(f"{k}: {v}" for k, v in o.words.items())] for item, o in games]
    page = out_dir / "report.html"
    page.write_text(render("same_word_game", run=run.id, rows=rows), encoding="utf-8")
    table = ReportTable(title=f"Same word: {run.id}", head=["seats", "games", "agreed", "agreement (of finished games)"],
                        rows=[[str(n), str(c.games), str(c.agreed), f"{c.agreed}/{c.games}"]
                              for n, c in stats.by_seats.items()])
    return Report(tables=[table], files={"json": path, "html": page})
