"""``lexicoord demo``: one real coordination game on the built-in data with the embedded model."""

from __future__ import annotations

import datetime as dt
import random
from typing import Annotated

import typer
from rich.markup import escape

from lexicoord.cli.console import console_for
from lexicoord.cli.options import DbOption, NoCacheOption, cache_setting, run_async, run_name_option
from lexicoord.errors import ConfigError

console = console_for()
DEFAULT_ITEM = "release-01"


def demo(
    model: Annotated[str, typer.Option(help="Model for every agent.")] = "local/smollm2-135m",
    agents: Annotated[int, typer.Option(min=2, max=8, help="How many agents (the first leads).")] = 3,
    item: Annotated[str | None, typer.Option(help=f"Built-in item id (default {DEFAULT_ITEM}; 'random' for any).")] = None,
    bound: Annotated[int, typer.Option(min=0, max=10, help="Clarification bound.")] = 3,
    seed: Annotated[int | None, typer.Option(help="Base seed (default: a new one each time).")] = None,
    run: Annotated[str | None, typer.Option(callback=run_name_option, help="Run name (default: demo-<time>).")] = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """One coordination game: agents pick a meaning of an ambiguous word, clarify, and converge or fail."""
    from lexicoord.models.pool import ModelPool
    from lexicoord.protocols.coordination import CoordinationGame
    from lexicoord.protocols.coordination.lineup import lineup_from
    from lexicoord.protocols.coordination.terminal import print_game
    from lexicoord.runs.grid import grid
    from lexicoord.runs.runner import Runner
    from lexicoord.runs.store import Store
    from lexicoord.tasks.ambiguous import builtin_items

    items = {i.id: i for i in builtin_items()}
    base_seed = seed if seed is not None else random.randrange(2**31)
    chosen_id = random.Random(base_seed).choice(sorted(items)) if item == "random" else item or DEFAULT_ITEM
    if chosen_id not in items:
        raise ConfigError(f"No built-in item '{chosen_id}' (ids look like bank-01, release-03).")
    chosen = items[chosen_id]
    # The model and the store first: a model name that cannot be used, or a store that cannot be opened, is one
    # sentence before anything of the game is shown.
    lineup = lineup_from(None, model, agents, temperature=0.7)
    models = ModelPool(cache=cache_setting(no_cache))
    models.get(model)
    store = Store(db)
    console.print(f"Sentence: [italic]{escape(chosen.sentence)}[/italic]")
    console.print(f"Ambiguous word: [bold]{escape(chosen.word)}[/bold]; meanings: {escape('; '.join(chosen.options))}")
    run_id = run or f"demo-{dt.datetime.now():%Y%m%d-%H%M%S}"
    runner = Runner(
        store, CoordinationGame(), models=models, concurrency=1,
        seed=base_seed,
    )
    episodes = grid([chosen.as_task()], [lineup], settings=[{"clarification_bound": bound}])
    summary = run_async(runner.run(run_id, episodes, {"model": model, "agents": agents, "item": chosen_id, "bound": bound}))
    for episode, events in store.iter_run_events(run_id):
        if episode.status != "done":
            console.print(f"[red]The game failed to run:[/red] {escape(episode.error or '')}")
            raise typer.Exit(1)
        print_game(events, CoordinationGame.outcome_of(episode))
    console.print(
        f"[dim]{summary.model_calls} model calls, {summary.prompt_tokens + summary.completion_tokens} tokens,"
        f" {summary.wall_time:.1f} s. Recorded as run {run_id}: lexicoord runs show {run_id} --transcript[/dim]"
    )
