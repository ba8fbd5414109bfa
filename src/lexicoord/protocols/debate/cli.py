"""``lexicoord debate``: generate robot instructions, run the baseline and the debate, report."""

from __future__ import annotations

import datetime as dt
import random
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from lexicoord.cli import report_cmd
from lexicoord.cli.console import console_for
from lexicoord.cli.options import (
    DbOption,
    NoCacheOption,
    cache_setting,
)
from lexicoord.cli.run_options import RunOptions, run_command
from lexicoord.cli.terminal import play_at_keyboard
from lexicoord.core.seat import Request
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.debate import DebateSettings, DebateStudy
from lexicoord.protocols.debate.experiment import CONDITIONS, instructions_from, seats_from
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.seats.human import HumanSeat
from lexicoord.tasks.tabletop import CATEGORIES
from lexicoord.tasks.tabletop import generate as generate_pairs

app = typer.Typer(help="Ambiguous robot instructions: a single-agent baseline and a leader-follower debate.",
                  no_args_is_help=True)
console = console_for()
YOU = "you"


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


@run_command(app, seed_help="Seed of the generated instructions and of the run.",
             concurrency_help="Instructions played at once.")
def run(
    model: Annotated[list[str] | None, typer.Option("--model", "-m", help="A debater (repeat for several; each leads once).")] = None,
    dataset: Annotated[str | None, typer.Option(help="JSONL of pairs (debate generate) or of single instructions; knowno:PATH, ambik:PATH or hf:NAME.")] = None,
    per_category: Annotated[int, typer.Option("--per-category", "-n", min=1, help="Generated pairs per type when no --dataset (the paper: 20).")] = 20,
    items: Annotated[int | None, typer.Option(min=1, help="Use N instructions, taken in turn from each type.")] = None,
    twins: Annotated[bool, typer.Option("--twins/--no-twins", help="Also run the unambiguous twins (false alarms).")] = True,
    condition: Annotated[list[str] | None, typer.Option("--condition", help="single and/or debate (default both).")] = None,
    rounds: Annotated[int, typer.Option(min=1, max=20, help="Most rounds of a debate (R).")] = 5,
    followers: Annotated[int, typer.Option(min=1, max=8, help="Followers per debate.")] = 2,
    sentences: Annotated[int, typer.Option(min=1, max=20, help="Sentence limit of the reasoning.")] = 4,
    temperature: Annotated[float, typer.Option(min=0.0, max=2.0)] = 0.5,
    max_tokens: Annotated[int, typer.Option(min=16, max=8192)] = 350,
    judge: Annotated[str | None, typer.Option(help="An LLM judge (provider/model) as a second opinion.")] = None,
    *,
    run: RunOptions,
) -> None:
    """Play every instruction under the baseline and the debate; store every move; resume on re-run (the
    experiment file these options amount to: --print-file)."""
    conditions = condition or list(CONDITIONS)
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad:
        raise ConfigError(f"Unknown condition(s) {', '.join(bad)}; use single and/or debate.")
    seats_from(model or ["local/smollm2-135m"])  # a model named twice is a mistake on the command line
    run.launch(
        "debate",
        models={"debaters": model or ["local/smollm2-135m"], "judge": judge},
        data={"dataset": dataset, "per_category": per_category, "items": items, "twins": twins},
        settings={"rounds": rounds, "followers": followers, "sentences": sentences, "temperature": temperature,
                     "max_tokens": max_tokens},
        grid={"conditions": conditions},
    )


app.command("report", help="Alias of 'lexicoord report RUN' for a debate run.")(report_cmd.report)


