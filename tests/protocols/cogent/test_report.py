"""The COGENT report's files: figures, HTML with every transcript and the board as it grew, case studies,
CSV cells a spreadsheet will not run, and the lexical-function file read back."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from lexicoord.analysis.term_functions import BENCHMARK_FUNCTIONS, TermLabel, read_labels, write_labels
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.models import Model
from lexicoord.models.observe import current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.cogent import CogentStudy
from lexicoord.protocols.cogent.report import report
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from tests.protocols.cogent.test_rules import COINED, ITEM, stage

CATEGORIES = BENCHMARK_FUNCTIONS.categories
HOSTILE = {**ITEM, "id": "=cmd|' /C calc'!A0"}


def reply(messages: Any, config: Any) -> str:
    """COGENT's agents converge on 18 through the board; VANILLA's on 7 (so the case study has a side)."""
    agent, kind = current_agent.get() or "?", stage(messages[-1].content)
    if kind == "coin":
        return COINED[agent]
    if kind == "use":
        return f"{agent} keeps eggleft and sellprice in view <script>x</script>.\n#### 18"
    return f"{agent} thinks.\n#### 7"


async def study(tmp_path) -> tuple[Store, Any]:
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("c", reply)), "scripted/c")
    lineup = [AgentSpec(name=n, model="scripted/c") for n in ("A", "B")]
    store = Store(str(tmp_path / "c.db"))
    settings = [{"variant": v, "task": "gsm8k", "rounds": 2, "passes": 1, "coin_rounds": 1} for v in ("vanilla", "cogent")]
    await Runner(store, CogentStudy(), models=pool).run("c", grid([HOSTILE], [lineup], settings=settings))
    return store, store.run("c")


ROOT = Path(__file__).resolve().parents[3]


async def test_the_report_writes_every_file_and_transcript(tmp_path) -> None:
    store, run = await study(tmp_path)
    result = report(store, run, tmp_path / "out")
    assert {"html", "json", "csv", "terms", "accuracy (png)", "tokens (png)"} <= set(result.files)
    assert (tmp_path / "out" / "accuracy.svg").stat().st_size > 1000
    page = result.files["html"].read_text(encoding="utf-8")
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>" not in page, "replies are escaped"
    assert "docs/protocols/cogent.md" in page and "README" not in page, "the definitions are in the docs"
    assert "What the report measures" in (ROOT / "docs" / "protocols" / "cogent.md").read_text(encoding="utf-8")
    assert "used by A x2 (uptake), B x2" in page, "the case study says who took the term up"
    assert page.count("<details><summary>gsm8k") == 2 + 1, "both transcripts, and one case study"
    assert "board shared" in page and "<td>eggleft</td>" in page, "the board as it grew"
    assert "rejected (dictionary_word)" in page
    assert "COGENT right, VANILLA wrong (1)" in page and "VANILLA right, COGENT wrong (0)" in page
    rows = list(csv.DictReader(result.files["csv"].open(encoding="utf-8")))
    assert {r["item_id"] for r in rows} == {"'=cmd|' /C calc'!A0"}, "no live formula in a CSV"
    stats = json.loads(result.files["json"].read_text())["stats"]
    assert [(c["variant"], c["acc"]) for c in stats["cells"]] == [("vanilla", 0.0), ("cogent", 1.0)]
    [table1, paired, ecology, qualitative] = result.tables
    assert paired.rows[0][4:6] == ["1", "0"] and ecology.rows[0][4] == "2"
    # No annotation file: no function or criterion to claim, but the most-used terms (each use reply names both).
    assert qualitative.rows[0][4].startswith("– (no labelled terms") and qualitative.rows[0][5] == "–"
    assert qualitative.rows[0][6] == "eggleft (4); sellprice (4)"


async def test_the_lexical_function_file_is_read_back(tmp_path) -> None:
    store, run = await study(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    base = {"task": "gsm8k", "model": "scripted/c", "variant": "cogent", "episode": 2, "item": "x", "coiner": "A"}
    write_labels(out / "term_functions.csv", [
        TermLabel(**base, term="eggleft", definition="eggs left", annotator="ann",
                  weights={**dict.fromkeys(CATEGORIES, 0.0), "discriminative cue": 1.0, "domain concept": 1.0}),
        TermLabel(**base, term="sellprice", definition="price", annotator="ann",
                  weights={**dict.fromkeys(CATEGORIES, 0.0), "quantity/unit variable": 0.5}),
        TermLabel(**base, term="unlabelled", definition="-", annotator=""),
    ], BENCHMARK_FUNCTIONS)
    result = report(store, run, out)
    functions = result.tables[-1]
    # eggleft: 1/2 cue, 1/2 concept; sellprice: all quantity; averaged over the 2 labelled terms.
    assert functions.rows[0][:6] == ["gsm8k", "scripted/c", "cogent", "2 (1)", "25.0", "25.0"]
    assert functions.rows[0][6] == "50.0"
    assert functions.rows[-1][0] == "macro average" and "functions radar (png)" in result.files
    qualitative = next(t for t in result.tables if t.title.startswith("Table 4: dominant function"))
    # Shares: cue 25, concept 25, quantity 50: the dominant function is quantity/unit variable, and its criterion;
    # sellprice (whose own largest weight is that function) is listed before eggleft at equal uses.
    assert qualitative.rows[0][4:] == ["quantity/unit variable (50.0%)", BENCHMARK_FUNCTIONS.criteria[
        "quantity/unit variable"], "sellprice (4); eggleft (4)"]
    assert "criterion of correct use" in result.files["html"].read_text(encoding="utf-8")


def test_a_bad_weight_names_its_line(tmp_path) -> None:
    path = tmp_path / "f.csv"
    write_labels(path, [TermLabel(task="t", model="m", variant="cogent", episode=1, item="i", coiner="A",
                                  term="=x", definition="d")], BENCHMARK_FUNCTIONS)
    assert read_labels(path, BENCHMARK_FUNCTIONS)[0].term == "=x", "the apostrophe that kept it from running is taken off"
    text = path.read_text(encoding="utf-8").replace(",0,0,0,0,0,0,", ",0,2,0,0,0,0,")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2: 'domain concept' must be between 0 and 1"):
        read_labels(path, BENCHMARK_FUNCTIONS)
