"""The options every protocol's ``run`` command shares, written once.

A protocol's ``run`` command is its own flags (what to play, with what) plus the same eight a run always has:
its seed, concurrency, name, store, cache, model options, ``--print-file`` and ``--dry-run``. :func:`run_command`
adds those eight to the command's own signature, so each command names only its own flags, and hands them over
as one :class:`RunOptions`, whose :meth:`RunOptions.launch` writes the experiment file the flags amount to and
runs it exactly as ``lexicoord run FILE`` would. A plugin's command uses the same decorator.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, get_type_hints

import typer

from lexicoord.cli.campaign import DryRunOption, PrintFileOption, launch
from lexicoord.cli.options import DbOption, ModelOptions, NoCacheOption, RunNameOption, parse_options

F = TypeVar("F", bound=Callable[..., None])


@dataclass(frozen=True)
class RunOptions:
    """The shared options of one ``run`` command line."""

    seed: int
    concurrency: int
    run_name: str | None
    db: str | None
    no_cache: bool
    option: list[str] | None
    print_file: bool
    dry_run: bool

    def launch(self, protocol: str, *, models: dict[str, Any], data: dict[str, Any], settings: dict[str, Any],
               grid: dict[str, Any]) -> None:
        """Run (or print, or estimate) the experiment these options and the command's own sections make."""
        from lexicoord.experiments.loading import from_values

        values = {"protocol": protocol, "name": self.run_name, "seed": self.seed, "concurrency": self.concurrency,
                  "cache": not self.no_cache, "models": models, "data": data, "settings": settings, "grid": grid,
                  "options": parse_options(self.option)}
        launch(from_values(values), db=self.db, print_file=self.print_file, dry=self.dry_run)


def _shared(concurrency: int, seed_help: str, concurrency_help: str) -> list[inspect.Parameter]:
    """The shared options as parameters typer reads (keyword-only, each with its default)."""
    kinds: list[tuple[str, Any, Any]] = [
        ("seed", Annotated[int, typer.Option(help=seed_help)], 0),
        ("concurrency", Annotated[int, typer.Option(min=1, max=256, help=concurrency_help)], concurrency),
        ("run_name", RunNameOption, None),
        ("db", DbOption, None),
        ("no_cache", NoCacheOption, False),
        ("option", ModelOptions, None),
        ("print_file", PrintFileOption, False),
        ("dry_run", DryRunOption, False),
    ]
    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
            for name, annotation, default in kinds]


def run_command(app: typer.Typer, name: str = "run", *, concurrency: int = 4, seed_help: str = "Seed of the run.",
                concurrency_help: str = "Episodes played at once.") -> Callable[[F], F]:
    """Register the decorated function as ``app``'s ``name`` command, with the shared options after its own; the
    function takes them as its ``run: RunOptions`` parameter (last), which the command line never shows."""

    def register(command: F) -> F:
        hints = get_type_hints(command, include_extras=True)
        own = [p.replace(annotation=hints.get(p.name, p.annotation))
               for p in inspect.signature(command).parameters.values() if p.name != "run"]
        shared = _shared(concurrency, seed_help, concurrency_help)
        names = {p.name for p in shared}

        @functools.wraps(command)
        def cli(**values: Any) -> None:
            options = RunOptions(**{k: values.pop(k) for k in list(values) if k in names})
            command(**values, run=options)

        params = [*own, *shared]
        cli.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        cli.__annotations__ = {p.name: p.annotation for p in params}
        del cli.__wrapped__  # typer must read this signature, not the command's own
        app.command(name)(cli)
        return command

    return register
