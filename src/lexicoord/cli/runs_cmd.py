"""``lexicoord runs``: what is in the store, one run in detail, and export."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table

from lexicoord.cli.console import console_for
from lexicoord.cli.options import DbOption, out_file_option

if TYPE_CHECKING:
    from lexicoord.core.events import Event
    from lexicoord.runs.records import RunInfo
    from lexicoord.runs.store import Store

app = typer.Typer(help="Inspect and export stored runs.", no_args_is_help=True)
console = console_for()


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


@app.command("list")
def list_runs(db: DbOption = None) -> None:
    """All runs, newest first."""
    # The store's runs alone, not the whole Store: listing them needs no ORM, and this command starts without it.
    from lexicoord.runs.store_runs import Runs

    store = Runs(db)
    runs = store.runs()
    if not runs:
        console.print(f"No runs in {store.url} yet. Try: lexicoord demo")
        return
    table = Table()
    for col in ("run", "protocol", "status", "done", "failed", "episodes", "created"):
        table.add_column(col)
    for r in runs:
        table.add_row(escape(r.id), escape(r.protocol), r.status, str(r.done), str(r.failed), str(r.total_episodes), _when(r.created_at))
    console.print(table)


def _event_line(e: Event) -> str:
    from lexicoord.core.events import ChoiceEvent, ErrorEvent, MessageEvent, OutcomeEvent
    from lexicoord.models.observe import ModelCallEvent

    who = f"[bold]{escape(e.agent)}[/bold] " if e.agent else ""
    rnd = f"r{e.round} " if e.round is not None else ""
    if isinstance(e, ModelCallEvent):
        tail = f" [red]{escape(e.error)}[/red]" if e.error else ""
        tail += f" [yellow]unparsed: {escape(e.parse_error)}[/yellow]" if e.parse_error else ""
        cached = " cached" if e.cached else ""
        return f"{rnd}{who}model {escape(e.model)} {e.latency:.2f}s{cached}: {escape(repr((e.text or '')[:160]))}{tail}"
    if isinstance(e, ChoiceEvent):
        if e.choice is None:
            return f"{rnd}{who}[yellow]no valid choice[/yellow] ({escape(e.failure or '')})"
        return f"{rnd}{who}chose [cyan]{escape(e.choice)}[/cyan]: {escape(e.justification)}"
    if isinstance(e, MessageEvent):
        return f"{rnd}{who}says: {escape(e.content)}"
    if isinstance(e, OutcomeEvent):
        return f"[green]outcome[/green] {escape(json.dumps(e.outcome, ensure_ascii=False))}"
    if isinstance(e, ErrorEvent):
        return f"[red]error[/red] {escape(e.message)}"
    own = e.line()
    if own is not None:
        return f"{rnd}{who}{escape(own)}"
    extra = {k: v for k, v in e.model_dump().items() if k not in {"type", "version", "seq", "ts", "round", "agent"}}
    return f"{rnd}{who}{escape(e.type)} {escape(json.dumps(extra, ensure_ascii=False, default=str)[:200])}"


@app.command("show")
def show(
    run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
    transcript: Annotated[bool, typer.Option("--transcript", "-t", help="Print every event of every episode.")] = False,
    db: DbOption = None,
) -> None:
    """A run's settings and episodes; with --transcript, what happened in each."""
    from lexicoord.runs.store import Store

    store = Store(db)
    run = store.run(run_id)
    console.print(
        f"[bold]{escape(run.id)}[/bold] protocol {run.protocol}, {run.status}: {run.done} done, {run.failed} failed"
        f" of {run.total_episodes}; created {_when(run.created_at)}"
        + (f"; [bold red]{run.conflicts} conflicting second save(s)[/bold red] kept beside the first (status "
           "conflict)" if run.conflicts else "")
    )
    console.print(f"config: {escape(json.dumps(run.config, ensure_ascii=False))}")
    table = Table()
    for col in ("#", "item", "rep", "status", "outcome / error", "calls", "tokens", "s"):
        table.add_column(col)
    episodes = store.episodes(run.id)
    for ep in episodes:
        detail = ep.error if ep.error else json.dumps(ep.outcome, ensure_ascii=False)
        table.add_row(
            str(ep.position), escape(ep.item_id), str(ep.repetition), ep.status, escape((detail or "")[:90]),
            str(ep.model_calls), str(ep.prompt_tokens + ep.completion_tokens), f"{ep.duration:.1f}",
        )
    console.print(table)
    if transcript:
        for ep in episodes:
            assert ep.id is not None
            console.print(Rule(f"{escape(ep.item_id)} rep {ep.repetition} ({ep.status})"), width=min(console.width, 100))
            for e in store.events(ep.id):
                console.print(_event_line(e))


