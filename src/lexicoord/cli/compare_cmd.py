"""``lexicoord compare RUN_A RUN_B``: two runs of one protocol, paired on the items they share."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lexicoord.cli.options import DbOption, OutFolderOption
from lexicoord.cli.report_cmd import print_report


def compare(
    run_a: Annotated[str, typer.Argument(help="Run A (name or a unique prefix).")],
    run_b: Annotated[str, typer.Argument(help="Run B (name or a unique prefix).")],
    out: OutFolderOption = None,
    db: DbOption = None,
) -> None:
    """Compare two runs on shared items: paired tests, disagreements, cost; a table and an HTML page."""
    from lexicoord.analysis.compare_report import compare_runs
    from lexicoord.runs.names import report_folder
    from lexicoord.runs.store import Store

    store = Store(db)
    a, b = store.run(run_a).id, store.run(run_b).id
    print_report(compare_runs(store, a, b, out or Path(report_folder(f"{a}-vs-{b}"))))
