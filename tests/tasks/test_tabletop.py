"""The instruction generator: seeded, covering every vocabulary, twins that differ in exactly the vague slot."""

import re

import pytest

from lexicoord.errors import ConfigError
from lexicoord.tasks.tabletop import (
    CATEGORIES,
    COLOUR_SYNONYMS,
    COLOURS,
    QUANTITIES,
    RELATIONS,
    SCENE,
    VAGUE_NOUNS,
    VAGUE_QUANTIFIERS,
    VAGUE_RELATIONS,
    generate,
    reference,
    vocabularies,
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


def appears(pairs, name: str, item: str) -> bool:
    """Whether a vocabulary item shows in the pairs' text (a reference as the scene names it)."""
    text = " ".join(f"{p.ambiguous} {p.unambiguous}" for p in pairs)
    return contains(text, reference(item) if name == "references" else item)


def test_every_vocabulary_item_appears_for_every_seed_once_n_reaches_its_size() -> None:
    """A property over many seeds: N per type = a vocabulary's size is enough to show all of it, in every type."""
    sizes = sorted({len(v) for c in CATEGORIES for v in vocabularies(c).values()})
    for seed in range(40):
        for n in sizes:
            pairs = generate(n, seed=seed)
            for category in CATEGORIES:
                mine = [p for p in pairs if p.type == category]
                for name, items in vocabularies(category).items():
                    if len(items) > n:
                        continue
                    for item in items:
                        assert appears(mine, name, item), (seed, n, category, name, item)
    assert set(vocabulary()) >= {"actions", "quantities", "vague_quantifiers", "attribute_terms", "relations",
                                 "vague_relations", "colours", "references"}


def test_every_vague_term_is_a_slot_and_every_precise_quantity_is_used() -> None:
    pairs = generate(20, seed=0)
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


def test_the_scene_does_not_settle_what_the_robot_may_pick_up() -> None:
    """The block-or-bowl ambiguity is tested, so the scene must not say the robot handles blocks only."""
    assert not re.search(r"\bpick(s)? up\b[^.]*\bblocks\b", SCENE, re.IGNORECASE)
    assert "three red blocks" in SCENE and "one green bowl" in SCENE


def test_vague_nouns_fit_a_bowl_as_well_as_a_block() -> None:
    general = {"item", "thing", "object", "article", "piece of tableware", "one", "stuff"}  # words a bowl answers to
    assert set(VAGUE_NOUNS) <= general, set(VAGUE_NOUNS) - general


def test_no_colour_synonym_holds_a_colour_name() -> None:
    for colour, synonyms in COLOUR_SYNONYMS.items():
        for s in synonyms:
            assert not set(re.split(r"[^a-z]+", s.lower())) & set(COLOURS), (colour, s)


def test_references_are_bowls_and_blocks_and_the_relations_include_on() -> None:
    pairs = generate(20, seed=0)
    ends = {p.unambiguous.rsplit(" ", 1)[-1] for p in pairs}
    assert ends == {"bowl.", "block."}
    assert "on" in RELATIONS and any(contains(p.unambiguous, "on") for p in pairs)
    for p in pairs:
        assert not re.search(r"\binto a \w+ block", p.unambiguous), p.unambiguous


def test_ambiguous_twins_hold_the_vague_term_and_unambiguous_ones_do_not() -> None:
    for p in generate(25, seed=7):
        assert contains(p.ambiguous, p.slot.vague), p
        assert not contains(p.unambiguous, p.slot.vague), p
        assert contains(p.unambiguous, p.slot.precise), p
        assert p.slot.cues and p.slot.ask_about
        assert p.slot.vague not in p.slot.cues, "repeating the vague term is not asking about it"


def test_twins_differ_only_in_the_slot_and_the_reference_is_another_object() -> None:
    for p in generate(25, seed=2):
        moved = re.search(r"\b(red|yellow|green)\b", p.unambiguous).group(1)
        referenced = re.search(r"(?:the|a) (\w+) (?:bowl|block)\.$", p.unambiguous).group(1)
        assert referenced != moved, p
        amb, clear = words(p.ambiguous), words(p.unambiguous)
        assert amb.replace(f" {p.slot.vague} ", " ") != amb
        if p.slot.name in ("colour", "relation", "noun"):  # a one-for-one swap: the rest of the sentence is identical
            assert amb.replace(f" {p.slot.vague} ", f" {p.slot.precise} ") == clear


def test_no_instruction_repeats_another_line_of_any_type() -> None:
    pairs = generate(20, seed=0)
    lines = [p.ambiguous for p in pairs] + [p.unambiguous for p in pairs]
    assert len(set(lines)) == len(lines)


def test_attribute_pairs_are_of_noun_and_colour_and_the_scene_is_the_papers() -> None:
    pairs = [p for p in generate(len(vocabularies("attribute")["attribute_terms"]), seed=0) if p.type == "attribute"]
    assert {p.subtype for p in pairs} == {"noun", "colour"}
    assert "three red blocks" in pairs[0].context and "one green bowl" in pairs[0].context


def test_asking_for_more_pairs_than_exist_or_an_unknown_type_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="distinct numerical pairs; ask for fewer"):
        generate(100_000, seed=0, categories=["numerical"])
    with pytest.raises(ConfigError, match="distinct attribute pairs"):
        generate(265, seed=0, categories=["attribute"])
    with pytest.raises(ConfigError, match="Unknown ambiguity type"):
        generate(2, categories=["temporal"])
