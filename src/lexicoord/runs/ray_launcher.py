"""Ray as a launcher of one run's processes: where they go, what they are given, how they are stopped.

Ray only places processes. Each Ray task runs one ordinary worker of the run (``lexicoord run FILE`` with the
same run name and settings), which joins through the run's claim table like any other process, so the store
stays the one place that knows what is done (see runs/claims.py); nothing here counts episodes.

A task runs the command as a child process of its Ray worker, not as a call inside it, because:

- stopping it is the command's own, tested path: Ray's non-force ``ray.cancel`` raises ``KeyboardInterrupt``
  in the task, which sends the child SIGINT, and the child saves what ended, gives its claims back and marks
  the run exactly as on a terminal's Ctrl-C. In-process, that interrupt would land in Ray's worker loop, not in
  the run's event loop, whose SIGTERM handler only the main thread of a process may install;
- a Ray worker that dies outright (force cancel, a node lost) takes the child with it: the child asks the kernel
  for SIGTERM when its parent dies (``cli/ray_child.py``), and SIGTERM gives the claims back as a cluster's
  preemption does;
- Ray reuses worker processes between tasks; a run's models (an embedded model's weights), caches and signal
  handlers live and die with its own process.

The task is named (``lexicoord-run <run> 1/4``) so Ray's dashboard lists it. Its first line says that name as Ray's
runtime context gives it, the host and the command; the rest of its log is the child's output, the same lines as a
cluster job's log. All of it is written to the worker's standard error, which Ray also streams to the driver's (the
command's standard output stays its verdict alone).

Ray is an optional dependency (``pip install 'lexicoord[ray]'``), imported only when a run is launched on it.
"""

from __future__ import annotations

import collections
import importlib
import ipaddress
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import urlsplit

from lexicoord.errors import ConfigError
from lexicoord.models.providers.presets import PRESETS

#: What to install when Ray is missing.
INSTALL = "pip install 'lexicoord[ray]'"

#: The module a task runs (``python -m``): ``lexicoord`` itself, prepared to die with the task's worker.
CHILD_MODULE = "lexicoord.cli.ray_child"

#: Seconds a stopped task is given to hand its claims back before its worker is killed (on the driver, between
#: the non-force and the force ``ray.cancel``; in a task, between SIGINT and SIGKILL to its child).
GRACE = 30.0

#: Ray tries a task again this many times when its worker or node dies (never after a cancel, or when the
#: command itself failed: then trying again would fail again).
MAX_RETRIES = 3

#: Providers whose model runs inside the worker's process (llama.cpp here): a worker's CPUs are its compute.
EMBEDDED = frozenset({"local"})

#: ``host:port`` or ``ray://host:port`` (Ray Client), the forms of a cluster's address besides the two words.
_ADDRESS = re.compile(r"^(ray://)?\[?[A-Za-z0-9_.:-]+\]?:\d{1,5}$")

#: The first line of every task's log (see ``play``). Ray's driver folds lines that differ only in their numbers
#: into one ("[repeated 2x across cluster]"), which would show one task's name of N: lines that match this are
#: never folded.
STARTED = r"^lexicoord-run "


class RayMissing(ConfigError):
    """Ray is not installed: the command says what to install (a usage error, exit 2)."""


def import_ray() -> Any:
    """The ``ray`` module, imported now (never at start-up: ``lexicoord --help`` has no use for it).

    Ray reads ``RAY_DEDUP_LOGS_ALLOW_REGEX`` when it is imported: the tasks' first lines (``STARTED``) are added to
    it here, so the driver shows every task's name, not one of them and a count."""
    allowed = os.environ.get("RAY_DEDUP_LOGS_ALLOW_REGEX")
    if not allowed:
        os.environ["RAY_DEDUP_LOGS_ALLOW_REGEX"] = STARTED
    elif STARTED not in allowed:
        os.environ["RAY_DEDUP_LOGS_ALLOW_REGEX"] = f"{STARTED}|(?:{allowed})"
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise RayMissing(f"--ray needs Ray, which is not installed ({exc}); install it: {INSTALL}") from None


def check_address(value: str) -> str:
    """``auto``, ``local``, ``host:port`` or ``ray://host:port``; anything else is refused before Ray is imported."""
    if value in ("auto", "local") or _ADDRESS.match(value):
        return value
    raise ConfigError(f"'{value}' is not a Ray address: give auto (RAY_ADDRESS, or the cluster running on this "
                      "machine), local (a private cluster in this process), host:port or ray://host:port.")


