"""Where known terms are used: whole words or phrases, case-insensitive, longest match first.

``core`` is not counted inside a use of ``core lock``, and ``P1`` never inside
``P10``: a match must not touch a letter, digit or underscore on either side, and
once a longer term has claimed a stretch of text no shorter term may claim any
part of it.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from pydantic import BaseModel

from lexicoord.lexicon.board import Entry, normal

#: COGENT's use-turn requirement when terms exist (the paper's debate prompt), in every protocol that coins them.
REUSE_LINE = "Consider or reuse at least one of the known terms."

class Use(BaseModel):
    term: str
    coiner: str
    count: int


@lru_cache(maxsize=1024)  # each turn looks for every known term again
def _pattern(term: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in normal(term).split()]
    return re.compile(r"(?<![\w])" + r"\s+".join(words) + r"(?![\w])", re.IGNORECASE)


def occurs(term: str, text: str) -> bool:
    """Whether ``term`` occurs in ``text`` as a whole word or phrase (case and spacing aside)."""
    return _pattern(term).search(text) is not None


def find_uses(text: str, entries: list[Entry]) -> list[Use]:
    """The entries used in ``text`` and how often, longest terms claiming their spans first."""
    claimed: list[tuple[int, int]] = []
    counts: Counter[str] = Counter()
    by_key = {e.key: e for e in entries}
    for key in sorted(by_key, key=lambda k: (-len(k), k)):
        for m in _pattern(key).finditer(text):
            if any(m.start() < end and start < m.end() for start, end in claimed):
                continue
            claimed.append(m.span())
            counts[key] += 1
    return [Use(term=by_key[k].term, coiner=by_key[k].provenance.agent, count=n) for k, n in counts.items()]
