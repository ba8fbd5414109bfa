"""The command line as a user runs it: a real subprocess, real store file, no tracebacks."""

import json
import os
import subprocess
import sys

import pytest


def lexicoord(*args: str, env: dict | None = None, check: bool = True, cwd=None) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "lexicoord.cli.app", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200", **(env or {})}, cwd=cwd,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_models_lists_providers_and_presets() -> None:
    out = lexicoord("models").stdout
    for name in ("openai", "groq", "mistral", "together", "ollama", "vllm", "llamacpp", "local", "scripted"):
        assert name in out
    assert "OPENAI_API_KEY" in out


@pytest.mark.parametrize(
    "args,needle",
    [
        (["ask", "openai/gpt-4o-mini", "hi"], "OPENAI_API_KEY is not set"),
        (["ask", "nope/x", "hi"], "Unknown provider 'nope'"),
        (["ask", "local//no/such/file.gguf", "hi"], "GGUF file not found: /no/such/file.gguf"),
        (["models", "check", "vllm/x", "-o", "base_url=http://127.0.0.1:9/v1"], "Cannot reach http://127.0.0.1:9/v1"),
        (["runs", "show", "missing-run"], "No run 'missing-run'"),
        (["ask", "ollama/m", "hi", "-o", "base_url=127.0.0.1:11434"], "is not an http(s) URL"),
        (["ask", "scripted/echo", "hi", "-o", "foo=bar"], "does not take the option 'foo'"),
        (["ask", "ollama/m", "hi", "-o", "timeout=abc"], "timeout must be a number"),
        (["ask", "scripted/echo", "hi", "--json-schema", "[1]"], "--json-schema must be a JSON object"),
        (["ask", "scripted/echo", "hi", "--json-schema", "{not json"], "neither a JSON file nor valid JSON"),
        (["runs", "list", "--db", "postgresql+psycopg://alice:s3cret@127.0.0.1:1/x"], "Cannot open the store"),
        (["serve", "--model", "openai/gpt-4o-mini"], "OPENAI_API_KEY is not set"),
        (["serve", "--items", "coordination=/no/such/items.jsonl"], "/no/such/items.jsonl"),
        (["serve", "--items", "/no/such/items.jsonl"], "--items takes PROTOCOL=WHERE or PROTOCOL/NAME=WHERE"),
        (["serve", "--items", "nowhere=builtin"], "--items nowhere=builtin: 'nowhere' is not offered here"),
        (["serve", "--items", "cogent/plants=x.jsonl"], "COGENT's items are named by their task"),
        (["serve", "--items", "debate=x.jsonl"], "Protocol 'debate' draws no items from the server"),
        (["serve", "--model", "scripted/echo", "--model", "scripted/echo"], "named twice"),
    ],
)
def test_user_errors_are_one_sentence_without_traceback(args: list[str], needle: str) -> None:
    result = lexicoord(*args, check=False)
    assert result.returncode == 1
    assert needle in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "s3cret" not in result.stderr


@pytest.mark.parametrize(
    "args", [[], ["bogus"], ["ask"], ["runs", "show"], ["demo", "--agents", "99"], ["ask", "x/y", "q", "--temperature", "abc"]]
)
def test_usage_errors_show_usage_not_a_traceback(args: list[str]) -> None:
    result = lexicoord(*args, check=False)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr + result.stdout
    assert "Usage" in result.stderr + result.stdout


def test_dotenv_in_the_working_directory_is_read(tmp_path) -> None:
    (tmp_path / ".env").write_text("OPENAI_API_KEY=from-dotenv\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\n")
    result = lexicoord("models", "check", "openai/x", check=False, cwd=tmp_path)
    assert "OPENAI_API_KEY is not set" not in result.stderr
    assert "Cannot reach http://127.0.0.1:9/v1" in result.stderr


