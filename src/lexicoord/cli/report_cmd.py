"""``lexicoord report RUN``: any stored run's report, written by the protocol the run recorded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from lexicoord.cli.console import console_for
from lexicoord.cli.options import DbOption, OutFolderOption

if TYPE_CHECKING:
    from lexicoord.analysis.report import Report

console = console_for()


def print_report(result: Report) -> None:
    for t in result.tables:
        table = Table(title=escape(t.title))
        for h in t.head:
            table.add_column(escape(h), overflow="fold")
        for row in t.rows:
            table.add_row(*(escape(c) for c in row))
        console.print(table)
    for kind, path in result.files.items():
        console.print(f"{escape(kind)}: {escape(str(path))}", highlight=False)
    print_warnings(result.warnings)


def print_warnings(warnings: list[str]) -> None:
    for line in warnings:
        console.print(f"[bold yellow]warning:[/] {escape(line)}", highlight=False)


def report(
    run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
    out: OutFolderOption = None,
    without_takeovers: Annotated[bool, typer.Option(
        "--without-takeovers", help="Leave out games in which a model took a person's seat over (a study's dropouts).")]
    = False,
    db: DbOption = None,
) -> None:
    """Tables in the terminal; figures (PNG, SVG), an HTML report, JSON and CSV on disk, for any protocol."""
    from lexicoord.analysis.report import report_run
    from lexicoord.runs.store import Store

    print_report(report_run(Store(db), run_id, out, without_takeovers=without_takeovers))
