"""``lexicoord werewolf``: games with and without the term pools, their report, and a seat at the keyboard."""

from __future__ import annotations

import datetime as dt
import random
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape

from lexicoord.analysis.term_functions import WEREWOLF_FUNCTIONS, TermLabel
from lexicoord.cli.annotate import AnnotationsArg, annotate_command
from lexicoord.cli.console import console_for
from lexicoord.cli.options import (
    DbOption,
    NoCacheOption,
    OutFolderOption,
    cache_setting,
    protocol_run,
)
from lexicoord.cli.report_cmd import print_report
from lexicoord.cli.run_options import RunOptions, run_command
from lexicoord.cli.terminal import play_at_keyboard
from lexicoord.core.seat import Request
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.experiments.source import parse_override
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.werewolf import WerewolfGame, WerewolfSettings
from lexicoord.protocols.werewolf import report as werewolf_report
from lexicoord.protocols.werewolf.experiment import CONDITIONS, game_items, players
from lexicoord.protocols.werewolf.rules import check_table
from lexicoord.protocols.werewolf.statistics import CONTEXT, games_from, term_labels
from lexicoord.runs.grid import grid
from lexicoord.runs.names import report_folder
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.seats.human import HumanSeat
from lexicoord.tasks.jsonl import validation_reason

app = typer.Typer(help="Werewolf: hidden roles and a wolves' channel, without (ORIGIN) and with (COGENT) term pools.",
                  no_args_is_help=True)
console = console_for()
RULES = ", ".join(f"{k}={v.default}" for k, v in WerewolfSettings.model_fields.items()
                  if k not in ("condition", "wolf_model"))


def rule_values(rules: list[str] | None) -> dict[str, Any]:
    """``--rule name=value`` flags as settings (each value read as a TOML value: 3, true, "x"; else the text)."""
    values: dict[str, Any] = {}
    for pair in rules or []:
        key, sep, value = pair.partition("=")
        if not sep or key not in WerewolfSettings.model_fields or key in ("condition", "wolf_model"):
            raise ConfigError(f"Unknown rule '{pair}'; use name=value with a name from: {RULES}.")
        values[key] = parse_override(pair)[1]
    return values


def settings_from(rules: list[str] | None, **fixed: Any) -> WerewolfSettings:
    """``--rule name=value`` flags over the defaults, checked by the settings model."""
    values = rule_values(rules)
    try:
        return WerewolfSettings.model_validate({**values, **{k: v for k, v in fixed.items() if v is not None}})
    except ValidationError as exc:
        raise ConfigError(f"Bad rules: {validation_reason(exc)}.") from None


RuleOption = Annotated[list[str] | None, typer.Option("--rule", help=f"A rule flag, name=value ({RULES}).")]


@run_command(app, concurrency=2, seed_help="Seed of the deals and ties.", concurrency_help="Games played at once.")
def run(
    model: Annotated[str, typer.Option("--model", "-m", help="Every seat's model (the villagers').")] = "local/smollm2-135m",
    wolves_model: Annotated[str | None, typer.Option(help="The wolves' model (default: the same).")] = None,
    games: Annotated[int, typer.Option(min=1, help="Games per condition.")] = 1,
    condition: Annotated[list[str] | None, typer.Option(help="origin, cogent (default both, paired by seed).")] = None,
    player_count: Annotated[int, typer.Option("--players", min=4, max=20)] = 8,
    rule: RuleOption = None,
    *,
    run: RunOptions,
) -> None:
    """Play the games under each condition (the same seeds in both); store every event; resume on re-run (the
    experiment file these options amount to: --print-file)."""
    conditions = condition or list(CONDITIONS)
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad:
        raise ConfigError(f"Unknown condition(s) {', '.join(bad)}; use origin or cogent.")
    run.launch(
        "werewolf",
        models={"villagers": model, "wolves": wolves_model},
        data={"games": games, "players": player_count},
        settings=rule_values(rule),
        grid={"conditions": conditions},
    )


