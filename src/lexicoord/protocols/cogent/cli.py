"""``lexicoord cogent``: SINGLE, VANILLA and COGENT on GSM8K, FOLIO or MMLU, resumable, one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from lexicoord.analysis.term_functions import BENCHMARK_FUNCTIONS, TermLabel
from lexicoord.cli.annotate import AnnotationsArg, annotate_command
from lexicoord.cli.campaign import run_campaign
from lexicoord.cli.options import (
    DbOption,
    ModelOptions,
    NoCacheOption,
    OutFolderOption,
    RunNameOption,
    protocol_run,
)
from lexicoord.cli.report_cmd import print_report, print_warnings
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.protocols.cogent import CogentSettings, CogentStudy
from lexicoord.protocols.cogent import report as cogent_report
from lexicoord.protocols.cogent.rules import ABLATIONS, MAIN_VARIANTS, calls
from lexicoord.protocols.cogent.statistics import episodes_from, statistics, term_labels, warnings
from lexicoord.runs.grid import grid
from lexicoord.runs.names import report_folder
from lexicoord.runs.store import Store
from lexicoord.tasks.benchmarks import BENCHMARKS, PAPER_SIZES, seeded_slice, stratified_slice
from lexicoord.tasks.jsonl import validation_reason

app = typer.Typer(help="COGENT: coined terms over sequential debate, with SINGLE and VANILLA, on GSM8K, FOLIO, MMLU.",
                  no_args_is_help=True)
console = Console()
VARIANTS = MAIN_VARIANTS + ABLATIONS


def lineups(models: list[str]) -> dict[str, list[AgentSpec]]:
    """SINGLE seats A on the first model; the debates seat A on the first and B on the second (or the same)."""
    a = models[0]
    b = models[1] if len(models) > 1 else a
    return {"single": [AgentSpec(name="A", model=a)],
            "debate": [AgentSpec(name="A", model=a), AgentSpec(name="B", model=b)]}


def episodes_for(task: str, data: Path, items: int | None, seed: int, variants: list[str], models: list[str],
                 settings: CogentSettings) -> list[EpisodeSpec]:
    benchmark = BENCHMARKS[task]
    loaded = benchmark.load(str(data))
    size = items if items is not None else PAPER_SIZES[task]
    chosen = stratified_slice(loaded, size, seed) if task == "mmlu" else seeded_slice(loaded, size, seed)
    tasks = [benchmark.as_task(i) for i in chosen]
    seats = lineups(models)
    out: list[EpisodeSpec] = []
    # Longest episodes first, so that the end of a run is short episodes filling the free slots rather than
    # one long episode holding the run open (the variants' order in the report is fixed elsewhere).
    chosen_settings = [settings.model_copy(update={"variant": v, "task": task}) for v in variants]
    for s in sorted(chosen_settings, key=calls, reverse=True):
        out += grid(tasks, [seats["single" if s.variant == "single" else "debate"]], settings=[s.model_dump()])
    return out


@app.command("run")
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
    seed: Annotated[int, typer.Option(help="Seed of the run (each seat's sampling seed derives from it and the "
                                            "episode) and, unless --slice-seed is given, of the slice.")] = 0,
    slice_seed: Annotated[int | None, typer.Option(help="Seed of the slice only (default: --seed), so that another "
                                                       "--seed draws fresh samples on the same items.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=256)] = 4,
    run_name: RunNameOption = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
    option: ModelOptions = None,
) -> None:
    """Play every item under each variant; store every reply, term and use; resume on re-run."""
    if task not in BENCHMARKS:
        raise ConfigError(f"Unknown task '{task}'; use {', '.join(BENCHMARKS)}.")
    variants = list(dict.fromkeys((variant or list(MAIN_VARIANTS)) + (list(ABLATIONS) if ablations else [])))
    bad = [v for v in variants if v not in VARIANTS]
    if bad:
        raise ConfigError(f"Unknown variant(s) {', '.join(bad)}; use {', '.join(VARIANTS)}.")
    models = model or ["local/smollm2-135m"]
    if len(models) > 2:
        raise ConfigError("COGENT has two agents: give at most two --model (A's, then B's).")
    try:
        settings = CogentSettings.model_validate({"task": task, "rounds": rounds, "passes": passes, "tie": tie,
                                                  "use_coinage": use_coinage,
                                                  "coin_rounds": coin_rounds, "temperature": temperature,
                                                  "max_tokens": max_tokens})
    except ValidationError as exc:
        raise ConfigError(f"Bad settings: {validation_reason(exc)}.") from None
    episodes = episodes_for(task, data, items, seed if slice_seed is None else slice_seed, variants, models, settings)
    config = {"task": task, "data": str(data), "items": len(episodes) // len(variants), "variants": variants,
              "models": models, "settings": settings.model_dump(exclude={"variant", "task"}),
              **({"slice_seed": slice_seed} if slice_seed is not None else {})}

    def told(store: Store, run_id: str) -> None:
        print_warnings(warnings(statistics(store.iter_run_events(run_id))))
        console.print(f"transcripts: lexicoord runs show {escape(run_id)} --transcript", highlight=False)

    run_campaign(CogentStudy(), episodes, config, prefix=f"cogent-{task}", run_name=run_name, db=db,
                 no_cache=no_cache, option=option, concurrency=concurrency, seed=seed, after=told,
                 report="lexicoord cogent report")



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
