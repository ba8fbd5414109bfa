"""``lexicoord run FILE --ray ADDRESS --workers N``: one run played by N Ray tasks, watched from the store.

The file is checked here exactly as ``lexicoord run`` checks it before this module is reached (a bad file exits 2
and Ray is never imported). Then N tasks start, each an ordinary worker of the same run (runs/ray_launcher.py),
sharing its episodes through the claim table; this process, the driver, plays nothing: it reads the run's
progress from the store as ``lexicoord runs wait`` does, and ends when every task has ended, with
``lexicoord run``'s exit status (0 when the run is whole). Ctrl-C or SIGTERM cancels the tasks, first so that
each hands its claims back, then by force after a grace period, and exits 130 or 143.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from lexicoord.cli.console import console_for
from lexicoord.cli.progress import log_every
from lexicoord.cli.runs_cmd import verdict, watch
from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.experiments.source import VARIABLE
from lexicoord.runs import ray_launcher
from lexicoord.runs.stopping import Terminated

if TYPE_CHECKING:
    from lexicoord.experiments.loading import Loaded
    from lexicoord.runs.records import RunInfo
    from lexicoord.runs.store import Store

err = console_for(stderr=True)

#: Seconds between the driver's looks at the store and at its tasks.
EVERY = 1.0


def shared_url(store: Store) -> str:
    """The store's URL as every worker can open it: a SQLite file by its absolute path (a task's process does not
    start in this folder). An in-memory SQLite database cannot be shared, and is refused."""
    url = store.engine.url
    if url.get_backend_name() == "sqlite":
        database = url.database or ""
        if database in ("", ":memory:") or database.startswith("file::memory:"):
            raise ConfigError("--ray needs a store every worker can open; an in-memory SQLite database is this "
                              "process's alone: give --db a file path or a PostgreSQL URL.")
        url = url.set(database=str(Path(database).expanduser().resolve()))
    return url.render_as_string(hide_password=False)


def worker_argv(file: Path, overrides: Sequence[str], smoke: bool) -> list[str]:
    """The command each task runs: the same file (by its absolute path, which must be the same on every node, a
    shared folder as on any cluster) and the same overrides, so the same run with the same settings."""
    argv = ["run", str(file.expanduser().resolve())]
    for override in overrides:
        argv += ["--set", override]
    return argv + (["--smoke"] if smoke else [])


def models_of(loaded: Loaded) -> set[str]:
    """Every model the run's episodes name, and the models the run resolves beside them."""
    campaign = loaded.campaign()
    named = {a.model for e in campaign.episodes for a in e.lineup if a.kind == "llm" and a.model}
    return named | set(campaign.also_models)


class _Shown:
    """The run's progress as the driver shows it: done of total, failed, tasks still going; redrawn on a terminal,
    a plain line in a log when the counts change or every ``log_every()`` seconds."""

    def __init__(self, tasks: int) -> None:
        self.tasks = tasks
        self.going = tasks
        self.started = time.monotonic()
        self._said = ""
        self._at = 0.0
        self._every = log_every()

    def __call__(self, found: RunInfo) -> None:
        line = (f"{found.id}: {found.done}/{found.total_episodes} done, {found.failed} failed, "
                f"{self.going} of {self.tasks} tasks going, {time.monotonic() - self.started:.0f} s")
        counts = line.rsplit(",", 1)[0]
        if counts == self._said and time.monotonic() - self._at < self._every:
            return
        self._said, self._at = counts, time.monotonic()
        if err.is_terminal:
            err.print(f"\r{escape(line)}", end="", highlight=False, soft_wrap=True)
        else:
            err.print(line, highlight=False, markup=False, soft_wrap=True)

    def done(self) -> None:
        if err.is_terminal and self._said:
            err.print()


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated("stopped by SIGTERM")


def _opened(store: Store, name: str, ray: Any, tasks: list[ray_launcher.Task]) -> RunInfo | None:
    """The run once a worker has opened it (at once on a resume), or ``None`` if every task ended first."""
    while True:
        try:
            found = store.run(name)
            if found.id == name:  # not another run that merely starts with this name
                return found
        except LexicoordError:
            pass
        if not ray_launcher.running(ray, tasks):
            return None
        time.sleep(EVERY)


