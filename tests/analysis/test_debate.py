"""Scoring by rule, the study's statistics, and the report files, from stored episodes."""

import csv
import json

import pytest

from lexicoord.analysis.debate import cohen_kappa, compute, episodes_from
from lexicoord.analysis.debate_report import write_report
from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.debate import AmbiguityStudy, rotations
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.instructions import asks_about, generated_instructions, rule_success

ITEMS = generated_instructions(1, seed=0)  # one pair per type: 3 ambiguous, 3 unambiguous
NUMERICAL = next(i.as_task() for i in ITEMS if i.type == "numerical" and i.ambiguous)


BY_SUBTYPE = {i.subtype: i.as_task() for i in generated_instructions(2, seed=0) if i.ambiguous}


@pytest.mark.parametrize("subtype, question, expected", [
    ("quantity", "How many red blocks should I move?", True),
    ("quantity", f"What do you mean by '{BY_SUBTYPE['quantity']['slot']['vague']}'?", True),
    ("quantity", "Should I move two or three of them?", True),
    ("quantity", "Should I move just one?", True),
    ("quantity", "Which bowl do you mean?", False),
    ("quantity", "Where exactly should I put them?", False),
    ("quantity", f"Should I put the {BY_SUBTYPE['quantity']['slot']['vague']} blocks on the left?", False),
    ("quantity", "", False),
    ("noun", f"Do you mean a {BY_SUBTYPE['noun']['slot']['cues'][0]}?", True),
    ("noun", "Do you want a block or the bowl?", True),
    ("noun", "Which red block should I pick up first?", False),
    ("colour", f"Which colour is {BY_SUBTYPE['colour']['slot']['vague']}: red, yellow or green?", True),
    ("colour", f"Which {BY_SUBTYPE['colour']['slot']['vague']} block, the leftmost one?", False),
    ("relation", "Where exactly should the blocks go: to the left or the right of the bowl?", True),
    ("relation", "What colour are the blocks?", False),
])
def test_the_rule_asks_whether_the_question_names_the_slot(subtype, question, expected) -> None:
    assert rule_success(BY_SUBTYPE[subtype], "ambiguous" if question else "clear", question) is expected


def test_cues_match_whole_words_only() -> None:
    assert asks_about("How MANY, exactly?", ["how many"])
    assert not asks_about("Is it somewhere?", ["some"])
    assert not asks_about("Overall?", ["all"])


def test_an_unambiguous_twin_succeeds_with_clear_and_a_question_is_a_false_alarm() -> None:
    clear = next(i.as_task() for i in ITEMS if not i.ambiguous)
    assert rule_success(clear, "clear", "") is True
    assert rule_success(clear, "ambiguous", "How many?") is False
    assert rule_success(dict(NUMERICAL, slot=None), "ambiguous", "How many?") is None, "no cues: nothing to judge by"


def test_cohen_kappa() -> None:
    assert cohen_kappa([True, False, True, False], [True, False, True, False]) == 1.0
    assert cohen_kappa([True, True, False, False], [True, False, True, False]) == 0.0
    assert cohen_kappa([], []) is None


def script(messages, config):
    """Model "a" always calls things ambiguous and asks how many; model "b" always says clear and agrees."""
    from lexicoord.models.observe import current_agent

    asker = (current_agent.get() or "").startswith("a")
    schema = json.dumps(config.json_schema or {})
    if "verdict" in schema:
        if asker:
            return {"reasoning": "Vague <b>.", "verdict": "ambiguous", "question": "How many blocks?"}
        return {"reasoning": "Fine.", "verdict": "clear", "question": ""}
    return {"stance": "agree" if not asker else "disagree", "reasoning": "ok", "alternative": ""}


async def run_study(tmp_path):
    pool = ModelPool(cache=False)
    for name in ("a", "b"):
        pool.add(Model(ScriptedProvider(name, script)), f"scripted/{name}")
    seats = [AgentSpec(name="a", model="scripted/a"), AgentSpec(name="b", model="scripted/b")]
    tasks = [i.as_task() for i in ITEMS]
    episodes = grid(tasks, [[s] for s in seats], settings=[{"condition": "single"}])
    episodes += grid(tasks, rotations(seats), settings=[{"condition": "debate", "rounds": 3}])
    store = Store(str(tmp_path / "s.db"))
    await Runner(store, AmbiguityStudy(), models=pool, progress=False).run("s", episodes, {"k": "v"})
    return store


