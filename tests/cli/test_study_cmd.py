"""``lexicoord study``: a bad file serves nothing (exit 2, one line per problem); export writes the two CSVs."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import tomli_w
from typer.testing import CliRunner

from lexicoord.cli.app import app as cli
from tests.studies.conftest import Participant, play_out, serving, values


def test_serve_refuses_a_bad_file_before_listening(tmp_path: Path) -> None:
    bad = values(group={"people": 0}, lobby={"timeout": 1})
    path = tmp_path / "study.toml"
    path.write_text(tomli_w.dumps(bad), encoding="utf-8")
    result = CliRunner().invoke(cli, ["study", "serve", str(path), "--db", str(tmp_path / "s.db")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 2 and all(f"{path}:" in line for line in lines), result.output
    assert not (tmp_path / "s.db").exists()  # nothing opened


def test_export_writes_participants_and_prolifics_bonus_list_from_the_store(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    data = values()
    with serving(db, data) as (client, _):
        a, b = Participant(client, "5f1e2d3c4b5a69788796a5b4"), Participant(client, "lab-07")
        a.to_lobby()
        b.to_lobby()
        a.until("game")
        play_out(a.play(), b.play())
        for p in (a, b):
            p.until("survey")
            p.survey()
        Participant(client, "no-thanks").enter()
    path = tmp_path / "study.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["study", "export", str(path), "--db", str(db), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "3 participant(s)" in result.output
    with (out / "participants.csv").open(encoding="utf-8") as fh:
        rows = {r["participant_id"]: r for r in csv.DictReader(fh)}
    assert rows["lab-07"]["code"] == "DONE1" and rows["no-thanks"]["stage"] == "consent"
    assert rows["no-thanks"]["code"] == "" and rows["no-thanks"]["bonus"] == "0.00"
    bonus = (out / "bonus.csv").read_text(encoding="utf-8").splitlines()
    assert sorted(bonus) == ["5f1e2d3c4b5a69788796a5b4,0.60", "lab-07,0.60"]


def test_a_study_whose_file_changed_since_it_began_is_refused_unless_accepted(tmp_path: Path) -> None:
    from lexicoord.errors import ConfigError

    db = tmp_path / "s.db"
    with serving(db, values()) as (client, _):
        Participant(client, "early").to_lobby()
    codes = {**values()["completion"]["codes"], "completed": "NEW9"}
    changed = values(completion={"codes": codes}, lobby={"timeout": 120})
    with pytest.raises(ConfigError) as refused:
        with serving(db, changed):
            pass
    said = str(refused.value)
    assert "completion.codes.completed" in said and "lobby.timeout" in said and "1 participant(s)" in said
    assert "--accept-changes" in said
    with serving(db, values()) as (client, part):  # the same file again: served as before
        assert part.study.participants["early"].stage == "lobby"
    with serving(db, changed, accept_changes=True) as (client, part):
        assert part.study.file.completion.codes.completed == "NEW9"
    with serving(db, changed) as (client, part):  # the accepted file is the study's file from now on
        assert part.study.participants["early"].stage == "lobby"
    # The games' own settings never change within a study, accepted or not: its games are one run.
    for games in (values(group={"people": 3}), values(game={"seat_timeout": 45})):
        with pytest.raises(ConfigError) as refused:
            with serving(db, games, accept_changes=True):
                pass
        assert "new name" in str(refused.value) and ("group.people" in str(refused.value)
                                                     or "game.seat_timeout" in str(refused.value))


def test_a_public_dashboard_refuses_a_short_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "study.toml"
    path.write_text(tomli_w.dumps(values()), encoding="utf-8")
    monkeypatch.setenv("LEXICOORD_ADMIN_KEY", "letmein")
    result = CliRunner().invoke(cli, ["study", "serve", str(path), "--db", str(tmp_path / "s.db"), "--host", "0.0.0.0",
                                      "--port", "1"])
    said = str(result.exception)  # lexicoord's main prints it as one line, "error: ...", and exits 1
    assert result.exit_code != 0 and "LEXICOORD_ADMIN_KEY has 7 characters" in said and "at least 16" in said
