"""The annotate-then-edit flow of lexical functions, shared by ``cogent annotate`` and ``werewolf annotate``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from lexicoord.analysis.term_annotator import annotate_file
from lexicoord.analysis.term_functions import Codebook, TermLabel
from lexicoord.cli.console import console_for
from lexicoord.cli.options import (
    DbOption,
    ModelOptions,
    NoCacheOption,
    cache_setting,
    out_file_option,
    parse_options,
    protocol_run,
    run_async,
)
from lexicoord.models.pool import ModelPool
from lexicoord.runs.names import report_folder
from lexicoord.runs.store import Store

console = console_for()
ModelArg = Annotated[str, typer.Option("--model", "-m", help="The annotating model.")]
OutArg = Annotated[Path | None, typer.Option("--out", "-o", callback=out_file_option,
                                             help="The file to write (default: reports/RUN/term_functions.csv).")]
ConcurrencyArg = Annotated[int, typer.Option(min=1, max=64, help="Terms annotated at once.")]
AnnotationsArg = Annotated[Path | None, typer.Option(
    help="The edited lexical-function file (default: OUT/term_functions.csv when it exists).")]


def annotate_terms(path: Path, labels: list[TermLabel], contexts: dict[int | None, str], codebook: Codebook,
                   model: str, concurrency: int, no_cache: bool, options: list[str] | None, then: str) -> None:
    """Suggest weights for the terms ``path`` lacks, keep its rows, and say what to do next (``then``)."""
    pool = ModelPool(cache=cache_setting(no_cache), **parse_options(options))

    async def go() -> tuple[int, int]:
        try:
            return await annotate_file(path, labels, contexts, pool.get(model), codebook, concurrency)
        finally:
            await pool.aclose()

    fresh, kept = run_async(go())
    console.print(f"{fresh} term(s) annotated, {kept} kept as they were: {escape(str(path))}\n"
                  f"edit the weights and the annotator column, then: {escape(then)}", highlight=False)


#: What a protocol gives the command: each accepted term's label, and the task each episode's terms were coined on.
TermsOf = Callable[[Store, str], tuple[list[TermLabel], dict[int | None, str]]]


def annotate_command(protocol: str, codebook: Codebook, terms_of: TermsOf, annotations: str,
                     summary: str) -> Callable[..., None]:
    """The ``annotate`` command of a protocol that coins terms (COGENT, Werewolf): one shape, its own terms."""

    def annotate(
        run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
        model: ModelArg = "local/smollm2-135m",
        out: OutArg = None,
        concurrency: ConcurrencyArg = 4,
        db: DbOption = None,
        no_cache: NoCacheOption = False,
        option: ModelOptions = None,
    ) -> None:
        store = Store(db)
        run = protocol_run(store, run_id, protocol)
        labels, contexts = terms_of(store, run.id)
        annotate_terms(out or report_folder(run.id) / annotations, labels, contexts, codebook, model, concurrency,
                       no_cache, option, f"lexicoord {protocol} report {run.id}")

    annotate.__doc__ = summary
    return annotate
