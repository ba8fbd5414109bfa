"""``lexicoord compare RUN_A RUN_B``: two runs of one protocol, paired on the items they share; ``RUN@A RUN@B``:
two conditions of one study, as independent groups."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lexicoord.cli.options import DbOption, OutFolderOption
from lexicoord.cli.report_cmd import print_report


def compare(
    run_a: Annotated[str, typer.Argument(help="Run A (name or a unique prefix); RUN@CONDITION for one condition of a "
                                              "study.")],
    run_b: Annotated[str, typer.Argument(help="Run B, likewise.")],
    out: OutFolderOption = None,
    db: DbOption = None,
) -> None:
    """Compare two runs on shared items, or two conditions of a study (RUN@A RUN@B); tables and an HTML page.

    Two runs pair on the items they share (McNemar, Wilcoxon); two conditions of a study are independent
    groups (Fisher, Mann-Whitney U)."""
    from lexicoord.analysis.compare_report import compare_runs, side
    from lexicoord.runs.names import report_folder
    from lexicoord.runs.store import Store

    store = Store(db)
    a, b = side(store, run_a).name, side(store, run_b).name
    folder = f"{a}-vs-{b}".replace("@", "-")
    print_report(compare_runs(store, a, b, out or Path(report_folder(folder))))
