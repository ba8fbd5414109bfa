"""Robot instructions on a tabletop, in ambiguous / unambiguous pairs (Davila et al., section 3.1).

The scene is fixed: three blocks each of red, yellow and green, and one bowl of
each colour. It lists the objects and nothing more: it does not say what the
robot may pick up, since that would settle the block-or-bowl ambiguity it tests.
Each pair shares action, objects and reference; the ambiguous one swaps exactly
one slot for a vague term from a vocabulary:

- numerical: a precise quantity ("two", "all the") becomes a vague quantifier ("a few");
- attribute, noun: "block" becomes a noun that fits a bowl as well ("item"), so the red block and the red bowl both fit;
- attribute, colour: "red" becomes a synonym or description ("crimson", "cherry-colored"), never one holding a colour's name;
- spatial: a precise relation ("on", "to the left of") becomes a vague one ("near").

References are a bowl ("the green bowl") or a block ("a green block": the scene
has three, and "a" says any of them will do, so the unambiguous twin stays
unambiguous), always of another colour than the object moved.

Every line also says what a good clarifying question must ask about, as
``ask_about`` in words and ``cues`` (phrases the scoring rule looks for besides its
own, see :mod:`lexicoord.tasks.clarifying`).

Coverage is by construction (:mod:`lexicoord.tasks.dealing`): every vocabulary a
type draws from is dealt in shuffled copies and repaired only by moves that never
lose an item, so every item appears, for every seed, once N per type reaches the
vocabulary's size. The attribute slot's vocabulary is the vague nouns and the colour
synonyms together, so the subtype (noun or colour) follows from the term dealt.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Callable, Sequence
from typing import Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.errors import ConfigError
from lexicoord.tasks.dealing import Assignment, Deal

COLOURS = ("red", "yellow", "green")
SCENE = (
    "A robot arm works at a table. On the table there are nine blocks: three red blocks, three yellow blocks "
    "and three green blocks. There are also three bowls: one red bowl, one yellow bowl and one green bowl."
)

ACTIONS = ("put", "place", "move", "set")
#: Precise quantities of blocks, with how many each means (the scene has three of a colour).
QUANTITIES = {"one": 1, "two": 2, "three": 3, "all the": 3}
VAGUE_QUANTIFIERS = ("a few", "some", "several", "a couple of", "a handful of", "a number of", "multiple")
NOUN = "block"
#: General nouns: each fits a bowl as well as a block.
VAGUE_NOUNS = ("item", "thing", "object", "article")
COLOUR_SYNONYMS = {
    "red": ("crimson", "scarlet", "cherry-colored", "ruby", "rust-colored"),
    "yellow": ("golden", "amber", "lemon-colored", "mustard", "straw-colored"),
    "green": ("emerald", "olive", "lime-colored", "jade", "moss-colored"),
}
#: Objects a relation may refer to: each colour's bowl and (any) block of that colour.
REFERENCES = tuple(f"{c} {kind}" for kind in ("bowl", "block") for c in COLOURS)
RELATIONS = ("on", "into", "to the left of", "to the right of", "in front of", "behind")
#: Relations that need a container as reference.
INTO_ONLY_BOWLS = ("into",)
VAGUE_RELATIONS = ("near", "next to", "beside", "by", "close to", "around", "lateral to", "along the line of sight of")
ATTRIBUTE_TERMS = VAGUE_NOUNS + tuple(s for c in COLOURS for s in COLOUR_SYNONYMS[c])
SYNONYM_COLOUR = {s: c for c, syns in COLOUR_SYNONYMS.items() for s in syns}

Category = Literal["numerical", "attribute", "spatial"]
CATEGORIES: tuple[Category, ...] = ("numerical", "attribute", "spatial")
#: Phrases stored with each slot for readers of the file (the rule has its own, slot by slot).
SLOT_CUES = {
    "quantity": ("how many", "number of"),
    "noun": ("block or bowl", "what kind of object"),
    "colour": ("colour", "which colour"),
    "relation": ("where", "which side"),
}


class Slot(BaseModel):
    """The part of the instruction that is vague in the ambiguous twin."""

    model_config = ConfigDict(extra="forbid")

    name: Literal["quantity", "noun", "colour", "relation"] | str = Field(min_length=1, max_length=40)
    vague: str = Field(min_length=1, max_length=80)
    precise: str = Field(default="", max_length=80)
    ask_about: str = Field(min_length=1, max_length=300)
    cues: list[str] = Field(min_length=1, max_length=40)


class InstructionPair(BaseModel):
    """One line of a generated file: the scene, both instructions, and the slot that differs."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    type: str = Field(min_length=1, max_length=40)
    subtype: str = Field(default="", max_length=40)
    context: str = Field(min_length=1, max_length=4000)
    ambiguous: str = Field(min_length=3, max_length=1000)
    unambiguous: str = Field(min_length=3, max_length=1000)
    slot: Slot


