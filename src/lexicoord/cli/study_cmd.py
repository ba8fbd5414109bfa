"""``lexicoord study``: serve a study with people (consent to completion code), check its file, export its data.

A bad study file serves nothing: every problem is one line on stderr (``file:line: what``) and the exit
status is 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lexicoord.cli.console import console_for
from lexicoord.cli.options import DbOption, ModelOptions, parse_options
from lexicoord.experiments.source import ExperimentError

if TYPE_CHECKING:
    from lexicoord.studies.file import StudyFile

app = typer.Typer(help="Serve a study with people, check its file, and export its data.", no_args_is_help=True)
console = console_for(stderr=True)
FileArg = Annotated[Path, typer.Argument(help="The study file (TOML).", dir_okay=False)]
SetOption = Annotated[list[str] | None, typer.Option(
    "--set", help="Override a key: lobby.timeout=120, group.games=2 (repeatable).")]


def _load(file: Path, overrides: list[str] | None) -> StudyFile:
    from lexicoord.studies.file import load

    try:
        return load(file, overrides or [])
    except ExperimentError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        raise typer.Exit(2) from None


@app.command()
def check(file: FileArg, set_: SetOption = None) -> None:
    """Check a study file whole: every problem one line at its line (exit 2), else what it will do."""
    study = _load(file, set_)
    stages = ["consent", "instructions", *(["quiz"] if study.quiz.questions else []), "lobby",
              f"{study.group.games} game(s)", *(["survey"] if study.survey.questions else []), "completion"]
    print(f"{study.name}: {study.protocol}, groups of {study.group.people} people and {len(study.group.agents)} "
          f"agent(s); {' -> '.join(stages)}")
    for c in study.conditions:
        changes = [*(f"{k} = {v!r}" for k, v in c.game.items()),
                   *([f"{len(c.agents)} agent(s): " + ", ".join(f"{a.name} ({a.model})" for a in c.agents)]
                     if c.agents is not None else []),
                   *([f"stand-in {c.model}"] if c.model else []), *(["its own brief"] if c.brief else [])]
        print(f"  condition {c.name} (weight {c.weight}): {'; '.join(changes) or 'the study as it is'}")
    if study.conditions:
        print("  each new group is assigned a condition by balanced randomisation (blocks from the seed "
              f"{study.seed})")


@app.command()
def serve(
    file: FileArg,
    set_: SetOption = None,
    host: Annotated[str, typer.Option(
        help="Address to listen on (0.0.0.0 lets other machines in, and the dashboard with its key).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    allowed_host: Annotated[list[str] | None, typer.Option(
        "--allowed-host", help="A host name participants reach this server by (repeatable).")] = None,
    forwarded_allow_ips: Annotated[str | None, typer.Option(
        help="Proxies (comma-separated addresses or networks) whose X-Forwarded-For names the client.")] = None,
    enter_rate: Annotated[float, typer.Option(
        min=0.01, help="New sessions per second one address may begin (burst 60).")] = 5.0,
    connections_per_address: Annotated[int, typer.Option(
        min=1, help="Connections one client may hold open (participants behind one lab router share it).")] = 256,
    accept_changes: Annotated[bool, typer.Option(
        "--accept-changes", help="Go on with a study whose file changed since it was first served (the new "
                                 "file is recorded); without it such a file is refused, naming what changed.")] = False,
    db: DbOption = None,
    option: ModelOptions = None,
) -> None:
    """Serve a study: participants' link, lobby, games in managed rooms, survey, codes, and the dashboard."""
    from lexicoord.cli.ports import check_port
    from lexicoord.cli.serve_cmd import run_app
    from lexicoord.errors import ConfigError
    from lexicoord.models.pool import ModelPool
    from lexicoord.runs.store import Store
    from lexicoord.studies.serve import StudyPart, services_for
    from lexicoord.studies.study import MIN_PUBLIC_KEY, admin_key
    from lexicoord.studies.web import study_link
    from lexicoord.web.app import create_app
    from lexicoord.web.hosts import LOOPBACK, proxy_addresses, served_hosts

    study = _load(file, set_)
    key, shown = admin_key()
    public = host not in LOOPBACK
    if public and not shown and len(key) < MIN_PUBLIC_KEY:
        raise ConfigError(f"LEXICOORD_ADMIN_KEY has {len(key)} characters; a dashboard reachable from other machines "
                          f"needs a key of at least {MIN_PUBLIC_KEY} (or unset it for a new random key).")
    hosts = served_hosts(host, allowed_host or [])
    proxies = proxy_addresses(forwarded_allow_ips)
    pool = ModelPool(**{**study.options, **parse_options(option)})
    services = services_for(study, Store(db), pool)
    part = StudyPart(study, services, key, public, enter_rate=enter_rate, accept_changes=accept_changes)
    check_port(host, port)
    app = create_app(services, allowed_hosts=hosts, parts=[part], viewer=False, idle_close=None, unused_close=None)
    base = f"http://{'localhost' if host in ('127.0.0.1', '0.0.0.0', '::') else host}:{port}"
    # Each address whole on its line, however narrow the terminal and into a log file too (where rich would
    # break lines at 80 columns): an address broken in two is copied broken.
    console.print(f"study {study.name}: {base}/studies/{study.name}/?pid=YOUR-ID  (store {services.store.url})",
                  highlight=False, markup=False, soft_wrap=True)
    console.print(f"Prolific study URL: {study_link(base, study)}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"dashboard: {base}/studies/{study.name}/admin#key={key if shown else '$LEXICOORD_ADMIN_KEY'}"
                  + ("" if public else "  (this machine only)"), highlight=False, markup=False, soft_wrap=True)
    run_app(app, host, port, hosts, proxies, connections_per_address)


@app.command()
def export(
    file: FileArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for participants.csv and bonus.csv.")] = Path("."),
    set_: SetOption = None,
    db: DbOption = None,
) -> None:
    """Write the study's participants (one row each) and Prolific's bulk-bonus list from the store."""
    from lexicoord.runs.store import Store
    from lexicoord.studies.export import write_bonus, write_participants
    from lexicoord.studies.persistence import StudyStore
    from lexicoord.studies.study import Study

    study_file = _load(file, set_)
    store = Store(db)
    study = Study(study_file, StudyStore(store, study_file.name))
    study.load(check=False)  # the data as stored, whatever the file says now
    out.mkdir(parents=True, exist_ok=True)
    write_participants(study, store, out / "participants.csv")
    write_bonus(study, store, out / "bonus.csv")
    study.store.close()
    print(f"{len(study.participants)} participant(s): {out / 'participants.csv'}, {out / 'bonus.csv'}")