@dataclass(frozen=True)
class Cluster:
    """What the driver sees of the cluster it joined: its live nodes' addresses and resources."""

    node_ips: tuple[str, ...]  # one per live node (several nodes may share a machine)
    largest_cpus: float  # the most CPUs one node has: no task may ask for more, or it would never start
    gpus: float  # in the whole cluster
    cpus: float = 0.0  # in the whole cluster


def connect(ray: Any, address: str) -> Cluster:
    """Join (or, for ``local``, start) the cluster. ``auto`` is Ray's own: ``RAY_ADDRESS``, else a cluster
    started on this machine with ``ray start``. The tasks' output is in Ray's logs (the dashboard shows it by
    task) and streamed to the driver's standard error, each line after Ray's ``(task name pid=...)``; the driver
    itself prints the run's progress, read from the store."""
    import logging

    if address not in ("auto", "local"):
        _answers(address)
    try:
        ray.init(address=address, log_to_driver=True, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ConfigError(f"Cannot reach the Ray cluster at '{address}': {exc}") from None
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return Cluster(node_ips=tuple(str(n.get("NodeManagerAddress", "")) for n in nodes),
                   largest_cpus=max((float(n.get("Resources", {}).get("CPU", 0)) for n in nodes), default=0.0),
                   gpus=float(ray.cluster_resources().get("GPU", 0)),
                   cpus=float(ray.cluster_resources().get("CPU", 0)))


def _answers(address: str, timeout: float = 10.0) -> None:
    """Refuse at once an address where nothing listens: Ray itself would retry it for minutes, saying little."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ConfigError(f"Nothing answers at {address} ({exc.strerror or exc}): is the cluster's head started "
                          "there (ray start --head), and is that its port?") from None


@dataclass(frozen=True)
class Placement:
    """The resources each task asks Ray for, and the sentence that says why."""

    num_cpus: float
    num_gpus: float
    why: str
    warnings: tuple[str, ...] = ()


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def served_on_the_node(spec: str, options: Mapping[str, Any], environ: Mapping[str, str]) -> bool:
    """Whether ``spec`` is an OpenAI-compatible server on the worker's own machine: a preset whose base URL (the
    ``base_url`` option, ``<NAME>_BASE_URL``, else the preset's default, as the provider itself reads them) is
    loopback, such as ``vllm/...`` or ``ollama/...`` left at their defaults. Each node then serves its own."""
    provider, _, _ = spec.partition("/")
    preset = next((p for p in PRESETS if p.name == provider), None)
    if preset is None:
        return False
    url = str(options.get("base_url") or environ.get(preset.base_url_env) or preset.base_url or "")
    return bool(url) and _loopback(url)


def placement(models: Iterable[str], options: Mapping[str, Any], concurrency: int, cluster: Cluster,
              environ: Mapping[str, str]) -> Placement:
    """What each task asks for, by where its models compute.

    - An embedded model (``local/...``) computes in the worker's process, on its CPUs: a task asks for as many
      CPUs as the file's concurrency, capped at the largest node's (it would never start otherwise). llama.cpp is
      loaded here without GPU layers, so it asks for no GPU.
    - A model served on the worker's own machine (a loopback base URL: ``vllm/``, ``ollama/``, ``llamacpp/``,
      ``lmstudio/`` at their defaults) computes on that node's GPU: a task asks for one GPU, so Ray puts one
      worker on each GPU and none on a node without one. A cluster with no GPU at all runs them by CPU, said.
    - Otherwise (a hosted API, a shared server by address, scripted agents) the worker mostly waits on the
      network, whatever its concurrency: one CPU.

    Tasks are spread over the nodes (``SPREAD``), so workers of one run do not crowd one machine.
    """
    specs = sorted(set(models))
    embedded = [s for s in specs if s.partition("/")[0] in EMBEDDED]
    on_node = [s for s in specs if served_on_the_node(s, options, environ)]
    cpus, gpus, warnings = 1.0, 0.0, []
    reasons = []
    if embedded:
        cap = max(1.0, cluster.largest_cpus)
        cpus = float(max(1, min(concurrency, int(cap))))
        reasons.append(f"{cpus:g} CPU{'s' if cpus != 1 else ''} (concurrency {concurrency}, capped at the largest "
                       f"node's {cap:g}) for {', '.join(embedded)}, which runs in the worker")
    if on_node:
        if cluster.gpus >= 1:
            gpus = 1.0
            reasons.append(f"1 GPU for the server on each worker's machine ({', '.join(on_node)})")
        else:
            warnings.append(f"{', '.join(on_node)} is served on each worker's own machine (a loopback address), "
                            "which usually wants a GPU, but the cluster has none: workers are placed by CPU only.")
    if not reasons:
        reasons.append("1 CPU: the models are served elsewhere, so a worker mostly waits on the network")
    return Placement(num_cpus=cpus, num_gpus=gpus, why="; ".join(reasons), warnings=tuple(warnings))


def _plural(n: float, word: str) -> str:
    return f"{n:g} {word}{'' if n == 1 else 's'}"


def plan_warnings(dialect: str, cluster: Cluster, n: int, where: Placement) -> list[str]:
    """What may go wrong with ``n`` tasks placed as ``where`` on ``cluster`` with a store of ``dialect``, said
    before they start (plain sentences, no markup), because each of these would otherwise show only as a run that
    fails or crawls:

    - a SQLite store while the nodes are on more than one machine: SQLite over a network file system is not safe
      (its file locks are not reliable there), and a node that cannot see the file cannot play at all. Machines
      are counted by the nodes' distinct addresses: several nodes on one machine (``ray start`` twice there) share
      its file safely;
    - fewer tasks at once than asked, when the cluster's CPUs or GPUs cannot hold every task's request: Ray queues
      the others until some end, so N workers play like fewer and the run takes longer than planned;
    - the placement's own warnings (a model served on each node, in a cluster without a GPU).
    """
    warnings = []
    machines = set(cluster.node_ips)
    if dialect == "sqlite" and len(machines) > 1:
        warnings.append(f"the store is a SQLite file and the cluster's nodes are on {len(machines)} machines: SQLite "
                        "over a network file system is not safe, and a node without the file cannot play; use "
                        "PostgreSQL across machines (see docs/scale-out.md).")
    by_cpus = int(cluster.cpus // where.num_cpus) if where.num_cpus else n
    by_gpus = int(cluster.gpus // where.num_gpus) if where.num_gpus else n
    at_once = min(n, by_cpus, by_gpus)
    if at_once < n:
        warnings.append(f"the cluster has {_plural(cluster.cpus, 'CPU')} and {_plural(cluster.gpus, 'GPU')}: "
                        f"{at_once} of the {n} tasks play at once, the others start as those end.")
    return warnings + list(where.warnings)


#: Variables a run never reads though their names start with LEXICOORD_: secrets of the servers (``serve``, ``mcp``).
_NOT_FOR_RUNS = re.compile(r"^LEXICOORD_.*_KEY$")


def worker_env(environ: Mapping[str, str], models: Iterable[str], file_variables: Iterable[str],
               store_url: str) -> dict[str, str]:
    """The environment each task's process is given (Ray's ``runtime_env`` ``env_vars``): every ``LEXICOORD_*``
    variable set here (the cache path policy, claim times, data and prompt folders; not the servers' keys), the
    store's URL as ``LEXICOORD_DB``, the key and base-URL variables of the file's providers, and the variables the
    file itself names (``${VAR}``), when set. Callers print the names only: some values are secrets."""
    env = {k: v for k, v in environ.items() if k.startswith("LEXICOORD_") and not _NOT_FOR_RUNS.match(k)}
    providers = {spec.partition("/")[0] for spec in models}
    for preset in PRESETS:
        if preset.name in providers:
            for name in (preset.key_env, preset.base_url_env):
                if environ.get(name):
                    env[name] = environ[name]
    for name in file_variables:
        if name in environ:
            env[name] = environ[name]
    env["LEXICOORD_DB"] = store_url
    return env


class WorkerFailed(Exception):
    """A task's ``lexicoord run`` ended with a non-zero status; the message has its last lines."""


def _tee(stream: IO[str], tail: collections.deque[str]) -> None:
    """The child's output to this worker's standard error (Ray's log of the task, streamed to the driver's),
    keeping its last lines for the driver's verdict on a failed task."""
    for line in stream:
        sys.stderr.write(line)
        sys.stderr.flush()
        tail.append(line.rstrip("\n"))


def _say_started(argv: Sequence[str]) -> None:
    """The task's first line: its name as Ray's runtime context gives it (``lexicoord-run RUN i/N``, the name the
    dashboard lists), the host, and the command, so a log read on its own, or the driver's, says which task on
    which machine plays what."""
    import ray

    name = ray.get_runtime_context().get_task_name() or "lexicoord-run (unnamed)"
    print(f"{name} on {socket.gethostname()}: {shlex.join(['lexicoord', *argv])}", file=sys.stderr, flush=True)


def _stop(child: subprocess.Popen[str], sig: int, grace: float) -> None:
    """Send ``sig``; kill the child if it has not ended within ``grace`` seconds (a run that hangs saving)."""
    try:
        child.send_signal(sig)
        child.wait(grace)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def _interruptible() -> None:
    """Let Ray's cancel reach this task. A non-force cancel interrupts the worker with SIGINT; a cluster started
    in the background of a script (``ray start ... &`` without job control) has SIGINT ignored in every process,
    an ignored signal stays ignored across ``exec``, and the cancel would then never land."""
    try:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread: Ray's own handler is in charge there
        pass


def play(argv: Sequence[str], cwd: str | None, grace: float = GRACE) -> None:
    """The body of a task, run by a Ray worker: ``lexicoord <argv>`` as a child, until it ends.

    Cancelled (``KeyboardInterrupt``) or stopped (SIGTERM, ``SystemExit``), the task stops its child as a terminal
    would, SIGINT or SIGTERM, and waits up to ``grace`` seconds while it hands its claims back, then goes on
    being cancelled. Waits in short sleeps: Ray's interrupt lands only between two Python statements."""
    _interruptible()
    _say_started(argv)
    command = [sys.executable, "-m", CHILD_MODULE, str(os.getpid()), *argv]
    where = cwd if cwd and os.path.isdir(cwd) else None
    child = subprocess.Popen(command, cwd=where, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             bufsize=1, start_new_session=True)  # a terminal's Ctrl-C reaches it only through us
    tail: collections.deque[str] = collections.deque(maxlen=12)
    assert child.stdout is not None
    reader = threading.Thread(target=_tee, args=(child.stdout, tail), daemon=True)
    reader.start()
    try:
        while child.poll() is None:
            time.sleep(0.2)
    except KeyboardInterrupt:
        _stop(child, signal.SIGINT, grace)
        raise
    except BaseException:
        _stop(child, signal.SIGTERM, grace)
        raise
    reader.join(5)
    if child.returncode != 0:
        last = "; ".join(line for line in list(tail)[-4:] if line.strip())
        raise WorkerFailed(f"lexicoord run exited {child.returncode} on {socket.gethostname()}: {last}")


@dataclass
class Task:
    """One task of a launch: its name in Ray's dashboard and the reference to its result."""

    name: str
    ref: Any


def start(ray: Any, argv: Sequence[str], workers: int, where: Placement, env: Mapping[str, str], run: str,
          cwd: str | None) -> list[Task]:
    """``workers`` tasks, each a worker of the run, named ``lexicoord-run RUN i/N``."""
    remote = ray.remote(play)
    tasks = []
    for i in range(workers):
        name = f"lexicoord-run {run} {i + 1}/{workers}"
        ref = remote.options(name=name, num_cpus=where.num_cpus, num_gpus=where.num_gpus, max_retries=MAX_RETRIES,
                             retry_exceptions=False, scheduling_strategy="SPREAD",
                             runtime_env={"env_vars": dict(env)}).remote(list(argv), cwd)
        tasks.append(Task(name, ref))
    return tasks


def running(ray: Any, tasks: Sequence[Task]) -> list[Task]:
    """The tasks that have not ended yet (looked at now, without waiting)."""
    refs = [t.ref for t in tasks]
    _, pending = ray.wait(refs, num_returns=len(refs), timeout=0)
    left = {id(r) for r in pending}
    return [t for t in tasks if id(t.ref) in left]


def outcome(ray: Any, task: Task) -> str | None:
    """``None`` for a task that ended well; else one sentence: why it failed."""
    try:
        ray.get(task.ref)
    except Exception as exc:  # Ray's own errors (a task cancelled, a worker or node lost) and the command's
        cause = getattr(exc, "cause", None)
        if isinstance(cause, WorkerFailed):
            return str(cause)
        first = str(exc).strip().splitlines()
        return f"{type(exc).__name__}: {first[0] if first else ''}".rstrip(": ")
    return None


def cancel(ray: Any, tasks: Sequence[Task], grace: float = GRACE) -> list[Task]:
    """Stop the tasks: first as a Ctrl-C (each hands its claims back), then, after ``grace`` seconds, by killing
    the workers still at it (their children get SIGTERM and hand theirs back too). A second Ctrl-C or SIGTERM
    while waiting kills at once. The tasks that had to be killed."""
    left = running(ray, tasks)
    for task in left:
        ray.cancel(task.ref, force=False)
    deadline = time.monotonic() + grace
    try:
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = running(ray, left)
    except BaseException:
        left = running(ray, left)
    for task in left:
        ray.cancel(task.ref, force=True)
    return left
