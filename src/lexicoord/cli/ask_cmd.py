"""``lexicoord ask``: one completion from any model, with its usage."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape

from lexicoord.cli.console import console_for
from lexicoord.cli.options import (
    ModelOptions,
    NoCacheOption,
    cache_setting,
    load_json_arg,
    parse_options,
    run_async,
)
from lexicoord.errors import ConfigError
from lexicoord.models import ChatMessage, GenerateConfig, get_model
from lexicoord.models.structured import check_schema

err = console_for(stderr=True)


def ask(
    spec: Annotated[str, typer.Argument(help="provider/model")],
    prompt: Annotated[str, typer.Argument(help="The user message.")],
    system: Annotated[str | None, typer.Option(help="A system message.")] = None,
    temperature: Annotated[float | None, typer.Option()] = None,
    max_tokens: Annotated[int | None, typer.Option()] = 256,
    seed: Annotated[int | None, typer.Option()] = None,
    stop: Annotated[list[str] | None, typer.Option(help="Stop sequence (repeatable).")] = None,
    json_schema: Annotated[str | None, typer.Option("--json-schema", help="JSON schema, inline or a file.")] = None,
    choice: Annotated[list[str] | None, typer.Option("--choice", help="Allowed answer (repeatable).")] = None,
    no_cache: NoCacheOption = False,
    option: ModelOptions = None,
) -> None:
    """Print one completion, then its usage, latency and cache status on stderr."""
    from lexicoord.cli.terminal import printable  # it imports the runner and the store: not for `ask --help`

    schema = load_json_arg(json_schema)
    if schema is not None and not isinstance(schema, dict):
        raise ConfigError("--json-schema must be a JSON object (a schema such as {\"type\": \"object\", ...}).")
    if schema is not None:
        check_schema(schema)
    model = get_model(spec, cache=cache_setting(no_cache), **parse_options(option))
    messages = [ChatMessage(role="system", content=system)] if system else []
    messages.append(ChatMessage(role="user", content=prompt))
    config = GenerateConfig(
        temperature=temperature, max_tokens=max_tokens, seed=seed, stop=tuple(stop) if stop else None,
        json_schema=schema, choices=tuple(choice) if choice else None,
    )
    out = run_async(model.generate(messages, config))
    # A reply is text from elsewhere: escape sequences in it must not drive the terminal.
    if out.parsed is not None:
        typer.echo(printable(json.dumps(out.parsed, ensure_ascii=False, indent=2)))
    else:
        typer.echo(printable(out.text))
    if out.parse_error:
        err.print(f"[yellow]could not parse the reply as asked[/yellow]: {escape(out.parse_error)}; raw text above.")
    err.print(
        f"[dim]{escape(out.model)} · {out.usage.prompt_tokens} prompt + {out.usage.completion_tokens} completion tokens"
        f" · {out.latency:.2f} s{' · cached' if out.cached else ''}[/dim]"
    )
    if out.parsed is None and not out.text.strip():
        # an endpoint that answers nothing (a reasoning model that spent its tokens thinking, a wrong chat template)
        # is a failure to say, not a blank line that looks like success
        stopped = f" (it stopped: {out.finish_reason})" if out.finish_reason else ""
        err.print(f"[red]{escape(out.model)} returned an empty reply{escape(stopped)}[/red]: no text to show; try "
                  "more --max-tokens, or check the endpoint's chat template.")
        raise typer.Exit(1)
