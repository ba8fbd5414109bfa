"""``lexicoord run FILE --ray ADDRESS --workers N`` on a real Ray cluster of two nodes (two ``ray start`` on this
machine: a head and a worker node), with real signals: a worker node's raylet killed midway, the driver stopped
with Ctrl-C. Also what happens without Ray, with a bad file, and the placement rule.

The cluster is started once for the module and stopped by killing the two process groups it runs in (each
``ray start`` in a session of its own), never with ``ray stop``, which would stop every Ray process of the user
on the machine. The test that kills the worker node comes last: the cluster has one node after it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import func, select

from lexicoord.runs.clock import db_now
from lexicoord.runs.ray_launcher import Cluster, Placement, placement, plan_warnings, worker_env
from lexicoord.runs.schema import ClaimRow
from lexicoord.runs.store import Store
from tests.conftest import free_port
from tests.postgres import PostgresServer

ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).parent / "ray"
N = 48

EXPERIMENT = """protocol = "coordination"
name = "{name}"
concurrency = 2
cache = false
[models]
lead = "scripted/first"
p1 = "scripted/first"
p2 = "scripted/first"
[data]
items = {items}
[settings]
clarification_bound = 0
[options]
latency = {latency}
"""


#: Every Ray process of the tests (the nodes, the command) uses this token, whatever ~/.ray holds; no usage stats.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}


@dataclass
class RayCluster:
    address: str
    groups: list[int]  # the process groups of the head and of the worker node

    def processes(self, group: int) -> dict[int, str]:
        """pid -> command line of every process in ``group``."""
        found = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if os.getpgid(int(entry.name)) == group:
                        found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                except (OSError, ProcessLookupError):
                    continue
        return found

    def raylet(self, group: int) -> int:
        return next(pid for pid, cmd in self.processes(group).items() if "raylet/raylet " in cmd)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    if importlib.util.find_spec("ray") is None:
        pytest.fail("Ray is not installed; install the test extra: pip install -e '.[test]'")
    temp = tempfile.mkdtemp(prefix="lxray", dir="/tmp")  # short: Ray's socket paths live under it
    env = {**os.environ, **RAY_ENV}
    port = free_port()
    groups: list[int] = []

    def ray_start(*args: str) -> None:
        proc = subprocess.Popen([str(RAY), "start", "--node-ip-address=127.0.0.1", "--num-cpus=2",
                                 "--disable-usage-stats", *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                # As a cluster started in the background of a script is (`ray start ... &`):
                                # SIGINT ignored in every process of it, so the cancel path must not rely on it.
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        groups.append(proc.pid)  # a session of its own: every daemon it starts stays in this process group
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out[-3000:]

    try:
        ray_start("--head", f"--port={port}", "--include-dashboard=false", f"--dashboard-port={free_port()}",
                  f"--temp-dir={temp}")
        ray_start(f"--address=127.0.0.1:{port}")
        yield RayCluster(f"127.0.0.1:{port}", groups)
    finally:
        for group in groups:  # always, whatever failed: the cluster's own processes, by their group
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in started_here():  # and any worker that left the group, by the token only this cluster has
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(temp, ignore_errors=True)


def started_here() -> list[int]:
    """Processes whose environment holds this module's Ray token: the cluster's, and what they started."""
    token = f"RAY_AUTH_TOKEN={RAY_ENV['RAY_AUTH_TOKEN']}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if token in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def children() -> dict[int, int]:
    """pid -> parent pid of every task's ``lexicoord run`` (``lexicoord.cli.ray_child``) on this machine."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
                if b"lexicoord.cli.ray_child" in cmd:
                    found[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return found


def ancestors(pid: int) -> set[int]:
    out = set()
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
        out.add(pid)
    return out


def saved(db: Path, run: str) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as con:
            return int(con.execute("SELECT COUNT(*) FROM episodes WHERE run_id = ? AND status = 'done'",
                                   (run,)).fetchone()[0])
    except sqlite3.Error:
        return 0


def live_claims(db: Path, run: str) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT COUNT(*) FROM episode_claims WHERE run_id = ? AND expires_at > "
                               "(julianday('now') - 2440587.5) * 86400.0", (run,)).fetchone()[0])


