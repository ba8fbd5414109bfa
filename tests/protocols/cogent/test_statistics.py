"""COGENT's numbers: Acc, CR and Tok on hand-computed scripted episodes (the scripted backend bills one token per
whitespace word), the interval and the paired test on hand-made cells, and the lexical ecology."""

from __future__ import annotations

from collections import Counter

import pytest

from lexicoord.analysis.intervals import exact_mcnemar, mean_ci, wilson
from lexicoord.models.tokenizer import named_tokenizer
from lexicoord.protocols.cogent.report import measures, table1_rows
from lexicoord.protocols.cogent.statistics import CogentEpisode, compute, episodes_from
from lexicoord.runs.store import Store
from tests.protocols.cogent.test_rules import play


def only(tmp_path, name: str) -> CogentEpisode:
    [episode] = episodes_from(Store(str(tmp_path / name / "c.db")).iter_run_events("c"))
    return episode


async def test_cr_and_tok_of_a_cogent_episode_by_hand(tmp_path) -> None:
    await play(tmp_path / "cog", "cogent", {"A": "18", "B": "18"}, rounds=2, passes=1, coin_rounds=1)
    e = only(tmp_path, "cog")
    # B: "A thinks. #### 18" and "B thinks. #### 18", 4 words each.
    # W: A's coining pass, 19 words; B's, 20 words (the last pass of round 1, the last coining round).
    # Tok: round 2's use replies, "X keeps eggleft and sellprice in view. #### 18", 9 words each.
    assert (e.B, e.W, e.cr, e.tok) == (8, 39, 39 / 8, 9)
    assert e.correct and e.calls == 2 + 2 + 2 * 2 and e.completion_tokens == 8 + 39 + 18 + 18, "every call is cost"


async def test_cr_and_tok_of_vanilla_and_single_by_hand(tmp_path) -> None:
    await play(tmp_path / "van", "vanilla", {"A": "18", "B": "7"}, rounds=2)
    van = only(tmp_path, "van")
    assert (van.B, van.F, van.cr, van.tok, van.W) == (8, 8, 1.0, 4, None)
    assert van.rule == "tie" and van.answer == "7" and not van.correct
    await play(tmp_path / "one", "single", {"A": "18"})
    one = only(tmp_path, "one")
    assert (one.tok, one.cr, one.B) == (4, None, None)


async def test_lexical_ecology_counts_entries_uses_and_uptake(tmp_path) -> None:
    await play(tmp_path / "cog", "cogent", {"A": "18", "B": "18"}, rounds=1, passes=1, coin_rounds=1)
    [eco] = compute([only(tmp_path, "cog")]).ecology
    # A coins eggleft, B coins sellprice (and "lock", a dictionary word); each use reply names both terms.
    assert (eco.entries, eco.unique_terms, eco.candidates, eco.rejected) == (2, 2, 3, {"dictionary_word": 1})
    assert (eco.uses, eco.cross_uses, eco.taken_up, eco.uptake) == (4, 2, 2, 2.0)


def episode(item: str, variant: str, correct: bool, answer: str | None = "1") -> CogentEpisode:
    return CogentEpisode(episode_id=None, item_id=item, task="gsm8k", variant=variant, model="m", gold="1",
                         answer=answer, correct=correct, rule="agree" if answer else "none", predictions={})


def test_accuracy_counts_invalid_answers_as_wrong_with_a_wilson_interval() -> None:
    eps = [episode("1", "cogent", True), episode("2", "cogent", True), episode("3", "cogent", True),
           episode("4", "cogent", False, answer=None)]
    [cell] = compute(eps, Counter({("m", "cogent", "gsm8k"): 2})).cells
    assert (cell.n, cell.correct, cell.acc, cell.invalid, cell.failed) == (4, 3, 0.75, 1, 2)
    # Wilson, z = 1.96, p = 3/4, n = 4: centre (0.75 + 0.4802)/1.9604 and half-width 0.8487/1.9604.
    assert cell.acc_ci is not None
    assert cell.acc_ci.low == pytest.approx(0.3006, abs=1e-3) and cell.acc_ci.high == pytest.approx(0.9544, abs=1e-3)
    assert wilson(0, 0) is None


def test_compression_and_tokens_have_bootstrap_intervals_in_table_1_and_beside_the_paper() -> None:
    toks, crs = [120.0, 80.0, 100.0, 60.0], [0.5, 0.9, 0.7, 1.1]
    eps = [episode(str(i), "cogent", True).model_copy(update={"tok": t, "cr": c}) for i, (t, c) in
           enumerate(zip(toks, crs))]
    stats = compute(eps)
    [cell] = stats.cells
    assert (cell.tok, cell.cr) == (90.0, pytest.approx(0.8))
    assert cell.tok_ci == mean_ci(toks) and cell.cr_ci == mean_ci(crs)
    assert cell.tok_ci is not None and cell.tok_ci.low < 90 < cell.tok_ci.high
    [row] = table1_rows(stats)[1]
    assert row[10] == f"90.00 [{cell.tok_ci.low:.2f}, {cell.tok_ci.high:.2f}]"
    tokens = next(m for m in measures(stats) if m.metric == "tokens")
    assert (tokens.low, tokens.high, tokens.n) == (cell.tok_ci.low, cell.tok_ci.high, 4)


