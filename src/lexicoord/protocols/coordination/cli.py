"""``lexicoord coordination`` (short: ``coord``): the coordination game as a campaign, a report, or one game in the terminal."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from lexicoord.cli import report_cmd
from lexicoord.cli.campaign import run_campaign
from lexicoord.cli.lineup import dataset_from, lineup_from
from lexicoord.cli.options import (
    DbOption,
    ModelOptions,
    NoCacheOption,
    RunNameOption,
)
from lexicoord.errors import LexicoordError
from lexicoord.protocols.coordination import CoordinationGame, terminal
from lexicoord.runs.grid import grid

app = typer.Typer(help="The LexiCoord coordination game: campaigns, reports, a game in the terminal.", no_args_is_help=True)
app.command("play")(terminal.play)
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
    leader_may_end: Annotated[bool, typer.Option(
        "--leader-may-end", help="Offer a model leader the end of the game when it is asked to clarify.")] = False,
    temperature: Annotated[float | None, typer.Option(help="Temperature for every LLM agent.")] = 0.7,
    concurrency: Annotated[int, typer.Option(min=1, max=256)] = 4,
    seed: Annotated[int, typer.Option(help="Base seed of the run.")] = 0,
    run_name: RunNameOption = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
    option: ModelOptions = None,
) -> None:
    """Play every item with the line-up, store every move, resume on re-run."""
    lineup = lineup_from(agent, model, agents, temperature)
    if any(a.kind == "human" for a in lineup):
        raise LexicoordError("Campaigns have no people at the keyboard: use sim:POLICY seats, or 'lexicoord coordination play'.")
    chosen = dataset_from(dataset, items, sample, category)
    if leader_may_end and no_clarify:
        raise LexicoordError("--leader-may-end offers the end in the clarification request; drop --no-clarify.")
    settings: dict[str, object] = {"clarification_bound": bound, "leader_clarifies": not no_clarify}
    if leader_may_end:  # only when set, so the episodes of runs made before the option keep their keys (resume)
        settings["leader_may_end"] = True
    episodes = grid([i.as_task() for i in chosen], [lineup], settings=[settings], repetitions=repetitions)
    config = {"dataset": dataset, "items": len(chosen), "lineup": [a.model_dump(exclude_defaults=True) for a in lineup],
              "settings": settings, "repetitions": repetitions}
    run_campaign(CoordinationGame(), episodes, config, prefix="coord", run_name=run_name, db=db, no_cache=no_cache,
                 option=option, concurrency=concurrency, seed=seed)


app.command("report", help="Alias of 'lexicoord report RUN' for a coordination run.")(report_cmd.report)
