"""What every protocol's report gives back: tables to print and the files it wrote.

A protocol registers a ``report(store, run, out_dir) -> Report`` function
(see :mod:`lexicoord.core.registry`); ``lexicoord report RUN`` finds it by the
protocol the run recorded, prints the tables and lists the files.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from pydantic import BaseModel, Field

from lexicoord.core.events import Event
from lexicoord.core.registry import get_protocol
from lexicoord.runs.names import report_folder
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.store import Store

#: The event a study records when a model takes a person's seat over (:mod:`lexicoord.core.takeover`).
TAKEOVER = "seat_taken_over"


class ReportTable(BaseModel):
    title: str
    head: list[str]
    rows: list[list[str]]


class Report(BaseModel):
    tables: list[ReportTable] = Field(default_factory=list)
    #: What was written, by kind (``html``, ``json``, ``csv``, figures ...).
    files: dict[str, Path] = Field(default_factory=dict)
    #: What a reader must know before trusting the tables (a cell mostly invalid, replies cut at the limit).
    warnings: list[str] = Field(default_factory=list)


class ReportWriter(Protocol):
    def __call__(self, store: Store, run: RunInfo, out_dir: Path) -> Report: ...


class WithoutTakeovers:
    """A store as a report reads it, without the games in which a model took a person's seat over (a study's
    dropouts), so every statistic is over games people played to their end. Every report reads a run's games
    through ``iter_run_events``, so every protocol's report leaves them out alike."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.left_out: set[int] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def iter_run_events(self, run_id: str, page: int = 200,
                        types: Sequence[str] | None = None) -> Iterator[tuple[EpisodeRecord, list[Event]]]:
        wanted = None if types is None else [*types, TAKEOVER]
        for record, events in self._store.iter_run_events(run_id, page, wanted):
            if any(e.type == TAKEOVER for e in events):
                self.left_out.add(record.id or 0)
                continue
            yield record, events if types is None or TAKEOVER in types else [e for e in events if e.type != TAKEOVER]


def report_run(store: Store, run_id: str, out_dir: Path | None = None, *, without_takeovers: bool = False) -> Report:
    """The report of any stored run, written by the protocol the run recorded (default ``reports/RUN``);
    ``without_takeovers`` leaves out the games in which a model took a person's seat over, and says how many."""
    run = store.run(run_id)
    writer: ReportWriter = get_protocol(run.protocol).load("report")
    if not without_takeovers:
        return writer(store, run, out_dir or report_folder(run.id))
    filtered = WithoutTakeovers(store)
    result = writer(cast(Store, filtered), run, out_dir or report_folder(run.id))
    result.warnings.append(f"{len(filtered.left_out)} game(s) in which a model took a person's seat over are left "
                           "out (--without-takeovers).")
    return result
