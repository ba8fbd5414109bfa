"""What every run command does once it has a checked experiment: print it, estimate it, or run it.

``lexicoord run FILE`` and every protocol's ``run`` command end here with the same :class:`Loaded` experiment
(a command's flags are only another way to write the file), so both make the same episodes and store the same
config. This opens the store, fills the model pool (the file's options, the cache setting), resolves every model
named before the first episode, runs under a progress bar in a process tuned for long runs, and says where the
report is.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from lexicoord.cli.console import console_for
from lexicoord.collector import tune_for_long_runs
from lexicoord.core.registry import get_protocol
from lexicoord.experiments.estimate import per_model
from lexicoord.experiments.loading import Loaded, to_toml
from lexicoord.experiments.source import ExperimentError
from lexicoord.models.pool import ModelPool
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.runs.summary import RunSummary

console = console_for()

PrintFileOption = Annotated[bool, typer.Option(
    "--print-file", help="Print the experiment file these options amount to, and run nothing.")]
DryRunOption = Annotated[bool, typer.Option(
    "--dry-run", help="Print the grid, the model calls, tokens and cost it would take, and run nothing.")]


def run_name(loaded: Loaded, default: str | None = None) -> str:
    """``default`` (what the command chose), else the file's name for the run, else the protocol's prefix and
    the time."""
    return default or loaded.experiment.name or f"{loaded.plan.prefix_of(loaded.parts)}-{dt.datetime.now():%Y%m%d-%H%M%S}"


def dry_run(loaded: Loaded, name: str) -> None:
    """The grid and what it would cost, from the protocol's call pattern (see experiments/estimate.py); before the
    data is on disk, from the size the file gives, saying that the data is still missing."""
    try:
        campaign = loaded.campaign()
        missing = ""
    except ExperimentError:
        estimate = loaded.plan.without_data(loaded.experiment, loaded.parts)
        if estimate is None:
            raise
        campaign, missing = estimate
    console.print(f"run [bold]{escape(name)}[/bold] ({escape(loaded.experiment.protocol)}): "
                  f"{len(campaign.episodes)} episodes", highlight=False)
    if missing:
        console.print(f"  [yellow]data missing:[/yellow] {escape(missing)}", highlight=False, soft_wrap=True)
    for key, value in campaign.config.items():
        if not isinstance(value, dict | list) or key in ("variants", "conditions", "policies", "models", "task"):
            console.print(f"  {key}: {escape(str(value))}", highlight=False)
    rows = per_model([c for e in campaign.episodes for c in loaded.plan.calls(loaded.parts, e)],
                     loaded.experiment.prices)
    table = Table(title="model calls at most (every round played); tokens estimated at 4 characters a token")
    for head in ("model", "calls", "prompt tokens", "completion tokens", "cost (USD)"):
        table.add_column(head, justify="left" if head == "model" else "right")
    for r in rows:
        table.add_row(escape(r.model), f"{r.calls:,}", f"{r.prompt_tokens:,}", f"{r.completion_tokens:,}",
                      "no price in the file" if r.cost is None else f"{r.cost:,.4f}")
    console.print(table)
    priced = [r.cost for r in rows if r.cost is not None]
    if priced:
        console.print(f"estimated cost of the priced models: {sum(priced):,.4f} USD", highlight=False)


def launch(loaded: Loaded, *, db: str | None, print_file: bool = False, dry: bool = False,
           default_name: str | None = None) -> RunSummary | None:
    """Print the file, estimate the run, or run it; exits 1 when any episode failed (the summary says which and
    why, and running the same experiment again plays them again)."""
    if print_file:
        typer.echo(to_toml(loaded.source.data), nl=False)
        return None
    name = run_name(loaded, default_name)
    if dry:
        dry_run(loaded, name)
        return None
    experiment, plan = loaded.experiment, loaded.plan
    campaign = loaded.campaign()
    pool = ModelPool(cache=None if experiment.cache else False, **experiment.options)
    for spec in dict.fromkeys(campaign.also_models):
        pool.get(spec)
    protocol = get_protocol(experiment.protocol).rules()()
    runner = Runner(Store(db), protocol, models=pool, concurrency=experiment.concurrency, seed=experiment.seed,
                    rate_limits=experiment.rate_limits)
    from lexicoord.cli.options import run_async
    from lexicoord.cli.progress import ProgressBar

    tune_for_long_runs()
    config = {**campaign.config, **({"published": [p.model_dump() for p in experiment.published]}
                                    if experiment.published else {}),
              **({"paper_models": experiment.paper_models} if experiment.paper_models else {})}
    summary = run_async(runner.run(name, campaign.episodes, config, observer=ProgressBar(), grows=plan.grows))
    plan.after(runner.store, name, lambda text: console.print(text, highlight=False))
    if summary.failed:  # a run with failed episodes is not a success, whatever it did finish
        raise typer.Exit(1)
    console.print(f"report: {plan.report_command} {escape(name)}", highlight=False)
    return summary
