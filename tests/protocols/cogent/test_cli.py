"""``lexicoord cogent run`` as a user runs it: every variant over a slice, resumable, clear errors."""

import asyncio
import json

import pytest

from lexicoord.analysis.term_functions import BENCHMARK_FUNCTIONS, read_labels
from tests.cli.test_cli import lexicoord
from tests.conftest import shared_data

FOLIO = [{"premises": ["All cats purr.", "Tom is a cat."], "conclusion": "Tom purrs.", "label": "True"},
         {"premises": ["All dogs bark."], "conclusion": "Rex, a dog, barks.", "label": "True"},
         {"premises": ["No fish fly."], "conclusion": "Nemo, a fish, does not fly.", "label": "True"}]


def test_every_variant_runs_over_a_seeded_slice_and_resumes(tmp_path) -> None:
    data = tmp_path / "folio.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in FOLIO), encoding="utf-8")
    db = str(tmp_path / "c.db")
    args = ["cogent", "run", "--task", "folio", "--data", str(data), "-m", "scripted/echo", "--items", "2",
            "-R", "1", "-K", "1", "--coin-rounds", "1", "--run", "cg", "--db", db]
    first = lexicoord(*args)
    assert "6 done, 0 failed" in first.stderr, first.stderr  # 2 items x 3 variants
    assert "0 done, 0 failed, 6 already done" in lexicoord(*args).stderr
    export = lexicoord("runs", "export", "cg", "--db", db).stdout
    episodes = [json.loads(line) for line in export.splitlines() if '"record": "episode"' in line]
    assert sorted(e["spec"]["settings"]["variant"] for e in episodes) == ["cogent"] * 2 + ["single"] * 2 + ["vanilla"] * 2
    # The echo model repeats its prompt, whose last marker is "Answer: Uncertain": wrong on every item here.
    assert all(e["outcome"]["correct"] is False for e in episodes)
    assert "coin:" in lexicoord("runs", "show", "cg", "--transcript", "--db", db).stdout


def test_bad_input_is_one_sentence(tmp_path) -> None:
    db = ["--db", str(tmp_path / "x.db")]
    cases = [
        (["cogent", "run", "--task", "chess", "--data", "x", *db], "Unknown task 'chess'"),
        (["cogent", "run", "--task", "gsm8k", "--data", str(tmp_path / "none.jsonl"), *db], "no file or folder at"),
        (["cogent", "run", "--task", "mmlu", "--data", str(tmp_path), *db], "No MMLU CSV files"),
        (["cogent", "run", "--task", "gsm8k", "--data", "x", "--variant", "chat", *db], "Unknown variant(s) chat"),
        (["cogent", "run", "--task", "gsm8k", "--data", "x", "--tie", "coin", *db], "settings.tie"),
        (["cogent", "run", "--task", "gsm8k", "--data", "x", "-m", "a/b", "-m", "c/d", "-m", "e/f", *db], "at most two"),
    ]
    for args, needle in cases:
        result = lexicoord(*args, check=False)
        assert result.returncode == 1 and needle in result.stderr, (args, result.stderr)


async def test_transcripts_read_terms_as_sentences(tmp_path) -> None:
    from tests.protocols.cogent.test_report import study

    await study(tmp_path)
    out = lexicoord("runs", "show", "c", "--transcript", "--db", str(tmp_path / "c.db")).stdout
    assert "A coins 'eggleft' = eggs left to sell (pass 1)" in out
    assert "B proposes 'lock' = a word (pass 1), rejected: dictionary word" in out
    assert "the board is shared with everyone: 'eggleft', 'sellprice' (2 entries in all)" in out
    assert "B uses A's term 'eggleft', speaking to everyone" in out


