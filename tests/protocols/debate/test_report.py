"""The debate study's report on its LLM judge: not configured, answered, or failed (and never confused); and the
paper's numbers measured on hand-built episodes."""

import json
from pathlib import Path

import pytest

from lexicoord.analysis.intervals import mean_ci
from lexicoord.analysis.paper import matching
from lexicoord.core.spec import AgentSpec
from lexicoord.experiments.loading import from_file
from lexicoord.models import Model, get_model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.debate import DebateStudy
from lexicoord.protocols.debate.report import consensus_rows, judge_rows, measures, write_report
from lexicoord.protocols.debate.statistics import Episode, compute, episodes_from, statistics
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.instructions import generated_instructions
from tests.conftest import free_port

ITEMS = [i.as_task() for i in generated_instructions(1, seed=0)]  # one pair per type: 3 ambiguous, 3 twins


def asker(messages, config):
    """Calls everything ambiguous and asks how many; as a judge, says "yes" about the numerical item only,
    and answers the other two in words no reader can take for yes or no."""
    if config.choices:
        prompt = messages[-1].content
        return "yes" if "multiple yellow blocks" in prompt else "Hmm, it depends on the scene."
    return {"reasoning": "Vague.", "verdict": "ambiguous", "question": "How many blocks?"}


async def run(tmp_path, judge: str | None, judge_model: Model | None = None):
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("ask", asker)), "scripted/ask")
    if judge_model is not None and judge is not None:
        pool.add(judge_model, judge)
    settings = {"condition": "single", **({"judge": judge} if judge else {})}
    episodes = grid(ITEMS, [[AgentSpec(name="a", model="scripted/ask")]], settings=[settings])
    store = Store(str(tmp_path / "j.db"))
    await Runner(store, DebateStudy(), models=pool).run("j", episodes)
    rows = list(store.iter_run_events("j"))
    assert all(r.status == "done" for r, _ in rows), "a failing judge never fails the episode it judges"
    return store, rows


def report(tmp_path, store, rows):
    stats, episodes = statistics(rows), episodes_from(rows)
    paths = write_report(store.run("j"), stats, episodes, tmp_path / "out")
    return stats, dict(judge_rows(stats)[1]), paths["html"].read_text(), json.loads(paths["json"].read_text())