def live_claims_at(url: str, run: str) -> int:
    """Claims on ``run`` not yet expired by the database's clock, in any store (SQLite or PostgreSQL)."""
    store = Store(url)
    with store.engine.connect() as con:
        return int(con.execute(select(func.count()).select_from(ClaimRow).where(
            ClaimRow.run_id == run, ClaimRow.expires_at > db_now(store.engine.dialect.name))).scalar_one())


def driver(tmp_path: Path, name: str, address: str, claim_seconds: int, items: int = N,
           latency: float = 0.25, db_url: str | None = None, workers: int = 2) -> tuple[subprocess.Popen[str], Path]:
    """The command on the cluster as ``workers`` tasks; the store is ``db_url`` when given, else a SQLite file
    (returned)."""
    experiment = tmp_path / f"{name}.toml"
    experiment.write_text(EXPERIMENT.format(name=name, items=items, latency=latency))
    db = tmp_path / "runs.db"
    env = {**os.environ, **RAY_ENV, "LEXICOORD_CLAIM_SECONDS": str(claim_seconds),
           "LEXICOORD_DB": db_url or str(db)}
    proc = subprocess.Popen([sys.executable, "-m", "lexicoord.cli.app", "run", str(experiment), "--ray", address,
                             "--workers", str(workers)], cwd=tmp_path, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return proc, db


def started_tasks(err: str, run: str) -> set[str]:
    """The task names the tasks printed from inside Ray (``play``'s first line, as Ray's runtime context names the
    task), found in the driver's output where Ray streamed them: ``lexicoord-run RUN i/N on HOST: lexicoord run
    FILE``. Ray's own prefix, ``(lexicoord-run RUN i/N pid=...)``, does not match: the name must be followed by the
    host and the task's command, which only the task knows."""
    said = re.compile(rf"(lexicoord-run {re.escape(run)} \d+/\d+) on \S+: lexicoord run \S*{re.escape(run)}\.toml")
    return {m.group(1) for m in said.finditer(err)}


def plan_warned(err: str) -> list[str]:
    """The driver's own warnings about its plan (``_say_plan``), not lines Ray streamed from the tasks."""
    return [line for line in err.splitlines() if line.startswith("warning:")]


def until(condition, proc: subprocess.Popen[str], what: str, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the driver ended (exit {proc.returncode}) before {what}: {err[-3000:]}")
        time.sleep(0.1)
    proc.kill()
    out, err = proc.communicate()
    pytest.fail(f"no {what} within {timeout:g} s: {err[-3000:]}")


@pytest.mark.parametrize("sig, code, said", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "stopped by SIGTERM")],
                         ids=["ctrl-c", "sigterm"])
def test_ctrl_c_on_the_driver_cancels_the_tasks_and_every_claim_is_handed_back(
        ray_cluster: RayCluster, tmp_path: Path, sig: signal.Signals, code: int, said: str) -> None:
    """Claims last 300 s: none is live after the driver exits only because every task's process gave its own back.
    SIGTERM: the driver's own job stopped by a cluster's scheduler."""
    # A call a second: the run (200 episodes, four at once) lasts about 50 s, so however slowly a loaded machine
    # delivers the cancel, it lands before the run could end on its own.
    proc, db = driver(tmp_path, "ray-stopped", ray_cluster.address, claim_seconds=300, items=200, latency=1.0)
    until(lambda: len(children()) == 2 and saved(db, "ray-stopped") >= 6, proc, "both tasks playing")
    players = set(children())
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == code, err[-3000:]
    assert f"{said}; cancelling 2 tasks" in err and "re-running the same command resumes" in err, err
    assert "killed lexicoord-run" not in err, "both tasks ended within the grace period, not killed"
    assert live_claims(db, "ray-stopped") == 0
    run = Store(str(db)).run("ray-stopped")
    assert run.status == "interrupted" and 6 <= run.done < 200
    assert not players & set(children()), "no task's process is left playing"


