"""``lexicoord demo``: three embedded-model agents each choose a meaning for an ambiguous word."""

from __future__ import annotations

import datetime as dt
import random
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lexicoord.cli.options import DbOption, NoCacheOption, cache_setting, run_async
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.demo_choice import DEMO_ITEM, DemoChoice, demo_lineup
from lexicoord.runs.events import ChoiceEvent
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

console = Console()


def demo(
    model: Annotated[str, typer.Option(help="Model for every agent.")] = "local/smollm2-135m",
    agents: Annotated[int, typer.Option(min=1, max=8, help="How many agents.")] = 3,
    seed: Annotated[int | None, typer.Option(help="Base seed (default: a new one each time).")] = None,
    run: Annotated[str | None, typer.Option(help="Run name (default: demo-<time>).")] = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Each agent picks a meaning of the ambiguous word and says why; prints whether they agree."""
    store = Store(db)
    run_id = run or f"demo-{dt.datetime.now():%Y%m%d-%H%M%S}"
    base_seed = seed if seed is not None else random.randrange(2**31)
    console.print(f"Sentence: [italic]{escape(DEMO_ITEM['sentence'])}[/italic]")
    console.print(f"Ambiguous word: [bold]{DEMO_ITEM['word']}[/bold]; meanings: {', '.join(DEMO_ITEM['options'])}")
    runner = Runner(
        store, DemoChoice(), models=ModelPool(cache=cache_setting(no_cache)), concurrency=agents,
        seed=base_seed, progress=False,
    )
    episodes = grid([DEMO_ITEM], [demo_lineup(model, agents)])
    summary = run_async(runner.run(run_id, episodes, {"model": model, "agents": agents}))
    for episode, events in store.iter_run_events(run_id):
        if episode.status != "done":
            console.print(f"[red]The demo failed:[/red] {escape(episode.error or '')}")
            raise typer.Exit(1)
        table = Table(title=f"{agents} agents on {model}")
        table.add_column("agent")
        table.add_column("choice")
        table.add_column("justification")
        for e in events:
            if isinstance(e, ChoiceEvent):
                choice = escape(e.choice) if e.choice else f"[yellow]none[/yellow] ({escape(e.failure or '')})"
                table.add_row(e.agent or "", choice, escape(e.justification))
        console.print(table)
        outcome = episode.outcome or {}
        if outcome.get("agreed"):
            console.print(f"[green]They agree[/green] on: {escape(outcome['agreed_on'])}")
        else:
            console.print("[yellow]They do not agree.[/yellow]")
    console.print(
        f"[dim]{summary.model_calls} model calls, {summary.prompt_tokens + summary.completion_tokens} tokens,"
        f" {summary.wall_time:.1f} s. Recorded as run {run_id}: lexicoord runs show {run_id} --transcript[/dim]"
    )
