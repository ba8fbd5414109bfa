"""``lexicoord demo`` as a newcomer meets it: a model that cannot be used is one sentence before anything of the
game is shown, and the leader's announcement reads as what the leader did: the meaning it chose with its own
reason in quotes, or why it chose nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from lexicoord.cli.app import main
from lexicoord.models.providers.scripted import register_script


def lexicoord(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lexicoord.cli.app", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("model,needle", [("bogus/x", "Unknown provider 'bogus'"),
                                          ("local//dev/zero", "/dev/zero is not a GGUF file"),
                                          ("scripted/nope", "No script named 'scripted/nope'")])
def test_a_model_that_cannot_be_used_is_one_sentence_before_the_banner(tmp_path, model: str, needle: str) -> None:
    result = lexicoord("demo", "--model", model, "--db", str(tmp_path / "d.db"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stdout == "", "no sentence, no word, nothing of the game before the error"
    assert not (tmp_path / "d.db").exists(), "nothing opened for a game that cannot be played"


def run_demo(capsys, monkeypatch, tmp_path, model: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["lexicoord", "demo", "--model", model, "--db", str(tmp_path / "d.db"),
                                      "--no-cache", "--seed", "1", "--bound", "1"])
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit) as stop:
        main()
    out = capsys.readouterr()
    return (stop.value.code if isinstance(stop.value.code, int) else 0), out.out + out.err


def leader_line(printed: str) -> str:
    return next(line for line in printed.splitlines() if "(leader)" in line)


def options_of(config: Any) -> list[str]:
    return list(config.json_schema["properties"]["choice"]["enum"])


def test_the_leader_s_own_reason_is_quoted_beside_the_meaning_it_chose(capsys, monkeypatch, tmp_path) -> None:
    """A small model's reason may be anything, "no answer" included: it is shown as the leader's words."""
    def reply(messages: Any, config: Any) -> Any:
        if config.json_schema and "choice" in config.json_schema.get("properties", {}):
            return {"choice": options_of(config)[0], "justification": "no answer"}
        return {"statement": "the first"}

    register_script("terse-leader", reply)
    code, printed = run_demo(capsys, monkeypatch, tmp_path, "scripted/terse-leader")
    assert code == 0, printed
    line = leader_line(printed)
    assert "announces: let go of it, because “no answer”" in line, line


def test_a_leader_that_chose_nothing_says_why_not_an_empty_reason(capsys, monkeypatch, tmp_path) -> None:
    register_script("mute-leader", lambda messages, config: "I would rather not say.")
    code, printed = run_demo(capsys, monkeypatch, tmp_path, "scripted/mute-leader")
    line = leader_line(printed)
    assert "no valid meaning" in line and "no JSON object found in the reply" in line, line
    assert not line.rstrip().endswith("—")
    assert "gives no valid clarification (no JSON object found in the reply)" in printed
