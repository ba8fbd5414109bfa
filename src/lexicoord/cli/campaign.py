"""What every protocol's ``run`` command does once it has its episodes: the scaffold of a campaign.

A protocol's command builds its own grid and config (that is what differs); this opens the store, fills the
model pool (``--option`` values, the cache setting), resolves every model named before the first episode,
names the run, runs it under a progress bar in a process tuned for long runs, and says where the report is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from lexicoord.cli.options import cache_setting, parse_options, run_async
from lexicoord.collector import tune_for_long_runs
from lexicoord.core.protocol import Protocol
from lexicoord.core.spec import EpisodeSpec
from lexicoord.models.pool import ModelPool
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.runs.summary import RunSummary

console = Console()


def run_campaign(
    protocol: Protocol,
    episodes: Sequence[EpisodeSpec],
    config: dict[str, Any],
    *,
    prefix: str,
    run_name: str | None,
    db: str | None,
    no_cache: bool,
    option: list[str] | None,
    concurrency: int,
    seed: int,
    also_models: Iterable[str] = (),
    after: Callable[[Store, str], None] | None = None,
    report: str = "lexicoord report",
) -> RunSummary:
    """Run ``episodes`` of ``protocol`` as run ``run_name`` (default ``PREFIX-time``) and print the summary.

    ``also_models``: models the protocol calls beyond the line-ups (a judge), resolved up front as the runner
    resolves the line-ups', so a missing key is one error, not a failure in every episode. ``after`` runs
    once the run ends, whether or not episodes failed (a run with failures still says what its finished
    episodes look like).
    Exits 1 when any episode failed: the summary says which and why, and re-running the command plays them
    again."""
    pool = ModelPool(cache=cache_setting(no_cache), **parse_options(option))
    for spec in dict.fromkeys(also_models):
        pool.get(spec)
    run_id = run_name or f"{prefix}-{dt.datetime.now():%Y%m%d-%H%M%S}"
    runner = Runner(Store(db), protocol, models=pool, concurrency=concurrency, seed=seed)
    from lexicoord.cli.progress import ProgressBar

    tune_for_long_runs()
    summary = run_async(runner.run(run_id, list(episodes), config, observer=ProgressBar()))
    if after is not None:
        after(runner.store, run_id)
    if summary.failed:  # a run with failed episodes is not a success, whatever it did finish
        raise typer.Exit(1)
    console.print(f"report: {report} {escape(run_id)}", highlight=False)
    return summary
