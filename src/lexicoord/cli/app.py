"""The ``lexicoord`` command: one module per subcommand group, wired here."""

from __future__ import annotations

import logging
import sys

import typer
from dotenv import find_dotenv, load_dotenv
from rich.console import Console
from rich.markup import escape
from sqlalchemy.exc import DBAPIError

from lexicoord import __version__
from lexicoord.cli import ask_cmd, demo_cmd, models_cmd, protocols_cmd, report_cmd, rooms_cmd, runs_cmd, serve_cmd
from lexicoord.core.registry import protocols
from lexicoord.errors import LexicoordError
from lexicoord.runs import store_errors

app = typer.Typer(
    name="lexicoord",
    help="Semantic coordination among LLM agents and people: run protocols, record every move, measure.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(models_cmd.app, name="models")
app.add_typer(runs_cmd.app, name="runs")
app.add_typer(rooms_cmd.app, name="rooms")
app.command("ask")(ask_cmd.ask)
app.command("report")(report_cmd.report)
app.command("protocols")(protocols_cmd.protocols)
app.command("demo")(demo_cmd.demo)
app.command("serve")(serve_cmd.serve)


def mount_protocols(target: typer.Typer) -> None:
    """Every installed protocol's command group, built-in or from another distribution, under its name."""
    for name, entry in sorted(protocols().items()):
        if entry.cli:
            group = entry.load("cli")
            target.add_typer(group, name=name)
            for alias in entry.aliases:
                target.add_typer(group, name=alias, hidden=True)


mount_protocols(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"lexicoord {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log retries and other details."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(message)s")


def main() -> None:
    """Entry point: a user's mistake prints one sentence and exits 1; usage errors exit 2; Ctrl-C 130."""
    load_dotenv(find_dotenv(usecwd=True))
    try:
        app(standalone_mode=True)
    except LexicoordError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    except DBAPIError as exc:  # a store that is damaged, read-only or locked: which file, and what to do
        Console(stderr=True).print(f"[red]error:[/red] {escape(store_errors.sentence(exc))}", highlight=False,
                                   soft_wrap=True)
        sys.exit(1)
    except OSError as exc:  # a file or folder the system refused: one sentence, never a traceback
        where = f" {exc.filename}" if exc.filename else ""
        reason = exc.strerror or str(exc)
        Console(stderr=True).print(f"[red]error:[/red] cannot use{escape(where)}: {escape(reason)}.", highlight=False,
                                   soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
