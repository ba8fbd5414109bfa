"""``lexicoord study serve`` prints its addresses whole, one line each, however narrow the terminal and into a
log file too (rich breaks a line at 80 columns, or at ``COLUMNS``, when it writes to a pipe): an address
broken across lines is copied into Prolific broken."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import tomli_w

from tests.conftest import free_port
from tests.studies.conftest import values

NAME = "a-pilot-of-the-word-game-whose-name-is-longer-than-any-narrow-terminal-line"


def _lines_until_dashboard(read: Callable[[], bytes], proc: subprocess.Popen[bytes]) -> list[str]:
    """What the server printed, up to the end of its dashboard line (the last of the three it prints)."""
    out = b""
    deadline = time.monotonic() + 60
    while b"\n" not in out.partition(b"dashboard:")[2]:
        if time.monotonic() > deadline or proc.poll() is not None:
            pytest.fail(f"study serve printed no dashboard line: {out.decode(errors='replace')[-2000:]}")
        out += read()
    return out.decode().replace("\r\n", "\n").splitlines()


@pytest.mark.parametrize("where", ["pipe", "terminal"])
def test_the_printed_addresses_are_never_broken_across_lines(tmp_path: Path, where: str) -> None:
    path = tmp_path / "study.toml"
    path.write_text(tomli_w.dumps(values(name=NAME)), encoding="utf-8")
    port = free_port()
    exe = Path(sys.executable).with_name("lexicoord")
    env = {**os.environ, "COLUMNS": "40", "LINES": "20", "LEXICOORD_HOME": str(tmp_path), "TERM": "xterm",
           "LEXICOORD_ADMIN_KEY": "a-dashboard-key-for-this-test"}
    env.pop("NO_COLOR", None)
    if where == "pipe":
        proc = subprocess.Popen([str(exe), "study", "serve", str(path), "--port", str(port), "--db", str(tmp_path / "s.db")],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
    else:
        leader, follower = pty.openpty()
        proc = subprocess.Popen([str(exe), "study", "serve", str(path), "--port", str(port), "--db", str(tmp_path / "s.db")],
                                stdin=follower, stdout=follower, stderr=follower, env=env)
        os.close(follower)
        fd = leader

    def read() -> bytes:
        ready, _, _ = select.select([fd], [], [], 0.5)
        return os.read(fd, 65536) if ready else b""

    try:
        lines = _lines_until_dashboard(read, proc)
    finally:
        proc.terminate()
        proc.wait(15)
        if where == "terminal":
            os.close(fd)
    base = f"http://localhost:{port}/studies/{NAME}/"
    prolific = f"Prolific study URL: {base}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}" \
               f"&SESSION_ID={{{{%SESSION_ID%}}}}"
    assert len(prolific) > 3 * 40
    assert prolific in lines, lines  # the whole line, as one line
    assert any(line.startswith(f"study {NAME}: {base}?pid=YOUR-ID  (store ") for line in lines), lines
    assert f"dashboard: {base}admin#key=$LEXICOORD_ADMIN_KEY  (this machine only)" in lines, lines
