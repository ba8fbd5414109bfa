"""A throwaway PostgreSQL server for the tests: its own data directory, a loopback port, stopped at the end.

The server is Debian's (``make test`` installs the package ``postgresql`` when it is missing); nothing
is downloaded and the machine's own clusters are never touched. PostgreSQL refuses to run as root, so
under root the server runs as the ``postgres`` account the package creates. The benchmarks use it too,
so it raises :class:`PostgresUnavailable` rather than failing a test itself.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class PostgresUnavailable(RuntimeError):
    """The server could not be found or started; the message says what to install or what went wrong."""


def _bin(name: str) -> str:
    """A server program: on PATH, else the newest under Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(Path(p).parts[-3]))
    if not candidates:
        raise PostgresUnavailable(f"PostgreSQL's {name} was not found: install the server "
                                  "(apt-get install postgresql; `make test` does it)")
    return candidates[-1]


class PostgresServer:
    """One cluster; :meth:`database` hands each test a fresh, empty database on it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.folder = Path(tempfile.mkdtemp(prefix="lexicoord-pg-"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresUnavailable(
                    "running as root, PostgreSQL needs the 'postgres' account that Debian's package creates") from None
            os.chown(self.folder, account.pw_uid, account.pw_gid)
            self._as = [shutil.which("runuser") or "runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise PostgresUnavailable(f"{args[0]} failed: {done.stderr.strip() or done.stdout.strip()}\n{log}")

    def start(self) -> None:
        self._run(_bin("initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.folder} "
                   "-c fsync=off -c max_connections=200")
        self._run(_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        subprocess.run([*self._as, _bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new empty database, so every test starts from nothing (migrations included)."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(port: int | None = None) -> Iterator[PostgresServer]:
    """A started server (on ``port``, or a free one), stopped and removed on leaving."""
    server = PostgresServer(port or _free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()
