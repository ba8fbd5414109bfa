"""``lexicoord cogent``: SINGLE, VANILLA and COGENT on GSM8K, FOLIO or MMLU, resumable, one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lexicoord.analysis.term_functions import BENCHMARK_FUNCTIONS, TermLabel
from lexicoord.cli.annotate import AnnotationsArg, annotate_command
from lexicoord.cli.console import console_for
from lexicoord.cli.options import (
    DbOption,
    OutFolderOption,
    protocol_run,
)
from lexicoord.cli.report_cmd import print_report
from lexicoord.cli.run_options import RunOptions, run_command
from lexicoord.errors import ConfigError
from lexicoord.protocols.cogent import report as cogent_report
from lexicoord.protocols.cogent.rules import ABLATIONS, MAIN_VARIANTS
from lexicoord.protocols.cogent.statistics import episodes_from, term_labels
from lexicoord.runs.names import report_folder
from lexicoord.runs.store import Store
from lexicoord.tasks.benchmarks import BENCHMARKS

app = typer.Typer(help="COGENT: coined terms over sequential debate, with SINGLE and VANILLA, on GSM8K, FOLIO, MMLU.",
                  no_args_is_help=True)
console = console_for()
VARIANTS = MAIN_VARIANTS + ABLATIONS


@run_command(app, seed_help="Seed of the run (each seat's sampling seed derives from it and the episode) and, "
             "unless --slice-seed is given, of the slice.", concurrency_help="Episodes played at once.")
def run(
    task: Annotated[str, typer.Option(help="gsm8k, folio or mmlu.")],
    data: Annotated[Path, typer.Option(help="The benchmark's file (GSM8K test.jsonl, FOLIO validation JSONL) "
                                            "or MMLU's test folder; or hf:NAME.")],
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="A's model; a second -m is B's.")] = None,
    variant: Annotated[list[str] | None, typer.Option(
        "--variant", help="single, vanilla, cogent (default: these three), or an ablation: vanilla_matched, "
                          "cogent_private, cogent_free, cogent_log.")] = None,
    ablations: Annotated[bool, typer.Option("--ablations", help="Add the four ablations to the variants.")] = False,
    items: Annotated[int | None, typer.Option(min=1, help="Items (default: the paper's slice).")] = None,
    rounds: Annotated[int, typer.Option("-R", "--rounds", min=1, max=10, help="Meta-rounds R.")] = 3,
    passes: Annotated[int, typer.Option("-K", "--passes", min=0, max=5, help="Coining passes K.")] = 2,
    coin_rounds: Annotated[int, typer.Option("--coin-rounds", min=0, max=10, help="Coining-active rounds R_c.")] = 2,
    tie: Annotated[str, typer.Option(help="Two valid, different answers: later (B), earlier (A) or none.")] = "later",
    use_coinage: Annotated[bool, typer.Option(
        "--use-coinage/--no-use-coinage",
        help="Terms declared in a use turn join the lexicon, A's shared before B's use (Algorithm 1, lines "
             "10-12); off: coining passes only.")] = True,
    temperature: Annotated[float, typer.Option(min=0.0, max=2.0)] = 0.7,
    max_tokens: Annotated[int, typer.Option(min=16, max=8192)] = 512,
    slice_seed: Annotated[int | None, typer.Option(help="Seed of the slice only (default: --seed), so that another "
                                                       "--seed draws fresh samples on the same items.")] = None,
    *,
    run: RunOptions,
) -> None:
    """Play every item under each variant; store every reply, term and use; resume on re-run (the experiment
    file these options amount to: --print-file)."""
    if task not in BENCHMARKS:
        raise ConfigError(f"Unknown task '{task}'; use {', '.join(BENCHMARKS)}.")
    variants = list(dict.fromkeys((variant or list(MAIN_VARIANTS)) + (list(ABLATIONS) if ablations else [])))
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        raise ConfigError(f"Unknown variant(s) {', '.join(bad)}; use {', '.join(VARIANTS)}.")
    models = model or ["local/smollm2-135m"]
    if len(models) > 2:
        raise ConfigError("COGENT has two agents: give at most two --model (A's, then B's).")
    run.launch(
        "cogent",
        models={"a": models[0], "b": models[1] if len(models) > 1 else None},
        data={"task": task, "file": str(data), "items": items, "slice_seed": slice_seed},
        settings={"rounds": rounds, "passes": passes, "coin_rounds": coin_rounds, "tie": tie,
                     "use_coinage": use_coinage, "temperature": temperature, "max_tokens": max_tokens},
        grid={"variants": variants},
    )


@app.command("report")
def report(
    run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
    out: OutFolderOption = None,
    tokenizer: Annotated[str, typer.Option(
        help="What counts tokens for CR and Tok: 'backend' (each output's reported completion tokens) or one "
             "tokenizer for every output, offline: local/smollm2-135m or local//path/model.gguf.")] = "backend",
    annotations: AnnotationsArg = None,
    db: DbOption = None,
) -> None:
    """Table 1 with 95% intervals and total cost, paired tests, lexical ecology and functions, case studies and
    every transcript: terminal tables, PNG and SVG figures, one HTML page, JSON and CSV."""
    store = Store(db)
    run = protocol_run(store, run_id, "cogent")
    print_report(cogent_report.report(store, run, out or report_folder(run.id), tokenizer, annotations))


def _terms(store: Store, run_id: str) -> tuple[list[TermLabel], dict[int | None, str]]:
    episodes = episodes_from(store.iter_run_events(run_id))
    return term_labels(episodes), {e.episode_id: e.question for e in episodes}


app.command("annotate")(annotate_command(
    "cogent", BENCHMARK_FUNCTIONS, _terms, cogent_report.ANNOTATIONS,
    "Suggest lexical-function weights for every accepted term with an LLM; rows already in the file (a person's "
    "edits) are kept, so re-running annotates only new terms. Edit the file, then run the report."))
