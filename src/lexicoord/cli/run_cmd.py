"""``lexicoord run FILE``: an experiment file, checked whole, then printed, estimated or run.

A bad file runs nothing: every problem is one line on stderr (``file:line: what``) and the exit status is 2,
as for any usage error. The run is named by the file's ``name``, else by the file's own name, so running the
same file again resumes it, and grows it when items, variants or repetitions were added.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from lexicoord.cli.campaign import DryRunOption, PrintFileOption, launch
from lexicoord.cli.options import DbOption
from lexicoord.experiments.loading import from_file
from lexicoord.experiments.source import ExperimentError

SMOKE_SUFFIX = "-smoke"


def run(
    file: Annotated[Path, typer.Argument(help="The experiment file (TOML).", dir_okay=False)],
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override a key: models.a=vllm/Qwen/Qwen2.5-7B-Instruct, data.items=50 (repeatable).")] = None,
    smoke: Annotated[bool, typer.Option(
        "--smoke", help="A few items, as the file's [smoke] table says: the same code path, as run '<name>-smoke'.")]
    = False,
    print_file: PrintFileOption = False,
    dry_run: DryRunOption = False,
    db: DbOption = None,
) -> None:
    """Run an experiment file: protocol, data, models by role, settings and grid; resumes and grows on re-run."""
    try:
        loaded = from_file(file, set_ or [], smoke=smoke)
        name = loaded.experiment.name or file.stem
        default_name = f"{name}{SMOKE_SUFFIX}" if smoke else name
        if print_file or dry_run:  # a dry run estimates from the file's sizes when the data is not on disk yet
            launch(loaded, db=db, print_file=print_file, dry=dry_run, default_name=default_name)
            return
        loaded.campaign()  # the data read now: a missing or bad file is the file's problem, at its [data] line
    except ExperimentError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        raise typer.Exit(2) from None
    launch(loaded, db=db, default_name=default_name)
