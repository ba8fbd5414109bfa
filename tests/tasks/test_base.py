"""The task interface: sources, line-numbered errors, the hub behind an optional package, scoring."""

import importlib.util

import pytest

from lexicoord.errors import ConfigError
from lexicoord.protocols.coordination import CoordinationOutcome
from lexicoord.protocols.debate import DebateOutcome
from lexicoord.tasks.ambiguous import TASK as WORDS
from lexicoord.tasks.base import parse_hub_ref
from lexicoord.tasks.instructions import TASK as INSTRUCTIONS
from lexicoord.tasks.instructions import generated_instructions
from lexicoord.tasks.jsonl import DatasetError


def test_named_sources_and_files_load_through_one_call(tmp_path) -> None:
    assert len(WORDS.load("builtin")) == 285
    path = tmp_path / "mine.jsonl"
    path.write_text('{"id": "a", "sentence": "Hold the part.", "word": "hold", "options": ["grip it", "wait"]}\n'
                    '{"id": "b", "sentence": "x"}\n')
    with pytest.raises(DatasetError, match="line 2: sentence"):
        WORDS.load(str(path))


def test_hub_references_are_parsed_and_need_the_optional_package() -> None:
    assert parse_hub_ref("gsm8k:main@train") == ("gsm8k", "main", "train")
    assert parse_hub_ref("me/words") == ("me/words", None, "test")
    with pytest.raises(ConfigError, match="names no dataset"):
        parse_hub_ref(":x")
    if importlib.util.find_spec("datasets") is None:
        with pytest.raises(ConfigError, match="needs the optional datasets package"):
            WORDS.load("hf:me/words")


def game(converged: bool, interpretation: str | None) -> CoordinationOutcome:
    return CoordinationOutcome(converged=converged, reason="converged" if converged else "bound",
                               interpretation=interpretation, rounds=1)


def answer(verdict: str, question: str = "", termination: str = "consensus") -> DebateOutcome:
    return DebateOutcome(condition="debate", termination=termination, rounds=1, verdict=verdict, question=question)


def test_scoring_is_the_task_s_on_the_protocol_s_typed_outcome() -> None:
    item = {"intended": "grip it"}
    assert WORDS.score(item, game(True, "grip it")) is True
    assert WORDS.score(item, game(True, "wait")) is False
    assert WORDS.score(item, game(False, None)) is False
    assert WORDS.score({"intended": None}, game(True, "wait")) is None, "open items"
    ambiguous, clear = (i.as_task() for i in generated_instructions(1)[:2])
    assert INSTRUCTIONS.score(clear, answer("clear")) is True
    assert INSTRUCTIONS.score(clear, answer("ambiguous", "How many?")) is False, "a false alarm"
    assert INSTRUCTIONS.score(ambiguous, answer("clear")) is False
    assert INSTRUCTIONS.score(ambiguous, answer("ambiguous", "how many?", termination="error")) is False


def test_a_stratified_sample_takes_each_kind_in_turn_and_keeps_file_order_within_one() -> None:
    from lexicoord.tasks.base import stratified

    items = ["a1", "a2", "a3", "b1", "c1", "c2"]
    assert stratified(items, 4, lambda i: i[0]) == ["a1", "b1", "c1", "a2"]
    assert stratified(items, 100, lambda i: i[0]) == ["a1", "b1", "c1", "a2", "c2", "a3"]
    assert stratified(items, None, lambda i: i[0]) == items
    assert stratified([], 3, lambda i: i) == []
