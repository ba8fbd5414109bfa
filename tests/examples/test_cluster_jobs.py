"""The shipped SLURM scripts and Kubernetes Job, run as a cluster would run them (not on a cluster): the array
script's own lines with the variables SLURM sets, two tasks at once on one run, one stopped by SIGTERM as a time
limit stops it, then the report script, which waits for the whole run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from lexicoord.runs.store import Store

ROOT = Path(__file__).resolve().parents[2]
SLURM = ROOT / "examples" / "slurm"

EXPERIMENT = """protocol = "coordination"
name = "array-run"
concurrency = 2
cache = false
[models]
lead = "scripted/first"
p1 = "scripted/first"
p2 = "scripted/first"
[data]
items = 24
[settings]
clarification_bound = 0
[options]
latency = 0.5
"""

#: ``srun`` as a job step runs its command: here, the command itself (its own options dropped).
SRUN = '#!/bin/sh\nwhile [ "${1#--}" != "$1" ]; do shift; done\nexec "$@"\n'


def saved(db: str) -> int:
    """Episodes saved so far, read with sqlite3 itself (opening a Store checks migrations: too slow to poll)."""
    import sqlite3

    try:
        with sqlite3.connect(db, timeout=1) as con:
            return int(con.execute("SELECT COUNT(*) FROM episodes WHERE status = 'done'").fetchone()[0])
    except sqlite3.Error:
        return 0


def task(env: dict[str, str], index: int, cwd: Path) -> subprocess.Popen[str]:
    own = {**env, "SLURM_ARRAY_TASK_ID": str(index), "SLURM_ARRAY_JOB_ID": "4242", "SLURM_JOB_ID": f"{4242 + index}",
           "SLURM_CPUS_PER_TASK": "2"}
    return subprocess.Popen(["bash", str(SLURM / "run.sbatch")], env=own, cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_an_array_of_tasks_plays_one_run_and_the_report_job_waits_for_it_whole(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(SRUN)
    (bin_dir / "srun").chmod(0o755)
    experiment = tmp_path / "array.toml"
    experiment.write_text(EXPERIMENT)
    db = str(tmp_path / "runs.db")
    env = {**os.environ, "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                                  os.environ.get("PATH", "")]),
           "LEXICOORD_DB": db, "EXPERIMENT": str(experiment), "TMPDIR": str(tmp_path), "RUN": "array-run",
           "LEXICOORD_CLAIM_SECONDS": "300"}  # only a handed-back claim lets the other task finish in time
    env.pop("LEXICOORD_HOME", None)
    first, second = task(env, 0, tmp_path), task(env, 1, tmp_path)
    deadline = time.time() + 90
    while time.time() < deadline and saved(db) < 2:
        time.sleep(0.1)
    first.send_signal(signal.SIGTERM)  # the time limit, as SLURM delivers it to the job step
    _, err = first.communicate(timeout=120)
    assert first.returncode != 0 and "stopped by SIGTERM" in err, err
    _, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    run = Store(db).run("array-run")
    assert run.status == "finished" and run.done == 24 and run.failed == 0
    report = subprocess.run(["bash", str(SLURM / "report.sbatch")], env={**env, "SLURM_JOB_ID": "4250"}, cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "reports" / "array-run" / "report.html").is_file()


def test_the_report_job_refuses_a_run_that_is_not_whole(tmp_path: Path) -> None:
    experiment = tmp_path / "array.toml"
    experiment.write_text(EXPERIMENT.replace("items = 24", "items = 40"))
    db = str(tmp_path / "runs.db")
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "LEXICOORD_DB": db, "RUN": "array-run"}
    played = subprocess.Popen([sys.executable, "-m", "lexicoord.cli.app", "run", str(experiment)], env=env,
                              cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 90
    while time.time() < deadline and saved(db) < 1:
        time.sleep(0.1)
    played.send_signal(signal.SIGTERM)
    played.communicate(timeout=120)
    assert played.returncode == 143
    report = subprocess.run(["bash", str(SLURM / "report.sbatch")], env=env, cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert report.returncode == 1 and "array-run: interrupted" in report.stderr
    assert not (tmp_path / "reports").exists()


def test_the_kubernetes_job_runs_the_documented_command_with_room_to_hand_claims_back() -> None:
    job = yaml.safe_load((ROOT / "examples" / "kubernetes" / "job.yaml").read_text())
    spec = job["spec"]["template"]["spec"]
    [container] = spec["containers"]
    assert job["kind"] == "Job" and job["spec"]["parallelism"] == job["spec"]["completions"] >= 2
    assert "lexicoord run /experiments/" in container["args"][0]
    assert {e["name"] for e in container["env"]} >= {"LEXICOORD_DB", "LEXICOORD_HOME"}
    assert spec["terminationGracePeriodSeconds"] >= 30, "time to save what ended and give the claims back"
