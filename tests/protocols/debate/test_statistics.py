"""Scoring by rule, the study's statistics, and the report files, from stored episodes."""

import csv
import json

import pytest

from lexicoord.core.spec import AgentSpec
from lexicoord.models import Model
from lexicoord.models.pool import ModelPool
from lexicoord.models.providers.scripted import ScriptedProvider
from lexicoord.protocols.debate import DebateStudy, rotations
from lexicoord.protocols.debate.report import write_report
from lexicoord.protocols.debate.statistics import (
    Episode,
    Share,
    cohen_kappa,
    compute,
    episodes_from,
    failed_by_config,
    statistics,
)
from lexicoord.runs.grid import grid
from lexicoord.runs.runner import Runner
from lexicoord.runs.store import Store
from lexicoord.tasks.instructions import asks_about, generated_instructions, question_kind, rule_success

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
    ("noun", f"Which {BY_SUBTYPE['noun']['slot']['vague']} should I move?", False),
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


def test_kappa_is_undefined_when_chance_agreement_is_one() -> None:
    """Rule and judge that each said "yes" throughout agree by chance alone: kappa is undefined, not 1."""
    assert cohen_kappa([True, True, True], [True, True, True]) is None
    assert cohen_kappa([False, False], [False, False]) is None
    assert cohen_kappa([True, True], [True, False]) == 0.0


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
    await Runner(store, DebateStudy(), models=pool).run("s", episodes, {"k": "v"})
    return store


async def test_statistics_by_configuration_type_consensus_and_false_alarms(tmp_path) -> None:
    store = await run_study(tmp_path)
    episodes = episodes_from(store.iter_run_events("s"))
    assert len(episodes) == 6 * 4
    stats = compute(episodes)
    by = {c.config: c for c in stats.configs}
    assert list(by) == ["Single(a)", "Single(b)", "Debate(a)", "Debate(b)"]
    # "a" calls everything ambiguous: detected everywhere (the paper's measure), and a false alarm on every twin;
    # its "How many blocks?" asks about the right slot on the numerical item only.
    a, b = by["Single(a)"], by["Single(b)"]
    assert a.detection == Share(k=3, n=3) and a.right_slot == Share(k=1, n=3)
    assert a.right_slot_by_type["numerical"] == Share(k=1, n=1) and a.right_slot_by_type["spatial"] == Share(k=0, n=1)
    assert a.detection_by_type["spatial"] == Share(k=1, n=1) and a.false_alarms == Share(k=3, n=3)
    assert b.detection == Share(k=0, n=3) and b.false_alarms == Share(k=0, n=3) and b.clear == Share(k=3, n=3)
    # Leader "a" (followers b, a-2): b always agrees, a-2 always disagrees: never consensus, 3 rounds.
    assert by["Debate(a)"].consensus == Share(k=0, n=3) and by["Debate(a)"].non_consensus == Share(k=3, n=3)
    assert by["Debate(a)"].debate_errors == Share(k=0, n=3)
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
    await Runner(store, DebateStudy(), models=pool).run("c", episodes)
    [debate] = compute(episodes_from(store.iter_run_events("c"))).configs
    assert debate.consensus == Share(k=3, n=3) and debate.non_consensus == Share(k=0, n=3)
    assert debate.mean_rounds_to_consensus == 2.0 and debate.rounds_to_consensus == {2: 3}
    assert debate.consensus_detection == Share(k=3, n=3)
    assert debate.consensus_right_slot == Share(k=1, n=3), "the right slot on the numerical item only"
    assert debate.ambiguous == 3 and debate.mean_time is not None


def test_two_models_with_the_same_short_name_stay_apart() -> None:
    from lexicoord.protocols.debate.statistics import _unique_labels

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
    for name in ("overall (png)", "right_slot (png)", "numerical (png)", "rounds (png)", "non_consensus (png)",
                 "false_alarms (png)"):
        assert paths[name].stat().st_size > 1000
        assert paths[name].with_suffix(".svg").read_text().lstrip().startswith("<?xml")
    page = paths["html"].read_text()
    assert "Vague &lt;b&gt;." in page and "Vague <b>." not in page, "model text is escaped"
    assert page.count("<svg") == 8 and "Table 1" in page and "Table 2" in page
    rows = list(csv.DictReader(paths["csv"].open()))
    assert len(rows) == 24 and {r["config"] for r in rows} == {"Single(a)", "Single(b)", "Debate(a)", "Debate(b)"}
    assert json.loads(paths["json"].read_text())["episodes"] == 24