async def test_report_and_annotate_from_the_command_line(tmp_path) -> None:
    """The annotator here is a scripted echo, whose replies are no JSON: every row says it was unreadable and keeps
    zeros, and a person's edit survives a second run (the embedded model annotates in the test below)."""
    from tests.protocols.cogent.test_report import study

    await study(tmp_path)
    db = ["--db", str(tmp_path / "c.db")]
    out = lexicoord("cogent", "report", "c", "--out", str(tmp_path / "r"), *db, cwd=tmp_path).stdout
    assert "Table 1" in out and "html: " in out and (tmp_path / "r" / "report.html").is_file()
    notes = lexicoord("cogent", "annotate", "c", "-m", "scripted/echo", *db, cwd=tmp_path).stdout
    path = tmp_path / "reports" / "c" / "term_functions.csv"
    assert "2 term(s) annotated, 0 kept" in notes and path.is_file()
    rows = path.read_text(encoding="utf-8").splitlines()
    assert len(rows) == 3 and all("llm:scripted/echo (unreadable)" in r for r in rows[1:])
    rows[1] = rows[1].replace(",0,0,0,0,0,0,llm:scripted/echo (unreadable),", ",1,0,0,0,0,0,me,")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    again = lexicoord("cogent", "annotate", "c", "-m", "scripted/echo", *db, cwd=tmp_path).stdout
    assert "0 term(s) annotated, 2 kept" in again and ",1,0,0,0,0,0,me," in path.read_text(encoding="utf-8")
    out = lexicoord("cogent", "report", "c", *db, cwd=tmp_path).stdout
    assert "lexical functions" in out and "me 1" in out
    wrong = lexicoord("cogent", "report", "nope", *db, check=False)
    assert wrong.returncode == 1 and "nope" in wrong.stderr and "Traceback" not in wrong.stderr
    bad = lexicoord("cogent", "report", "c", "--tokenizer", "gpt2", *db, check=False)
    assert bad.returncode == 1 and "Unknown tokenizer 'gpt2'" in bad.stderr


DATA = {"gsm8k": "gsm8k/test.jsonl", "folio": "folio/folio-validation.jsonl", "mmlu": "mmlu/test"}


@pytest.mark.embedded
def test_an_item_under_each_variant_on_the_embedded_model_through_to_the_report(tmp_path) -> None:
    """The protocol and its numbers on a real model; SmolLM2-135M's accuracy here is a fact about it, not a finding.
    One item and one meta-round keep every variant and the report in. One task: every task's smoke run plays on the
    embedded model through to its report in tests/experiments/test_shipped.py."""
    db = ["--db", str(tmp_path / "e.db")]
    task, part = "gsm8k", DATA["gsm8k"]
    run = lexicoord("cogent", "run", "--task", task, "--data", str(shared_data(part)), "--items", "1", "-R", "1",
                    "-K", "1", "--coin-rounds", "1", "--max-tokens", "48", "--run", f"e-{task}", *db, cwd=tmp_path)
    assert "3 done, 0 failed" in run.stderr, run.stderr
    out = lexicoord("cogent", "report", f"e-{task}", *db, cwd=tmp_path).stdout
    stats = json.loads((tmp_path / "reports" / f"e-{task}" / "stats.json").read_text())["stats"]
    cells = {c["variant"]: c for c in stats["cells"]}
    assert set(cells) == {"single", "vanilla", "cogent"} and all(c["n"] == 1 for c in cells.values()), out
    assert all(c["task"] == task and c["invalid"] <= c["n"] - c["correct"] for c in cells.values())
    # Real completion counts from llama.cpp: every Tok is a positive number of tokens, at most max_tokens.
    assert all(0 < c["tok"] <= 48 for c in cells.values()) and cells["vanilla"]["cr"] > 0
    # round 0, one coining pass each, one use turn each; VANILLA: round 0 and one debate turn each
    assert cells["cogent"]["calls"] == 2 + 2 + 2 and cells["vanilla"]["calls"] == 2 + 2
    assert stats["ecology"][0]["candidates"] >= stats["ecology"][0]["entries"]
    assert (tmp_path / "reports" / f"e-{task}" / "report.html").stat().st_size > 5000


