"""Robot instructions on a tabletop, in ambiguous / unambiguous pairs (Davila et al., section 3.1).

The scene is fixed: three blocks each of red, yellow and green, and one bowl of
each colour. Each pair shares action, objects and reference; the ambiguous one
swaps exactly one slot for a vague term from a vocabulary:

- numerical: a precise quantity ("two", "all the") becomes a vague quantifier ("a few");
- attribute, noun: "block" becomes a vaguer noun ("item"), so the red block and the red bowl both fit;
- attribute, colour: "red" becomes a synonym or description ("crimson", "cherry-colored");
- spatial: a precise relation ("to the left of") becomes a vague one ("near").

Every line also says what a good clarifying question must ask about, as
``ask_about`` in words and ``cues`` for the scoring rule: a question succeeds
when it names one of them, or asks what the vague term means ("what do you
mean by a few?"); repeating the vague term alone is not enough. The referenced
bowl is always of another colour than the blocks moved, so a cue never matches
the reference by accident.

Coverage is by design, not by luck: each vocabulary is dealt from a shuffled
deck, so every item of a vocabulary appears once N per category reaches its size.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.errors import ConfigError

COLOURS = ("red", "yellow", "green")
SCENE = (
    "A robot arm works at a table. On the table there are nine blocks: three red blocks, three yellow blocks "
    "and three green blocks. There are also three bowls: one red bowl, one yellow bowl and one green bowl. "
    "The robot can pick up blocks and put them in or next to the bowls."
)

ACTIONS = ("put", "place", "move", "set")
#: Precise quantities of blocks, with how many each means (the scene has three of a colour).
QUANTITIES = {"one": 1, "two": 2, "three": 3, "all the": 3}
VAGUE_QUANTIFIERS = ("a few", "some", "several", "a couple of", "a handful of", "a number of", "multiple")
NOUN = "block"
VAGUE_NOUNS = ("item", "thing", "object", "piece", "shape", "cube")
COLOUR_SYNONYMS = {
    "red": ("crimson", "scarlet", "cherry-colored", "ruby", "rust-colored"),
    "yellow": ("golden", "amber", "lemon-colored", "mustard", "straw-colored"),
    "green": ("emerald", "olive", "lime-colored", "jade", "sea-green"),
}
RELATIONS = ("into", "to the left of", "to the right of", "in front of", "behind")
VAGUE_RELATIONS = ("near", "next to", "beside", "by", "close to", "around", "lateral to", "along the line of sight of")

Category = Literal["numerical", "attribute", "spatial"]
CATEGORIES: tuple[Category, ...] = ("numerical", "attribute", "spatial")
#: What each slot's clarifying question must ask about, and the cue words the rule looks for
#: (besides the vague term itself).
SLOT_CUES = {
    "quantity": ("how many", "number", "quantity", "count", "amount", "two", "three", "all", "both", "just one",
                 "only one", "one or", "single"),
    "noun": ("block or", "or a block", "or the block", "bowl or", "or the bowl", "or a bowl", "type of object",
             "kind of object", "which object", "what object", "which item", "what item"),
    "colour": ("colour", "color", "shade", "hue"),
    "relation": ("where", "side", "left", "right", "front", "behind", "inside", "into", "position", "location",
                 "how close", "how far", "distance", "exact spot", "on top"),
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


class _Deck:
    """Deals a vocabulary in shuffled rounds, so N draws cover min(N, size) distinct items."""

    def __init__(self, items: Sequence[str], rng: random.Random) -> None:
        self.items, self.rng = list(items), rng
        self.pile: list[str] = []

    def draw(self, avoid: Sequence[str] = ()) -> str:
        if not self.pile:
            self.pile = self.rng.sample(self.items, len(self.items))
        for i, item in enumerate(self.pile):
            if item not in avoid:
                return self.pile.pop(i)
        return self.rng.choice([i for i in self.items if i not in avoid])

    def put_back(self, item: str) -> None:
        """Return a drawn item to the top of the pile (its pair was a repeat), so coverage holds."""
        self.pile.insert(0, item)


def _blocks(quantity: str, colour: str, noun: str = NOUN) -> str:
    plural = quantity not in ("one", "a single") and not quantity.startswith("one ")
    return f"{quantity} {colour} {noun}s" if plural else f"{quantity} {colour} {noun}"


def _cues(slot: str, extra: Sequence[str] = ()) -> list[str]:
    return list(dict.fromkeys(w.lower() for w in [*extra, *SLOT_CUES[slot]]))


def _pairs(category: Category, rng: random.Random, decks: dict[str, _Deck], number: int) -> tuple[InstructionPair, str]:
    """A pair, and the deck its vague term came from."""
    action = decks["action"].draw().capitalize()
    colour = decks["colour"].draw()
    ref = decks["ref"].draw(avoid=[colour])
    relation = decks["relation"].draw()
    target = f"{relation} the {ref} bowl"
    if category == "numerical":
        precise = decks["quantity"].draw()
        vague = decks["vague_quantity"].draw()
        amb = f"{action} {_blocks(vague, colour)} {target}."
        clear = f"{action} {_blocks(precise, colour)} {target}."
        slot = Slot(name="quantity", vague=vague, precise=precise,
                    ask_about=f"how many {colour} blocks to move (the scene has three)", cues=_cues("quantity"))
        subtype, deck = "quantity", "vague_quantity"
    elif category == "attribute" and number % 2 == 0:
        vague = decks["vague_noun"].draw()
        amb = f"{action} one {colour} {vague} {target}."
        clear = f"{action} one {colour} {NOUN} {target}."
        slot = Slot(name="noun", vague=vague, precise=NOUN,
                    ask_about=f"which kind of {colour} object is meant: a {colour} block or the {colour} bowl",
                    cues=_cues("noun", [f"{colour} bowl"]))
        subtype, deck = "noun", "vague_noun"
    elif category == "attribute":
        vague = decks[f"synonym_{colour}"].draw()
        amb = f"{action} one {vague} {NOUN} {target}."
        clear = f"{action} one {colour} {NOUN} {target}."
        slot = Slot(name="colour", vague=vague, precise=colour,
                    ask_about=f"which colour of block '{vague}' means (red, yellow or green)",
                    cues=_cues("colour", [colour]))
        subtype, deck = "colour", f"synonym_{colour}"
    else:
        quantity = decks["quantity"].draw()
        vague = decks["vague_relation"].draw()
        amb = f"{action} {_blocks(quantity, colour)} {vague} the {ref} bowl."
        clear = f"{action} {_blocks(quantity, colour)} {target}."
        slot = Slot(name="relation", vague=vague, precise=relation,
                    ask_about=f"where exactly relative to the {ref} bowl the blocks should go", cues=_cues("relation"))
        subtype, deck = "relation", "vague_relation"
    pair = InstructionPair(id=f"{category}-{number:03d}", type=category, subtype=subtype, context=SCENE,
                           ambiguous=amb, unambiguous=clear, slot=slot)
    return pair, deck


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
        rng = random.Random(f"{seed}:{category}")
        decks = {
            "action": _Deck(ACTIONS, rng), "colour": _Deck(COLOURS, rng), "ref": _Deck(COLOURS, rng),
            "relation": _Deck(RELATIONS, rng), "quantity": _Deck(list(QUANTITIES), rng),
            "vague_quantity": _Deck(VAGUE_QUANTIFIERS, rng), "vague_noun": _Deck(VAGUE_NOUNS, rng),
            "vague_relation": _Deck(VAGUE_RELATIONS, rng),
            **{f"synonym_{c}": _Deck(COLOUR_SYNONYMS[c], rng) for c in COLOURS},
        }
        seen: set[str] = set()
        misses = 0  # draws in a row that repeated an earlier pair: the vocabularies are used up
        while len(seen) < per_category:
            pair, deck = _pairs(category, rng, decks, len(seen))
            if pair.ambiguous in taken or pair.unambiguous in taken:
                decks[deck].put_back(pair.slot.vague)
                misses += 1
                if misses > 2000:
                    raise ConfigError(f"The vocabularies hold only about {len(seen)} distinct {category} pairs; "
                                      f"ask for fewer than {per_category}.")
                continue
            misses = 0
            seen.add(pair.ambiguous)
            taken.update((pair.ambiguous, pair.unambiguous))
            out.append(pair)
    return out


def vocabulary() -> dict[str, tuple[str, ...]]:
    """Every vocabulary the generator draws from, by name (the tests check each item is reachable)."""
    return {
        "actions": ACTIONS, "quantities": tuple(QUANTITIES), "vague_quantifiers": VAGUE_QUANTIFIERS,
        "vague_nouns": VAGUE_NOUNS, "colour_synonyms": tuple(s for c in COLOURS for s in COLOUR_SYNONYMS[c]),
        "relations": RELATIONS, "vague_relations": VAGUE_RELATIONS, "colours": COLOURS,
    }

