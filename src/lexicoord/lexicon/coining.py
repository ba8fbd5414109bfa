"""A coining turn, read and judged: which ``term = definition`` candidates become entries, and why not.

The paper (COGENT, section 3, Table 3): a coining turn has [PART 1] compact
reasoning and [PART 2] new named terms, no [PART 3] and no final-answer marker;
a candidate is accepted only if it has the ``term = definition`` form, is used
in the same turn's reasoning (PART 1), and passes novelty and blocklist checks.
The paper does not define the novelty checks; ours, in this order:

1. ``bad_form``: no ``=``, an empty side, or a term over :attr:`CoiningRules.max_words` words or
   :attr:`CoiningRules.max_chars` characters;
2. ``final_answer_marker`` / ``part_three``: the turn breaks the format (every candidate of it is rejected);
3. ``blocklisted``: the term is on the blocklist (generic words such as "answer", "step");
4. ``duplicate``: the same term earlier in the same turn;
5. ``on_board``: already an entry the coiner can see (its own, or shared with it);
6. ``task_word``: the term occurs, as a whole word or phrase, in the task's own text;
7. ``dictionary_word``: a one-word term that is a plain English word (GCIDE, from the english-words package);
   a phrase of ordinary words ("core lock") is a coinage;
8. ``not_used``: the term does not occur in PART 1.

A public turn that also carries an answer (COGENT's use turn, Algorithm 1 lines 10-12) coins differently:
it has no parts, so :func:`read_declared_terms` takes only lines that declare a term with
:data:`NEW_TERM` (``NEW TERM: term = definition``), and the rest of the turn stands for PART 1. Its answer
marker is the point of the turn, so the marker rule does not apply to it; every other rule does.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from lexicoord.core.audience import Viewer
from lexicoord.lexicon.board import Board, normal
from lexicoord.lexicon.uses import occurs

_HEADER = re.compile(r"^[\s#*>_\-]*\[?\s*part\s*([1-9])\s*\]?[\s*_:.)-]*|\[\s*part\s*([1-9])\s*\][\s*_:.)-]*",
                     re.IGNORECASE | re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
#: The label that declares a term inside a public turn, as the use prompt asks for it.
NEW_TERM = "NEW TERM"
#: A declaring line as models write it: bulleted, bold, any case, "NEW TERM:", "**New term**:", "New-Term -".
_DECLARED = re.compile(r"^[\s>*_#-]*(?:[-*•]\s*)?[*_]*new[\s_-]*term[*_]*\s*[:\-–][*_]*\s*(.*)$",
                       re.IGNORECASE | re.MULTILINE)
DEFAULT_MARKERS = (r"####", r"\\boxed\{", r"\bfinal answer\b", r"\bthe answer is\b", r"^\s*answer\s*:")
DEFAULT_BLOCKLIST = frozenset({
    "answer", "final answer", "solution", "step", "steps", "reasoning", "option", "options", "choice",
    "conclusion", "premise", "premises", "question", "result", "term", "definition", "part", "true", "false",
    "uncertain", "yes", "no",
})


class CoiningRules(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_words: int = Field(default=4, ge=1)
    max_chars: int = Field(default=40, ge=2)
    final_markers: tuple[str, ...] = DEFAULT_MARKERS
    blocklist: frozenset[str] = DEFAULT_BLOCKLIST
    #: Reject one-word terms that are plain English words.
    dictionary: bool = True


#: The rules as the paper states them, made once: every turn of every episode reads them.
DEFAULT_RULES = CoiningRules()


class Candidate(BaseModel):
    term: str
    definition: str
    accepted: bool = False
    reason: str | None = None


class Turn(BaseModel):
    """A coining turn split into its parts."""

    part1: str = ""
    part2: str = ""
    part3: bool = False
    #: The final-answer marker found in the turn, if any.
    marker: str | None = None
    candidates: list[Candidate] = Field(default_factory=list)


def _clean(text: str) -> str:
    return text.strip().strip("*_`\"'“”‘’").strip()


def read_turn(text: str, rules: CoiningRules | None = None) -> Turn:
    """The turn's parts and the raw candidates of PART 2 (one per non-empty line).

    Words written before the first header ("Hi all. [PART 1] ...") are the start of PART 1: people and
    models greet or react before the format begins, and what they said is part of the turn's talk."""
    rules = rules or DEFAULT_RULES
    parts: dict[str, str] = {}
    heads = list(_HEADER.finditer(text))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        parts.setdefault(head.group(1) or head.group(2), text[head.end():end].strip())
    before = text[:heads[0].start()] if heads else ""
    if before.strip() and ("1" in parts or "2" in parts):
        joint = "\n" if "\n" in before[len(before.rstrip()):] else " "
        parts["1"] = (before.strip() + joint + parts.get("1", "")).strip()
    marker = next((m.group(0) for p in rules.final_markers
                   if (m := re.search(p, text, re.IGNORECASE | re.MULTILINE))), None)
    candidates = []
    for line in parts.get("2", "").splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        term, sep, definition = line.partition("=")
        candidates.append(Candidate(term=_clean(term) if sep else _clean(line)[:80], definition=_clean(definition),
                                    reason=None if sep else "bad_form"))
    return Turn(part1=parts.get("1", ""), part2=parts.get("2", ""), part3=any(k not in ("1", "2") for k in parts),
                marker=marker, candidates=candidates)


def read_declared_terms(text: str) -> Turn:
    """A public turn's declared terms (``NEW TERM: term = definition`` lines) as candidates; the turn without
    those lines is the reasoning they must be used in. No marker is looked for: such a turn ends with its answer."""
    candidates = []
    for m in _DECLARED.finditer(text):
        term, sep, definition = m.group(1).partition("=")
        candidates.append(Candidate(term=_clean(term) if sep else _clean(m.group(1))[:80],
                                    definition=_clean(definition), reason=None if sep else "bad_form"))
    return Turn(part1=_DECLARED.sub("", text).strip(), part2="", candidates=candidates)


@lru_cache(maxsize=1)
def dictionary_words() -> frozenset[str]:
    from english_words import get_english_words_set

    return frozenset(get_english_words_set(["gcide"], lower=True, alpha=True))


def judge_turn(turn: Turn, *, coiner: str, board: Board, viewer: Viewer, task_text: str = "",
               rules: CoiningRules | None = None) -> list[Candidate]:
    """Every candidate of ``turn`` with its verdict (the first rule it breaks), in the order written."""
    rules = rules or DEFAULT_RULES
    judged: list[Candidate] = []
    seen: set[str] = set()
    for c in turn.candidates:
        key = normal(c.term)
        reason = c.reason
        if reason is None and (not key or not c.definition or len(key.split()) > rules.max_words
                               or len(key) > rules.max_chars):
            reason = "bad_form"
        elif reason is None and turn.marker is not None:
            reason = "final_answer_marker"
        elif reason is None and turn.part3:
            reason = "part_three"
        elif reason is None and key in rules.blocklist:
            reason = "blocklisted"
        elif reason is None and key in seen:
            reason = "duplicate"
        elif reason is None and board.knows(c.term, viewer):
            reason = "on_board"
        elif reason is None and task_text and occurs(c.term, task_text):
            reason = "task_word"
        elif reason is None and rules.dictionary and " " not in key and key.isalpha() and key in dictionary_words():
            reason = "dictionary_word"
        elif reason is None and not occurs(c.term, turn.part1):
            reason = "not_used"
        seen.add(key)
        judged.append(c.model_copy(update={"accepted": reason is None, "reason": reason}))
    return judged
