"""``lexicoord same-word ...``: mounted by lexicoord's registry from this package's entry."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from lexicoord.core.spec import AgentSpec
from lexicoord.models.pool import ModelPool
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from same_word_game.rules import SameWord

app = typer.Typer(help="Same word: name a thing alike, unseen.", no_args_is_help=True)

THINGS = ["a tool for driving nails", "a seat with four legs", "a device that shows the time"]


@app.command("run")
def run(
    model: Annotated[str, typer.Option(help="Model of both seats.")],
    run_name: Annotated[str, typer.Option("--run", help="Run name.")],
    items: Annotated[int, typer.Option(min=1, max=len(THINGS))] = len(THINGS),
    db: Annotated[str | None, typer.Option(help="Store.")] = None,
) -> None:
    """Play the built-in things with two seats on MODEL."""
    lineup = [AgentSpec(name="a", model=model), AgentSpec(name="b", model=model)]
    tasks = [{"id": f"t{i}", "thing": thing} for i, thing in enumerate(THINGS[:items])]
    summary = asyncio.run(Runner(Store(db), SameWord(), models=ModelPool(cache=False)).run(run_name, grid(tasks, [lineup])))
    typer.echo(f"same-word: {summary.done} played, {summary.failed} failed")
