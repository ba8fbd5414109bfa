"""``lexicoord cogent run`` as a user runs it: every variant over a slice, resumable, clear errors."""

import json

from tests.cli.test_cli import lexicoord

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
        (["cogent", "run", "--task", "gsm8k", "--data", str(tmp_path / "none.jsonl"), *db], "Cannot read the dataset"),
        (["cogent", "run", "--task", "mmlu", "--data", str(tmp_path), *db], "No MMLU CSV files"),
        (["cogent", "run", "--task", "gsm8k", "--data", "x", "--variant", "chat", *db], "Unknown variant(s) chat"),
        (["cogent", "run", "--task", "gsm8k", "--data", "x", "--tie", "coin", *db], "Bad settings: tie"),
        (["cogent", "run", "--task", "gsm8k", "--data", "x", "-m", "a/b", "-m", "c/d", "-m", "e/f", *db], "at most two"),
    ]
    for args, needle in cases:
        result = lexicoord(*args, check=False)
        assert result.returncode == 1 and needle in result.stderr, (args, result.stderr)
