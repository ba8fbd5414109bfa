"""Statistics computed from stored events of games played by scripted rules."""

import csv
import html
import random
from pathlib import Path

import pytest

from lexicoord.analysis.intervals import mean_ci
from lexicoord.analysis.paper import matching, rate
from lexicoord.core.seat import SeatInfo
from lexicoord.core.spec import AgentSpec
from lexicoord.experiments.loading import from_file
from lexicoord.models import Model
from lexicoord.models.observe import current_agent
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.coordination import CoordinationGame
from lexicoord.protocols.coordination.report import measures, summary_rows, write_report
from lexicoord.protocols.coordination.statistics import Game, Tally, compute, games_from
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store

A, B = "meaning A", "meaning B"


def says(c: str) -> dict:
    return {"choice": c, "justification": f"I think {c}"}


def item(i: str, intended: str | None = A) -> dict:
    return {"id": i, "sentence": f"The word {i} here.", "word": "word", "options": [A, B], "intended": intended,
            "open": intended is None}


SCRIPTS = {
    # game g0: all agree at once on A (correct)
    "g0": {"lead": [says(A), says(A)], "p1": [says(A)], "p2": [says(A)]},
    # game g1: p1 starts on B, moves to the leader's A after one clarification (depth 1)
    "g1": {"lead": [says(A), says(A), {"statement": "A!"}, says(A)], "p1": [says(B), says(A)], "p2": [says(A), says(A)]},
    # game g2: converge on B, but the intended meaning is A (wrong)
    "g2": {"lead": [says(B), says(B)], "p1": [says(B)], "p2": [says(B)]},
    # game g3: people disagree (p1 vs p2 are simulated-like scripted), never converge (bound 1)
    "g3": {"lead": [says(A), says(A), {"statement": "A"}, says(A)], "p1": [says(B), says(B)], "p2": [says(A), says(A)]},
}


def script(messages, config):
    text = " ".join(m.content for m in messages)
    game = next(g for g in SCRIPTS if f"The word {g} here." in text)
    agent = current_agent.get()
    key = (game, agent)
    script.counters[key] = script.counters.get(key, 0) + 1
    return SCRIPTS[game][agent][script.counters[key] - 1]


script.counters = {}


async def test_statistics_from_events(tmp_path) -> None:
    script.counters.clear()
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("stats", script)), "scripted/stats")
    lineup = [AgentSpec(name=n, model="scripted/stats") for n in ("lead", "p1", "p2")]
    runner = Runner(Store(str(tmp_path / "s.db")), CoordinationGame(), models=pool, concurrency=1)
    items = [item("g0"), item("g1"), item("g2"), item("g3")]
    await runner.run("s", grid(items, [lineup], settings=[{"clarification_bound": 1}]))
    games = list(games_from(runner.store.iter_run_events("s")))
    assert [g.item_id for g in games] == ["g0", "g1", "g2", "g3"]
    stats = compute(games, bound=1)
    assert (stats.games, stats.converged, stats.failed) == (4, 3, 1)
    assert stats.depth_distribution == {0: 2, 1: 1}
    assert stats.first_round_rate == 0.5 and stats.mean_depth == 1 / 3
    assert stats.first_round_of_converged == 2 / 3, "two of the three convergent games agreed in round 1"
    assert stats.failed_rounds == {2: 1}, "the failed game (bound 1) lasted two rounds"
    assert stats.accuracy == 2 / 3 and stats.accuracy_games == 3
    team, first, frequent = stats.accuracy_table
    assert (team.right, team.games, team.right_all, team.games_all) == (2, 3, 2, 4)
    # g2's leader announced B, so B was t1 in that game; the first-listed sense is the item's own first (A).
    assert games[2].listed == [A, B]
    assert (first.right, first.games, first.right_all, first.games_all) == (3, 3, 4, 4)
    assert (frequent.right, frequent.games) == (3, 3), "every item's intended meaning is A"
    assert stats.failure_reasons == {"bound": 1}
    assert stats.failure_causes == {"LLM agents disagreed in round 1": 1}
    assert stats.revisions["p1"]["revisions"] == 1 and stats.revisions["p1"]["opportunities"] == 2
    assert stats.revisions["lead"]["revisions"] == 0
    assert stats.toward_leader["p1"] == {"moved": 1, "opportunities": 2, "rate": 0.5}
    # rounds with both choices: g0 r1, g1 r1-2, g2 r1, g3 r1-2 -> 6; p1 and p2 agree in g0, g1 r2, g2
    assert stats.pairwise_agreement["p1 / p2"] == 3 / 6

    run = runner.store.run("s")
    written, paths = write_report(run, games, tmp_path / "report", bound=1)
    assert written == stats, "the report's one pass counts what compute counts"
    for kind in ("html", "png", "svg", "json", "csv"):
        assert paths[kind].is_file() and paths[kind].stat().st_size > 100
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = paths["html"].read_text()
    assert "<svg" in page and "Clarification depth distribution" in page and "first-round convergence" in page


