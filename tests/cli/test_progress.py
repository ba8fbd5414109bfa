"""The terminal's view of a run: the progress bar's columns, then the run's summary."""

from __future__ import annotations

import io

from rich.console import Console

from lexicoord.cli.progress import ProgressBar
from lexicoord.models.pool import ModelPool
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from tests.cli.test_cli import lexicoord
from tests.runs.toy import Toy, lineup


async def test_the_bar_counts_done_and_failed_episodes_then_the_summary_is_printed(tmp_path) -> None:
    buf = io.StringIO()
    console = Console(file=buf, width=200, force_terminal=False)
    runner = Runner(Store(str(tmp_path / "p.db")), Toy(), models=ModelPool(cache=False))
    items = [{"id": "a"}, {"id": "b", "fail": True}, {"id": "c"}]
    summary = await runner.run("prog", grid(items, [lineup()]), observer=ProgressBar(console))
    shown = buf.getvalue()
    bar = next(line for line in shown.splitlines() if line.startswith("prog"))
    for column in ("3/3", "failed 1", "/min", "eta", "tok"):
        assert column in bar, (column, bar)
    text = "\n".join(summary.lines())
    assert "2 done, 1 failed, 0 already done (of 3)" in text and "model calls: 4" in text
    assert "b (rep 0): RuntimeError: item b is set to fail" in text
    assert shown.index(bar) < shown.index("2 done, 1 failed"), "the summary is printed at the end, below the bar"


def test_a_campaign_command_shows_the_bar_and_the_summary(tmp_path) -> None:
    db = str(tmp_path / "c.db")
    result = lexicoord("coordination", "run", "-a", "lead=sim:intended", "-a", "p=sim:first", "--items", "3", "--run",
                       "barred", "--db", db)
    bar = next(line for line in result.stderr.splitlines() if line.startswith("barred"))
    for column in ("3/3", "failed 0", "/min", "eta", "tok"):
        assert column in bar, (column, bar)
    assert "run barred: 3 done, 0 failed, 0 already done (of 3)" in result.stderr


def test_ctrl_c_is_told_once(tmp_path) -> None:
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "lexicoord.cli.app", "coordination", "run", "--model", "scripted/first", "-o",
         "latency=0.5", "--items", "200", "--bound", "0", "--db", str(tmp_path / "r.db"), "--run", "r", "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        # Ctrl-C as a terminal delivers it: a session started in the background passes SIGINT down ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(6)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    said = " ".join((out + err).split())
    assert said.count("interrupted") == 1, said
    assert "re-running the same command resumes" in said


def test_sigterm_stops_a_command_as_a_cluster_stops_a_job(tmp_path) -> None:
    """SLURM's time limit and Kubernetes send SIGTERM: the command says what was kept, marks the run interrupted
    and exits 143, as a process ended by SIGTERM would."""
    import signal
    import subprocess
    import sys
    import time

    db = str(tmp_path / "r.db")
    proc = subprocess.Popen(
        [sys.executable, "-m", "lexicoord.cli.app", "coordination", "run", "--model", "scripted/first", "-o",
         "latency=0.5", "--items", "200", "--bound", "0", "--db", db, "--run", "r", "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(6)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    said = " ".join((out + err).split())
    assert said.count("stopped by SIGTERM") == 1 and "re-running the same command resumes" in said, said
    assert "Traceback" not in err
    listed = lexicoord("runs", "list", "--db", db).stdout
    assert "interrupted" in next(line for line in listed.splitlines() if " r " in f" {line} " or "│ r " in line)


def test_a_run_written_to_a_log_says_where_it_stands_while_no_episode_ends(tmp_path) -> None:
    import os
    import re
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", "coordination", "run", "--model", "scripted/first", "-o",
         "latency=1.0", "--items", "2", "--bound", "0", "--db", str(tmp_path / "r.db"), "--run", "logged", "--no-cache"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "LEXICOORD_PROGRESS_SECONDS": "0.5"})
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if re.match(r"logged: \d+/2 done, \d+ failed", line)]
    # each game takes four one-second calls: the log hears from the run before any episode has ended
    assert any(line.startswith("logged: 0/2 done") for line in lines), result.stderr
    assert len(lines) >= 4, result.stderr


async def test_a_run_on_rate_budgets_shows_the_whole_runs_calls_and_tokens_a_minute(tmp_path) -> None:
    from lexicoord.models.budget import RateLimit

    buf = io.StringIO()
    console = Console(file=buf, width=250, force_terminal=False)
    store = Store(str(tmp_path / "p.db"))
    runner = Runner(store, Toy(), models=ModelPool(cache=False), concurrency=4,
                    rate_limits={"scripted/echo": RateLimit(requests_per_minute=6000, tokens_per_minute=10**6)})
    items = [{"id": f"i{k}"} for k in range(12)]
    summary = await runner.run("budgeted", grid(items, [lineup("scripted/echo", 2)]), observer=ProgressBar(console))
    assert summary.run_calls_per_minute is not None and summary.run_calls_per_minute > 0
    bars = [line for line in buf.getvalue().splitlines() if line.startswith("budgeted")]
    shown = next((line for line in bars if "calls/min" in line), None)
    assert shown is not None, bars
    calls, tokens = shown.split("run ", 1)[1].split(" calls/min, ")
    assert int(calls.replace(",", "")) > 0 and int(tokens.split(" tok/min")[0].replace(",", "")) > 0, shown