def test_model_text_with_markup_is_shown_as_text(tmp_path) -> None:
    reply = '{"choice": "[/link] [bold]"}'
    asked = lexicoord("ask", "scripted/echo", reply, "--choice", "a", "--choice", "b")
    assert "[/link] [bold]" in asked.stdout
    db = str(tmp_path / "m.db")
    lexicoord("demo", "--model", "scripted/echo", "--run", "m", "--db", db)
    shown = lexicoord("runs", "show", "m", "-t", "--db", db)
    assert "Sentence:" in shown.stdout and "[/" not in shown.stderr


def test_export_of_an_unknown_run_makes_no_file(tmp_path) -> None:
    out = tmp_path / "x.jsonl"
    result = lexicoord("runs", "export", "nope", "-o", str(out), "--db", str(tmp_path / "e.db"), check=False)
    assert result.returncode == 1 and not out.exists()


def test_ask_prints_the_reply_and_usage() -> None:
    result = lexicoord("ask", "scripted/echo", "hello there")
    assert result.stdout.strip() == "hello there"
    assert "prompt" in result.stderr and "completion tokens" in result.stderr
    chosen = lexicoord("ask", "scripted/first", "pick", "--choice", "alpha", "--choice", "beta")
    assert json.loads(chosen.stdout) == {"choice": "alpha"}


def test_ask_uses_the_cache_unless_told_not_to() -> None:
    lexicoord("ask", "scripted/random", "q", "--seed", "4")
    assert "cached" in lexicoord("ask", "scripted/random", "q", "--seed", "4").stderr
    assert "cached" not in lexicoord("ask", "scripted/random", "q", "--seed", "4", "--no-cache").stderr


def test_demo_then_runs_list_show_export(tmp_path) -> None:
    db = str(tmp_path / "cli.db")
    demo = lexicoord("demo", "--model", "scripted/random", "--run", "d1", "--seed", "1", "--db", db)
    assert "(leader) announces" in demo.stdout and "round 1" in demo.stdout
    assert ("Converged on" in demo.stdout) or ("Failed" in demo.stdout)
    assert "d1" in lexicoord("runs", "list", "--db", db).stdout
    shown = lexicoord("runs", "show", "d1", "--transcript", "--db", db).stdout
    assert "coordination" in shown and "chose" in shown
    out = tmp_path / "d1.jsonl"
    lexicoord("runs", "export", "d1", "-o", str(out), "--db", db)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[0]["record"] == "run" and records[0]["id"] == "d1"
    choices = [r for r in records if r.get("type") == "choice"]
    assert len(choices) >= 4 and choices[0]["round"] == 0 and choices[0]["move"] == "announcement"


@pytest.mark.embedded
def test_demo_on_the_embedded_model(tmp_path) -> None:
    db = str(tmp_path / "embedded.db")
    demo = lexicoord("demo", "--run", "real", "--seed", "7", "--bound", "1", "--db", db, "--no-cache")
    assert "Sentence:" in demo.stdout and "round 1" in demo.stdout
    export = lexicoord("runs", "export", "real", "--db", db).stdout
    records = [json.loads(line) for line in export.splitlines()]
    calls = [r for r in records if r.get("type") == "model_call"]
    assert len(calls) >= 4 and all(c["model"] == "local/smollm2-135m" and c["usage"]["completion_tokens"] for c in calls)
    choices = [r for r in records if r.get("type") == "choice"]
    options = set(choices[0]["options"])
    assert all(c["choice"] in options or c["failure"] for c in choices)
    [episode] = [r for r in records if r["record"] == "episode"]
    assert episode["status"] == "done" and episode["outcome"]["rounds"] in (1, 2)


@pytest.mark.parametrize("content", ["", "   \n"])
def test_ask_on_an_endpoint_that_answers_nothing_says_so_and_fails(content: str) -> None:
    from tests.models.fault_server import FaultServer, completion

    with FaultServer(lambda n, req: completion(content, completion_tokens=256, finish_reason="length")) as server:
        result = lexicoord("ask", "openai-compatible/fake-model", "hello", "--no-cache", "-o",
                           f"base_url={server.base_url}", check=False)
    assert result.returncode == 1, result.stderr
    said = " ".join(result.stderr.split())
    assert "returned an empty reply" in said and "it stopped: length" in said and "Traceback" not in said
