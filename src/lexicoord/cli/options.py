"""Options shared by several subcommands, each bindable from an environment variable."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from lexicoord.cli.console import console_for
from lexicoord.errors import ConfigError
from lexicoord.paths import output_file, output_folder
from lexicoord.runs.names import RULE, check_run_name

AllowedHostOption = Annotated[
    list[str] | None,
    typer.Option("--allowed-host", help="A host name or address people and programs reach this server by "
                                        "(repeatable); localhost, 127.0.0.1, ::1 and --host are always accepted."),
]
ForwardedAllowIpsOption = Annotated[
    str | None,
    typer.Option(help="Proxies (comma-separated addresses or networks) whose X-Forwarded-For names the client; "
                      "by default no one's is believed."),
]
def db_option(value: str | None) -> str | None:
    """An empty store name is a mistake (an unset variable in a script), never a quiet fall-back to the default."""
    if value is not None and not value.strip():
        raise typer.BadParameter("is empty: give a SQLite file path or an SQLAlchemy URL, or leave --db (and "
                                 "LEXICOORD_DB) out for the default store.")
    return value


DbOption = Annotated[
    str | None,
    typer.Option("--db", envvar="LEXICOORD_DB", callback=db_option,
                 help="Store: a SQLite file path or any SQLAlchemy URL."),
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Do not read or write the response cache (or set LEXICOORD_CACHE=0).")
]
def run_name_option(value: str | None) -> str | None:
    """Checked before anything is opened, so a refused name leaves no store behind."""
    if value is None:
        return None
    try:
        return check_run_name(value)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None


RunNameOption = Annotated[
    str | None, typer.Option("--run", callback=run_name_option, help=f"Run name ({RULE}); the same name resumes it."),
]
def _checked(check: Callable[[Path], Path]) -> Callable[[Path | None], Path | None]:
    """A typer callback running ``check``: a bad path is a usage error (exit 2) before anything is opened."""

    def callback(value: Path | None) -> Path | None:
        if value is None:
            return None
        try:
            return check(value)
        except ConfigError as exc:
            raise typer.BadParameter(str(exc)) from None

    return callback


out_file_option = _checked(output_file)
out_folder_option = _checked(output_folder)
OutFolderOption = Annotated[
    Path | None, typer.Option("--out", callback=out_folder_option, help="Folder for the files (default: reports/RUN)."),
]
ModelOptions = Annotated[
    list[str] | None,
    typer.Option("--option", "-o", help="Model option key=value (timeout=30, max_retries=2, base_url=..., n_ctx=...)."),
]


T = TypeVar("T")
if TYPE_CHECKING:
    from lexicoord.runs.records import RunInfo
    from lexicoord.runs.store import Store


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` for a command, on the command's loop (:mod:`lexicoord.event_loop`): Ctrl-C (exit 130) and
    SIGTERM (exit 143, a cluster's time limit or preemption) say what was kept."""
    from lexicoord import event_loop
    from lexicoord.runs.stopping import Terminated

    kept = "finished episodes are saved, and re-running the same command resumes."
    try:
        return event_loop.run(coro)
    except KeyboardInterrupt:
        console_for(stderr=True).print(f"interrupted; {kept}")
        raise typer.Exit(130) from None
    except Terminated:
        console_for(stderr=True).print(f"stopped by SIGTERM; {kept}")
        raise typer.Exit(143) from None


def protocol_run(store: Store, run_id: str, protocol: str) -> RunInfo:
    """The stored run ``run_id`` (or a unique prefix), which must be a ``protocol`` run."""
    found = store.run(run_id)
    if found.protocol != protocol:
        raise ConfigError(f"Run '{found.id}' is a {found.protocol} run, not a {protocol} one; "
                          f"use lexicoord report {found.id}.")
    return found


def parse_options(pairs: list[str] | None) -> dict[str, Any]:
    """``["timeout=30", "base_url=http://x"]`` -> typed dict (JSON values where they parse)."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"Option '{pair}' is not of the form key=value.")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def cache_setting(no_cache: bool) -> bool | None:
    return False if no_cache else None


#: The most a JSON file named on the command line may hold: a schema is a few kilobytes, and a path given by
#: mistake (a disk image, a log) must be refused before it is read into memory.
MAX_JSON_FILE_BYTES = 2**20


def load_json_arg(value: str | None, option: str = "--json-schema") -> Any:
    """A JSON value given inline or as a path to a file holding it (a UTF-8 text file of at most 1 MB)."""
    if value is None:
        return None
    path = Path(value)
    if path.is_file():
        text = _read_json_file(path, option)
    else:
        text = value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"'{value[:80]}' is neither a JSON file nor valid JSON ({exc.msg}).") from None


def _read_json_file(path: Path, option: str) -> str:
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_JSON_FILE_BYTES + 1)  # never more than the cap, even if the file grows meanwhile
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}.") from None
    if len(data) > MAX_JSON_FILE_BYTES:
        raise ConfigError(f"{path} is larger than the {MAX_JSON_FILE_BYTES // 2**20} MB a {option} file may hold; "
                          "give the path of a JSON file (a schema is a few kB) or the JSON itself.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not a JSON file: byte {exc.start + 1} is not UTF-8 text, so it looks binary; "
                          f"give {option} the path of a JSON file or the JSON itself.") from None
