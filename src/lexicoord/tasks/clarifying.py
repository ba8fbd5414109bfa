"""Which slot a clarifying question asks about: the scoring rule of the debate study.

The rule reads a question the way a person grading it would, slot by slot:

- Words are compared without case, punctuation, articles ("a", "an", "the")
  or plural -s, so a cue matches "the red bowls" as well as "a red bowl".
- An echo of the vague term is masked before cues are looked for: "a number of
  red blocks?" repeats the vague term and asks nothing, so the "number" inside it
  is not a quantity cue (a term that opens with an article is echoed only with
  one: "what number of blocks?" is a real question). Asking what the term means is a question about it
  ("what do you mean by a few?", "does jade mean green?").
- Cues are specific to a slot. A count word counts as a quantity cue only where
  it proposes a count ("just one", "two or three", "move all of them"), not
  where it names a group ("which of the three red blocks"). "Right" is a relation
  only as a side ("to the right", "right of", "left or right"), never as "is that
  right?". A colour is asked about by the words colour/shade/hue, by a choice
  between colours ("green or yellow") or by a proposed meaning ("do you mean
  green?"), not by a colour word inside a description ("which sea green block?").
  A relation is also asked by a choice between relations ("in or next to it?").
- A question about the object the instruction names precisely as its reference
  ("the green bowl" in "put a few red blocks in the green bowl") asks nothing about
  the vague slot, whatever cue words it holds: "Which green bowl?", "Where is the
  green bowl?", "How many green bowls are there?", "Do you mean the green bowl?".
  A reference is a colour and a noun after a preposition of the instruction (or
  after its vague relation); a clause of the question in which the reference is
  what is asked about, rather than the place the object goes ("into the green
  bowl", "left of it"), is left out before any cue is looked for. On a colour slot,
  a colour that describes another kind of object than the vague one ("the red
  bowl" when the block is crimson) proposes no colour for it.
- A question that asks about more than one slot is a *shotgun* question: it is
  counted apart, never as success. Other slots are recognised by their
  questioning cues only ("how many", "what colour", "where"), so repeating the
  instruction's own precise words ("all three red blocks") does not make a
  question a shotgun.

For the tabletop's slots (quantity, noun, colour, relation) the rule's own cues
apply together with the item's ``cues``; a slot of another name (a user's own
data) is scored by its ``cues`` alone, read the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

ARTICLES = frozenset({"a", "an", "the"})
VAGUE = "<vague>"
GROUP = "<group>"
REF = "<ref>"
OTHER = "<other>"
COLOURS = ("red", "yellow", "green", "blue", "orange", "purple", "pink", "brown", "black", "white", "grey", "gray")
COUNTS = frozenset({"one", "two", "three", "four", "five", "single", "both", "all", "every"})
#: Words before a count that make it name a group, not propose a count ("which of the three").
GROUP_BEFORE = frozenset({"the", "these", "those", "of", "which", "that", "this", "any", "another"})
#: Words before "one" that make it a pronoun ("which one", "the red one").
PRONOUN_ONE = GROUP_BEFORE | frozenset(COLOURS) | frozenset({"each", "every", "no", "some", "other", "first", "last"})
RELATION_WORDS = frozenset({"in", "into", "inside", "on", "onto", "top", "next", "beside", "near", "by", "left", "right",
                            "front", "behind", "around", "close", "far", "under", "over", "above", VAGUE})
MEANING = ("mean by {v}", "meant by {v}", "{v} mean", "{v} refer", "by {v} do you mean", "by {v} you mean",
           "interpret {v}", "definition of {v}", "understand by {v}", "what is {v}", "how close is {v}")

#: Phrases that ask about a slot (shotgun detection uses these for the other slots).
QUESTIONING = {
    "quantity": ("how many", "how much", "what number", "number of", "what quantity", "quantity", "amount",
                 "exact count", "how many of"),
    "noun": ("what kind of", "which kind of", "what type of", "which type of", "what sort of", "block or bowl",
             "bowl or block"),
    "colour": ("colour", "color", "shade", "hue", "tint"),
    "relation": ("where", "which side", "what side", "how close", "how far", "what distance", "what position",
                 "exact position", "exact spot", "which spot", "what spot", "exact location", "what location"),
}
#: Further phrases that ask about the item's own slot.
OWN = {
    "quantity": (),
    "noun": ("kind of object", "type of object"),
    "colour": (),
    "relation": ("left", "right of", "to right", "right side", "right hand", "in front", "front of", "behind",
                 "inside", "in it", "into it", "on it", "onto it", "on top", "position", "location", "distance",
                 "spot"),
}
#: Words before an object that make it the place something goes ("in the green bowl", "next to it").
LANDMARK_BEFORE = frozenset({"in", "into", "inside", "on", "onto", "to", "from", "near", "by", "beside", "behind",
                             "around", "at", "under", "over", "above", "below", "beneath", "underneath", "toward",
                             "towards", "against", "between", "past", "along", "beyond", "outside", "within",
                             "across", "atop", "with"})
#: Words before "of" that make it a relation ("left of", "in front of", "on top of"), not a part ("some of").
RELATIONAL_OF = frozenset({"left", "right", "front", "top", "side", "sight", "back", "rear", "edge", "middle",
                           "centre", "center"})
#: The kinds of object on the table: a colour before one of them describes that object.
SCENE_NOUNS = frozenset({"block", "bowl"})
#: Words that end a clause: a reference asked about in one clause leaves the others standing.
CLAUSE_END = re.compile(r"[,;:?!.]+|\s[-\u2013\u2014]+\s|[\u2013\u2014]+")
#: "where's the bowl" is "where is the bowl" (a possessive -'s elsewhere stays a plural-like ending).
CONTRACTED_IS = re.compile(r"\b(where|what|how|which|who|there|here|that|it)'s\b")
Asked = Literal["slot", "shotgun", "other", "none"]


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-case words without punctuation; hyphens and underscores split words ("sea-green" -> sea green)."""
    text = CONTRACTED_IS.sub(r"\1 is", text.lower().replace("\u2019", "'").replace("_", " ").replace("-", " "))
    return [_singular(w) for w in re.findall(r"[a-z0-9]+(?:'[a-z]+)?|<vague>|<group>", text)]


