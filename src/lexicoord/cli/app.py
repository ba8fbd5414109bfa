"""The ``lexicoord`` command: one module per subcommand group, each imported only when its command is used.

Every built-in command is declared here with its one-line help, and every protocol's group comes from the
registry with the protocol's summary, so ``lexicoord --help`` lists them all without importing a command
module: those import the store (SQLAlchemy, Alembic), the runner, the web server or the report's figures,
seconds of start-up that a help page or ``lexicoord runs list`` has no use for (``benchmarks/startup.py``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, NoReturn, TypeGuard

import typer

from lexicoord import __version__
from lexicoord.cli.lazy import Lazy, LazyGroup, protocol_commands
from lexicoord.errors import LexicoordError

if TYPE_CHECKING:
    from sqlalchemy.exc import DBAPIError

#: The built-in commands, in the order ``--help`` lists them; each line is its command's own first paragraph
#: (tests/cli/test_startup.py holds them equal).
BUILT_IN = (
    Lazy("ask", "lexicoord.cli.ask_cmd:ask",
         "Print one completion, then its usage, latency and cache status on stderr."),
    Lazy("run", "lexicoord.cli.run_cmd:run",
         "Run an experiment file: protocol, data, models by role, settings and grid; resumes and grows on re-run."),
    Lazy("report", "lexicoord.cli.report_cmd:report",
         "Tables in the terminal; figures (PNG, SVG), an HTML report, JSON and CSV on disk, for any protocol."),
    Lazy("compare", "lexicoord.cli.compare_cmd:compare",
         "Compare two runs on shared items, or two conditions of a study (RUN@A RUN@B); tables and an HTML page."),
    Lazy("protocols", "lexicoord.cli.protocols_cmd:protocols",
         "Every installed protocol: its name, what it is, its settings, and whether it has a report and a live room."),
    Lazy("demo", "lexicoord.cli.demo_cmd:demo",
         "One coordination game: agents pick a meaning of an ambiguous word, clarify, and converge or fail."),
    Lazy("serve", "lexicoord.cli.serve_cmd:serve",
         "Serve live rooms; open the printed address in a browser, create a room, and share its link."),
    Lazy("mcp", "lexicoord.cli.mcp_cmd:mcp",
         "Serve the agreement gate over MCP on stdio: a coding agent checks an instruction before acting on it."),
    Lazy("models", "lexicoord.cli.models_cmd:app", "List providers, or check that a model answers."),
    Lazy("runs", "lexicoord.cli.runs_cmd:app", "Inspect and export stored runs."),
    Lazy("rooms", "lexicoord.cli.rooms_cmd:app", "List and close the live rooms of `lexicoord serve`."),
    Lazy("study", "lexicoord.cli.study_cmd:app", "Serve a study with people, check its file, and export its data."),
)


class Lexicoord(LazyGroup):
    """The root group: the built-in commands, then every installed protocol's group under its name (its short
    forms hidden), whether the protocol is built in or comes from another distribution."""

    built_in = BUILT_IN

    def more(self) -> Iterable[Lazy]:
        return protocol_commands()


app = typer.Typer(
    cls=Lexicoord,
    name="lexicoord",
    help="Semantic coordination among LLM agents and people: run protocols, record every move, measure.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


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
    """Entry point: a user's mistake prints one sentence and exits 1; usage errors exit 2; Ctrl-C 130.

    A mistake may surface while a command's module is imported (that happens inside ``app``), and is told
    the same way."""
    from dotenv import find_dotenv, load_dotenv

    load_dotenv(find_dotenv(usecwd=True))
    try:
        app(standalone_mode=True)
    except LexicoordError as exc:
        _say(str(exc))
    except OSError as exc:  # a file or folder the system refused: one sentence, never a traceback
        where = f" {exc.filename}" if exc.filename else ""
        reason = exc.strerror or str(exc)
        _say(f"cannot use{where}: {reason}.")
    except Exception as exc:
        if not _is_store_error(exc):
            raise
        from lexicoord.runs import store_errors

        _say(store_errors.sentence(exc))  # a store that is damaged, read-only or locked: which file, what to do


def _is_store_error(exc: Exception) -> TypeGuard[DBAPIError]:
    """Whether ``exc`` is SQLAlchemy's ``DBAPIError``; only a command that imported SQLAlchemy can raise one, so
    a command that never opens a store does not import it to find out."""
    sqlalchemy_exc = sys.modules.get("sqlalchemy.exc")
    return sqlalchemy_exc is not None and isinstance(exc, sqlalchemy_exc.DBAPIError)


def _say(sentence: str) -> NoReturn:
    """The one sentence of an error, on stderr, then exit status 1."""
    from rich.markup import escape

    from lexicoord.cli.console import console_for

    console_for(stderr=True).print(f"[red]error:[/red] {escape(sentence)}", highlight=False, soft_wrap=True)
    sys.exit(1)


if __name__ == "__main__":
    main()
