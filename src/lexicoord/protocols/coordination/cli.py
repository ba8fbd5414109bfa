"""``lexicoord coordination`` (short: ``coord``): the coordination game as a campaign, a report, or one game in the terminal."""

from __future__ import annotations

from typing import Annotated

import typer

from lexicoord.cli import report_cmd
from lexicoord.cli.console import console_for
from lexicoord.cli.run_options import RunOptions, run_command
from lexicoord.errors import LexicoordError
from lexicoord.protocols.coordination import terminal
from lexicoord.protocols.coordination.lineup import lineup_from, seat_text

app = typer.Typer(help="The LexiCoord coordination game: campaigns, reports, a game in the terminal.", no_args_is_help=True)
app.command("play")(terminal.play)
console = console_for()

AgentOption = Annotated[
    list[str] | None,
    typer.Option("--agent", "-a", help="A seat, in order (the first leads): name=provider/model, name=sim:POLICY[:p], or name=human."),
]
ModelOption = Annotated[str, typer.Option(help="Model for every agent when no --agent is given.")]
DatasetOption = Annotated[str, typer.Option(help="builtin, a JSONL file, coarsewsd:FOLDER or wictsv:FOLDER.")]


@run_command(app, seed_help="Base seed of the run.", concurrency_help="Games played at once.")
def run(
    agent: AgentOption = None,
    model: ModelOption = "local/smollm2-135m",
    agents: Annotated[int, typer.Option(min=2, max=12, help="How many agents when no --agent is given.")] = 3,
    dataset: DatasetOption = "builtin",
    items: Annotated[int | None, typer.Option(min=1, help="Use the first N items.")] = None,
    sample: Annotated[int | None, typer.Option(help="Shuffle the items with this seed first.")] = None,
    category: Annotated[str | None, typer.Option(help="Only items of this category (homonym, polysemy, domain, wsd).")] = None,
    repetitions: Annotated[int, typer.Option(min=1)] = 1,
    bound: Annotated[int, typer.Option(min=0, max=20, help="Clarification bound.")] = 3,
    no_clarify: Annotated[bool, typer.Option("--no-clarify", help="The leader adds no clarifying statements.")] = False,
    leader_may_end: Annotated[bool, typer.Option(
        "--leader-may-end", help="Offer a model leader the end of the game when it is asked to clarify.")] = False,
    temperature: Annotated[float | None, typer.Option(help="Temperature for every LLM agent.")] = 0.7,
    *,
    run: RunOptions,
) -> None:
    """Play every item with the line-up, store every move, resume on re-run (the experiment file these options
    amount to: --print-file)."""
    if leader_may_end and no_clarify:
        raise LexicoordError("--leader-may-end offers the end in the clarification request; drop --no-clarify.")
    lineup = lineup_from(agent, model, agents, None)
    run.launch(
        "coordination",
        models={s.name: seat_text(s) for s in lineup},
        data={"dataset": dataset, "items": items, "sample": sample, "category": category},
        settings={"clarification_bound": bound, "leader_clarifies": not no_clarify,
                     **({"leader_may_end": True} if leader_may_end else {}), "temperature": temperature},
        grid={"repetitions": repetitions},
    )


app.command("report", help="Alias of 'lexicoord report RUN' for a coordination run.")(report_cmd.report)
