"""``lexicoord models``: what providers exist, and whether one answers."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from lexicoord.cli.console import console_for
from lexicoord.cli.options import ModelOptions, parse_options, run_async

app = typer.Typer(help="List providers, or check that a model answers.", no_args_is_help=False)
console = console_for()


@app.callback(invoke_without_command=True)
def show_providers(ctx: typer.Context) -> None:
    """List providers and presets (model specs are provider/model)."""
    if ctx.invoked_subcommand is not None:
        return
    from lexicoord.models import list_providers
    from lexicoord.models.registry import plugin_errors

    table = Table(title="Providers (use as provider/model)")
    table.add_column("provider", style="bold")
    table.add_column("what")
    table.add_column("settings")
    for info in list_providers():
        settings = "; ".join(f"{k}: {v}" for k, v in info.details.items())
        table.add_row(info.name, info.description, settings)
    console.print(table)
    for problem in plugin_errors:
        console.print(f"[yellow]{escape(problem)}[/yellow]")
    console.print("Check one with: lexicoord models check local/smollm2-135m")


@app.command("check")
def check(
    spec: Annotated[str, typer.Argument(help="provider/model, e.g. local/smollm2-135m or ollama/llama3.2")],
    option: ModelOptions = None,
    timeout: Annotated[float, typer.Option(help="Seconds per attempt.")] = 60.0,
) -> None:
    """Send one tiny request (uncached, no retries) and print the latency or why it failed."""
    from lexicoord.models import get_model

    opts = {"max_retries": 0, "timeout": timeout, **parse_options(option)}
    model = get_model(spec, cache=False, **opts)
    out = run_async(model.generate("Reply with the single word: ready", max_tokens=8, temperature=0))
    console.print(
        f"[green]ok[/green] {escape(spec)} answered in {out.latency:.2f} s: {escape(repr(out.text.strip()[:60]))} "
        f"({out.usage.prompt_tokens} prompt + {out.usage.completion_tokens} completion tokens)"
    )