async def test_a_judge_that_cannot_be_reached_is_reported_as_failed_never_as_not_used(tmp_path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    closed = get_model("openai-compatible/judge", cache=False, base_url=url, max_retries=0, backoff_initial=0.01)
    store, rows = await run(tmp_path, "openai-compatible/judge", closed)
    stats, shown, page, saved = report(tmp_path, store, rows)
    assert stats.judge is not None and stats.judge.asked == 3 and stats.judge.failed == 3
    assert stats.judge.judged == 0 and stats.judge.agree.n == 0
    assert shown["LLM judge"] == "openai-compatible/judge"
    assert shown["judge failed (no verdict; in no rate)"].startswith("3 of 3 questions")
    assert "127.0.0.1" in shown["judge failed (no verdict; in no rate)"], "the reason is given"
    assert "not used" not in " ".join(shown.values())
    assert saved["judge"]["failed"] == 3 and saved["judge"]["asked"] == 3
    assert "the judge failed" in page and "does not ask about it" not in page
    assert "not used in this run" not in page


async def test_a_judge_that_answers_some_questions_unreadably_counts_them_apart(tmp_path) -> None:
    store, rows = await run(tmp_path, "scripted/ask")
    stats, shown, page, saved = report(tmp_path, store, rows)
    judge = stats.judge
    assert judge is not None and (judge.asked, judge.failed, judge.judged) == (3, 2, 1)
    # The one answer given ("yes" on the numerical item) agrees with the rule; the two failures are no "no".
    assert judge.agree.k == 1 and judge.agree.n == 1
    assert shown["judge failed (no verdict; in no rate)"].startswith("2 of 3 questions")
    assert shown["answers judged by rule and judge (right-slot measure)"] == "1 of 3 questions (2 failed)"
    assert shown["agreement"] == "100.0% (1/1)"
    assert page.count("the judge failed") == 2 and page.count("judge: asks about the ambiguity") == 1
    assert "does not ask about it" not in page
    [failed] = [e for e in episodes_from(rows) if e.item_id == "attribute-000/ambiguous"]
    assert failed.judge is None and failed.judge_failure


async def test_a_run_without_a_judge_says_so(tmp_path) -> None:
    store, rows = await run(tmp_path, None)
    stats, shown, page, saved = report(tmp_path, store, rows)
    assert stats.judge is None and saved["judge"] is None
    assert shown == {"LLM judge": "not used in this run (debate run --judge MODEL)"}


def debate(i: int, leader: str, rounds: int | None, detected: bool, type_: str = "numerical") -> Episode:
    """An ambiguous instruction debated under ``leader``: consensus in ``rounds`` (``None``: none after 5)."""
    return Episode(episode_id=i, item_id=f"{leader}{i}", pair=None, type=type_, subtype="", ambiguous=True,
                   instruction="x", condition="debate", config=f"Debate({leader})", model=f"p/{leader}",
                   termination="consensus" if rounds else "max_rounds", consensus=rounds is not None,
                   rounds=rounds or 5, verdict="ambiguous" if detected else "clear", question="",
                   detected=detected, rule=None, judge=None, success=detected, false_alarm=None, wall_time=1.0,
                   model_time=1.0, calls=3)


def test_table_1s_success_and_figure_6s_round_shares_per_leader() -> None:
    """Table 1's success is detection among the debates that reached consensus; Figure 6's share of a leader's
    consensus reached in a round is given for every round some debate of the run reached consensus in."""
    stats = compute([debate(1, "a", 1, True), debate(2, "a", 2, False), debate(3, "a", 2, True),
                     debate(4, "a", None, True), debate(5, "b", 3, True), debate(6, "b", 1, True)])
    got = {(m.model, m.metric, tuple(m.cell.values())): m for m in measures(stats)}
    # a: consensus in 3 of 4 debates, 2 of them detected; rounds 1, 2, 2. b: 2 of 2, both detected; rounds 3, 1.
    success = got["p/a", "consensus_success_rate", ()]
    assert (success.value, success.n) == (pytest.approx(200 / 3), 3), "the non-consensus debate is outside it"
    assert success.low is not None and success.low < success.value < (success.high or 0), "with its Wilson interval"
    assert got["p/b", "consensus_success_rate", ()].value == 100.0
    shares = {(model, cell): (m.value, m.n) for (model, metric, cell), m in got.items()
              if metric == "consensus_round_share"}
    assert shares == {("p/a", ("1",)): (pytest.approx(100 / 3), 3), ("p/a", ("2",)): (pytest.approx(200 / 3), 3),
                      ("p/a", ("3",)): (0.0, 3), ("p/b", ("1",)): (50.0, 2), ("p/b", ("2",)): (0.0, 2),
                      ("p/b", ("3",)): (50.0, 2)}



def test_mean_rounds_to_consensus_has_its_bootstrap_interval_in_the_table_and_beside_the_paper() -> None:
    stats = compute([debate(1, "a", 1, True), debate(2, "a", 2, False), debate(3, "a", 3, True),
                     debate(4, "a", None, True), debate(5, "b", 3, True)])
    rounds = {m.model: m for m in measures(stats) if m.metric == "avg_rounds_to_consensus"}
    a = rounds["p/a"]
    expected = mean_ci([1, 2, 3])
    assert (a.value, a.n, a.low, a.high) == (2.0, 3, expected.low, expected.high)  # type: ignore[union-attr]
    assert a.low is not None and a.high is not None and a.low < 2.0 < a.high
    assert (rounds["p/b"].low, rounds["p/b"].high) == (3.0, 3.0), "one debate: nothing to resample"
    row = next(r for r in consensus_rows(stats)[1] if r[0] == "Debate(a)")
    assert row[4] == f"2.00 [{a.low:.2f}, {a.high:.2f}] (over 3)"


def test_every_published_number_of_the_shipped_file_has_its_cell_in_a_run() -> None:
    published = from_file(Path(__file__).resolve().parents[3] / "experiments" / "debate-study.toml").experiment.published
    single = [Episode(**{**debate(10 + i, "a", None, True, t).model_dump(), "condition": "single",
                         "config": "Single(a)", "termination": "answered", "consensus": None, "rounds": 1})
              for i, t in enumerate(("attribute", "numerical", "spatial"))]
    debates = [debate(20 + i, "a", 1 + i, True, t) for i, t in enumerate(("attribute", "numerical", "spatial"))]
    ours = measures(compute(single + debates))
    assert [p for p in published if not matching(p, ours)] == []