class DebateScreen:
    """What a person in a debate seat sees: the scene and instruction once, then each proposal or the feedback."""

    def __init__(self) -> None:
        self.scene_shown = False

    def __call__(self, request: Request) -> None:
        view = request.view
        if not self.scene_shown:
            console.print(f"[bold]Scene:[/bold] {escape(view.get('scene', ''))}")
            console.print(f"[bold]Instruction:[/bold] [italic]{escape(view.get('instruction', ''))}[/italic]")
            self.scene_shown = True
        limit = view.get("sentences")
        if request.kind == "propose":
            for f in view.get("feedback") or []:
                alt = f" Alternative question: {f['alternative']}" if f.get("alternative") else ""
                console.print(f"  {escape(f['agent'])}: {escape(str(f['stance']))}. {escape(f['reasoning'])}{escape(alt)}")
            console.print(f"\n[bold]Round {view.get('round')}: your proposal[/bold] as leader. Reason in at most "
                          f"{limit} sentences, then say whether the instruction is clear or ambiguous; if ambiguous, "
                          "give the one clarifying question to ask (leave it empty when clear).")
        elif request.kind == "review":
            for f in view.get("feedback") or []:
                console.print(f"  your feedback last round: {escape(str(f['stance']))}. {escape(f['reasoning'])}")
            p = view.get("proposal") or {}
            ask = f" Question: {p.get('question')}" if p.get("verdict") == "ambiguous" else ""
            console.print(f"\n[bold]Round {view.get('round')}: {escape(str(view.get('leader')))} proposes[/bold] "
                          f"{escape(str(p.get('verdict')))}.{escape(ask)}\n  Reasoning: {escape(p.get('reasoning', ''))}")
            console.print(f"Do you agree? Reason in at most {limit} sentences; if you disagree you may give a "
                          "better question (or leave it empty).")


@app.command("play")
def play(
    role: Annotated[str, typer.Option(help="leader or follower.")] = "leader",
    model: Annotated[str, typer.Option("--model", "-m", help="Model for the other seats.")] = "local/smollm2-135m",
    followers: Annotated[int, typer.Option(min=1, max=8, help="Followers in the debate.")] = 2,
    dataset: Annotated[str | None, typer.Option(help="JSONL of instructions (default: generated ones).")] = None,
    item: Annotated[str | None, typer.Option(help="Instruction id (default: a random ambiguous one).")] = None,
    rounds: Annotated[int, typer.Option(min=1, max=20, help="Most rounds of the debate (R).")] = 5,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds you have for each move.")] = 600.0,
    seed: Annotated[int | None, typer.Option(help="Seed of the generated instructions and of the game.")] = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Sit in a leader-follower debate at the keyboard: you lead, or you follow a model's lead."""
    if role not in ("leader", "follower"):
        raise ConfigError("--role is leader or follower.")
    base_seed = seed if seed is not None else random.randrange(2**31)
    pool = instructions_from(dataset, 3, base_seed if seed is not None else 0, True, None)
    if item:
        chosen = next((i for i in pool if i.id == item), None)
        if chosen is None:
            raise ConfigError(f"No instruction '{item}'" + (f" in {dataset}." if dataset else " among the generated ones."))
    else:
        chosen = random.Random(base_seed).choice([i for i in pool if i.ambiguous] or pool)
    others = [AgentSpec(name=f"m{i + 1}", model=model) for i in range(followers)]
    you = AgentSpec(name=YOU, kind="human")
    lineup = [you, *others] if role == "leader" else [others[0], you, *others[1:]]
    lineup = [s.model_copy(update={"role": "leader" if i == 0 else "follower"}) for i, s in enumerate(lineup)]
    settings = DebateSettings(rounds=rounds).model_dump(exclude_none=True)
    seat = HumanSeat(YOU, timeout=timeout)
    store = Store(db)
    run_id = f"play-debate-{dt.datetime.now():%Y%m%d-%H%M%S}"
    runner = Runner(store, DebateStudy(), models=ModelPool(cache=cache_setting(no_cache)), concurrency=1,
                    seed=base_seed, people={YOU: seat})
    episodes = grid([chosen.as_task()], [lineup], settings=[settings])

    console.print(f"You are the {role} of a debate with {len(lineup) - 1} model seat(s) on {model}.")
    episode, events = play_at_keyboard(runner, run_id, episodes[0], {"role": role, "model": model, "item": chosen.id},
                                       seat, DebateScreen(), what="debate")
    for e in events:
        line = e.line()
        if line and e.type in ("proposal", "feedback"):
            console.print(f"r{e.round} [bold]{escape(e.agent or '')}[/bold] {escape(line)}", highlight=False)
    outcome = DebateStudy.outcome_of(episode)
    ended = "consensus" if outcome.consensus else outcome.termination
    console.print(f"Debate ended: {ended} after {outcome.rounds} round(s); final verdict {outcome.verdict}"
                  + (f", question: {escape(outcome.question)}" if outcome.question else "") + ".", highlight=False)
    console.print(f"[dim]Recorded as run {run_id}: lexicoord runs show {run_id} --transcript[/dim]")
