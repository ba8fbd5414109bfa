"""A person at the keyboard answering any protocol's requests.

The form is built from the request's answer schema, so every protocol can seat
a person without terminal code of its own: a closed set is a numbered list, a
text field is one line checked against its length limits, and the request's
actions (``pass``, ``end``) can be typed instead of an answer. The whole answer
is checked against the schema before it is given to the seat, so the person
can correct it; nothing is cut short without a word.
"""

from __future__ import annotations

import asyncio
import queue
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

import typer
from rich.markup import escape

from lexicoord.cli.console import console_for
from lexicoord.cli.options import run_async
from lexicoord.core.events import Event
from lexicoord.core.seat import Request
from lexicoord.core.spec import EpisodeSpec
from lexicoord.runs.records import EpisodeRecord
from lexicoord.runs.runner import Runner
from lexicoord.seats.human import HumanSeat

console = console_for()
#: Shows what the person may see before the form (a protocol's view, as data).
ViewPrinter = Callable[[Request], None]


#: Terminal control: CSI and OSC escape sequences, other escapes, and C0/C1 control characters but newline
#: and tab.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with everything that would move the cursor, recolour, retitle or clear the terminal removed."""
    return _CONTROL.sub("", text)


class NoMoreInput(Exception):
    """Standard input ended: the person is gone, and each of their moves fails at once (the game records it)."""


_lines: queue.Queue[str | None] = queue.Queue()
_reader: threading.Thread | None = None


def _read_stdin() -> None:
    for line in sys.stdin:
        _lines.put(line.rstrip("\n"))
    _lines.put(None)


async def ask_line(text: str) -> str:
    """One line from the keyboard. Standard input is read on a daemon thread, so a game that ends while
    the person is still typing does not keep the command waiting for a line that will not be used."""
    global _reader
    if _reader is None:
        _reader = threading.Thread(target=_read_stdin, name="lexicoord-keyboard", daemon=True)
        _reader.start()
    sys.stdout.write(text)
    sys.stdout.flush()
    while True:
        try:
            line = _lines.get_nowait()
        except queue.Empty:
            await asyncio.sleep(0.02)
            continue
        if line is None:
            _lines.put(None)  # stays ended for every later question
            raise NoMoreInput
        return line.strip()


async def _pick(label: str, options: list[str], actions: tuple[str, ...]) -> str | tuple[str]:
    for i, option in enumerate(options, start=1):
        console.print(f"  {i}. {escape(option)}")
    extra = f"; or {', '.join(actions)}" if actions else ""
    while True:
        answer = await ask_line(f"{label} (1-{len(options)}{extra}): ")
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1]
        if answer.lower() in actions:
            return (answer.lower(),)
        console.print(f"type a number from 1 to {len(options)}{extra}")


async def _text(label: str, spec: dict[str, Any], actions: tuple[str, ...], first: bool) -> str | tuple[str]:
    low, high = spec.get("minLength", 0), spec.get("maxLength")
    limit = f", at most {high} characters" if high else ""
    hint = ""
    if first and actions:
        hint = f"; {' or '.join(repr(a) for a in actions)}" + (" (empty: pass)" if "pass" in actions else "")
    while True:
        answer = await ask_line(f"{label}{limit}{hint}: ")
        if first and answer.lower() in actions:
            return (answer.lower(),)
        if first and not answer and "pass" in actions:
            return ("pass",)
        if high is not None and len(answer) > high:
            console.print(f"[yellow]that is {len(answer)} characters; the limit is {high}. Say it shorter.[/yellow]")
            continue
        if len(answer) < low:
            console.print(f"[yellow]give at least {low} character(s)[/yellow]")
            continue
        return answer


async def _typed(label: str, spec: dict[str, Any], actions: tuple[str, ...]) -> Any:
    """A number, or a list (comma-separated), read as the schema's type; asked again until it reads."""
    kind = spec["type"]
    hint = {"integer": "a whole number", "number": "a number", "array": "items separated by commas"}[kind]
    while True:
        answer = await ask_line(f"{label} ({hint}): ")
        if answer.lower() in actions:
            return (answer.lower(),)
        try:
            if kind == "integer":
                return int(answer)
            if kind == "number":
                return float(answer)
            items = [part.strip() for part in answer.split(",") if part.strip()]
            item_type = (spec.get("items") or {}).get("type")
            return [int(x) for x in items] if item_type == "integer" else items
        except ValueError:
            console.print(f"[yellow]give {hint}[/yellow]")


async def fill(request: Request) -> dict[str, Any] | tuple[str]:
    """The person's answer to ``request`` (a value that passes its schema), or an action as a 1-tuple."""
    schema = request.schema_for_answer()
    props: dict[str, Any] = schema.get("properties", {})
    while True:
        value: dict[str, Any] = {}
        for i, (name, spec) in enumerate(props.items()):
            label = name.replace("_", " ")
            if "enum" in spec:
                got: Any = await _pick(label, [str(o) for o in spec["enum"]], request.actions if i == 0 else ())
                got = got if isinstance(got, tuple) else spec["enum"][[str(o) for o in spec["enum"]].index(got)]
            elif spec.get("type") == "boolean":
                got = await _pick(label, ["yes", "no"], request.actions if i == 0 else ())
                got = got if isinstance(got, tuple) else got == "yes"
            elif spec.get("type") in ("integer", "number", "array"):
                got = await _typed(label, spec, request.actions if i == 0 else ())
            else:
                got = await _text(label, spec, request.actions, first=i == 0)
            if isinstance(got, tuple):
                return got
            value[name] = got
        problem = request.check(value)
        if problem is None:
            return value
        console.print(f"[yellow]not accepted: {escape(problem)}; please answer again.[/yellow]")


async def keyboard(seat: HumanSeat, done: asyncio.Event, show: ViewPrinter) -> None:
    """Answers the seat's requests from the keyboard until the episode is over or input ends."""
    while not done.is_set():
        request = seat.pending
        if not seat.waiting or request is None:
            await asyncio.sleep(0.05)
            continue
        show(request)
        try:
            answer = await fill(request)
        except NoMoreInput:
            console.print("[yellow]Standard input ended: your moves from here on fail, and the game goes on "
                          "without you.[/yellow]")
            seat.leave("the person's input ended")
            return
        if seat.pending is not request:
            continue  # the request ended (timed out) while the person typed
        if isinstance(answer, tuple):
            seat.submit(action=answer[0])
        else:
            seat.submit(answer)


def play_at_keyboard(runner: Runner, run_id: str, episode: EpisodeSpec, config: dict[str, Any], seat: HumanSeat,
                     show: ViewPrinter, what: str = "game") -> tuple[EpisodeRecord, list[Event]]:
    """Play one episode with a person at ``seat`` answering from the keyboard; the stored episode and its
    events, or exit status 1 with the reason when it failed to run."""

    async def both() -> None:
        done = asyncio.Event()
        person = asyncio.create_task(keyboard(seat, done, show))
        try:
            await runner.run(run_id, [episode], config)
        finally:
            done.set()
            await person

    run_async(both())
    [(record, events)] = list(runner.store.iter_run_events(run_id))
    if record.status != "done":
        console.print(f"[red]The {what} failed to run:[/red] {escape(record.error or '')}")
        raise typer.Exit(1)
    return record, events