def _say_plan(name: str, n: int, address: str, cluster: ray_launcher.Cluster, where: ray_launcher.Placement,
              store: Store, env: dict[str, str]) -> None:
    """What is about to start, where, with what (the variables by name only), and what may go wrong with it."""
    err.print(f"ray: run [bold]{escape(name)}[/bold] as {n} task{'s' if n != 1 else ''} on {escape(address)} "
              f"({len(cluster.node_ips)} node{'s' if len(cluster.node_ips) != 1 else ''}); each asks for "
              f"{escape(where.why)}", highlight=False, soft_wrap=True)
    err.print(f"ray: store {escape(store.url)}; passed to the workers: {escape(', '.join(sorted(env)))} "
              "(values not shown)", highlight=False, soft_wrap=True)
    for warning in ray_launcher.plan_warnings(store.engine.dialect.name, cluster, n, where):
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False, soft_wrap=True)


def launch_on_ray(loaded: Loaded, *, file: Path, overrides: Sequence[str], smoke: bool, db: str | None,
                  address: str, workers: int | None, name: str) -> None:
    """Run the checked experiment ``loaded`` as ``workers`` Ray tasks on the cluster at ``address`` (one a node
    when not given); exit as ``lexicoord run`` would."""
    ray = ray_launcher.import_ray()
    from lexicoord.runs.store import Store

    store = Store(db)
    url = shared_url(store)
    models = models_of(loaded)
    named = [variable for variable, _ in VARIABLE.findall(loaded.source.text)]  # the file's ${VAR}s
    env = ray_launcher.worker_env(os.environ, models, named, url)
    cluster = ray_launcher.connect(ray, address)
    n = workers or max(1, len(cluster.node_ips))
    where = ray_launcher.placement(models, loaded.experiment.options, loaded.experiment.concurrency, cluster,
                                   os.environ)
    _say_plan(name, n, address, cluster, where, store, env)
    tasks = ray_launcher.start(ray, worker_argv(file, overrides, smoke), n, where, env, name, os.getcwd())
    previous = signal.signal(signal.SIGTERM, _raise_terminated)  # ray.init's own handler exits without a word
    shown = _Shown(n)
    try:
        found = _opened(store, name, ray, tasks)
        if found is not None:

            def going(_: RunInfo) -> bool:
                shown.going = len(ray_launcher.running(ray, tasks))
                return shown.going > 0

            watch(store, name, every=EVERY, going=going, seen=shown)
    except (KeyboardInterrupt, Terminated) as stop:
        shown.done()
        code, what = (143, "stopped by SIGTERM") if isinstance(stop, Terminated) else (130, "interrupted")
        err.print(f"{what}; cancelling {n} task{'s' if n != 1 else ''} (each hands its claims back; killed after "
                  f"{ray_launcher.GRACE:g} s)", highlight=False)
        killed = ray_launcher.cancel(ray, tasks)
        if killed:
            err.print(f"killed {', '.join(t.name for t in killed)}: their claims are handed back by SIGTERM, or "
                      "expire", highlight=False)
        _mark_stopped(store, name)
        err.print("finished episodes are saved, and re-running the same command resumes.", highlight=False)
        raise typer.Exit(code) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    shown.done()
    _end(store, name, ray, tasks)


def _mark_stopped(store: Store, name: str) -> None:
    """Tasks stopped together each give their claims back and then look for the others': each may still see
    another's and leave the run ``running`` for that one to mark. Once every task has ended, a run on which no
    process holds a claim is played by no one, and is marked ``interrupted`` here."""
    from lexicoord.runs.claims import Claims

    try:
        found = store.run(name)
        if found.id == name and found.status == "running" and Claims(store, name).remaining().held == 0:
            store.set_run_status(name, "interrupted")
    except LexicoordError:  # no worker opened the run
        pass


def _end(store: Store, name: str, ray: Any, tasks: list[ray_launcher.Task]) -> None:
    """Name the tasks that failed, then say how the run stands: exit 0 when it is whole, whatever a task did (the
    others played its episodes), 1 otherwise."""
    failed = [(t, why) for t in tasks if (why := ray_launcher.outcome(ray, t)) is not None]
    for task, why in failed:
        err.print(f"[red]task failed:[/red] {escape(task.name)}: {escape(why)}", highlight=False, soft_wrap=True)
    try:
        found = store.run(name)
    except LexicoordError:
        err.print(f"no task opened run {escape(name)}: every one of the {len(tasks)} failed.", highlight=False)
        raise typer.Exit(1) from None
    if found.id != name:
        raise typer.Exit(1)
    verdict(found)
    if failed:
        err.print(f"the run is whole: the other tasks played what the {len(failed)} failed one(s) left.",
                  highlight=False)

