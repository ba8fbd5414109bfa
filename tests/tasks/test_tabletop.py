"""The instruction generator: seeded, covering every vocabulary, twins that differ in exactly the vague slot."""

import re

import pytest

from lexicoord.errors import ConfigError
from lexicoord.tasks.tabletop import (
    CATEGORIES,
    COLOUR_SYNONYMS,
    COLOURS,
    QUANTITIES,
    VAGUE_NOUNS,
    VAGUE_QUANTIFIERS,
    VAGUE_RELATIONS,
    generate,
    vocabulary,
)


def words(text: str) -> str:
    return f" {' '.join(re.sub(r'[^a-z -]', ' ', text.lower()).split())} "


def contains(text: str, term: str) -> bool:
    return f" {term.lower()} " in words(text)


def test_the_same_seed_gives_the_same_pairs_and_another_seed_others() -> None:
    first = [p.model_dump() for p in generate(6, seed=3)]
    assert first == [p.model_dump() for p in generate(6, seed=3)]
    assert first != [p.model_dump() for p in generate(6, seed=4)]


def test_n_per_category_distinct_pairs_with_unique_ids() -> None:
    pairs = generate(10, seed=1)
    for category in CATEGORIES:
        mine = [p for p in pairs if p.type == category]
        assert len(mine) == 10
        assert len({p.ambiguous for p in mine}) == 10
    assert len({p.id for p in pairs}) == len(pairs)


def test_every_vocabulary_item_is_reachable() -> None:
    pairs = generate(40, seed=0)
    text = " ".join(f"{p.ambiguous} {p.unambiguous}" for p in pairs)
    for name, items in vocabulary().items():
        for item in items:
            assert contains(text, item), f"{name} item {item!r} never generated"
    slots = {(p.slot.name, p.slot.vague) for p in pairs}
    for q in VAGUE_QUANTIFIERS:
        assert ("quantity", q) in slots
    for n in VAGUE_NOUNS:
        assert ("noun", n) in slots
    for c in COLOURS:
        for s in COLOUR_SYNONYMS[c]:
            assert ("colour", s) in slots
    for r in VAGUE_RELATIONS:
        assert ("relation", r) in slots
    assert {p.slot.precise for p in pairs if p.slot.name == "quantity"} == set(QUANTITIES)


def test_ambiguous_twins_hold_the_vague_term_and_unambiguous_ones_do_not() -> None:
    for p in generate(25, seed=7):
        assert contains(p.ambiguous, p.slot.vague), p
        assert not contains(p.unambiguous, p.slot.vague), p
        assert contains(p.unambiguous, p.slot.precise), p
        assert p.slot.cues and p.slot.ask_about
        assert p.slot.vague not in p.slot.cues, "repeating the vague term is not asking about it"


def test_twins_differ_only_in_the_slot_and_the_reference_is_another_object() -> None:
    for p in generate(25, seed=2):
        moved = next(c for c in COLOURS if contains(p.unambiguous, f"{c} block") or contains(p.unambiguous, f"{c} blocks"))
        referenced = re.search(r"the (\w+) bowl\.$", p.unambiguous).group(1)
        assert referenced != moved, p
        amb, clear = words(p.ambiguous), words(p.unambiguous)
        assert amb.replace(f" {p.slot.vague} ", " ") != amb
        if p.slot.name in ("colour", "relation", "noun"):  # a one-for-one swap: the rest of the sentence is identical
            assert amb.replace(f" {p.slot.vague} ", f" {p.slot.precise} ") == clear


def test_no_instruction_repeats_another_line_of_any_type() -> None:
    pairs = generate(20, seed=0)
    lines = [p.ambiguous for p in pairs] + [p.unambiguous for p in pairs]
    assert len(set(lines)) == len(lines)


def test_attribute_alternates_noun_and_colour_and_the_scene_is_the_papers() -> None:
    pairs = [p for p in generate(6, seed=0) if p.type == "attribute"]
    assert {p.subtype for p in pairs} == {"noun", "colour"}
    assert "three red blocks" in pairs[0].context and "one green bowl" in pairs[0].context


def test_asking_for_more_pairs_than_exist_or_an_unknown_type_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="distinct numerical pairs; ask for fewer"):
        generate(100_000, seed=0, categories=["numerical"])
    with pytest.raises(ConfigError, match="Unknown ambiguity type"):
        generate(2, categories=["temporal"])