@app.command("export")
def export(
    run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
    output: Annotated[Path | None, typer.Option("--output", "-o", callback=out_file_option,
                                                help="File to write (default: stdout).")] = None,
    db: DbOption = None,
) -> None:
    """The run, its episodes and every event as JSON lines."""
    from lexicoord.runs.store import Store

    store = Store(db)
    run_id = store.run(run_id).id  # an unknown run is an error before any file is made
    if output is None:
        store.export_jsonl(run_id, sys.stdout)
        return
    with output.open("w", encoding="utf-8") as fh:
        lines = store.export_jsonl(run_id, fh)
    console_for(stderr=True).print(f"wrote {lines} lines to {output}")


@app.command("wait")
def wait(
    run_id: Annotated[str, typer.Argument(help="Run name (or a unique prefix).")],
    timeout: Annotated[float | None, typer.Option(min=0, help="Seconds to wait at most (default: as long as it "
                                                              "takes); exit 124 when they pass.")] = None,
    every: Annotated[float, typer.Option(min=0.1, help="Seconds between looks at the store.")] = 10.0,
    db: DbOption = None,
) -> None:
    """Wait while any process still plays the run; exit 0 once it is finished with no failed episode, 1 when it
    ended otherwise (interrupted, or finished with failed episodes: re-running resumes it). A job that makes the
    report waits on it (SLURM: --dependency=afterany:ARRAY, then: lexicoord runs wait RUN && lexicoord report
    RUN), so the report is of a whole run, whichever machines played it."""
    from lexicoord.runs.store import Store

    verdict(watch(Store(db), run_id, every=every, timeout=timeout))


def _played(found: RunInfo) -> bool:
    return found.status == "running"


def watch(store: Store, run_id: str, *, every: float, timeout: float | None = None,
          going: Callable[[RunInfo], bool] = _played, seen: Callable[[RunInfo], None] | None = None) -> RunInfo:
    """Look at the run in the store every ``every`` seconds while ``going`` (by default: while any process plays
    it); ``seen`` hears each look. Exit 124 once ``timeout`` seconds have passed. ``lexicoord run --ray`` watches
    its workers' run with it, as long as its tasks go on."""
    import time

    started = time.monotonic()
    found = store.run(run_id)  # an unknown run is an error at once
    if seen is not None:
        seen(found)
    while going(found):
        if timeout is not None and time.monotonic() - started >= timeout:
            console_for(stderr=True).print(f"run {escape(found.id)} is still running after {timeout:g} s "
                                           f"({found.done + found.failed} of {found.total_episodes} ended).",
                                           highlight=False)
            raise typer.Exit(124)
        time.sleep(every)
        found = store.run(found.id)
        if seen is not None:
            seen(found)
    return found


def whole(found: RunInfo) -> bool:
    """Finished, every episode done, none failed."""
    return found.status == "finished" and not found.failed and found.done >= found.total_episodes


def verdict(found: RunInfo) -> None:
    """Say how the run stands; exit 1 unless it is whole."""
    said = (f"run {escape(found.id)}: {found.status}, {found.done} done, {found.failed} failed "
            f"(of {found.total_episodes})")
    if whole(found):
        console.print(said, highlight=False)
        return
    console_for(stderr=True).print(f"{said}; re-running its command resumes it.", highlight=False)
    raise typer.Exit(1)