async def test_statistics_by_configuration_type_consensus_and_false_alarms(tmp_path) -> None:
    store = await run_study(tmp_path)
    episodes = episodes_from(store.iter_run_events("s"))
    assert len(episodes) == 6 * 4
    stats = compute(episodes)
    by = {c.config: c for c in stats.configs}
    assert list(by) == ["Single(a)", "Single(b)", "Debate(a)", "Debate(b)"]
    # "a" asks "How many blocks?" everywhere: right on the numerical item only, and a false alarm on every twin.
    assert by["Single(a)"].success == pytest.approx(1 / 3) and by["Single(a)"].success_by_type["numerical"] == 1.0
    assert by["Single(a)"].success_by_type["spatial"] == 0.0 and by["Single(a)"].false_alarms == 1.0
    assert by["Single(b)"].success == 0.0 and by["Single(b)"].false_alarms == 0.0
    # Leader "a" (followers b, a-2): b always agrees, a-2 always disagrees: never consensus, 3 rounds.
    assert by["Debate(a)"].consensus_rate == 0.0 and by["Debate(a)"].non_consensus_rate == 1.0
    # Leader "b" (followers a, b-2): a disagrees, so no consensus either.
    assert by["Debate(b)"].rounds_to_consensus == {}
    assert all(e.rounds == 3 for e in episodes if e.condition == "debate")
    assert stats.types == ["attribute", "numerical", "spatial"] and stats.judge is None


async def test_consensus_statistics_when_debates_agree_in_round_two(tmp_path) -> None:
    """Followers disagree in round 1 and agree in round 2: Table 1 and Figure 6 from real stored debates."""
    def two_rounds(messages, config):
        from lexicoord.models.observe import current_agent

        schema = json.dumps(config.json_schema or {})
        if "verdict" in schema:
            return {"reasoning": "Vague.", "verdict": "ambiguous", "question": "How many blocks?"}
        second = any("Round 2." in m.content for m in messages)
        return {"stance": "agree" if second else "disagree", "reasoning": current_agent.get(), "alternative": ""}

    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("t", two_rounds)), "scripted/t")
    tasks = [i.as_task() for i in ITEMS]
    store = Store(str(tmp_path / "c.db"))
    episodes = grid(tasks, rotations([AgentSpec(name="t", model="scripted/t")]), settings=[{"condition": "debate"}])
    await Runner(store, AmbiguityStudy(), models=pool, progress=False).run("c", episodes)
    [debate] = compute(episodes_from(store.iter_run_events("c"))).configs
    assert debate.consensus_rate == 1.0 and debate.non_consensus_rate == 0.0
    assert debate.mean_rounds_to_consensus == 2.0 and debate.rounds_to_consensus == {2: 3}
    assert debate.consensus_success == pytest.approx(1 / 3), "right on the numerical item only"
    assert debate.ambiguous == 3 and debate.mean_time is not None


def test_two_models_with_the_same_short_name_stay_apart() -> None:
    from lexicoord.analysis.debate import Episode, _unique_labels

    base = dict(episode_id=1, item_id="i", pair=None, type="numerical", subtype="quantity", ambiguous=True,
                instruction="x", condition="single", termination="answered", consensus=None, rounds=1, verdict="clear",
                question="", detected=False, rule=False, judge=None, success=False, false_alarm=None, wall_time=1.0,
                model_time=1.0, calls=1)
    eps = _unique_labels([Episode(**base, config="Single(llama3)", model="ollama/llama3"),
                          Episode(**base, config="Single(llama3)", model="groq/llama3"),
                          Episode(**base, config="Single(qwen)", model="ollama/qwen")])
    assert [e.config for e in eps] == ["Single(ollama/llama3)", "Single(groq/llama3)", "Single(qwen)"]


async def test_the_report_writes_figures_html_json_and_csv_with_text_escaped(tmp_path) -> None:
    store = await run_study(tmp_path)
    episodes = episodes_from(store.iter_run_events("s"))
    paths = write_report(store.run("s"), compute(episodes), episodes, tmp_path / "out")
    for name in ("overall (png)", "numerical (png)", "rounds (png)", "non_consensus (png)", "false_alarms (png)"):
        assert paths[name].stat().st_size > 1000
        assert paths[name].with_suffix(".svg").read_text().lstrip().startswith("<?xml")
    page = paths["html"].read_text()
    assert "Vague &lt;b&gt;." in page and "Vague <b>." not in page, "model text is escaped"
    assert page.count("<svg") == 7 and "Table 1" in page and "Table 2" in page
    rows = list(csv.DictReader(paths["csv"].open()))
    assert len(rows) == 24 and {r["config"] for r in rows} == {"Single(a)", "Single(b)", "Debate(a)", "Debate(b)"}
    assert json.loads(paths["json"].read_text())["episodes"] == 24