@pytest.mark.embedded
def test_the_embedded_model_suggests_lexical_functions(tmp_path) -> None:
    from tests.protocols.cogent.test_report import study

    asyncio.run(study(tmp_path))
    lexicoord("cogent", "annotate", "c", "--db", str(tmp_path / "c.db"), cwd=tmp_path)
    labels = read_labels(tmp_path / "reports" / "c" / "term_functions.csv", BENCHMARK_FUNCTIONS)
    assert sorted(x.term for x in labels) == ["eggleft", "sellprice"]
    assert all(x.annotator == "llm:local/smollm2-135m" for x in labels), [x.note for x in labels]
    assert all(0 <= w <= 1 for x in labels for w in x.weights.values())


@pytest.mark.embedded
def test_cogent_with_b_on_a_real_openai_compatible_server(tmp_path, llama_server) -> None:
    """A on the embedded model in-process, B on llama-cpp-python's server over HTTP (mixing models is ours)."""
    db = ["--db", str(tmp_path / "m.db")]
    run = lexicoord("cogent", "run", "--task", "folio", "--data", str(shared_data(DATA["folio"])), "--items", "1",
                    "--variant", "cogent", "-m", "local/smollm2-135m", "-m", "llamacpp/smollm2", "-R", "1", "-K", "1",
                    "--coin-rounds", "1", "--max-tokens", "48", "--no-cache", "--run", "mix", *db, cwd=tmp_path,
                    env={"LLAMACPP_BASE_URL": llama_server})
    assert "1 done, 0 failed" in run.stderr, run.stderr
    export = [json.loads(line) for line in lexicoord("runs", "export", "mix", *db).stdout.splitlines()]
    calls = [e for e in export if e.get("type") == "model_call"]
    assert {(c["agent"], c["model"]) for c in calls} == {("A", "local/smollm2-135m"), ("B", "llamacpp/smollm2")}
    assert all(c["usage"]["completion_tokens"] for c in calls)
    out = lexicoord("cogent", "report", "mix", *db, cwd=tmp_path).stdout
    assert "local/smollm2-135m + llamacpp/smollm2" in out


GSM8K_ROWS = [{"question": f"Sam has {n} apples and buys 2 more. How many apples does he have?",
               "answer": f"He has {n} + 2 = {n + 2}.\n#### {n + 2}"} for n in (3, 5)]


def test_a_run_on_an_endpoint_that_answers_garbage_ends_with_warnings(tmp_path) -> None:
    """Over a real OpenAI-compatible server on loopback: replies with no answer, and replies the server says
    it cut at the token limit, are counted in every variant and the run ends by naming the cells."""
    from tests.models.fault_server import FaultServer, completion

    data = tmp_path / "gsm8k.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in GSM8K_ROWS), encoding="utf-8")

    def responder(n: int, request: dict) -> object:  # every reply stops at the limit, as the server says
        return completion("Well, there are several ways to look at it and I would rather not commit",
                          completion_tokens=request.get("max_tokens") or 0, finish_reason="length")

    with FaultServer(responder) as server:
        result = lexicoord("cogent", "run", "--task", "gsm8k", "--data", str(data), "-m", "openai-compatible/fake-model",
                           "-o", f"base_url={server.base_url}", "--variant", "single", "--variant", "vanilla",
                           "--variant", "cogent", "-R", "1", "-K", "1", "--coin-rounds", "1", "--max-tokens", "64",
                           "--run", "junk", "--db", str(tmp_path / "j.db"), "--no-cache")
    said = " ".join(result.stdout.split())
    for variant in ("single", "vanilla", "cogent"):
        assert f"warning: openai-compatible/fake-model · {variant} · gsm8k: 2 of 2 answers invalid (100%)" in said, said
    assert "were cut at the token limit" in said
    report = lexicoord("cogent", "report", "junk", "--db", str(tmp_path / "j.db"), "--out", str(tmp_path / "r"))
    stats = json.loads((tmp_path / "r" / "stats.json").read_text())["stats"]
    single = next(c for c in stats["cells"] if c["variant"] == "single")
    assert (single["invalid"], single["n"], single["replies"], single["cut"], single["tok"]) == (2, 2, 2, 2, 64)
    assert "answers invalid" in report.stdout and "answers invalid" in (tmp_path / "r" / "report.html").read_text()


