"""Hermetic tests: a private LEXICOORD_HOME, no cloud keys, and sockets to loopback only.

``--allow-hosts=127.0.0.1,::1`` (pytest-socket, in pyproject) makes any
connection off this machine fail, so no test can reach a cloud API by accident.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lexicoord.models.providers import local
from lexicoord.models.providers.presets import PRESETS
from tests.postgres import PostgresServer, PostgresUnavailable, running


@pytest.fixture(autouse=True)
def embedded_calls_are_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A test that makes the embedded model generate in this process must carry the ``embedded`` marker
    (so ``-m "not embedded"`` is a true quick pass). Subprocess tests are marked by hand."""
    calls = {"n": 0}
    real = local.LocalProvider.generate

    async def counted(self, messages, config):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        return await real(self, messages, config)

    monkeypatch.setattr(local.LocalProvider, "generate", counted)
    yield
    if calls["n"] and request.node.get_closest_marker("embedded") is None:
        pytest.fail(f"{request.node.nodeid} ran the embedded model {calls['n']} time(s) without @pytest.mark.embedded")


@pytest.fixture(autouse=True)
def hermetic_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("LEXICOORD_HOME", str(home))
    for var in ("LEXICOORD_DB", "LEXICOORD_CACHE", "LEXICOORD_CACHE_PATH", "LEXICOORD_PROMPTS"):
        monkeypatch.delenv(var, raising=False)
    for preset in PRESETS:
        monkeypatch.delenv(preset.key_env, raising=False)
        monkeypatch.delenv(preset.base_url_env, raising=False)
    return home


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_answering(proc: subprocess.Popen, url: str, log: Path, what: str, timeout: float = 60.0,
                         pause: float = 0.2) -> None:
    """Wait for a server started as ``proc`` to answer ``url`` with 200; fail with its log's tail if it exits
    first or does not answer within ``timeout`` seconds (then it is killed)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(pause)
    proc.kill()
    pytest.fail(f"{what} did not answer within {timeout:g} s")


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    from lexicoord.models.providers.local import resolve_path

    return resolve_path("smollm2-135m")


def _llama_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory, *extra: str):
    """llama-cpp-python's own OpenAI-compatible server over the bundled GGUF, on loopback, until the session ends."""
    if importlib.util.find_spec("llama_cpp.server") is None:
        pytest.fail("llama-cpp-python[server] is not installed; install the test extra: pip install -e '.[test]'")
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path), "--host", "127.0.0.1",
             "--port", str(port), "--model_alias", "smollm2", *extra],
            stdout=fh, stderr=subprocess.STDOUT, env={**os.environ},
        )
    base = f"http://127.0.0.1:{port}/v1"
    wait_until_answering(proc, f"{base}/models", log, "llama_cpp.server", timeout=120, pause=0.3)
    yield base
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def llama_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory):
    """llama-cpp-python's own OpenAI-compatible server over the bundled GGUF, on loopback."""
    yield from _llama_server(gguf_path, tmp_path_factory, "--n_ctx", "2048")


#: The public benchmark data lives beside the checkout (../shared/data); LEXICOORD_SHARED_DATA points elsewhere.
SHARED_DATA = Path(os.environ.get("LEXICOORD_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def shared_data(part: str) -> Path:
    """A public dataset's path, or a failure saying where it was expected (never a silent skip)."""
    path = SHARED_DATA / part
    if not path.exists():
        pytest.fail(f"public benchmark data expected at {path} (see shared/data/README.md)")
    return path


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server for this test session (Debian's, started on a free loopback port)."""
    try:
        with running() as server:
            yield server
    except PostgresUnavailable as exc:
        pytest.fail(str(exc))


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The store's database, once a SQLite file and once a fresh database on a real PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.database()
