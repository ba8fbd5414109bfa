"""What every protocol's report gives back: tables to print and the files it wrote.

A protocol registers a ``report(store, run, out_dir) -> Report`` function
(see :mod:`lexicoord.core.registry`); ``lexicoord report RUN`` finds it by the
protocol the run recorded, prints the tables and lists the files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from lexicoord.core.registry import get_protocol
from lexicoord.runs.names import report_folder
from lexicoord.runs.records import RunInfo
from lexicoord.runs.store import Store


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


def report_run(store: Store, run_id: str, out_dir: Path | None = None) -> Report:
    """The report of any stored run, written by the protocol the run recorded (default ``reports/RUN``)."""
    run = store.run(run_id)
    writer: ReportWriter = get_protocol(run.protocol).load("report")
    return writer(store, run, out_dir or report_folder(run.id))