def test_a_postgresql_store_under_ray_every_episode_saved_once_and_the_tasks_named(
        ray_cluster: RayCluster, tmp_path: Path, postgres: PostgresServer) -> None:
    """The store every machine of a real cluster would share: three tasks on a fresh PostgreSQL database. The same
    run says, from inside each task, the name Ray gave it, and the driver shows each. Three, not two: Ray's driver
    folds lines that differ only in numbers, and of three such lines one would be lost, where of two the second
    is only late."""
    url, items = postgres.database(), 24
    proc, sqlite_file = driver(tmp_path, "ray-pg", ray_cluster.address, claim_seconds=30, items=items, latency=0.1,
                               db_url=url, workers=3)
    out, err = proc.communicate(timeout=150)
    assert proc.returncode == 0, err[-3000:]
    assert f"run ray-pg: finished, {items} done, 0 failed (of {items})" in out.splitlines(), out + err
    assert "ray: store postgresql+psycopg://" in err and not sqlite_file.exists(), err[-3000:]
    assert plan_warned(err) == [], "PostgreSQL, three tasks on two nodes of four CPUs together: nothing to warn about"
    assert started_tasks(err, "ray-pg") == {f"lexicoord-run ray-pg {i}/3" for i in (1, 2, 3)}, err[-3000:]

    store = Store(url)
    episodes = store.episodes("ray-pg")
    assert len(episodes) == items and len({e.key for e in episodes}) == items, "every episode of the grid, each once"
    assert all(e.status == "done" and e.attempt == 1 for e in episodes)
    assert store.run("ray-pg").status == "finished"
    assert live_claims_at(url, "ray-pg") == 0


def test_a_worker_node_killed_midway_every_episode_is_saved_once(ray_cluster: RayCluster, tmp_path: Path) -> None:
    proc, db = driver(tmp_path, "ray-killed", ray_cluster.address, claim_seconds=3)
    head, node = ray_cluster.groups
    raylet = ray_cluster.raylet(node)
    until(lambda: saved(db, "ray-killed") >= 8 and sum(raylet in ancestors(pid) for pid in children()) == 1
          and len(children()) == 2, proc, "a task playing on each node")
    [victim] = [pid for pid in children() if raylet in ancestors(pid)]
    os.kill(raylet, signal.SIGKILL)  # the worker node lost: its raylet first, then its workers, then their child
    out, err = proc.communicate(timeout=150)
    assert proc.returncode == 0, err[-3000:]
    assert f"run ray-killed: finished, {N} done, 0 failed (of {N})" in out.splitlines(), out + err
    assert victim not in children(), "the lost node's task process ended with its worker"
    assert plan_warned(err) == [], "a SQLite file, but both nodes on one machine (127.0.0.1): no warning"
    assert started_tasks(err, "ray-killed") == {"lexicoord-run ray-killed 1/2", "lexicoord-run ray-killed 2/2"}, err

    store = Store(str(db))
    episodes = store.episodes("ray-killed")
    assert len(episodes) == N and len({e.key for e in episodes}) == N, "every episode of the grid, each once"
    assert all(e.status == "done" and e.attempt == 1 for e in episodes)
    events = [len(store.events(e.id)) for e in episodes]
    assert min(events) == max(events) > 0, "every saved episode has all its events"
    assert store.run("ray-killed").status == "finished"
    assert live_claims(db, "ray-killed") == 0


def test_without_ray_the_command_says_what_to_install_and_exits_2(tmp_path: Path) -> None:
    experiment = tmp_path / "x.toml"
    experiment.write_text(EXPERIMENT.format(name="x", items=4, latency=0.25))
    db = tmp_path / "runs.db"
    blocked = ("import sys; sys.modules['ray'] = None\n"  # ``import ray`` now fails as when it is not installed
               "from lexicoord.cli.app import main\n"
               f"sys.argv = ['lexicoord', 'run', {str(experiment)!r}, '--ray', 'local', '--workers', '2', "
               f"'--db', {str(db)!r}]\nmain()\n")
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "pip install 'lexicoord[ray]'" in done.stderr and "Traceback" not in done.stderr
    assert not db.exists(), "nothing opened"


