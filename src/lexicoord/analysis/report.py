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


class StoreView:
    """A store as a report reads it, some of a run's games left out. Every report reads a run's games through
    ``iter_run_events``, so a view that overrides it changes every protocol's report alike; the rest is the
    store's own."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class WithoutTakeovers(StoreView):
    """Without the games in which a model took a person's seat over (a study's dropouts), so every statistic is
    over games people played to their end."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.left_out: set[int] = set()

    def iter_run_events(self, run_id: str, page: int = 200,
                        types: Sequence[str] | None = None) -> Iterator[tuple[EpisodeRecord, list[Event]]]:
        wanted = None if types is None else [*types, TAKEOVER]
        for record, events in self._store.iter_run_events(run_id, page, wanted):
            if any(e.type == TAKEOVER for e in events):
                self.left_out.add(record.id or 0)
                continue
            yield record, events if types is None or TAKEOVER in types else [e for e in events if e.type != TAKEOVER]


def place_of(record: EpisodeRecord) -> dict[str, Any]:
    """Where a live game was played (room, game, group, condition); empty for a campaign's episode."""
    place = record.spec.get("place")
    return place if isinstance(place, dict) else {}


def condition_of(record: EpisodeRecord) -> str | None:
    """The study condition a game was played under, if any."""
    return place_of(record).get("condition")


class OneCondition(StoreView):
    """Only the games of one condition of a study."""

    def __init__(self, store: Store, condition: str) -> None:
        super().__init__(store)
        self.condition = condition

    def iter_run_events(self, run_id: str, page: int = 200,
                        types: Sequence[str] | None = None) -> Iterator[tuple[EpisodeRecord, list[Event]]]:
        for record, events in self._store.iter_run_events(run_id, page, types):
            if condition_of(record) == self.condition:
                yield record, events


def condition_run(run: RunInfo, condition: str) -> RunInfo:
    """The run as one condition's report reads it: that condition's settings in place of the study's own."""
    config = {k: v for k, v in run.config.items() if k != "conditions"}
    return run.model_copy(update={"config": {**config, **run.config["conditions"][condition], "condition": condition}})


def _written(writer: ReportWriter, store: Store, run: RunInfo, out_dir: Path, without_takeovers: bool) -> Report:
    if not without_takeovers:
        return writer(store, run, out_dir)
    filtered = WithoutTakeovers(store)
    result = writer(cast(Store, filtered), run, out_dir)
    result.warnings.append(f"{len(filtered.left_out)} game(s) in which a model took a person's seat over are "
                           "left out (--without-takeovers).")
    return result


def report_run(store: Store, run_id: str, out_dir: Path | None = None, *, without_takeovers: bool = False) -> Report:
    """The report of any stored run, written by the protocol the run recorded (default ``reports/RUN``);
    ``without_takeovers`` leaves out the games in which a model took a person's seat over, and says how many.

    A study with conditions gets the report of all its games, then one per condition (in ``condition-NAME/``,
    each under that condition's settings), its tables titled with the condition."""
    run = store.run(run_id)
    writer = get_protocol(run.protocol).report_writer()
    folder = out_dir or report_folder(run.id)
    result = _written(writer, store, run, folder, without_takeovers)
    for name in run.config.get("conditions") or {}:
        only = OneCondition(store, name)
        if next(only.iter_run_events(run.id, types=()), None) is None:
            result.warnings.append(f"condition {name}: no game stored yet, so no report of its own.")
            continue
        part = _written(writer, cast(Store, only), condition_run(run, name), folder / f"condition-{name}",
                        without_takeovers)
        result.tables += [t.model_copy(update={"title": f"condition {name}: {t.title}"}) for t in part.tables]
        result.files.update({f"{kind} ({name})": path for kind, path in part.files.items()})
        result.warnings += [f"condition {name}: {w}" for w in part.warnings]
    if run.conflicts:
        result.warnings.append(f"{run.conflicts} episode(s) were saved a second time with other content than the "
                               "first save; the first stands in every table, the others are kept with status "
                               "'conflict' (lexicoord runs export shows them).")
    return result
