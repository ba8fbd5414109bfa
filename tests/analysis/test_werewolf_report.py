"""The Werewolf report: the replay marks every event's audience and gives each player only their own view,
and Table 5 is read back from the edited lexical-function file."""

from __future__ import annotations

import re

from lexicoord.analysis.term_functions import WEREWOLF_FUNCTIONS, read_labels, write_labels
from lexicoord.analysis.werewolf import games_from, term_labels
from lexicoord.analysis.werewolf_report import report
from lexicoord.runs.store import Store
from tests.protocols.werewolf.test_rules import roles
from tests.protocols.werewolf.test_visibility import marked_speech, random_policy


async def test_replays_and_table_5_from_the_edited_file(tmp_path) -> None:
    from tests.protocols.werewolf.test_rules import play

    _, events = await play(tmp_path, random_policy, marked_speech, seed=2, condition="cogent", wolf_turns=1, max_days=2)
    store = Store(str(tmp_path / "w.db"))
    run = store.run("w")
    games = games_from(store.iter_run_events("w"))
    labels = term_labels(games)
    assert {x.model for x in labels} == {"public", "wolves"}, "each term carries its pool"
    for x in labels:  # a person's edit: public terms are process structure, wolf terms deception
        x.weights = {"process structure" if x.model == "public" else "deception strategy": 1.0}
        x.annotator = "me"
    out = tmp_path / "out"
    out.mkdir()
    write_labels(out / "term_functions.csv", labels, WEREWOLF_FUNCTIONS)
    assert len(read_labels(out / "term_functions.csv", WEREWOLF_FUNCTIONS)) == len(labels)
    result = report(store, run, out)
    table5 = result.tables[-1]
    assert table5.title.startswith("functions of Werewolf terms")
    public = sum(x.model == "public" for x in labels)
    row = {r[0]: r[1:] for r in table5.rows}
    assert row["process structure"][0].startswith(f"{public:.2f} (100%)") and row["deception strategy"][0] == "0.00 (0%)"
    page = result.files["html"].read_text(encoding="utf-8")
    dealt = roles(events)
    assert page.count("what they knew</summary>") == len(dealt)
    assert "[the wolves]" in page and "[moderator only]" in page and "functions_radar" not in page
    villager = next(p for p, r in dealt.items() if r == "villager")
    view = page.split(f"{villager} (villager): what they knew</summary>", 1)[1].split("</details>", 1)[0]
    assert "voted to attack" not in view and "kill vote" not in view and "wolves&#x27; channel" not in view
    assert not re.search(r"term &#x27;zq\d+wolfish", view), "a wolf term said in public does not name its coiner"
    assert "says to the wolves" not in view and "wolfish = " not in view