PROBE = """import json, sys
from lexicoord.cli.app import main
sys.argv = ['lexicoord', *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    print(json.dumps({"code": exc.code, "ray": "ray" in sys.modules}))
"""


def test_a_bad_file_exits_2_before_ray_is_imported(tmp_path: Path) -> None:
    experiment = tmp_path / "bad.toml"
    experiment.write_text(EXPERIMENT.format(name="bad", items=4, latency=0.25).replace("clarification_bound = 0",
                                                                            "clarification_bound = -3"))
    done = subprocess.run([sys.executable, "-c", PROBE, "run", str(experiment), "--ray", "127.0.0.1:1",
                           "--workers", "2"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 2, "ray": False}, done.stderr
    assert "bad.toml:" in done.stderr and "clarification_bound" in done.stderr


@pytest.mark.parametrize("args, says", [
    (["--workers", "2"], "it needs --ray ADDRESS"),
    (["--ray", "somewhere"], "is not a Ray address"),
    (["--ray", "auto", "--workers", "0"], "--workers"),
], ids=["workers-without-ray", "bad-address", "no-workers"])
def test_usage_errors_exit_2_without_ray(tmp_path: Path, args: list[str], says: str) -> None:
    experiment = tmp_path / "x.toml"
    experiment.write_text(EXPERIMENT.format(name="x", items=4, latency=0.25))
    done = subprocess.run([sys.executable, "-c", PROBE, "run", str(experiment), *args], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"code": 2, "ray": False}, done.stderr
    assert says in done.stderr, done.stderr


def test_help_does_not_import_ray() -> None:
    for args in ([], ["run"]):
        done = subprocess.run([sys.executable, "-c", PROBE, *args, "--help"], capture_output=True, text=True,
                              timeout=120)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert result == {"code": 0, "ray": False}, done.stderr
    assert "--ray" in subprocess.run([sys.executable, "-m", "lexicoord.cli.app", "run", "--help"],
                                     capture_output=True, text=True, timeout=120, env={**os.environ,
                                                                                       "COLUMNS": "200"}).stdout


CLUSTER = Cluster(node_ips=("10.0.0.1", "10.0.0.2"), largest_cpus=8, gpus=2)


@pytest.mark.parametrize("models, options, environ, cpus, gpus", [
    (["openai/gpt-4o-mini"], {}, {}, 1, 0),
    (["scripted/first"], {}, {}, 1, 0),
    (["local/smollm2-135m"], {}, {}, 6, 0),
    (["vllm/Qwen/Qwen2.5-7B-Instruct"], {}, {}, 1, 1),
    (["vllm/Qwen/Qwen2.5-7B-Instruct"], {}, {"VLLM_BASE_URL": "http://gpu-box.lab:8000/v1"}, 1, 0),
    (["openai-compatible/m"], {"base_url": "http://127.0.0.1:9000/v1"}, {}, 1, 1),
    (["ollama/llama3", "local/smollm2-135m"], {}, {}, 6, 1),
], ids=["api", "scripted", "embedded", "vllm-on-node", "vllm-elsewhere", "base-url-loopback", "both"])
def test_the_placement_rule(models: list[str], options: dict[str, str], environ: dict[str, str], cpus: float,
                            gpus: float) -> None:
    where = placement(models, options, 6, CLUSTER, environ)
    assert (where.num_cpus, where.num_gpus) == (cpus, gpus), where.why
    assert placement(["local/smollm2-135m"], {}, 64, CLUSTER, {}).num_cpus == 8, "never more than a node has"


ONE_MACHINE = Cluster(node_ips=("127.0.0.1", "127.0.0.1"), largest_cpus=2, gpus=0, cpus=4)  # `ray start` twice
TWO_MACHINES = Cluster(node_ips=("10.0.0.1", "10.0.0.2"), largest_cpus=2, gpus=0, cpus=4)
ONE_CPU = Placement(num_cpus=1, num_gpus=0, why="1 CPU")
ONE_GPU = Placement(num_cpus=1, num_gpus=1, why="1 GPU")
SERVED_WITHOUT_GPU = Placement(num_cpus=1, num_gpus=0, why="1 CPU", warnings=("ollama/llama3 is served on each "
                                                                              "worker's own machine",))


@pytest.mark.parametrize("dialect, cluster, n, where, said", [
    ("sqlite", ONE_MACHINE, 2, ONE_CPU, []),
    ("sqlite", TWO_MACHINES, 2, ONE_CPU, [("SQLite", "on 2 machines", "PostgreSQL")]),
    ("postgresql", TWO_MACHINES, 2, ONE_CPU, []),
    ("postgresql", TWO_MACHINES, 4, ONE_CPU, []),  # exactly as many CPUs as tasks
    ("postgresql", TWO_MACHINES, 6, ONE_CPU, [("has 4 CPUs and 0 GPUs", "4 of the 6 tasks play at once")]),
    ("postgresql", TWO_MACHINES, 2, Placement(num_cpus=2, num_gpus=0, why="2 CPUs"), []),
    ("postgresql", TWO_MACHINES, 3, Placement(num_cpus=2, num_gpus=0, why="2 CPUs"), ["2 of the 3 tasks play at once"]),
    ("postgresql", Cluster(("10.0.0.1", "10.0.0.2"), 8, gpus=1, cpus=16), 2, ONE_GPU,
     [("has 16 CPUs and 1 GPU:", "1 of the 2 tasks play at once")]),
    ("postgresql", Cluster(("10.0.0.1", "10.0.0.2"), 8, gpus=2, cpus=16), 2, ONE_GPU, []),
    ("sqlite", Cluster(("10.0.0.1", "10.0.0.2", "10.0.0.3"), 1, gpus=0, cpus=3), 4, SERVED_WITHOUT_GPU,
     [("SQLite", "on 3 machines"), "3 of the 4 tasks play at once", "ollama/llama3 is served"]),
], ids=["sqlite-one-machine", "sqlite-two-machines", "postgresql-two-machines", "cpus-enough", "too-few-cpus",
        "two-cpus-a-task", "two-cpus-a-task-too-few", "too-few-gpus", "gpus-enough", "all-three-in-order"])
def test_the_plans_warnings(dialect: str, cluster: Cluster, n: int, where: Placement,
                            said: list[str | tuple[str, ...]]) -> None:
    """Each warning in order, each with the words it must say; none more."""
    warnings = plan_warnings(dialect, cluster, n, where)
    assert len(warnings) == len(said), warnings
    for warning, words in zip(warnings, said):
        for word in (words,) if isinstance(words, str) else words:
            assert word in warning, (word, warning)


def test_a_server_on_the_node_in_a_cluster_without_gpus_is_placed_by_cpu_and_said() -> None:
    where = placement(["ollama/llama3"], {}, 4, Cluster(("a",), 4, 0), {})
    assert where.num_gpus == 0 and "has none" in where.warnings[0]


def test_the_workers_get_the_runs_variables_and_not_the_servers_secrets() -> None:
    environ = {"LEXICOORD_CACHE_PATH": "/local/cache.db", "LEXICOORD_CLAIM_SECONDS": "30",
               "LEXICOORD_ADMIN_KEY": "s3cret", "OPENAI_API_KEY": "sk-1", "GROQ_API_KEY": "gq", "DATA_ROOT": "/d",
               "HOME": "/home/x"}
    env = worker_env(environ, ["openai/gpt-4o-mini"], ["DATA_ROOT"], "postgresql+psycopg://u:p@db/x")
    assert env == {"LEXICOORD_CACHE_PATH": "/local/cache.db", "LEXICOORD_CLAIM_SECONDS": "30",
                   "OPENAI_API_KEY": "sk-1", "DATA_ROOT": "/d", "LEXICOORD_DB": "postgresql+psycopg://u:p@db/x"}


def test_the_store_reaches_the_workers_by_an_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lexicoord.cli.ray_cmd import shared_url
    from lexicoord.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    assert shared_url(Store("sqlite:///runs.db")) == f"sqlite:///{tmp_path / 'runs.db'}"
    with pytest.raises(ConfigError, match="in-memory"):
        shared_url(Store("sqlite://"))