def test_another_run_name_replays_cached_replies_and_another_seed_draws_fresh_ones_on_the_same_items(tmp_path) -> None:
    data = tmp_path / "folio.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in FOLIO), encoding="utf-8")
    db = str(tmp_path / "s.db")

    def run(name: str, *extra: str) -> tuple[list[str], list[str], list[bool]]:
        lexicoord("cogent", "run", "--task", "folio", "--data", str(data), "-m", "scripted/random", "--items", "2",
                  "--variant", "single", "--run", name, "--db", db, *extra)
        lines = [json.loads(x) for x in lexicoord("runs", "export", name, "--db", db).stdout.splitlines()]
        episodes = sorted((x for x in lines if x.get("record") == "episode"), key=lambda e: e["item_id"])
        calls = [x for x in lines if x.get("record") == "event" and x["type"] == "model_call"]
        return [e["item_id"] for e in episodes], [c["text"] for c in calls], [c["cached"] for c in calls]

    items, texts, cached = run("first")
    assert len(items) == 2 and len(texts) == 2 and not any(cached)
    same_items, same_texts, same_cached = run("second")
    assert (same_items, sorted(same_texts)) == (items, sorted(texts)) and all(same_cached), \
        "same settings and seed under another name: the cached replies"
    fresh_items, fresh_texts, fresh_cached = run("fresh", "--seed", "1", "--slice-seed", "0")
    assert fresh_items == items, "the slice is the first run's"
    assert not any(fresh_cached) and set(fresh_texts).isdisjoint(texts), "new seat seeds: fresh samples"


def test_round_zero_is_the_same_call_under_every_variant(tmp_path) -> None:
    """The paper starts VANILLA and COGENT from the same condition: with a seed, round 0's answers are identical
    across the variants (each seat's answer names the seed its call was made with), and another run seed changes
    them."""
    from typer.testing import CliRunner

    from lexicoord.cli.app import app
    from lexicoord.models.providers.scripted import register_script
    from lexicoord.runs.store import Store

    register_script("seedteller", lambda messages, config: f"My answer, drawn with seed {config.seed}. Answer: True")
    data = tmp_path / "folio.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in FOLIO), encoding="utf-8")

    def round_zero(seed: int) -> dict[tuple[str, str], dict[str, str]]:
        db = str(tmp_path / f"s{seed}.db")
        result = CliRunner().invoke(app, ["cogent", "run", "--task", "folio", "--data", str(data), "-m",
                                          "scripted/seedteller", "--items", "2", "-R", "1", "-K", "1",
                                          "--coin-rounds", "1", "--run", "p", "--db", db, "--seed", str(seed),
                                          "--no-cache"])
        assert result.exit_code == 0, result.output
        seen: dict[tuple[str, str], dict[str, str]] = {}
        for record, events in Store(db).iter_run_events("p"):
            variant = record.spec["settings"]["variant"]
            for e in events:
                if e.type == "response" and getattr(e, "stage", None) in ("init", "single"):
                    seen.setdefault((record.item_id, str(e.agent)), {})[variant] = str(getattr(e, "text", ""))
        return seen

    first = round_zero(1)
    assert first and all({"vanilla", "cogent"} <= set(v) for k, v in first.items() if k[1] != "single")
    for (_item, _agent), by_variant in first.items():
        assert len(set(by_variant.values())) == 1, by_variant  # one answer whatever the variant
    other = round_zero(2)
    assert {k: set(v.values()) for k, v in first.items()} != {k: set(v.values()) for k, v in other.items()}
