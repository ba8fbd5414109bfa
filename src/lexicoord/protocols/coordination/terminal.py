"""``lexicoord coordination play``: one game in the terminal; you are the leader or a player, models are the rest."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from lexicoord.cli.console import console_for
from lexicoord.cli.options import DbOption, NoCacheOption, cache_setting, run_async
from lexicoord.cli.terminal import NoMoreInput, ask_line, keyboard, play_at_keyboard
from lexicoord.core.context import EpisodeContext
from lexicoord.core.events import ChoiceEvent, Event
from lexicoord.core.seat import Request, Seat
from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.models.pool import ModelPool
from lexicoord.protocols.coordination import CoordinationGame, CoordinationOutcome
from lexicoord.protocols.coordination.manual import (
    Option,
    gather_proposals,
    manual_item,
    merge_proposals,
    validate_manual,
    with_proposals,
)
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.seats.factory import SeatFactory
from lexicoord.seats.human import HumanSeat
from lexicoord.tasks.ambiguous import builtin_items

console = console_for()
YOU = "you"


def announced(e: ChoiceEvent) -> str:
    """The leader's announcement: the meaning chosen and, in quotes, the reason the leader gave in its own
    words (whatever they are); a failed announcement says why it failed instead."""
    if not e.choice:
        return f"announces [yellow]no valid meaning[/yellow] ({escape(e.failure or 'no answer')})"
    why = f"“{escape(e.justification.strip())}”" if e.justification.strip() else "[dim](no reason given)[/dim]"
    return f"announces: [bold]{escape(e.choice)}[/bold], because {why}"


def clarified(e: Event) -> str:
    content = str(getattr(e, "content", "") or "").strip()
    if content:
        return f"clarifies: {escape(content)}"
    failure = str(getattr(e, "failure", "") or "nothing said").split(" (raw: ")[0]  # the raw reply is in the transcript
    return f"gives no valid clarification ({escape(failure)})"


def print_game(events: list[Event], outcome: CoordinationOutcome) -> None:
    """Round by round, in the order things happened: who chose what and why, then the outcome."""
    this_round: list[ChoiceEvent] = []
    for e in events:
        if isinstance(e, ChoiceEvent) and e.round == 0:
            console.print(f"[bold]{escape(e.agent or '')}[/bold] (leader) {announced(e)}")
        elif isinstance(e, ChoiceEvent):
            this_round.append(e)
        elif e.type == "clarification":
            console.print(f"  [italic]{escape(e.agent or '')} {clarified(e)}[/italic]")
        elif e.type == "round_closed":
            table = Table(title=f"round {e.round}", title_justify="left")
            for col in ("agent", "choice", "justification"):
                table.add_column(col)
            for c in this_round:
                choice = escape(c.choice) if c.choice else f"[yellow]no valid choice[/yellow] ({escape(c.failure or '')})"
                table.add_row(escape(c.agent or ""), choice, escape(c.justification))
            console.print(table)
            this_round = []
    if outcome.converged:
        verdict = (f"[green]Converged[/green] on '{escape(outcome.interpretation or '')}' at clarification depth "
                   f"{outcome.depth}")
        if outcome.intended:
            verdict += " (the intended meaning)" if outcome.correct else f" (intended: '{escape(outcome.intended)}')"
        console.print(verdict + ".")
    else:
        console.print(f"[yellow]Failed[/yellow] ({outcome.reason}) after {outcome.rounds} rounds.")


class GameScreen:
    """What the person at the keyboard sees of a coordination game: rounds as they close, then the request."""

    def __init__(self) -> None:
        self.shown: set[int] = set()

    def __call__(self, request: Request) -> None:
        view = request.view
        if -1 not in self.shown and view.get("announcement") and view["announcement"].get("choice"):
            a = view["announcement"]
            console.print(f"[bold]{escape(view['leader'])}[/bold] (leader) announced: {escape(a['choice'])} — "
                          f"{escape(a['justification'])}")
            self.shown.add(-1)
        for past in view.get("history") or []:
            if past["round"] in self.shown:
                continue
            if past.get("clarification"):
                console.print(f"  leader clarified: [italic]{escape(past['clarification'])}[/italic]")
            console.print(f"[bold]Round {past['round']}[/bold] choices:")
            for name, d in past["decisions"].items():
                console.print(f"  {escape(name)}: {escape(d['choice'] or '(no valid choice)')} — "
                              f"{escape(d['justification'])}")
            self.shown.add(past["round"])
        if request.kind == "clarify":
            console.print("\n[bold]Clarify[/bold] your meaning for the next round ('end' ends the game).")
            return
        if view.get("clarification"):
            console.print(f"  leader clarifies: [italic]{escape(view['clarification'])}[/italic]")
        title = "Announce your meaning" if request.kind == "announce" else f"Round {view['round']}: choose"
        console.print(f"\n[bold]{title}[/bold] for '{escape(view['word'])}' in: {escape(view['sentence'])}")


def _show_proposal_request(request: Request) -> None:
    view = request.view
    console.print(f"\n[bold]Propose a meaning[/bold] of '{escape(view['word'])}' in: {escape(view['sentence'])}")


async def _manual_options(models: ModelPool, lineup: list[AgentSpec], sentence: str, word: str, seed: int,
                          timeout: float) -> tuple[list[str], list[Option]]:
    """Every player proposes, you included, before anyone sees a proposal; then you edit the merged set."""
    ctx = EpisodeContext(spec=EpisodeSpec(item_id="manual"), seed=seed, make_seat=SeatFactory(models))
    you = HumanSeat(YOU, timeout=timeout)
    players: list[Seat] = [you, *(ctx.seat(s) for s in lineup if s.kind == "llm")]
    done = asyncio.Event()
    typing = asyncio.create_task(keyboard(you, done, _show_proposal_request))
    try:
        proposals = await gather_proposals(players, sentence, word)
    finally:
        done.set()
        await typing
    merged = merge_proposals(proposals)
    console.print("The players propose:")
    for i, o in enumerate(merged, start=1):
        console.print(f"  {i}. {escape(o.text)} [dim](from {', '.join(o.proposers)})[/dim]")
    silent = sorted({p.name for p in players} - {p.agent for p in proposals})
    if silent:
        console.print(f"[yellow]no usable proposal from: {', '.join(silent)}[/yellow]")
    options = [o.text for o in merged]
    while True:
        try:
            text = await ask_line("'+ meaning' adds, '= N meaning' edits, '- N' removes, empty line plays: ")
        except NoMoreInput:
            text = ""
        if not text:
            return options, merged
        number, _, rest = text[1:].strip().partition(" ")
        if text.startswith("+") and text[1:].strip():
            options.append(text[1:].strip())
        elif text.startswith("-") and number.isdigit() and 1 <= int(number) <= len(options):
            options.pop(int(number) - 1)
        elif text.startswith("=") and number.isdigit() and 1 <= int(number) <= len(options) and rest.strip():
            options[int(number) - 1] = rest.strip()
        else:
            console.print("not understood: use '+ meaning', '= N meaning', '- N' or an empty line")
            continue
        for i, shown in enumerate(options, start=1):
            console.print(f"  {i}. {escape(shown)}")


def play(
    model: Annotated[str, typer.Option(help="Model for the other agents.")] = "local/smollm2-135m",
    agents: Annotated[int, typer.Option(min=1, max=8, help="How many model agents besides you.")] = 2,
    role: Annotated[str, typer.Option(help="leader or player.")] = "leader",
    item: Annotated[str | None, typer.Option(help="Built-in item id (default: a random one).")] = None,
    sentence: Annotated[str | None, typer.Option(help="Manual mode: your sentence.")] = None,
    word: Annotated[str | None, typer.Option(help="Manual mode: the ambiguous word in it.")] = None,
    bound: Annotated[int, typer.Option(min=0, max=10)] = 3,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds you have for each move.")] = 300.0,
    seed: Annotated[int | None, typer.Option()] = None,
    db: DbOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Play one game at the keyboard (manual mode with --sentence and --word)."""
    if role not in ("leader", "player"):
        raise ConfigError("--role is leader or player.")
    base_seed = seed if seed is not None else random.randrange(2**31)
    bots = [AgentSpec(name=f"a{i + 1}", model=model, options={"temperature": 0.7}) for i in range(agents)]
    you = AgentSpec(name=YOU, kind="human")
    lineup = [you, *bots] if role == "leader" else [bots[0], you, *bots[1:]]
    models = ModelPool(cache=cache_setting(no_cache))
    if sentence or word:
        if not (sentence and word):
            raise ConfigError("Manual mode needs both --sentence and --word.")
        sentence, word = validate_manual(sentence, word)
        options, proposals = run_async(_manual_options(models, bots, sentence, word, base_seed, timeout))
        chosen = manual_item(sentence, word, options, item_id=f"manual-{dt.datetime.now():%H%M%S}")
        task = with_proposals(chosen.as_task(), proposals)
    else:
        items = {i.id: i for i in builtin_items()}
        found = items.get(item) if item else random.Random(base_seed).choice(list(items.values()))
        if found is None:
            raise ConfigError(f"No built-in item '{item}'.")
        chosen = found
        task = chosen.as_task()
    seat = HumanSeat(YOU, timeout=timeout)
    store = Store(db)
    run_id = f"play-{dt.datetime.now():%Y%m%d-%H%M%S}"
    runner = Runner(store, CoordinationGame(), models=models, concurrency=1, seed=base_seed, people={YOU: seat})
    episodes = grid([task], [lineup], settings=[{"clarification_bound": bound, "seat_timeout": timeout}])

    console.print(f"You are the {role}. {len(bots)} agents on {model}.")
    episode, events = play_at_keyboard(runner, run_id, episodes[0], {"role": role, "model": model, "item": chosen.id},
                                       seat, GameScreen())
    print_game(events, CoordinationGame.outcome_of(episode))
    console.print(f"[dim]Recorded as run {run_id}.[/dim]")
