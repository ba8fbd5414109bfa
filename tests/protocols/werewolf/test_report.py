"""The Werewolf report: the replay marks every event's audience and gives each player only their own view,
Table 5 is read back from the edited lexical-function file, and the paper's numbers are measured on hand-built
games."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from lexicoord.analysis.paper import matching
from lexicoord.analysis.term_functions import (
    WEREWOLF_FUNCTIONS,
    FunctionProfile,
    profiles,
    read_labels,
    write_labels,
)
from lexicoord.core.audience import EVERYONE, Audience
from lexicoord.experiments.loading import from_file
from lexicoord.protocols.werewolf.events import ActionEvent, RoleEvent, SpeechEvent
from lexicoord.protocols.werewolf.report import matched_rows, measures, report
from lexicoord.protocols.werewolf.statistics import WerewolfStats, compute, game_from, games_from, term_labels
from lexicoord.runs.store import Store
from tests.protocols.werewolf.test_rules import roles
from tests.protocols.werewolf.test_statistics import ROLES, at, cogent_game, record
from tests.protocols.werewolf.test_visibility import marked_speech, random_policy

ROOT = Path(__file__).resolve().parents[3]


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
    assert [r[0] for r in rows] == ["7", "8", "total (2 pairs)", "95% CI of the total (pairs resampled)"]
    # Public logs at day 1: ORIGIN 6 + 4 words, COGENT 7 + 7; personal: x4 players, and Ann's channel (3) twice.
    total = dict(zip(head, rows[-2]))
    assert total["public log ORIGIN / COGENT"] == "10 / 14 (+40.0%)"
    assert total["personal logs ORIGIN / COGENT"] == "40 / 62 (+55.0%)"
    assert stats.matched_total is not None and stats.matched_total.pairs == 2
    # Two pairs resampled: a total of 2 x 4, 4 + 6 or 2 x 6 for ORIGIN's public log, always 14 for COGENT's.
    assert dict(zip(head, rows[-1]))["public log ORIGIN / COGENT"] == "[8, 12] / [14, 14]"



def pair() -> WerewolfStats:
    """An ORIGIN and a COGENT game of one seed: the hand-built games of test_statistics, with their calls' tokens."""
    origin_events = [*[at(RoleEvent(agent=p, role=r, audience=Audience.only(p)), 0, "setup") for p, r in ROLES.items()],
                     at(SpeechEvent(agent="Bo", channel="public", text="Ann is the wolf I checked", audience=EVERYONE),
                        1, "day"),
                     at(ActionEvent(agent="Bo", action="vote", target="Ann"), 1, "vote")]
    origin, cogent = game_from(record("origin", 1), origin_events), game_from(record("cogent", 3), cogent_game())
    assert origin is not None and cogent is not None
    origin.prompt_tokens, origin.completion_tokens = 900, 100
    cogent.prompt_tokens, cogent.completion_tokens = 1400, 100
    return compute([origin, cogent])


def annotated(weights: dict[str, dict[str, float]]) -> list[FunctionProfile]:
    """The COGENT game's terms (wolfmark public, redzone the wolves'), labelled by pool as a person would."""
    game = game_from(record("cogent", 3), cogent_game())
    assert game is not None
    labels = term_labels([game])
    for x in labels:
        x.weights = weights[x.model]
    return profiles(labels, WEREWOLF_FUNCTIONS)


def test_the_papers_numbers_from_a_hand_built_pair_of_games() -> None:
    """Tables 2, 5, 6 and 7 as measures (every count of the games is worked out in test_statistics)."""
    stats = pair()
    found = measures(stats, annotated({"public": {"process structure": 1.0},
                                       "wolves": {"deception strategy": 1.0, "hidden-information management": 1.0}}))
    got = {(m.metric, tuple(m.cell.values())): m for m in found}

    def value(metric: str, *cell: str) -> float:
        return got[metric, cell].value

    # Table 7: terms redzone (wolves, 2 reuses) and wolfmark (public, 3 reuses by Cy, Di, Bo); lexicon 10 words,
    # public speech 12 words; wolfmark used on day 2 of the two days after its coining.
    assert (value("public_terms"), value("public_reuses"), value("wolf_private_terms"),
            value("wolf_private_reuses")) == (1, 3, 1, 2)
    assert (value("lexicon_snapshot_tokens"), value("reuse_per_100_lexicon_tokens")) == (10, 50.0)
    assert value("lexicon_footprint_ratio") == pytest.approx(10 / 12)
    assert (value("terms_used_in_public_speech"), value("avg_public_speakers_per_term")) == (1, 1.5)
    assert got["terms_used_in_public_speech", ()].n == 2, "out of the accepted terms"
    persistence = got["public_checkpoint_persistence", ()]
    assert persistence.value == 50.0 and persistence.n == 2 and persistence.low is not None, "a rate, in percent"
    # Table 6, totals over the one pair at day 1: public 6 / 7 words, personal 24 / 31, full games 1000 / 1500 tokens.
    assert (value("common_prefix_public_log_tokens", "origin"),
            value("common_prefix_public_log_tokens", "cogent")) == (6, 7)
    assert (value("common_prefix_personal_log_tokens", "origin"),
            value("common_prefix_personal_log_tokens", "cogent")) == (24, 31)
    assert (value("full_game_total_tokens", "origin"), value("full_game_total_tokens", "cogent")) == (1000, 1500)
    # Table 2's reductions, 1 - COGENT / ORIGIN in percent (negative: COGENT's logs are the longer here).
    assert value("common_prefix_public_token_reduction") == pytest.approx(100 * (1 - 7 / 6))
    assert value("common_prefix_personal_token_reduction") == pytest.approx(100 * (1 - 31 / 24))
    assert got["common_prefix_public_token_reduction", ()].n == 1, "out of the pairs"
    # Table 5: each term's weights normalised to 1, summed over both pools.
    assert value("term_function_count", "process structure") == 1.0
    assert value("term_function_count", "deception strategy") == 0.5
    assert value("term_function_count", "hidden-information management") == 0.5
    assert value("term_function_count", "voting action") == 0.0 and got["term_function_count", ("voting action",)].n == 2
    assert not any(m.metric == "term_function_count" for m in measures(stats)), "no annotation file, no Table 5"


def test_every_published_number_of_the_shipped_file_is_measured_or_says_why_not() -> None:
    published = from_file(ROOT / "experiments" / "werewolf-cogent.toml").experiment.published
    stats = pair()
    ours = measures(stats, annotated({"public": {"voting action": 1.0}, "wolves": {"trust alignment": 1.0}}))
    missing = [p for p in published if not matching(p, ours)]
    assert {p.metric for p in missing} == {"process_structure_density", "accountability_revision_density"}
    assert all("not in this run" in p.note for p in missing), "the file says why the run has no value"
    without = [p for p in published if not matching(p, measures(stats))]
    assert {p.source for p in without} == {"Table 5", "Table 6"}, "Table 5 needs the annotation file"
    assert all("not in this run" in p.note for p in without)
