"""``lexicoord same-word ...`` (or ``lexicoord sw ...``): mounted by lexicoord's registry from this package's entry."""

from __future__ import annotations

from typing import Annotated

import typer

from lexicoord.cli.run_options import RunOptions, run_command
from same_word_game.experiment import DEFAULT_PLAYER

app = typer.Typer(help="Same word: name a thing alike, unseen.", no_args_is_help=True)


@run_command(app, concurrency_help="Games played at once.")
def run(
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help=f"A player's model (repeat: seats take them in turn; default {DEFAULT_PLAYER}).")] = None,
    things: Annotated[str, typer.Option(help="builtin, a JSONL file of {id, thing}, or hf:NAME.")] = "builtin",
    items: Annotated[int | None, typer.Option(min=1, help="Play the first N things.")] = None,
    seats: Annotated[list[int] | None, typer.Option("--seats", help="Seats per game (repeat for several; default 2).")] = None,
    max_tokens: Annotated[int, typer.Option(min=4, max=200)] = 20,
    *,
    run: RunOptions,
) -> None:
    """Play every thing with every number of seats; store every word; resume on re-run (the experiment file
    these options amount to: --print-file)."""
    run.launch("same-word", models={"players": model or [DEFAULT_PLAYER]}, data={"things": things, "items": items},
               settings={"max_tokens": max_tokens}, grid={"seats": seats or [2]})
