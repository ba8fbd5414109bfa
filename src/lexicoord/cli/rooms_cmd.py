"""``lexicoord rooms``: the live rooms in a store, and closing them (a running server lets them go too).

A closed room is never reopened; its run, with every game played in it, stays
in the store for ``lexicoord report`` and ``lexicoord runs``. A server that is
running on the same store notices within its sweep interval (30 s) and closes
the room's open pages, saying why.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from lexicoord.cli.console import console_for
from lexicoord.cli.options import DbOption
from lexicoord.errors import LexicoordError

if TYPE_CHECKING:
    from lexicoord.web.persistence import RoomSummary

app = typer.Typer(help="List and close the live rooms of `lexicoord serve`.", no_args_is_help=True)
console = console_for()


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _table(rooms: list[RoomSummary]) -> Table:
    table = Table()
    table.add_column("code", no_wrap=True)
    for col in ("status", "people", "leader"):
        table.add_column(col)
    table.add_column("run", no_wrap=True)
    table.add_column("last change")
    for r in rooms:
        table.add_row(r.code, r.status, str(r.people), escape(r.leader or "-"), escape(r.run_id), _when(r.updated_at))
    return table


@app.command("list")
def list_rooms(
    all_: Annotated[bool, typer.Option("--all", help="Closed rooms too.")] = False,
    db: DbOption = None,
) -> None:
    """The open rooms (every room with --all), oldest first."""
    from lexicoord.runs.store import Store
    from lexicoord.web.persistence import RoomStore

    rooms = RoomStore(Store(db))
    try:
        found = rooms.listing(include_closed=all_)
    finally:
        rooms.close()
    if not found:
        console.print(f"No {'' if all_ else 'open '}rooms in {rooms.store.url}.", highlight=False)
        return
    console.print(_table(found))


@app.command("close")
def close_rooms(
    codes: Annotated[list[str] | None, typer.Argument(help="Room codes, as shared (case and dashes do not matter).")] = None,
    empty: Annotated[bool, typer.Option("--empty", help="Every open room no one has joined.")] = False,
    db: DbOption = None,
) -> None:
    """Close rooms: no one can join or play in them any more; their games stay in the store."""
    if not codes and not empty:
        raise LexicoordError("Name the rooms to close (their codes), or pass --empty for rooms no one has joined.")
    from lexicoord.runs.store import Store
    from lexicoord.web.persistence import RoomStore
    from lexicoord.web.tokens import normalize_code

    rooms = RoomStore(Store(db))
    try:
        wanted = [normalize_code(c) for c in codes or []]
        open_ = {r.code: r for r in rooms.listing()}
        unknown = [c for c in wanted if c not in open_]
        if unknown:
            raise LexicoordError(f"No open room has the code {', '.join(unknown)}; see 'lexicoord rooms list --all'.")
        wanted += [r.code for r in open_.values() if empty and r.people == 0 and r.code not in wanted]
        closed = rooms.close_codes(wanted)
    finally:
        rooms.close()
    if not closed:
        console.print("No open room matched; nothing was closed.", highlight=False)
        return
    console.print(_table(closed))
    console.print(f"Closed {len(closed)} room{'s' if len(closed) != 1 else ''}; a server running on this store lets "
                  "their pages go within 30 s.", highlight=False)