def _article(word: str) -> str:
    return "the" if word in ARTICLES else word


def _mask(tokens: list[str], term: list[str]) -> list[str]:
    """Replace every echo of ``term`` by one VAGUE token ("a", "an" and "the" interchangeable).

    A term that starts with an article keeps it ("a few" is not "few", "a number of" is not "what
    number of"): its echo must have an article there too.
    """
    if not term:
        return tokens
    want = [_article(t) for t in term]
    out, i = [], 0
    while i < len(tokens):
        if [_article(t) for t in tokens[i : i + len(want)]] == want:
            out.append(VAGUE)
            i += len(want)
        else:
            out.append(tokens[i])
            i += 1
    return out


def _groups(tokens: list[str]) -> list[str]:
    """Mark count words that name a group ("of the three") or a pronoun ("which one") as GROUP."""
    out = []
    for i, w in enumerate(tokens):
        before = tokens[i - 1] if i else ""
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        if w == "one" and before in PRONOUN_ONE and after != "or":
            out.append(GROUP)
        elif w in COUNTS and w != "one" and before in GROUP_BEFORE and after != "or":
            out.append(GROUP)
        elif w in COUNTS and _existential(tokens[:i]):
            out.append(GROUP)
        else:
            out.append(w)
    return out


def _existential(before: list[str]) -> bool:
    """Whether a count follows "there is" / "there are" (with "only", "just"): it counts what the scene holds
    ("there's only one green bowl"), not what to move."""
    rest = list(before)
    while rest and rest[-1] in ("only", "just", "exactly"):
        rest.pop()
    return rest[-2:] in (["there", "is"], ["there", "are"])


def _landmark(tokens: Sequence[str], i: int) -> bool:
    """Whether the object at ``i`` is where something goes ("into the green bowl", "left of it", "near it")."""
    before = tokens[i - 1] if i else ""
    return before in LANDMARK_BEFORE or before == VAGUE or (
        before == "of" and i >= 2 and tokens[i - 2] in RELATIONAL_OF)


def _mask_references(tokens: list[str], references: Sequence[tuple[str, str]]) -> list[str]:
    out, i = [], 0
    while i < len(tokens):
        if tuple(tokens[i : i + 2]) in references:
            out.append(REF)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