def test_user_text_in_the_report_is_escaped(tmp_path) -> None:
    from lexicoord.protocols.coordination.statistics import Game
    from lexicoord.runs.records import RunInfo

    evil = "<script>alert(1)</script>"
    game = Game(episode_id=1, item_id=evil, repetition=0, converged=True, reason="converged", depth=0,
                interpretation=evil, intended=None, correct=None, announcement=evil, leader="x",
                agents={"x": {"name": "x", "kind": "human"}}, rounds={1: {"x": evil}})
    run = RunInfo(id="r<b>", protocol="coordination", status="finished", created_at=0, updated_at=0)
    _, paths = write_report(run, [game], Path(tmp_path / "r"))
    page = paths["html"].read_text()
    assert evil not in page and html.escape(evil) in page and "r&lt;b&gt;" in page


def hand_game(i: int, first: dict[str, str | None], *, depth: int | None, played: int, reason: str = "converged",
              people: tuple[str, ...] = ("p1", "p2")) -> Game:
    """A game as ``games_from`` builds it, written out by hand so the expected figures can be counted."""
    agents = {"a1": SeatInfo(name="a1", kind="llm"), **{p: SeatInfo(name=p, kind="human") for p in people}}
    return Game(episode_id=i, item_id=f"i{i}", repetition=0, converged=depth is not None, reason=reason, depth=depth,
                interpretation=A if depth is not None else None, intended=None, correct=None, announcement=A,
                leader="a1", agents=agents, rounds={1: {"a1": A, **first}}, played=played)


HAND = [
    hand_game(1, {"p1": A, "p2": A}, depth=0, played=1),                        # people agreed: at once
    hand_game(2, {"p1": B, "p2": B}, depth=1, played=2),                        # people agreed: later
    hand_game(3, {"p1": A, "p2": B}, depth=2, played=3),                        # disagreed: later
    hand_game(4, {"p1": A, "p2": B}, depth=None, played=4, reason="bound"),     # disagreed: failed
    hand_game(5, {"p1": B, "p2": A}, depth=None, played=2, reason="leader_ended"),  # disagreed: failed
    hand_game(6, {"p1": A}, depth=0, played=1, people=("p1",)),                 # one person only
    hand_game(7, {"p1": None, "p2": A}, depth=None, played=1, reason="abandoned"),  # a person's move failed
]


def test_failed_games_keep_their_length_and_first_round_rates_name_their_denominators() -> None:
    stats = compute(HAND, bound=3)
    assert stats.failed_rounds == {1: 1, 2: 1, 4: 1}
    assert stats.first_round_rate == 2 / 7 and stats.first_round_of_converged == 2 / 4
    rows = dict(summary_rows(stats))
    assert rows["first-round convergence, of all games"] == "2 of 7 (28.6%)"
    assert rows["first-round convergence, of convergent games"] == "2 of 4 (50.0%)"
    assert rows["converged after clarification (depth 1 or more), of all games"] == "2 of 7 (28.6%)"
    assert rows["failed games that lasted 4 rounds"] == "1" and rows["failed games that lasted 1 round"] == "1"
    # The mean depth of the 4 converged games (0, 0, 1, 2 rounds of clarification) with its bootstrap interval.
    depths = [d for d, n in stats.depth_distribution.items() for _ in range(n)]
    ci = mean_ci(depths)
    assert sorted(depths) == [0, 0, 1, 2] and ci is not None and ci.low < 0.75 < ci.high
    assert rows["mean depth of converged games [95% CI]"] == f"0.75 [{ci.low:.2f}, {ci.high:.2f}]"