@app.command("report")
def report(
    run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
    out: OutFolderOption = None,
    tokenizer: Annotated[str, typer.Option(
        help="What counts text sizes: words, or one GGUF vocabulary for every text (local/smollm2-135m).")] = "words",
    annotations: AnnotationsArg = None,
    db: DbOption = None,
) -> None:
    """The games, Table 7, Table 6 with the pseudo-lexicon, Table 5 from the annotation file, and every game
    replayed with each player's view."""
    store = Store(db)
    found = protocol_run(store, run_id, "werewolf")
    print_report(werewolf_report.report(store, found, out or report_folder(found.id), tokenizer, annotations))


def _terms(store: Store, run_id: str) -> tuple[list[TermLabel], dict[int | None, str]]:
    games = games_from(store.iter_run_events(run_id))
    return term_labels(games), {g.episode_id: CONTEXT for g in games}


app.command("annotate")(annotate_command(
    "werewolf", WEREWOLF_FUNCTIONS, _terms, werewolf_report.ANNOTATIONS,
    "Suggest Table 5's function weights for every accepted term with an LLM; rows already in the file (a person's "
    "edits) are kept. Edit the file, then run the report."))



class WerewolfScreen:
    """What a person at a Werewolf seat sees: the new lines of their own history, then the question."""

    def __init__(self) -> None:
        self.shown = 0

    def __call__(self, request: Request) -> None:
        view = request.view
        history = view.get("history") or []
        if len(history) < self.shown:
            self.shown = 0  # older talk dropped out of the window: show it all again
        for line in history[self.shown:]:
            console.print(escape(line), highlight=False)
        self.shown = len(history)
        if view.get("known"):
            console.print(f"[bold]Known terms:[/bold]\n{escape(view['known'])}")
        console.print(f"\n[bold]{escape(view.get('task', ''))}[/bold] (alive: {escape(', '.join(view.get('living', [])))})")


@app.command("play")
def play(
    seat: Annotated[str | None, typer.Option(help="Your seat, e.g. 'Player 3' (default: one at random).")] = None,
    model: Annotated[str, typer.Option("--model", "-m", help="The other seats' model.")] = "local/smollm2-135m",
    player_count: Annotated[int, typer.Option("--players", min=4, max=20)] = 8,
    condition: Annotated[str, typer.Option(help="origin or cogent.")] = "origin",
    rule: RuleOption = None,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds you have for each move.")] = 600.0,
    seed: Annotated[int | None, typer.Option(help="Seed of the deal.")] = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Take one seat at the keyboard; models play the others. You see only what your seat may see."""
    names = players(player_count)
    base_seed = seed if seed is not None else random.randrange(2**31)
    you = seat or random.Random(base_seed).choice(names)
    if you not in names:
        raise ConfigError(f"No seat '{you}'; the seats are {', '.join(names)}.")
    settings = settings_from(rule, condition=condition)
    check_table(settings, names)
    lineup = [AgentSpec(name=p, kind="human") if p == you else AgentSpec(name=p, model=model) for p in names]
    person = HumanSeat(you, timeout=timeout)
    runner = Runner(Store(db), WerewolfGame(), models=ModelPool(cache=cache_setting(no_cache)), concurrency=1,
                    seed=base_seed, people={you: person})
    [episode] = grid(game_items(1, base_seed), [lineup], settings=[settings.model_dump()])
    console.print(f"You are {you}, among {player_count - 1} model players on {model} ({condition}).")
    record, events = play_at_keyboard(runner, f"play-werewolf-{dt.datetime.now():%Y%m%d-%H%M%S}", episode,
                                      {"seat": you, "model": model}, person, WerewolfScreen(), what="game")
    outcome = record.outcome or {}
    console.print(f"\n[bold]Game over: {escape(str(outcome.get('winner')))}[/bold] after {outcome.get('days')} day(s). "
                  f"Roles: {escape(', '.join(f'{p} {r}' for p, r in (outcome.get('roles') or {}).items()))}")