def test_detection_is_reported_first_as_the_papers_measure_and_the_stricter_one_is_named_beside_it() -> None:
    from lexicoord.protocols.debate.report import sections

    def ep(item_id: str, verdict: str, question: str, type_: str) -> Episode:
        item = next(i.as_task() for i in ITEMS if i.ambiguous and i.type == type_)
        return Episode(episode_id=1, item_id=item_id, pair=None, type=type_, subtype="", ambiguous=True,
                       instruction="x", condition="single", config="Single(m)", model="p/m", termination="answered",
                       consensus=None, rounds=1, verdict=verdict, question=question,
                       detected=verdict == "ambiguous", asks=question_kind(item, verdict, question),
                       rule=rule_success(item, verdict, question), judge=None, success=verdict == "ambiguous",
                       false_alarm=None, wall_time=1.0, model_time=1.0, calls=1)

    stats = compute([ep("1", "ambiguous", "Which one do you mean?", "numerical"),
                     ep("2", "ambiguous", "How many blocks, what colour, and where exactly?", "spatial"),
                     ep("3", "ambiguous", "How many red blocks?", "numerical"), ep("4", "clear", "", "attribute")])
    [c] = stats.configs
    assert c.detection == Share(k=3, n=4) and c.right_slot == Share(k=1, n=4) and c.shotgun == Share(k=1, n=4)
    (first, (head, rows)), (second, (head2, rows2)) = sections(stats)[:2]
    assert "paper" in first and head[1] == "detection (the paper's success)" and rows[0][1] == "75.0% (3/4)"
    assert "paper" not in second and "paper" not in " ".join(head2) and "stricter" in head2[1]
    assert rows2[0][1] == "25.0% (1/4)" and rows2[0][-1] == "25.0% (1/4)", "shotgun questions counted apart"


def broken(messages, config):
    """Model "e" never answers readably; model "u" cannot be reached; "ok" asks how many and agrees."""
    from lexicoord.errors import ModelError
    from lexicoord.models.observe import current_agent

    agent = current_agent.get() or ""
    if agent.startswith("u"):
        raise ModelError("connection refused")
    if agent.startswith("e"):
        return "I am not sure what you want."
    if "verdict" in json.dumps(config.json_schema or {}):
        return {"reasoning": "Vague.", "verdict": "ambiguous", "question": "How many blocks?"}
    return {"stance": "agree", "reasoning": "ok", "alternative": ""}


