"""Every CSV goes through one writer, and no cell of it runs as a spreadsheet formula."""

import csv
import io
import re
from pathlib import Path

import pytest

from lexicoord.analysis.cells import write_csv

SRC = Path(__file__).resolve().parents[2] / "src" / "lexicoord"
HOSTILE = ["=cmd|' /C calc'!A0", "+1+1", "-2-3", "@SUM(A1)", "\tx", "plain", 3]


def test_formula_cells_are_written_as_text() -> None:
    out = io.StringIO()
    write_csv(out, ["=head", "ok"], [HOSTILE[:2], HOSTILE[2:4], HOSTILE[4:6]])
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["'=head", "ok"]
    assert [c for row in rows[1:] for c in row] == ["'=cmd|' /C calc'!A0", "'+1+1", "'-2-3", "'@SUM(A1)", "'\tx", "plain"]


@pytest.mark.parametrize(("cell", "written"), [
    ("-45", "-45"), ("-0.5", "-0.5"), ("+3", "+3"), ("-.5", "-.5"), ("-1e-3", "-1e-3"), (-45, "-45"), (-0.5, "-0.5"),
    ("-45 points", "'-45 points"), ("-inf", "'-inf"), ("-nan", "'-nan"), ("- 4", "'- 4"), ("-1+2", "'-1+2"),
    ("-A1", "'-A1"), ("=1", "'=1"), ("+", "'+"), ("-", "'-"), ("-45 ", "'-45 "),
])
def test_numbers_stay_numbers_and_only_formulas_get_the_apostrophe(cell: object, written: str) -> None:
    out = io.StringIO()
    write_csv(out, None, [[cell]])
    assert next(csv.reader(io.StringIO(out.getvalue()))) == [written]


def test_no_module_writes_csv_by_another_road() -> None:
    others = [p.relative_to(SRC) for p in SRC.rglob("*.py")
              if p.name != "cells.py" and re.search(r"csv\.(writer|DictWriter)\(", p.read_text(encoding="utf-8"))]
    assert others == [], f"write CSV through lexicoord.analysis.cells.write_csv: {others}"
