"""The ``lexicoord`` command: one module per subcommand group, wired here."""

from __future__ import annotations

import logging
import sys

import click
import typer
from dotenv import load_dotenv
from rich.console import Console
from rich.markup import escape

from lexicoord import __version__
from lexicoord.cli import ask_cmd, demo_cmd, models_cmd, runs_cmd
from lexicoord.errors import LexicoordError

app = typer.Typer(
    name="lexicoord",
    help="Semantic coordination among LLM agents and people: run protocols, record every move, measure.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(models_cmd.app, name="models")
app.add_typer(runs_cmd.app, name="runs")
app.command("ask")(ask_cmd.ask)
app.command("demo")(demo_cmd.demo)


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
    """Entry point: user errors print one sentence and exit 1; Ctrl-C exits 130."""
    load_dotenv()
    err = Console(stderr=True)
    try:
        code = app(standalone_mode=False)
    except LexicoordError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(1)
    except (KeyboardInterrupt, click.exceptions.Abort):
        err.print("interrupted; finished episodes are saved, and re-running the same command resumes.")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
