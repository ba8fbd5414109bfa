"""``lexicoord run FILE``: an experiment file, checked whole, then printed, estimated or run.

A bad file runs nothing: every problem is one line on stderr (``file:line: what``) and the exit status is 2,
as for any usage error. The run is named by the file's ``name``, else by the file's own name, so running the
same file again resumes it, and grows it when items, variants or repetitions were added.

``--ray ADDRESS --workers N`` plays the same run as N Ray tasks (cli/ray_cmd.py). ``--ray`` always takes a value
(``auto``, ``local`` or ``host:port``): an option whose value may be left out is not something typer can parse
unambiguously before the file argument, so ``auto`` is written out.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from lexicoord.cli.campaign import DryRunOption, PrintFileOption, launch, run_name
from lexicoord.cli.options import DbOption
from lexicoord.experiments.loading import from_file
from lexicoord.experiments.source import ExperimentError

SMOKE_SUFFIX = "-smoke"


def ray_address(value: str | None) -> str | None:
    """Checked before the file is read, and without importing Ray."""
    if value is None:
        return None
    from lexicoord.errors import ConfigError
    from lexicoord.runs.ray_launcher import check_address

    try:
        return check_address(value)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None


def run(
    file: Annotated[Path, typer.Argument(help="The experiment file (TOML).", dir_okay=False)],
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="Override a key: models.a=vllm/Qwen/Qwen2.5-7B-Instruct, data.items=50 (repeatable).")] = None,
    smoke: Annotated[bool, typer.Option(
        "--smoke", help="A few items, as the file's \\[smoke] table says: the same code path, as run '<name>-smoke'.")]
    = False,
    print_file: PrintFileOption = False,
    dry_run: DryRunOption = False,
    db: DbOption = None,
    ray: Annotated[str | None, typer.Option(
        "--ray", metavar="ADDRESS", callback=ray_address,
        help="Play the run as Ray tasks on the cluster at ADDRESS: auto (RAY_ADDRESS, or the cluster started on this "
             "machine), local (a private one in this process) or host:port. Needs pip install 'lexicoord\\[ray]'.")]
    = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", min=1, help="With --ray: how many tasks play the run, each a process with the file's "
                                 "concurrency (default: one a node).")] = None,
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
    if workers is not None and ray is None:
        print("error: --workers is the number of Ray tasks: it needs --ray ADDRESS.", file=sys.stderr)
        raise typer.Exit(2)
    if ray is not None:
        from lexicoord.cli.ray_cmd import launch_on_ray
        from lexicoord.runs.ray_launcher import RayMissing

        try:
            launch_on_ray(loaded, file=file, overrides=set_ or [], smoke=smoke, db=db, address=ray, workers=workers,
                          name=run_name(loaded, default_name))
        except RayMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(2) from None
        return
    launch(loaded, db=db, default_name=default_name)
