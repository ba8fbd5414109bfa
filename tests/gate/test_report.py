"""A gate's checks are episodes like any protocol's: `runs show` and `report` read them, and count every one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lexicoord.cli.app import app
from lexicoord.gate import Gate
from tests.gate.conftest import proposal, scripted


async def test_runs_show_and_report_read_a_gate_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "g.db"
    model = scripted({"agent": [proposal("clear"), proposal("ambiguous", "Which <b>cup</b>?"),
                                proposal("ambiguous", "Which?"), "unreadable"],
                      "agent-2": [proposal("clear"), "still unreadable"]})
    async with Gate("single", [model], db=str(db), run="gates") as gate:
        assert (await gate.check("Open the door.")).status == "clear"
        asked = await gate.check("Bring <script>alert(1)</script> the cup.")
        assert (await gate.answer(asked.gate_id, text="blue")).status == "clear"
        refused = await gate.check("Do it.")
        assert (await gate.answer(refused.gate_id, refuse=True)).status == "refuse"
        assert (await gate.check("Do the other thing.")).status == "error"
    monkeypatch.chdir(tmp_path)
    shown = CliRunner().invoke(app, ["runs", "show", "gates", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "protocol gate" in shown.output and "4 done" in shown.output
    result = CliRunner().invoke(app, ["report", "gates", "--db", str(db), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    numbers = json.loads((tmp_path / "out" / "gate.json").read_text())
    assert numbers["checks"] == 4 and numbers["by_status"] == {"clear": 2, "refuse": 1, "error": 1}
    assert numbers["asked"] == 2 and numbers["mean_model_calls"] == pytest.approx(6 / 4)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "2/4 (50%)" in page and "1/4 (25%)" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