def prepared(question: str, vague: str, references: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The question's words, counts that name groups marked, articles dropped and the vague term masked.

    With ``references``, every mention of one becomes REF, and a clause in which a reference is what is
    asked about (not where something goes) is left out: it asks about the reference, not about the slot.
    """
    out: list[str] = []
    for clause in CLAUSE_END.split(question):
        tokens = [t for t in _groups(_mask(words(clause), words(vague))) if t not in ARTICLES]
        if references:
            tokens = _mask_references(tokens, references)
            if any(t == REF and not _landmark(tokens, i) for i, t in enumerate(tokens)):
                continue
        out.extend(tokens)
    return out


def _object_noun(instruction: Sequence[str]) -> str:
    """The noun right after the vague term in the prepared instruction ("one crimson block" -> block)."""
    i = instruction.index(VAGUE) if VAGUE in instruction else -1
    return instruction[i + 1] if 0 <= i < len(instruction) - 1 else ""


def references(instruction: str, slot: dict[str, Any]) -> list[tuple[str, str]]:
    """The objects the instruction names precisely as where things go: a colour and a noun after a
    preposition ("on the green bowl", "to the left of a red block") or, on a relation slot, after the vague
    relation ("near the yellow bowl"). On a colour slot, an object of the vague one's own kind ("behind a
    yellow block", for "one crimson block") is no reference: "do you mean a yellow block?" may propose
    the colour."""
    name, tokens = str(slot.get("name", "")), prepared(instruction, str(slot.get("vague", "")))
    own = _object_noun(tokens)
    out = []
    for i, (colour, noun) in enumerate(zip(tokens, tokens[1:])):
        if colour not in COLOURS or not noun.isalpha() or noun in COLOURS or noun in COUNTS:
            continue
        before = tokens[i - 1] if i else ""
        if before == VAGUE and name != "relation":
            continue  # "a few red blocks": the vague quantity is no place
        if _landmark(tokens, i) and not (name == "colour" and noun == own):
            out.append((colour, noun))
    return out


def _other_objects(tokens: list[str], own: str) -> list[str]:
    """Colours that describe another kind of object than ``own`` ("the red bowl" beside a block) as OTHER."""
    if own not in SCENE_NOUNS:
        return tokens
    return [OTHER if t in COLOURS and i + 1 < len(tokens) and tokens[i + 1] in SCENE_NOUNS - {own} else t
            for i, t in enumerate(tokens)]


def _has(tokens: Sequence[str], phrase: str) -> bool:
    target = [t for t in words(phrase) if t not in ARTICLES]
    n = len(target)
    return bool(n) and any(list(tokens[i : i + n]) == target for i in range(len(tokens) - n + 1))


def _any(tokens: Sequence[str], phrases: Iterable[str]) -> bool:
    return any(_has(tokens, p) for p in phrases)


def _choice(tokens: Sequence[str], options: Iterable[str], before: int = 3, after: int = 2) -> bool:
    """Whether the question offers a choice "X or Y", X among ``options`` in the few words before "or" and Y
    in the few after ("in or next to it", "in the bowl or next to it", "the green one or the yellow")."""
    allowed = set(options)
    return any(t == "or" and allowed & set(tokens[max(0, i - before) : i]) and allowed & set(tokens[i + 1 : i + 1 + after])
               for i, t in enumerate(tokens))


def asks_meaning(tokens: Sequence[str]) -> bool:
    """Whether the question asks what the (masked) vague term means."""
    return VAGUE in tokens and _any(tokens, (m.format(v=VAGUE) for m in MEANING))


def _count_proposed(tokens: Sequence[str]) -> bool:
    return any(t in COUNTS for t in tokens)


def _colour_asked(tokens: Sequence[str]) -> bool:
    named = [c for c in COLOURS if c in tokens]
    proposal = any(_has(tokens, f"{frame} {c}") for c in named
                   for frame in ("mean", "meant", "is it", "is that", "is this", f"is {VAGUE}", "do you want"))
    return _choice(tokens, COLOURS) or proposal


def asks_slot(tokens: Sequence[str], slot: str, cues: Iterable[str] = ()) -> bool:
    """Whether the prepared question asks about ``slot``, by the slot's own cues and ``cues``."""
    if asks_meaning(tokens) or _any(tokens, cues):
        return True
    if slot not in QUESTIONING:
        return False
    if _any(tokens, QUESTIONING[slot]) or _any(tokens, OWN[slot]):
        return True
    if slot == "quantity":
        return _count_proposed(tokens)
    if slot == "colour":
        return _colour_asked(tokens)
    if slot == "noun":
        return _choice(tokens, ("block", "bowl"), before=2, after=2) and {"block", "bowl"} <= set(tokens)
    if slot == "relation":
        return _choice(tokens, RELATION_WORDS)
    return False


def asks_other(tokens: Sequence[str], slot: str) -> list[str]:
    """The other slots the question asks about, by their questioning cues (and choices between relations)."""
    out = []
    for other, phrases in QUESTIONING.items():
        if other == slot:
            continue
        if _any(tokens, phrases) or (other == "relation" and _choice([t for t in tokens if t != VAGUE],
                                                                      RELATION_WORDS - {VAGUE})):
            out.append(other)
    return out


def classify(question: str, slot: dict[str, Any], instruction: str = "") -> Asked:
    """``slot``: the question asks about the item's slot alone; ``shotgun``: about more than one slot;
    ``other``: about another slot only; ``none``: about no slot the rule knows (or no question).

    ``instruction`` names the objects a question may ask about instead of the slot (:func:`references`).
    """
    name, vague = str(slot.get("name", "")), str(slot.get("vague", ""))
    tokens = prepared(question, vague, references(instruction, slot))
    if name == "colour":
        tokens = _other_objects(tokens, _object_noun(prepared(instruction, vague)))
    if not tokens:
        return "none"
    own = asks_slot(tokens, name, slot.get("cues") or [])
    others = asks_other(tokens, name)
    if own and others or len(others) > 1:
        return "shotgun"
    if own:
        return "slot"
    return "other" if others else "none"