async def test_errors_and_unreachable_models_are_counted_per_configuration_in_one_denominator(tmp_path) -> None:
    pool = ModelPool(cache=False)
    for name in ("e", "u", "ok"):
        pool.add(Model(ScriptedProvider(name, broken)), f"scripted/{name}")
    tasks = [i.as_task() for i in ITEMS]
    spec = {n: AgentSpec(name=n, model=f"scripted/{n}") for n in ("e", "u", "ok")}
    episodes = grid(tasks, [[spec["e"]], [spec["u"]]], settings=[{"condition": "single"}])
    # A debate led by "ok" whose follower "e" cannot be read: it ends in error, not in non-consensus.
    episodes += grid(tasks, [[spec["ok"].model_copy(update={"role": "leader"}), spec["e"], spec["ok"].model_copy(
        update={"name": "ok-2"})]], settings=[{"condition": "debate", "rounds": 3}])
    store = Store(str(tmp_path / "b.db"))
    await Runner(store, DebateStudy(), models=pool).run("b", episodes)
    stats = statistics(store.iter_run_events("b"))
    by = {c.config: c for c in stats.configs}
    e = by["Single(e)"]
    # Every twin is in each of clear, false alarm and error with the same denominator; none is dropped.
    assert e.clear == Share(k=0, n=3) and e.false_alarms == Share(k=0, n=3) and e.unambiguous_errors == 3
    assert e.detection == Share(k=0, n=3) and e.right_slot == Share(k=0, n=3) and e.ambiguous_errors == 3
    assert "Single(u)" not in by and stats.failed == 6, "an unreachable model's episodes are in no rate"
    debate = by["Debate(ok)"]
    assert debate.debate_errors == Share(k=3, n=3) and debate.non_consensus == Share(k=0, n=3)
    assert debate.consensus == Share(k=0, n=3)
    from lexicoord.protocols.debate.report import consensus_rows, detection_rows, twin_rows

    [row] = consensus_rows(stats)[1]
    assert row[1:4] == ["0.0% (0/3)", "0.0% (0/3)", "100.0% (3/3)"]
    assert [r[-2:] for r in detection_rows(stats)[1] if r[0] == "Single(e)"] == [["3 of 3", "0"]]
    assert [r[1:] for r in twin_rows(stats)[1] if r[0] == "Single(e)"] == [["0.0% (0/3)", "0.0% (0/3)", "3 of 3", "0"]]
    failed = failed_by_config(store.episodes("b"))
    assert failed == {("Single(u)", True): 3, ("Single(u)", False): 3}
    shown = {r[0]: r[-1] for r in detection_rows(compute(episodes_from(store.iter_run_events("b")), 6, failed))[1]}
    assert shown.get("Single(u)") is None, "a configuration with no finished episode has no rate to show"


async def test_table_2_leaves_out_cached_replies_and_states_the_concurrency(tmp_path) -> None:
    from lexicoord.models.cache import ResponseCache
    from lexicoord.protocols.debate.report import time_rows

    cache = ResponseCache(tmp_path / "cache.db")
    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("a", script), cache=cache), "scripted/a")
    tasks = [i.as_task() for i in ITEMS]
    episodes = grid(tasks, [[AgentSpec(name="a", model="scripted/a")]], settings=[{"condition": "single"}])
    store = Store(str(tmp_path / "t.db"))
    await Runner(store, DebateStudy(), models=pool, seed=1).run("fresh", episodes)
    await Runner(store, DebateStudy(), models=pool, seed=1).run("again", episodes)
    fresh = statistics(store.iter_run_events("fresh"))
    again = statistics(store.iter_run_events("again"))
    assert fresh.configs[0].timed == 3 and fresh.configs[0].cached_excluded == 0
    assert again.configs[0].timed == 0 and again.configs[0].cached_excluded == 3
    assert again.configs[0].mean_time is None, "no time from replies that took none"
    again.concurrency = [4]
    [row] = time_rows(again)[1]
    assert row[1] == "4" and row[2].startswith("0 of 3") and "cached replies" in row[3]
    [row] = time_rows(fresh)[1]
    assert row[1] == "not recorded" and row[2] == "3 of 3" and row[3] != "–"
    fresh.concurrency = [4, 2]
    [row] = time_rows(fresh)[1]
    assert row[1].startswith("4, 2") and "mix" in row[1], "a resume at another concurrency is said, not hidden"


def test_the_judge_agreement_says_why_kappa_is_undefined() -> None:
    from lexicoord.protocols.debate.report import judge_rows

    base = dict(pair=None, type="numerical", subtype="quantity", ambiguous=True, instruction="x", condition="single",
                config="Single(m)", model="p/m", termination="answered", consensus=None, rounds=1,
                verdict="ambiguous", question="How many?", detected=True, success=True, false_alarm=None,
                wall_time=1.0, model_time=1.0, calls=1)
    stats = compute([Episode(episode_id=i, item_id=str(i), rule=True, judge=True, **base) for i in range(3)])
    assert stats.judge is not None and stats.judge.kappa is None and stats.judge.agree == Share(k=3, n=3)
    rows = dict(judge_rows(stats)[1])
    assert rows["Cohen's kappa"].startswith("undefined: chance agreement is 1")
    assert rows["agreement"] == "100.0% (3/3)"
