"""``lexicoord coord``: the coordination game as a campaign, a report, or one game in the terminal."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lexicoord.analysis.coordination import compute, games_from
from lexicoord.analysis.report import agent_rows, summary_rows, write_report
from lexicoord.cli import coord_play
from lexicoord.cli.lineup import dataset_from, lineup_from
from lexicoord.cli.options import DbOption, ModelOptions, NoCacheOption, cache_setting, parse_options, run_async
from lexicoord.errors import LexicoordError
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

app = typer.Typer(help="The LexiCoord coordination game: campaigns, reports, a game in the terminal.", no_args_is_help=True)
app.command("play")(coord_play.play)
console = Console()

AgentOption = Annotated[
    list[str] | None,
    typer.Option("--agent", "-a", help="A seat, in order (the first leads): name=provider/model, name=sim:POLICY[:p], or name=human."),
]
ModelOption = Annotated[str, typer.Option(help="Model for every agent when no --agent is given.")]
DatasetOption = Annotated[str, typer.Option(help="builtin, a JSONL file, or coarsewsd:FOLDER.")]


@app.command("run")
def run(
    agent: AgentOption = None,
    model: ModelOption = "local/smollm2-135m",
    agents: Annotated[int, typer.Option(min=2, max=12, help="How many agents when no --agent is given.")] = 3,
    dataset: DatasetOption = "builtin",
    items: Annotated[int | None, typer.Option(min=1, help="Use the first N items.")] = None,
    sample: Annotated[int | None, typer.Option(help="Shuffle the items with this seed first.")] = None,
    category: Annotated[str | None, typer.Option(help="Only items of this category (homonym, polysemy, domain, wsd).")] = None,
    repetitions: Annotated[int, typer.Option(min=1)] = 1,
    bound: Annotated[int, typer.Option(min=0, max=20, help="Clarification bound.")] = 3,
    no_clarify: Annotated[bool, typer.Option("--no-clarify", help="The leader adds no clarifying statements.")] = False,
    temperature: Annotated[float | None, typer.Option(help="Temperature for every LLM agent.")] = 0.7,
    concurrency: Annotated[int, typer.Option(min=1, max=256)] = 4,
    seed: Annotated[int, typer.Option(help="Base seed of the run.")] = 0,
    run_name: Annotated[str | None, typer.Option("--run", help="Run name; the same name resumes it.")] = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
    option: ModelOptions = None,
) -> None:
    """Play every item with the line-up, store every move, resume on re-run."""
    lineup = lineup_from(agent, model, agents, temperature)
    if any(a.kind == "human" for a in lineup):
        raise LexicoordError("Campaigns have no people at the keyboard: use sim:POLICY seats, or 'lexicoord coord play'.")
    chosen = dataset_from(dataset, items, sample, category)
    settings = {"clarification_bound": bound, "leader_clarifies": not no_clarify}
    store = Store(db)
    run_id = run_name or f"coord-{dt.datetime.now():%Y%m%d-%H%M%S}"
    runner = Runner(
        store, CoordinationGame(), models=ModelPool(cache=cache_setting(no_cache), **parse_options(option)),
        concurrency=concurrency, seed=seed,
    )
    episodes = grid([i.as_task() for i in chosen], [lineup], settings=[settings], repetitions=repetitions)
    config = {"dataset": dataset, "items": len(chosen), "lineup": [a.model_dump(exclude_defaults=True) for a in lineup],
              "settings": settings, "repetitions": repetitions}
    run_async(runner.run(run_id, episodes, config))
    console.print(f"report: lexicoord coord report {escape(run_id)}", highlight=False)


@app.command("report")
def report(
    run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
    out: Annotated[Path | None, typer.Option(help="Folder for the files (default: reports/RUN).")] = None,
    db: DbOption = None,
) -> None:
    """Tables in the terminal; depth figure (PNG, SVG), HTML report, JSON and CSV on disk."""
    store = Store(db)
    info = store.run(run_id)
    games = games_from(store.iter_run_events(info.id))
    if not games:
        raise LexicoordError(f"Run '{info.id}' has no finished coordination games yet.")
    bound = (info.config.get("settings") or {}).get("clarification_bound", info.config.get("bound"))
    stats = compute(games, bound=bound)
    table = Table(title=f"{escape(info.id)}: {stats.games} games")
    table.add_column("measure")
    table.add_column("value")
    for k, v in summary_rows(stats):
        table.add_row(k, escape(v))
    console.print(table)
    depth = Table(title="clarification depth")
    depth.add_column("depth")
    depth.add_column("games")
    for d, n in stats.depth_distribution.items():
        depth.add_row(str(d), str(n))
    depth.add_row("failed", str(stats.failed))
    console.print(depth)
    rows = agent_rows(stats)
    agents = Table(title="agents")
    for col in rows[0]:
        agents.add_column(col)
    for r in rows:
        agents.add_row(*(escape(str(v)) for v in r.values()))
    console.print(agents)
    paths = write_report(info, stats, games, out or Path("reports") / info.id)
    for kind, path in paths.items():
        console.print(f"{kind}: {escape(str(path))}", highlight=False)