def test_exact_mcnemar_on_the_discordant_items() -> None:
    cogent = [episode(str(i), "cogent", i < 7) for i in range(10)]
    vanilla = [episode(str(i), "vanilla", i < 2) for i in range(10)]
    [pair] = compute(cogent + vanilla).paired
    assert (pair.first, pair.second, pair.first_only, pair.second_only, pair.both, pair.neither) == (
        "cogent", "vanilla", 5, 0, 2, 3)
    assert pair.p_value == pytest.approx(2 * 0.5 ** 5)  # 0.0625
    assert exact_mcnemar(3, 3) == 1.0 and exact_mcnemar(0, 0) == 1.0


def test_pairs_only_items_both_variants_finished() -> None:
    cogent = [episode(str(i), "cogent", True) for i in range(4)]
    vanilla = [episode(str(i), "vanilla", False) for i in range(2, 6)]
    [pair] = compute(cogent + vanilla).paired
    assert pair.n == 2 and pair.first_only == 2


@pytest.mark.embedded
def test_a_named_tokenizer_counts_every_text_the_same_way() -> None:
    count = named_tokenizer("local/smollm2-135m")
    text = "The eggleft count is 9, so the answer is 18."
    assert count(text, 3) == count(text, None) == count(text, 999), "the reported count is ignored"
    assert count(text, None) > len(text.split()) - 3 and count(text + " Again.", None) > count(text, None)
    assert named_tokenizer("backend")(text, 7) == 7


GARBAGE = "Hmm, let me think about this one.\nIt could go either way, really."
VARIANTS = ["single", "vanilla", "cogent", "vanilla_matched", "cogent_private", "cogent_free", "cogent_log"]


async def run_all(tmp_path, reply: str, **settings) -> list:
    from lexicoord.core.spec import AgentSpec
    from lexicoord.models import Model
    from lexicoord.models.pool import ModelPool
    from lexicoord.models.providers.scripted import ScriptedProvider
    from lexicoord.protocols.cogent import CogentStudy
    from lexicoord.runs.grid import grid
    from lexicoord.runs.runner import Runner
    from tests.protocols.cogent.test_rules import ITEM

    pool = ModelPool(cache=False)
    pool.add(Model(ScriptedProvider("g", lambda messages, config: reply)), "scripted/g")
    items = [{**ITEM, "id": f"eggs{i}"} for i in range(3)]
    runner = Runner(Store(str(tmp_path / "g.db")), CogentStudy(), models=pool)
    specs = []
    for v in VARIANTS:
        lineup = [AgentSpec(name=n, model="scripted/g") for n in (["A"] if v == "single" else ["A", "B"])]
        specs += grid(items, [lineup], settings=[{"variant": v, "task": "gsm8k", "rounds": 1, "passes": 1,
                                                  "coin_rounds": 1, **settings}])
    await runner.run("g", specs)
    return compute(episodes_from(runner.store.iter_run_events("g"))).cells


async def test_a_model_that_answers_garbage_is_invalid_in_every_variant(tmp_path) -> None:
    from lexicoord.protocols.cogent.statistics import warnings

    cells = await run_all(tmp_path, GARBAGE)
    assert sorted(c.variant for c in cells) == sorted(VARIANTS)
    for c in cells:
        assert (c.n, c.correct, c.invalid) == (3, 0, 3), f"{c.variant}: every episode has no valid prediction"
        assert c.invalid_predictions == c.predictions == 3 * (1 if c.variant == "single" else 2)
    said = warnings(compute([]).model_copy(update={"cells": cells}))
    for v in VARIANTS:
        assert any(f"· {v} · gsm8k: 3 of 3 answers invalid (100%)" in line for line in said), v


async def test_replies_cut_at_the_token_limit_are_counted_beside_tok(tmp_path) -> None:
    from lexicoord.protocols.cogent.statistics import warnings

    long = " ".join(["word"] * 40) + "\n#### 18"  # 41 "tokens": cut at 16, the marker lost with the tail
    cells = await run_all(tmp_path, long, max_tokens=16)
    for c in cells:
        assert c.tok == 16 and c.tok_cut == c.tok_outputs == 3 * (1 if c.variant == "single" else 2), c.variant
        assert c.cut == c.replies > 0 and c.invalid == 3, "a reply cut before its answer has none"
    lines = warnings(compute([]).model_copy(update={"cells": cells}))
    assert sum("were cut at the token limit" in line for line in lines) == len(VARIANTS)
    (tmp_path / "short").mkdir()
    short = await run_all(tmp_path / "short", "I think the total is 18.\n#### 18", max_tokens=64)
    assert all(c.cut == c.tok_cut == 0 and c.invalid == 0 for c in short)
    assert warnings(compute([]).model_copy(update={"cells": short})) == []
