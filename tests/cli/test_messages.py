"""Mistakes that used to end in a traceback or a misleading sentence, each met as a user meets it (a real
subprocess): a binary or huge file given as a JSON schema, a file that is not a GGUF given as a model, a port
already in use. Each is one sentence saying what is wrong and what to do, and exit 1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest


def lexicoord(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lexicoord.cli.app", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env={**os.environ, "COLUMNS": "300"})


def one_sentence(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout[-300:], result.stderr[-1500:])
    assert "Traceback" not in result.stderr + result.stdout, result.stderr[-1500:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.mark.parametrize("content", [
    os.urandom(4096),                                  # a binary file
    b"\xff\xfe{\x00\"\x00t\x00y\x00p\x00e\x00\"\x00}",  # JSON saved as UTF-16, as some Windows editors do
    b"\x89PNG\r\n\x1a\n" + bytes(100),                 # an image given by mistake
], ids=["random", "utf-16", "png"])
def test_a_binary_file_as_json_schema_is_one_sentence(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "schema.json"
    path.write_bytes(content)
    one_sentence(lexicoord("ask", "scripted/first", "hi", "--json-schema", str(path)),
                 str(path), "is not a JSON file", "--json-schema")


def test_a_huge_file_as_json_schema_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as fh:
        fh.write(b'{"type": "object", "description": "')
        fh.truncate(3 * 2**30)  # 3 GB, sparse: read whole, it would fill memory
    started = time.monotonic()
    one_sentence(lexicoord("ask", "scripted/first", "hi", "--json-schema", str(path)),
                 str(path), "larger than the 1 MB", "--json-schema")
    assert time.monotonic() - started < 60


def test_a_schema_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes('\ufeff{"type": "object", "properties": {"a": {"enum": ["x"]}}}'.encode())
    result = lexicoord("ask", "scripted/first", "hi", "--json-schema", str(path), "--no-cache")
    assert result.returncode == 0 and '"a": "x"' in result.stdout, result.stderr


@pytest.mark.parametrize("name,made,needle", [
    ("/dev/zero", None, "/dev/zero is not a GGUF file (not a regular file)"),
    ("folder", "dir", "is not a GGUF file (a folder)"),
    ("notes.gguf", b"hello, I am text", "is not a GGUF file (it starts with b'hell', not b'GGUF')"),
    ("empty.gguf", b"", "is not a GGUF file (it is empty)"),
    ("weights.bin", bytes(64), "is not a GGUF file (it starts with"),
], ids=["device", "folder", "text", "empty", "zeros"])
def test_a_file_that_is_not_a_gguf_says_so(tmp_path: Path, name: str, made: object, needle: str) -> None:
    path = Path(name) if name.startswith("/") else tmp_path / name
    if made == "dir":
        path.mkdir()
    elif isinstance(made, bytes):
        path.write_bytes(made)
    line = one_sentence(lexicoord("ask", f"local/{path}", "hi"), needle, ".gguf model file")
    assert "not found" not in line


def test_a_missing_gguf_is_still_not_found(tmp_path: Path) -> None:
    one_sentence(lexicoord("ask", f"local/{tmp_path}/absent.gguf", "hi"), "GGUF file not found")


def test_a_port_in_use_is_one_sentence_naming_it_and_another(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = lexicoord("serve", "--port", str(port), "--model", "scripted/first", "--db", str(tmp_path / "s.db"))
    line = one_sentence(result, f"Port {port} on 127.0.0.1 is already in use", "--port")
    assert "Errno" not in line and "lexicoord live" not in result.stdout + result.stderr


def test_an_address_not_on_this_machine_is_one_sentence(tmp_path: Path) -> None:
    result = lexicoord("serve", "--host", "192.0.2.1", "--port", "8000", "--model", "scripted/first",
                       "--db", str(tmp_path / "s.db"))
    one_sentence(result, "Cannot listen on 192.0.2.1", "--host 127.0.0.1")
