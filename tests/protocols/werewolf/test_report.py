"""The Werewolf report: the replay marks every event's audience and gives each player only their own view,
and Table 5 is read back from the edited lexical-function file."""

from __future__ import annotations

import html
import re

from lexicoord.analysis.term_functions import WEREWOLF_FUNCTIONS, read_labels, write_labels
from lexicoord.core.audience import EVERYONE, Audience
from lexicoord.protocols.werewolf.events import ActionEvent, RoleEvent, SpeechEvent
from lexicoord.protocols.werewolf.report import matched_rows, report
from lexicoord.protocols.werewolf.statistics import compute, game_from, games_from, term_labels
from lexicoord.runs.store import Store
from tests.protocols.werewolf.test_rules import roles
from tests.protocols.werewolf.test_statistics import ROLES, at, cogent_game, record
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
    view = html.unescape(view)  # read as text, whichever entity the page writes for a quote
    assert re.search(r"term 'zq\d+wolfish", html.unescape(page)), "the whole record marks the wolves' uses of their term"
    assert "voted to attack" not in view and "kill vote" not in view and "wolves' channel" not in view
    assert not re.search(r"term 'zq\d+wolfish", view), "a wolf term said in public does not name its coiner"
    assert "says to the wolves" not in view and "wolfish = " not in view


def test_table_6_ends_with_a_total_over_the_paired_games() -> None:
    """The paper's Table 6 figures are totals over its games; the change is taken on the totals."""
    def origin(text: str) -> list:
        return [*[at(RoleEvent(agent=p, role=r, audience=Audience.only(p)), 0, "setup") for p, r in ROLES.items()],
                at(SpeechEvent(agent="Bo", channel="public", text=text, audience=EVERYONE), 1, "day"),
                at(ActionEvent(agent="Bo", action="vote", target="Ann"), 1, "vote")]

    games = [game_from(record("origin", 1, seed=s), origin(t)) for s, t in ((7, "Ann is the wolf I checked"),
                                                                           (8, "Ann is a wolf"))]
    games += [game_from(record("cogent", 3, seed=s), cogent_game()) for s in (7, 8)]
    stats = compute([g for g in games if g is not None])
    head, rows = matched_rows(stats)
    assert [r[0] for r in rows] == ["7", "8", "total (2 pairs)"]
    # Public logs at day 1: ORIGIN 6 + 4 words, COGENT 7 + 7; personal: x4 players, and Ann's channel (3) twice.
    total = dict(zip(head, rows[-1]))
    assert total["public log ORIGIN / COGENT"] == "10 / 14 (+40.0%)"
    assert total["personal logs ORIGIN / COGENT"] == "40 / 62 (+55.0%)"
    assert stats.matched_total is not None and stats.matched_total.pairs == 2