def test_the_peoples_round_one_agreement_against_the_outcome() -> None:
    stats = compute(HAND, bound=3)
    agreed, disagreed = stats.alignment
    assert (agreed.group, agreed.games, agreed.at_once, agreed.later, agreed.failed) == ("agreed", 2, 1, 1, 0)
    assert (disagreed.group, disagreed.games, disagreed.at_once, disagreed.later, disagreed.failed) == \
        ("disagreed", 3, 0, 1, 2)
    assert stats.alignment_fewer_than_two == 1 and stats.alignment_failed_move == 1
    rows = dict(summary_rows(stats))
    assert rows["people agreed in round 1"] == "2 of 7 (28.6%)"
    assert rows["people agreed in round 1: converged at once"] == "1 of 2 (50.0%)"
    assert rows["people disagreed in round 1: failed"] == "2 of 3 (66.7%)"
    # The same games in another order give the same figures.
    assert compute(HAND[::-1], bound=3).alignment == stats.alignment


def test_the_papers_numbers_count_convergence_after_clarification_over_all_games() -> None:
    """The paper's "remaining 29%": games that converged at depth 1 or more, of all games; the failed games are in
    the denominator, not the count (``share_depth_ge_1`` counts them too)."""
    got = {m.metric: m for m in measures(compute(HAND, bound=3))}
    later = got["converged_after_clarification"]
    assert (later.value, later.n) == (pytest.approx(100 * 2 / 7), 7), "games 2 and 3, of 7"
    wilson = rate("x", {}, 2, 7)
    assert wilson is not None and (later.low, later.high) == (wilson.low, wilson.high)
    assert got["share_depth_ge_1"].value == pytest.approx(100 * 5 / 7)
    assert got["first_round_convergence"].value + later.value == pytest.approx(got["converged_rate"].value)
    published = from_file(Path(__file__).resolve().parents[3] / "experiments" / "lexicoord-campaign.toml")
    assert [p for p in published.experiment.published if not matching(p, list(got.values()))] == []


X, Y = ["sense A", "sense B", "sense C"], ["sense P", "sense Q"]


def scored_game(item_id: str, intended: str | None, agreed: str | None, listed: list[str], rep: int = 0) -> Game:
    """A game with an item's listed senses, its intended one and what the team agreed on (``None``: failed)."""
    return Game(episode_id=None, item_id=item_id, repetition=rep, converged=agreed is not None,
                reason="converged" if agreed else "bound", depth=0 if agreed else None, interpretation=agreed,
                intended=intended, correct=(agreed == intended) if agreed and intended else None,
                announcement=agreed, leader="a1", agents={"a1": SeatInfo(name="a1", kind="llm")}, listed=listed,
                played=1 if agreed else 4)


SCORED = [
    scored_game("x1", "sense B", "sense B", X, 0),   # right; first-listed (A) wrong; most frequent of the others: A
    scored_game("x1", "sense B", "sense A", X, 1),   # wrong
    scored_game("x2", "sense B", None, X),           # did not converge: outside the converged rows, wrong in "all"
    *[scored_game("x3", "sense A", "sense A", X, r) for r in range(3)],  # right; first-listed right
    scored_game("x4", "sense C", "sense B", X),      # wrong
    scored_game("y1", "sense Q", "sense Q", Y),      # right; the only item of its inventory
    scored_game("o1", None, "sense P", Y),           # open: no right answer, outside accuracy
]


def test_baselines_are_scored_on_the_same_games_as_the_converged_meaning() -> None:
    stats = compute(SCORED)
    team, first, frequent = stats.accuracy_table
    assert (team.answer, team.right, team.games, team.right_all, team.games_all) == \
        ("converged meaning", 5, 7, 5, 8)
    assert (first.answer, first.right, first.games, first.right_all, first.games_all) == \
        ("first-listed sense", 3, 7, 3, 8)
    # Leave-one-out over inventory X's items (x1, x2 intend B, x3 A, x4 C; each item once, however often played):
    # x1 sees B, A, C (a tie: A, listed first), x2 the same, x3 sees B, B, C (B), x4 sees B, B, A (B); y1 has no
    # other item (the first-listed P). Every one is wrong: on this run the baseline knows no answer it is scored on.
    assert (frequent.answer, frequent.right, frequent.games, frequent.right_all, frequent.games_all) == \
        ("most frequent sense (leave-one-out)", 0, 7, 0, 8)
    assert stats.accuracy_right == 5 and stats.accuracy_games == 7 and stats.accuracy == 5 / 7
    assert stats.open_games == 1 and stats.single_item_games == 1
    rows = dict(summary_rows(stats))
    assert rows["accuracy of the converged meaning, of converged games with an intended meaning"] == "5 of 7 (71.4%)"
    assert rows["first-listed-sense baseline, same games"] == "3 of 7 (42.9%)"
    assert rows["most-frequent-sense baseline (leave-one-out), same games"] == "0 of 7 (0.0%)"
    assert rows["accuracy of the team, of all games with an intended meaning (not converged counts as wrong)"] == \
        "5 of 8 (62.5%)"
    assert rows["first-listed-sense baseline, of all games with an intended meaning"] == "3 of 8 (37.5%)"
    assert rows["most-frequent-sense baseline (leave-one-out), of all games with an intended meaning"] == "0 of 8 (0.0%)"
    assert rows["games of open items (no intended meaning; outside accuracy)"] == "1"
    assert rows["games whose senses no other item of the run shares (the first-listed sense stands in)"] == "1"