def _blocks(quantity: str, colour: str, noun: str = NOUN) -> str:
    plural = quantity not in ("one", "a single") and not quantity.startswith("one ")
    return f"{quantity} {colour} {noun}s" if plural else f"{quantity} {colour} {noun}"


def reference(ref: str) -> str:
    """``green bowl`` -> "the green bowl"; ``green block`` -> "a green block" (any of the three)."""
    return f"the {ref}" if ref.endswith("bowl") else f"a {ref}"


def _cues(slot: str, extra: Sequence[str] = ()) -> list[str]:
    return list(dict.fromkeys(w.lower() for w in [*extra, *SLOT_CUES[slot]]))


def vocabularies(category: Category) -> dict[str, tuple[str, ...]]:
    """The vocabularies a type draws from, by name: each is dealt once per pair of that type."""
    common = {"actions": ACTIONS, "colours": COLOURS, "references": REFERENCES, "relations": RELATIONS}
    if category == "numerical":
        return {**common, "quantities": tuple(QUANTITIES), "vague_quantifiers": VAGUE_QUANTIFIERS}
    if category == "attribute":
        return {**common, "attribute_terms": ATTRIBUTE_TERMS}
    return {**common, "quantities": tuple(QUANTITIES), "vague_relations": VAGUE_RELATIONS}


def _valid(a: Assignment, category: Category) -> bool:
    """The constraints of one combination: the reference is of another colour; "into" needs a bowl."""
    colour = a["colours"]
    if category == "attribute" and a["attribute_terms"] in SYNONYM_COLOUR and SYNONYM_COLOUR[a["attribute_terms"]] != colour:
        return False
    return not a["references"].startswith(f"{colour} ") and not (
        a["relations"] in INTO_ONLY_BOWLS and not a["references"].endswith("bowl"))


def _texts(category: Category, a: Assignment) -> tuple[str, str]:
    """The ambiguous instruction of a combination and its unambiguous twin."""
    action, colour, ref, relation = a["actions"].capitalize(), a["colours"], a["references"], a["relations"]
    target = f"{relation} {reference(ref)}"
    if category == "numerical":
        return (f"{action} {_blocks(a['vague_quantifiers'], colour)} {target}.",
                f"{action} {_blocks(a['quantities'], colour)} {target}.")
    clear = f"{action} {_blocks(a.get('quantities', 'one'), colour)} {target}."
    if category == "attribute" and a["attribute_terms"] in VAGUE_NOUNS:
        return f"{action} one {colour} {a['attribute_terms']} {target}.", clear
    if category == "attribute":
        return f"{action} one {a['attribute_terms']} {NOUN} {target}.", clear
    return f"{action} {_blocks(a['quantities'], colour)} {a['vague_relations']} {reference(ref)}.", clear


