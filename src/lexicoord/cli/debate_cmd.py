"""``lexicoord debate``: generate robot instructions, run the baseline and the debate, report."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lexicoord.agents.base import AgentSpec
from lexicoord.analysis.debate import compute, episodes_from, failed_by_config
from lexicoord.analysis.debate_report import consensus_rows, judge_rows, success_rows, time_rows, write_report
from lexicoord.cli.options import DbOption, ModelOptions, NoCacheOption, cache_setting, parse_options, run_async
from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.debate import AmbiguityStudy, DebateSettings, rotations
from lexicoord.runs.grid import EpisodeSpec, grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.instructions import Instruction, generated_instructions, load_instructions
from lexicoord.tasks.tabletop import CATEGORIES, generate as generate_pairs

app = typer.Typer(help="Ambiguous robot instructions: a single-agent baseline and a leader-follower debate.",
                  no_args_is_help=True)
console = Console()
CONDITIONS = ("single", "debate")


@app.command("generate")
def generate(
    per_category: Annotated[int, typer.Option("--per-category", "-n", min=1, help="Pairs per ambiguity type.")] = 20,
    seed: Annotated[int, typer.Option(help="The same seed gives the same file.")] = 0,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="JSONL file (default: standard output).")] = None,
) -> None:
    """Ambiguous/unambiguous instruction pairs on the tabletop scene, as JSONL (one pair per line)."""
    pairs = generate_pairs(per_category, seed)
    lines = "".join(p.model_dump_json() + "\n" for p in pairs)
    if out is None:
        sys.stdout.write(lines)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(lines, encoding="utf-8")
    console.print(f"{len(pairs)} pairs ({per_category} per type: {', '.join(CATEGORIES)}) written to {escape(str(out))}",
                  highlight=False)


def seats_from(models: list[str]) -> list[AgentSpec]:
    """One seat per distinct model, named after it."""
    if len(set(models)) != len(models):
        raise ConfigError("A model is named twice with --model.")
    seats, used = [], set()
    for spec in models:
        if "/" not in spec:
            raise ConfigError(f"--model '{spec}' is not of the form provider/model.")
        base = spec.split("/", 1)[1].rsplit("/", 1)[-1].removesuffix(".gguf") or "agent"
        name, k = base, 2
        while name in used:
            name, k = f"{base}-{k}", k + 1
        used.add(name)
        seats.append(AgentSpec(name=name, model=spec))
    return seats


def instructions_from(dataset: Path | None, per_category: int, seed: int, twins: bool, items: int | None) -> list[Instruction]:
    chosen = load_instructions(dataset, unambiguous=twins) if dataset else generated_instructions(per_category, seed, unambiguous=twins)
    if items:
        chosen = chosen[:items]
    if not chosen:
        raise ConfigError("No instructions to run.")
    return chosen


def study_grid(instructions: list[Instruction], seats: list[AgentSpec], conditions: list[str],
               settings: DebateSettings, followers: int) -> list[EpisodeSpec]:
    """Single-agent episodes (one per model) and debates (one per leader) for every instruction."""
    tasks = [i.as_task() for i in instructions]
    base = settings.model_dump(exclude={"condition"}, exclude_none=True)
    episodes: list[EpisodeSpec] = []
    if "single" in conditions:
        episodes += grid(tasks, [[s.model_copy(update={"role": "single"})] for s in seats],
                         settings=[{**base, "condition": "single"}])
    if "debate" in conditions:
        episodes += grid(tasks, rotations(seats, followers), settings=[{**base, "condition": "debate"}])
    return episodes


@app.command("run")
def run(
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="A debater (repeat for several; each leads once).")] = None,
    dataset: Annotated[Path | None, typer.Option(help="JSONL of pairs (debate generate) or of single instructions.")] = None,
    per_category: Annotated[int, typer.Option("--per-category", "-n", min=1, help="Generated pairs per type when no --dataset.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the generated instructions and of the run.")] = 0,
    items: Annotated[int | None, typer.Option(min=1, help="Use the first N instructions.")] = None,
    twins: Annotated[bool, typer.Option("--twins/--no-twins", help="Also run the unambiguous twins (false alarms).")] = True,
    condition: Annotated[list[str] | None, typer.Option("--condition", help="single and/or debate (default both).")] = None,
    rounds: Annotated[int, typer.Option(min=1, max=20, help="Most rounds of a debate (R).")] = 5,
    followers: Annotated[int, typer.Option(min=1, max=8, help="Followers per debate.")] = 2,
    sentences: Annotated[int, typer.Option(min=1, max=20, help="Sentence limit of the reasoning.")] = 4,
    temperature: Annotated[float, typer.Option(min=0.0, max=2.0)] = 0.5,
    max_tokens: Annotated[int, typer.Option(min=16, max=8192)] = 350,
    judge: Annotated[str | None, typer.Option(help="An LLM judge (provider/model) as a second opinion.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=256, help="Instructions played at once.")] = 4,
    run_name: Annotated[str | None, typer.Option("--run", help="Run name; the same name resumes it.")] = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
    option: ModelOptions = None,
) -> None:
    """Play every instruction under the baseline and the debate; store every move; resume on re-run."""
    conditions = condition or list(CONDITIONS)
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad:
        raise ConfigError(f"Unknown condition(s) {', '.join(bad)}; use single and/or debate.")
    seats = seats_from(model or ["local/smollm2-135m"])
    settings = DebateSettings(rounds=rounds, sentences=sentences, temperature=temperature, max_tokens=max_tokens,
                              judge=judge)
    chosen = instructions_from(dataset, per_category, seed, twins, items)
    episodes = study_grid(chosen, seats, conditions, settings, followers)
    run_id = run_name or f"debate-{dt.datetime.now():%Y%m%d-%H%M%S}"
    pool = ModelPool(cache=cache_setting(no_cache), **parse_options(option))
    for spec in dict.fromkeys([s.model for s in seats if s.model] + ([judge] if judge else [])):
        pool.get(spec)  # a missing key or unknown model stops here, not once per episode
    runner = Runner(Store(db), AmbiguityStudy(), models=pool, concurrency=concurrency, seed=seed)
    config = {"dataset": str(dataset) if dataset else f"generated:{per_category}/type seed {seed}",
              "instructions": len(chosen), "models": [s.model for s in seats], "conditions": conditions,
              "followers": followers, "settings": settings.model_dump(exclude={"condition"})}
    run_async(runner.run(run_id, episodes, config))
    console.print(f"report: lexicoord debate report {escape(run_id)}", highlight=False)


def _print(title: str, head: list[str], rows: list[list[str]]) -> None:
    table = Table(title=title)
    for h in head:
        table.add_column(h, overflow="fold")
    for r in rows:
        table.add_row(*(escape(c) for c in r))
    console.print(table)


@app.command("report")
def report(
    run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
    out: Annotated[Path | None, typer.Option(help="Folder for the files (default: reports/RUN).")] = None,
    db: DbOption = None,
) -> None:
    """Success by configuration and type, consensus, rounds and time; figures, HTML, JSON and CSV on disk."""
    store = Store(db)
    info = store.run(run_id)
    rows = list(store.iter_run_events(info.id))
    episodes = episodes_from(rows)
    if not episodes:
        raise LexicoordError(f"Run '{info.id}' has no finished ambiguity episodes yet.")
    failed = sum(1 for r, _ in rows if r.status == "failed")
    stats = compute(episodes, failed=failed, failed_configs=dict(failed_by_config(rows)))
    _print(f"{escape(info.id)}: success ({stats.episodes} episodes, {failed} failed)", *success_rows(stats))
    head, consensus = consensus_rows(stats)
    if consensus:
        _print("debates (Table 1, Figures 6-7)", head, consensus)
    _print("time (Table 2)", *time_rows(stats))
    _print("rule and LLM judge", *judge_rows(stats))
    paths = write_report(info, stats, episodes, out or Path("reports") / info.id)
    for kind, path in paths.items():
        console.print(f"{kind}: {escape(str(path))}", highlight=False)