def test_the_most_frequent_sense_is_counted_on_the_other_items_only() -> None:
    # x1..x3 intend B, x4 A: for x1 the others say B twice and A once (right); for x4 they say B (wrong)
    games = [scored_game("x1", "sense B", "sense B", X), scored_game("x2", "sense B", "sense B", X),
             scored_game("x3", "sense B", "sense B", X), scored_game("x4", "sense A", "sense A", X)]
    frequent = compute(games).accuracy_table[2]
    assert (frequent.right, frequent.games) == (3, 4)
    # the same items in another order give the same count
    assert compute(games[::-1]).accuracy_table[2].right == 3
    # a short run of two items with different senses: counted on themselves the baseline would be 2 of 2
    two = [scored_game("y1", "sense Q", "sense Q", Y), scored_game("y2", "sense P", "sense P", Y)]
    assert compute(two).accuracy_table[2].right == 0


def test_the_most_frequent_sense_breaks_ties_by_the_listed_order() -> None:
    # z1 intends Q, z2 and z3 P. For z2 (and z3) the others are one Q and one P: a tie, which the sense listed
    # first wins; z1's others are two P.
    tie = [scored_game("z1", "sense Q", "sense Q", Y), scored_game("z2", "sense P", "sense P", Y),
           scored_game("z3", "sense P", "sense P", Y)]
    frequent = compute(tie).accuracy_table[2]
    assert (frequent.right, frequent.games) == (2, 3), "P and Q tie for z2 and z3; P is listed first"
    shuffled = compute([scored_game(g.item_id, g.intended, g.interpretation, ["sense Q", "sense P"]) for g in tie])
    assert shuffled.accuracy_table[2].right == 0, "listed the other way, Q wins the ties"


def test_the_report_shows_the_accuracy_table_with_its_denominators(tmp_path) -> None:
    from lexicoord.runs.records import RunInfo

    run = RunInfo(id="acc", protocol="coordination", status="finished", created_at=0, updated_at=0)
    page = write_report(run, SCORED, tmp_path / "r")[1]["html"].read_text()
    assert "Accuracy against the intended meaning" in page
    assert "of converged games with an intended meaning" in page and "5 of 7 (71.4%)" in page
    assert "0 of 8 (0.0%)" in page and "leave-one-out" in page


def test_the_statistics_do_not_depend_on_the_order_of_the_games() -> None:
    games = HAND + SCORED
    expected = compute(games, bound=3)
    rng = random.Random(7)
    for _ in range(20):
        shuffled = rng.sample(games, len(games))
        assert compute(shuffled, bound=3) == expected


def test_a_tally_read_part_way_then_grown_gives_what_the_whole_gives() -> None:
    tally = Tally(bound=3)
    for game in HAND:
        tally.add(game)
    early = tally.stats()
    for game in SCORED:
        tally.add(game)
    assert early == compute(HAND, bound=3), "the games added later do not change a tally's earlier figures"
    assert tally.stats() == compute(HAND + SCORED, bound=3)


def test_the_page_lists_the_first_games_and_the_csv_every_game(tmp_path, monkeypatch) -> None:
    from lexicoord.protocols.coordination import report as report_module
    from lexicoord.runs.records import RunInfo

    monkeypatch.setattr(report_module, "PAGE_GAMES", 3)
    run = RunInfo(id="many", protocol="coordination", status="finished", created_at=0, updated_at=0)
    stats, paths = write_report(run, SCORED, tmp_path / "r")
    page = paths["html"].read_text()
    assert stats.games == len(SCORED) == 9
    assert "first 3 of 9 games" in " ".join(page.split())
    assert page.count("<td>x4</td>") == 0 and page.count("<td>x1</td>") == 2
    with paths["csv"].open(newline="") as fh:
        assert [row["item"] for row in csv.DictReader(fh)] == [g.item_id for g in SCORED]