def _slot(category: Category, a: Assignment) -> tuple[str, Slot]:
    """The subtype and the vague slot of a combination."""
    colour, ref = a["colours"], reference(a["references"])
    if category == "numerical":
        return "quantity", Slot(name="quantity", vague=a["vague_quantifiers"], precise=a["quantities"],
                                ask_about=f"how many {colour} blocks to move (the scene has three)",
                                cues=_cues("quantity"))
    if category == "attribute" and a["attribute_terms"] in VAGUE_NOUNS:
        return "noun", Slot(name="noun", vague=a["attribute_terms"], precise=NOUN,
                            ask_about=f"which kind of {colour} object is meant: a {colour} block or the {colour} bowl",
                            cues=_cues("noun", [f"{colour} bowl"]))
    if category == "attribute":
        vague = a["attribute_terms"]
        return "colour", Slot(name="colour", vague=vague, precise=colour,
                              ask_about=f"which colour of block '{vague}' means (red, yellow or green)",
                              cues=_cues("colour"))
    return "relation", Slot(name="relation", vague=a["vague_relations"], precise=a["relations"],
                            ask_about=f"where exactly relative to {ref} the {colour} blocks should go",
                            cues=_cues("relation"))


def _pair(category: Category, a: Assignment, number: int) -> InstructionPair:
    amb, clear = _texts(category, a)
    subtype, slot = _slot(category, a)
    return InstructionPair(id=f"{category}-{number:03d}", type=category, subtype=subtype, context=SCENE,
                           ambiguous=amb, unambiguous=clear, slot=slot)


def _lines(category: Category) -> Callable[[Assignment], tuple[str, ...] | None]:
    def make(a: Assignment) -> tuple[str, ...] | None:
        return _texts(category, a) if _valid(a, category) else None
    return make


@functools.cache
def _capacity(category: Category) -> int:
    """How many pairs of a type can be distinct at most: its distinct valid instructions, of each twin."""
    vocab = vocabularies(category)
    names = list(vocab)
    make = _lines(category)
    amb, clear = set(), set()
    for combo in itertools.product(*vocab.values()):
        lines = make(dict(zip(names, combo)))
        if lines is not None:
            amb.add(lines[0])
            clear.add(lines[1])
    return min(len(amb), len(clear))


def _is_category(name: str) -> TypeGuard[Category]:
    return name in CATEGORIES


def generate(per_category: int, seed: int = 0, categories: Sequence[str] = CATEGORIES) -> list[InstructionPair]:
    """``per_category`` distinct pairs of each category, the same for the same seed."""
    unknown = [c for c in categories if not _is_category(c)]
    if unknown:
        raise ConfigError(f"Unknown ambiguity type(s) {', '.join(unknown)}; use {', '.join(CATEGORIES)}.")
    chosen = [c for c in categories if _is_category(c)]  # all of them, in the order given
    if per_category < 1:
        raise ConfigError("Generate at least one pair per category.")
    out: list[InstructionPair] = []
    taken: set[str] = set()  # every instruction so far, of any type: a twin never repeats another line's
    for category in chosen:
        capacity = _capacity(category)
        if per_category > capacity:
            raise ConfigError(f"The vocabularies hold only {capacity} distinct {category} pairs; "
                              f"ask for fewer than {per_category}.")
        deal = Deal(vocabularies(category), per_category, random.Random(f"{seed}:{category}"), _lines(category), taken)
        combos = deal.solve(budget=200 * per_category + 20_000)
        if combos is None:
            raise ConfigError(f"Could not deal {per_category} distinct {category} pairs from the vocabularies "
                              f"(at most {capacity} exist); ask for fewer than {per_category}.")
        for number, combo in enumerate(combos):
            pair = _pair(category, combo, number)
            taken.update((pair.ambiguous, pair.unambiguous))
            out.append(pair)
    return out


def vocabulary() -> dict[str, tuple[str, ...]]:
    """Every vocabulary the generator draws from, by name, whatever the type."""
    out: dict[str, tuple[str, ...]] = {}
    for category in CATEGORIES:
        out.update(vocabularies(category))
    return out

