"""The annotate-then-edit flow of lexical functions, shared by ``cogent annotate`` and ``werewolf annotate``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from lexicoord.analysis.term_annotator import annotate_file
from lexicoord.analysis.term_functions import Codebook, TermLabel
from lexicoord.cli.options import cache_setting, out_file_option, parse_options, run_async
from lexicoord.models.pool import ModelPool

console = Console()
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
