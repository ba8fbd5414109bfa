"""GSM8K, FOLIO and MMLU: answers read from messy real-looking replies, equality, loaders, seeded slices."""

from decimal import Decimal
from types import SimpleNamespace

import pytest

from lexicoord.tasks.benchmarks import FOLIO, GSM8K, MMLU, PAPER_SIZES, seeded_slice, stratified_slice
from lexicoord.tasks.jsonl import DatasetError
from tests.conftest import shared_data

shared = shared_data


@pytest.mark.parametrize("reply,number", [
    ("Janet has 16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\n#### 18", "18"),
    ("The answer is $1,250.50.", "1250.50"),
    ("So the change is \\boxed{-3}", "-3"),
    ("**Answer:** 42 dollars", "42"),
    ("First I thought 7. Final answer: 9", "9"),  # the last marker wins
    ("#### 5\nOn reflection, the answer is 6 apples.", "6"),
    ("She pays 0.75 per egg, so the answer is 12.", "12"),
    ("The answer is −4 degrees.", "-4"),  # a Unicode minus
    ("It takes 3 hours.\nTotal: 3", "3"),  # no marker: the last line
    ("I cannot tell.", None),
])
def test_gsm8k_reads_the_last_answer_number(reply: str, number: str | None) -> None:
    assert GSM8K().extract(reply) == (None if number is None else str(Decimal(number)))


def test_gsm8k_compares_numbers_not_strings() -> None:
    task = GSM8K()
    assert task.equal("1000", "1000") and task.equal("-3.0", "-3") and not task.equal("3", "-3")
    assert not task.equal(None, "3"), "an invalid answer is wrong, never right"
    assert task.score({"answer": "18"}, SimpleNamespace(answer=task.extract("#### $18"))) is True
    assert task.score({"answer": "18"}, SimpleNamespace(answer=None)) is False


@pytest.mark.parametrize("reply,letter", [
    ("The answer is (C).", "C"),
    ("Answer: B) Paris", "B"),
    ("\\boxed{D}", "D"),
    ("**Answer: A**", "A"),
    ("Option A is tempting, but B is right.\nAnswer: B", "B"),
    ("I would say C.", "C"),  # no marker: the last line
    ("Answer: none of them", None),
])
def test_mmlu_reads_one_letter(reply: str, letter: str | None) -> None:
    assert MMLU().extract(reply) == letter


@pytest.mark.parametrize("reply,label", [
    ("Final answer: Uncertain", "Uncertain"),
    ("The premises do not settle it. The answer is unknown.", "Uncertain"),
    ("The conclusion looked false at first.\nAnswer: True", "True"),
    ("**Answer:** False", "False"),
    ("It depends.", None),
])
def test_folio_reads_true_false_or_uncertain(reply: str, label: str | None) -> None:
    assert FOLIO().extract(reply) == label


def test_the_last_marker_wins_even_on_one_line() -> None:
    echoed = "End your reply with 'Answer: True', 'Answer: False' or 'Answer: Uncertain'."
    assert FOLIO().extract(echoed) == "Uncertain"
    assert MMLU().extract("Answer: A? No. Answer: C") == "C"
    assert GSM8K().extract("\\boxed{\\frac{1}{2}} then \\boxed{7}") == "7"


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
