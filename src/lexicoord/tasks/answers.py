"""Reading a final answer out of a model's reply: the last answer marker wins.

Models end their replies in many ways: ``#### 42``, ``\\boxed{42}``, ``**Answer:** C``, ``The answer is
(C).``, ``Final answer: Uncertain``. Each benchmark reads the text after the *last* marker in the reply
(a reply that changes its mind ends with the answer it settled on) and takes what that task accepts from
it: a number, a letter A-D, or one of True/False/Uncertain. A reply with no marker falls back to the last
line; nothing usable is ``None``, which every score counts as wrong.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

#: Where an answer starts: ``####``, ``\\boxed{``, "answer is", "answer:", "final answer" (any case).
MARKER = re.compile(r"####|\\boxed\{|\b(?:final\s+)?answer\b\s*(?:is\b|:)?\s*[:\-]?", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(-|−)?\s*\$?\s*(\d[\d,]*(?:\.\d+)?|\.\d+)")
_LETTER = re.compile(r"(?<![A-Za-z])\(?([A-D])\)?(?![A-Za-z])")
_LABEL = re.compile(r"\b(true|false|uncertain|unknown)\b", re.IGNORECASE)


def answer_text(reply: str) -> str:
    """The text after the last answer marker (to the end of its line, or of its box), or the last non-empty
    line when there is none. Markers are found wherever they start, several on one line included."""
    last = None
    pos = 0
    while (m := MARKER.search(reply, pos)) is not None:  # step one character on: overlapping starts count too
        last = m
        pos = m.start() + 1
    if last is not None:
        rest = reply[last.end():]
        if last.group(0).startswith("\\boxed"):
            depth, end = 1, 0
            while end < len(rest) and depth:
                depth += {"{": 1, "}": -1}.get(rest[end], 0)
                end += 1
            text = rest[:end - 1] if depth == 0 else rest
        else:
            text = rest.split("\n", 1)[0]
        if text.strip():
            return text.strip()
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def read_number(reply: str) -> Decimal | None:
    """The first number after the last marker: sign kept, ``$`` and thousands separators dropped."""
    m = _NUMBER.search(answer_text(reply).replace("**", ""))
    if m is None:
        return None
    try:
        value = Decimal(m.group(2).replace(",", ""))
    except InvalidOperation:
        return None
    return -value if m.group(1) else value


def read_letter(reply: str) -> str | None:
    """The option letter after the last marker (``(C)``, ``C.``, ``**C**``)."""
    m = _LETTER.search(answer_text(reply).replace("*", ""))
    return m.group(1) if m else None


def read_label(reply: str) -> str | None:
    """True, False or Uncertain after the last marker (``Unknown`` reads as Uncertain)."""
    m = _LABEL.search(answer_text(reply))
    if m is None:
        return None
    word = m.group(1).lower()
    return "Uncertain" if word in ("uncertain", "unknown") else word.capitalize()
