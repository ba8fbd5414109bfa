"""GSM8K, FOLIO and MMLU: each benchmark's extraction and equality, loaders, seeded slices (the reading of
replies itself is tested in test_answers.py)."""

from types import SimpleNamespace

import pytest

from lexicoord.tasks.benchmarks import FOLIO, GSM8K, MMLU, PAPER_SIZES, seeded_slice, stratified_slice
from lexicoord.tasks.jsonl import DatasetError
from tests.conftest import shared_data

shared = shared_data


def test_gsm8k_compares_numbers_not_strings() -> None:
    task = GSM8K()
    assert task.equal("1000", "1000") and task.equal("-3.0", "-3") and not task.equal("3", "-3")
    assert task.equal("0.75", "3/4") and task.equal("18.00", "18") and task.equal("$1,000", "1000")
    assert not task.equal(None, "3"), "an invalid answer is wrong, never right"
    assert not task.equal("eighteen", "18"), "text that is not a number is wrong, not an error"
    assert task.score({"answer": "18"}, SimpleNamespace(answer=task.extract("#### $18"))) is True
    assert task.score({"answer": "18"}, SimpleNamespace(answer=task.extract("#### 18.00"))) is True
    assert task.score({"answer": "18"}, SimpleNamespace(answer=None)) is False


def test_each_benchmark_reads_its_replies_with_the_answer_readers() -> None:
    assert GSM8K().extract("The answer is $\\dfrac{3}{4}$.") == "0.75", "written back exactly, as a decimal"
    assert GSM8K().extract("\\boxed{\\frac{1}{3}}") == "1/3"
    assert GSM8K().extract("ANSWER: -12") == "-12" and GSM8K().extract("#### 18.00") == "18"
    assert MMLU().extract("Answer: (c)") == "C" and MMLU().extract("Answer: A or B") is None
    assert FOLIO().extract("ANSWER: False.\nThis answer is true to the premises") == "False"


def test_gold_numbers_are_read_whole(tmp_path) -> None:
    """A gold answer is one number; one with words in it is a bad line, not a number guessed out of it."""
    path = tmp_path / "g.jsonl"
    path.write_text('{"question": "q", "answer": "9 * 2 = 18\\n#### 1,000"}\n', encoding="utf-8")
    assert GSM8K().load(str(path))[0].answer == "1000"
    path.write_text('{"question": "q", "answer": "#### 12 apples"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="the answer '12 apples' is not a number"):
        GSM8K().load(str(path))


def test_the_public_files_load_with_the_papers_sizes() -> None:
    gsm = GSM8K().load(str(shared("gsm8k/test.jsonl")))
    folio = FOLIO().load(str(shared("folio/folio-validation.jsonl")))
    mmlu = MMLU().load(str(shared("mmlu/test")))
    assert (len(gsm), len(folio), len(mmlu)) == (1319, 204, 14079)
    assert gsm[0].answer == "18" and {i.answer for i in folio} == {"True", "False", "Uncertain"}
    assert len({i.subject for i in mmlu}) == 57 and len({i.id for i in gsm}) == 1319
    assert len(seeded_slice(gsm, PAPER_SIZES["gsm8k"], 0)) == 500 and PAPER_SIZES["folio"] is None
    picked = stratified_slice(mmlu, 500, 0)
    per_subject = {s: sum(1 for i in picked if i.subject == s) for s in {i.subject for i in mmlu}}
    assert len(picked) == 500 and min(per_subject.values()) >= 8 and max(per_subject.values()) <= 9
    assert [i.id for i in stratified_slice(mmlu, 500, 0)] == [i.id for i in picked]


def test_a_slice_is_the_same_for_the_same_seed_and_differs_for_another() -> None:
    items = list(range(100))
    assert seeded_slice(items, 10, 1) == seeded_slice(items, 10, 1) != seeded_slice(items, 10, 2)


def test_bad_rows_are_reported_with_their_numbers(tmp_path) -> None:
    (tmp_path / "law_test.csv").write_text('"Q1",a,b,c,d,B\n"Q2",a,b,c,E\n"Q3",a,b,c,d,Z\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"2 bad line\(s\): line 2: row 2: 5 fields, not 6.*line 3: row 3: answer"):
        MMLU().load(str(tmp_path))
    bad = tmp_path / "g.jsonl"
    bad.write_text('{"question": "q", "answer": "#### twelve"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1: answer: the answer 'twelve' is not a number"):
        GSM8K().load(str(bad))
