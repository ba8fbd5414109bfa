"""Statistics and the report of a stored run: the agreement rate over finished games."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel

from lexicoord.analysis.html import render
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.core.events import Event
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.store import Store


class SameWordStats(BaseModel):
    games: int
    agreed: int


def statistics(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> SameWordStats:
    done = [record for record, _ in rows if record.status == "done" and record.outcome]
    return SameWordStats(games=len(done), agreed=sum(1 for r in done if r.outcome and r.outcome["agreed"]))


def report(store: Store, run: RunInfo, out_dir: Path) -> Report:
    stats = statistics(store.iter_run_events(run.id))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "same_word.json"
    path.write_text(json.dumps(stats.model_dump()))
    games = [(r.item_id, r.outcome) for r, _ in store.iter_run_events(run.id) if r.outcome]
    rows = [[item, str(o["agreed"]), ", ".join(f"{k}: {v}" for k, v in o["words"].items())] for item, o in games]
    page = out_dir / "report.html"
    page.write_text(render("same_word_game", run=run.id, rows=rows), encoding="utf-8")
    table = ReportTable(title=f"Same word: {run.id}", head=["games", "agreed", "agreement (of finished games)"],
                        rows=[[str(stats.games), str(stats.agreed), f"{stats.agreed}/{stats.games}"]])
    return Report(tables=[table], files={"json": path, "html": page})
