"""Reading a final answer out of a model's reply: the last *declaration* of an answer wins.

A declaration is a place where the reply says "this is my answer", not any use of the word: a line (or a
sentence) that starts with ``Answer:`` / ``Final answer:`` (bold, quoted, bulleted or as a heading whose value
is on the next line), a bold ``**Answer:**`` anywhere, ``#### <value>``, ``\\boxed{...}``, and the clause
"the/my (final, correct, best) answer/option/choice is X" (not "... is not X"); "my answer:" and "final
answer:" anywhere. Each benchmark adds the clauses its replies use: MMLU "B is the correct answer", FOLIO
"the conclusion is False" and a line "Conclusion: False".

A reply that changes its mind ends with the answer it settled on, so declarations are read from the last
one back. A declaration whose text holds nothing the task accepts ("The answer is supported by premise 2")
was not one, and the one before it is read; a declaration that names two answers ("A or B", "between B and
C", "True/False") is a hedge, and the reply has no valid answer. A reply that declares nothing readable
falls back: GSM8K to the last number (as lm-evaluation-harness's flexible extraction does), MMLU and FOLIO
to a last line that is only a letter or a label; when it declared something, only the text from its last
declaration on is read so ("Answer: I cannot tell" after a page of numbers has no answer). ``None`` is
scored wrong everywhere.

Clauses ("the answer is X") must begin with the answer (after words such as "therefore" or "option");
the stronger markers may carry it anywhere in their text ("Answer: She has 9 eggs").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Final, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Declaration:
    """One place a reply declares its answer: where it starts, the text that holds the answer, and whether
    the answer must open that text (a clause) or may be anywhere in it (a marker)."""

    start: int
    text: str
    opens: bool


class _Ambiguous:
    """A declaration naming two different answers: a hedge, so the reply has no valid answer."""


_AMBIGUOUS: Final = _Ambiguous()

_FLAGS = re.IGNORECASE | re.MULTILINE
_LEAD = r"[ \t>#*_\-]*"  # what a line may open with before its marker: quote, heading, bold, bullet
_WHO = r"(?:(?:the|my|our)\s+)?"
_LINE = re.compile(rf"(?:^|(?<=[.!?])(?=[ \t])){_LEAD}{_WHO}(?:(?:final|correct)\s+)?"
                   rf"(?:answer|(?:final|correct|best)\s+(?:option|choice))[ \t*_]*(?::|$)", _FLAGS)
_BOLD = re.compile(r"\*\*[ \t]*(?:final\s+)?answer[ \t]*(?::[ \t]*\*\*|\*\*[ \t]*:|:)", re.IGNORECASE)
_NAMED = re.compile(r"\b(?:(?:the|my|our)\s+(?:final\s+)?|final\s+)answer[ \t]*:", re.IGNORECASE)
# ``#### Step 2`` and ``#### 1. Eggs left`` are markdown headings, not GSM8K's answer line.
_HASHES = re.compile(r"(?<!#)####(?!#)(?![ \t]*(?:[A-Za-z]{2}|\d+\.[ \t]+\**[A-Za-z]{2}))")
_BOXED = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_MODIFIERS = r"(?:(?:final|correct|right|best|only|true|most\s+likely|likely)\s+)*"
_VERB = r"(?:is|would\s+be|will\s+be|must\s+be|should\s+be)\b(?!\s+not\b)[ \t:]*"
_CLAUSE = re.compile(rf"(?:\b(?:the|my|our)\s+|^{_LEAD}){_MODIFIERS}(?:answer|option|choice)"
                     rf"(?:\s+to\s+(?:the|this)\s+(?:question|problem))?\s+{_VERB}", _FLAGS)
#: FOLIO: "the conclusion is False" answers the question the prompt asks, and so does a line
#: "Conclusion: False" (when the label opens it: "Conclusion: Rina is a student" restates the task).
_CONCLUSION = re.compile(rf"\bthe\s+(?:given\s+)?(?:conclusion|statement)\s+{_VERB}", re.IGNORECASE)
_CONCLUSION_LINE = re.compile(rf"^{_LEAD}(?:final\s+)?(?:conclusion|verdict)[ \t*_]*:", _FLAGS)
#: MMLU: "B is the correct answer", "**Option C** is the answer".
_LETTER_FIRST = re.compile(r"(?<![\w(\[*_])[*_]*((?:(?i:option|choice)\s+)?\(?[A-D]\)?|\([a-d]\)|(?i:option|choice)\s+[a-d])"
                          r"[*_]*\s+is\s+the\s+(?:(?:correct|right|best|final)\s+)?(?:answer|option|choice)\b")


#: How much of a declaration's text is read: an answer sits near its marker, and a cap keeps a degenerate
#: reply (the same clause thousands of times) from costing quadratic time.
_REACH = 400
_NEXT_LINE = re.compile(r"[ \t]*\S[^\n]*")


#: The word every one of _LINE, _BOLD, _NAMED and _CLAUSE needs, matched as they match it (the same case rules):
#: a reply without one is not searched with them. Every reply is read, most of them with none of these words.
_ANSWER_WORD = re.compile(r"answer|option|choice", re.IGNORECASE)


def declarations(reply: str, extra: tuple[re.Pattern[str], ...] = ()) -> list[Declaration]:
    """Every declaration in the reply, in order. ``extra`` patterns are clauses a task adds; a pattern
    with a group declares the group's text, one without declares the text after it."""
    found: list[Declaration] = []
    worded = _ANSWER_WORD.search(reply) is not None
    markers = (_LINE, _BOLD, _NAMED) if worded else ()
    for pattern in (*markers, *((_HASHES,) if "####" in reply else ())):
        found += [Declaration(m.start(), _rest_of_line(reply, m.end()), opens=pattern is _HASHES)
                  for m in pattern.finditer(reply)]
    if "\\" in reply:
        for m in _BOXED.finditer(reply):
            found.append(Declaration(m.start(), _braced(reply, m.end()), opens=False))
    for pattern in ((_CLAUSE,) if worded else ()) + extra:
        for m in pattern.finditer(reply):
            text = m.group(1)[:_REACH] if pattern.groups else _rest_of_line(reply, m.end())
            found.append(Declaration(m.start(), text, opens=True))
    return sorted(found, key=lambda d: d.start)


def _rest_of_line(reply: str, end: int) -> str:
    """The rest of the marker's line; when that is empty (``### Final Answer``, ``Answer:`` then a blank
    line), the next non-empty line."""
    stop = reply.find("\n", end, end + _REACH)
    line = reply[end:stop if stop >= 0 else end + _REACH]
    if line.strip(" \t*_:") or stop < 0:
        return line
    nxt = _NEXT_LINE.search(reply, stop + 1, stop + 1 + _REACH)
    return nxt.group(0) if nxt else ""


def _braced(reply: str, start: int) -> str:
    """The text inside ``\\boxed{`` ... up to its matching brace (or as far as is read, if unclosed)."""
    depth = 1
    for i in range(start, min(len(reply), start + _REACH)):
        depth += {"{": 1, "}": -1}.get(reply[i], 0)
        if depth == 0:
            return reply[start:i]
    return reply[start:start + _REACH]


def _read(reply: str, extra: tuple[re.Pattern[str], ...], parse: Callable[[str, bool], T | _Ambiguous | None],
          fallback: Callable[[str], T | None]) -> T | None:
    found = declarations(reply, extra)
    if not found:
        return fallback(reply)
    for declaration in reversed(found):
        got = parse(declaration.text, declaration.opens)
        if isinstance(got, _Ambiguous):
            return None
        if got is not None:
            return got
    return fallback(reply[found[-1].start:])


# ------------------------------------------------------------------------------------------------ text
_UNWRAP = re.compile(r"\\(?:boxed|fbox|text|textbf|textrm|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX = [("\\$", "$"), ("\\%", "%"), ("{,}", ","), ("\\,", ""), ("\\!", ""), ("\\;", " "), ("\\:", " "),
          ("\\ ", " "), ("\\left", ""), ("\\right", ""), ("\\times", " × "), ("\\cdot", " × "), ("\\div", " ÷ "),
          ("\\(", " "), ("\\)", " "), ("\\[", " "), ("\\]", " "), ("**", ""), ("__", ""), ("`", "")]


def _plain(text: str) -> str:
    """The text as a reader sees it: LaTeX wrappers unwrapped (``\\boxed{\\text{C}}`` is ``C``,
    ``\\frac{3}{4}`` is ``3/4``), escapes and markdown emphasis dropped."""
    for _ in range(8 if "\\" in text else 0):  # both patterns open with a backslash
        new = _FRAC.sub(r"\1/\2", _UNWRAP.sub(r"\1", text))
        if new == text:
            break
        text = new
    for old, new in _LATEX:
        text = text.replace(old, new)
    return text


_FILLER = re.compile(r"^(?:[\s:$*_\"'“”‘’(\[]*(?:therefore|thus|hence|so|clearly|definitely|probably|likely|most"
                     r"|indeed|simply|just|approximately|about|around|roughly|exactly|the|final|correct|answer|is"
                     r"|conclusion|statement|option|choice|letter)\b)*[\s:*_\"'“”‘’]*", re.IGNORECASE)


def _opening(text: str) -> str:
    """The text from where its answer would start, past filler words ("therefore", "option") and quotes."""
    m = _FILLER.match(text)
    return text[m.end():] if m else text


# ---------------------------------------------------------------------------------------------- numbers
_NUMBER = re.compile(r"""
    (?<![\w.,/])(?:[$£€¥]\s*)?(?P<sign>[-−–])?(?:[$£€¥]\s*)?
    (?: (?P<whole>\d+)\s+(?P<top>\d+)\s*/\s*(?P<bottom>\d+)                     # 2 1/2
      | (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)              # 1,234.50  12  .5
        (?:\s*/\s*(?P<den>\d+(?:\.\d+)?))?                                     # 3/4
        (?P<exp>[eE][-+]?\d+(?!\w))?                                        # 1e3
    )""", re.VERBOSE)


_RANGE = re.compile(r"(?:\s*(?:or|to)\s+|[-–])[-−–$]?\d")
#: Where a sentence ends: a full stop, "!" or "?" before a space (not a decimal point).
_SENTENCE = re.compile(r"(?<=[.!?])\s")


@lru_cache(maxsize=4096)
def number_value(text: str) -> Fraction | None:
    """A text that is one number and nothing else (a gold answer: ``18``, ``1,000``, ``-3``, ``$2.50``). Kept for
    the texts last asked: a run compares every prediction with its gold answer, and both repeat."""
    m = _NUMBER.fullmatch(_plain(text).strip().rstrip("%"))
    return None if m is None else _number(m)


def _number(m: re.Match[str]) -> Fraction | None:
    if m.group("whole"):
        value = int(m.group("whole")) + Fraction(int(m.group("top")), int(m.group("bottom")) or 1)
        if not int(m.group("bottom")):
            return None
    else:
        value = Fraction(m.group("num").replace(",", ""))
        if m.group("den"):
            den = Fraction(m.group("den"))
            if not den:
                return None
            value /= den
        if m.group("exp"):
            value *= Fraction(10) ** int(m.group("exp")[1:])
    return -value if m.group("sign") else value


def _parse_number(text: str, opens: bool) -> Fraction | _Ambiguous | None:
    text = _opening(_plain(text))
    first = _NUMBER.match(text)
    if opens and first is None:
        return None
    line = text.split("\n", 1)[0]
    if "=" in line:  # "2 + 3 = 5", "x = 5", "9 × $2 = $18": the result is what follows the last "="
        after = _NUMBER.search(line.rsplit("=", 1)[1])
        if after is not None:
            return _number(after)
    if first is not None and _RANGE.match(text, first.end()):
        return _AMBIGUOUS  # "12 or 13", "3-4 hours", "5 to 7 days"
    if first is not None:  # "18 dollars (9 eggs x $2)": the number the declaration opens with
        return _number(first)
    # "After selling 9 eggs, she makes $18.": a sentence that works up to its result ends with it
    sentence = _SENTENCE.split(line, 1)[0]
    found = list(_NUMBER.finditer(sentence)) or list(_NUMBER.finditer(text))[:1]
    return _number(found[-1]) if found else None


def _last_number(reply: str) -> Fraction | None:
    numbers = list(_NUMBER.finditer(_plain(reply)))
    return _number(numbers[-1]) if numbers else None


def read_number(reply: str) -> Fraction | None:
    """GSM8K's answer as an exact number: sign kept (``-``, Unicode minus), currency, thousands separators,
    units and ``%`` dropped; ``3/4``, ``\\frac{3}{4}``, ``0.75``, ``2 1/2`` and ``1e3`` read as the numbers
    they are. With no declaration, the last number in the reply."""
    return _read(reply, (), _parse_number, _last_number)


def format_number(value: Fraction) -> str:
    """A number written back exactly: ``18``, ``-2.5``, ``0.125``; a fraction with no finite decimal
    as ``1/3``. Readable in transcripts, and ``Fraction(text)`` gives the value back."""
    den, twos, fives = value.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    digits = str(abs(value.numerator) * 10**places // value.denominator).rjust(places + 1, "0")
    whole, frac = (digits[:-places], digits[-places:]) if places else (digits, "")
    return ("-" if value < 0 else "") + whole + ("." + frac if frac else "")


# ----------------------------------------------------------------------------------------- words/letters
def _choices(text: str, opens: bool, first_token: re.Pattern[str], token: re.Pattern[str], pair: re.Pattern[str],
             negated: re.Pattern[str], canon: Callable[[str], str]) -> str | _Ambiguous | None:
    """The one answer a declaration's text names. Its opening token wins unless it is half of a pair
    ("A or B"); otherwise, for a marker, the answers named anywhere in it, leaving out negated ones
    ("not A") and pairs: one left is the answer, none with a pair is a hedge, several are a hedge."""
    paired: set[str] = set()
    pairs = list(pair.finditer(text))
    for m in pairs:
        paired.update(canon(g) for g in m.groups() if g)
    spans = [m.span() for m in pairs]
    opening = _opening(text)
    first = first_token.match(opening)
    if first is not None:
        start = len(text) - len(opening)
        if not any(a <= start + first.start() < b for a, b in spans):
            return canon(next(g for g in first.groups() if g))
        if opens:
            return _AMBIGUOUS
    if opens:
        return None
    named = {canon(next(g for g in m.groups() if g)) for m in token.finditer(text)
             if not negated.search(text[:m.start()]) and not any(a <= m.start() < b for a, b in spans)}
    if len(named) == 1:
        return named.pop()
    return _AMBIGUOUS if named or paired else None


# A letter as models write it: (C), [C], C), C., **C**, c. -- a bare lower-case letter only where it cannot be
# the article "a" ("a good answer"): bracketed, after "option", or followed by punctuation or the end.
_LETTER_AT = (r"(?:\(([A-Da-d])\)|\[([A-Da-d])\]|(?i:option|choice)\s+\(?([A-Da-d])\)?(?![\w'’])"
              r"|(?<!\w\.)\b([A-D])(?![\w'’]|\.\w)|\b([a-d])(?=[.):\]]|\s*$))")
_LETTER = re.compile(_LETTER_AT)
#: Where the answer opens its text, a bare lower-case b, c or d is a letter too ("the answer is c because").
_LETTER_OPENS = re.compile(_LETTER_AT[:-1] + r"|([b-d])(?![\w'’]))")
_LETTER_PAIR = re.compile(rf"{_LETTER_AT}\s*(?:,|/|&|\+|\bor\b|\band\b|\bnor\b|\bvs\.?)\s*{_LETTER_AT}")
_NOT = re.compile(r"\b(?:not|n[o']t|than)\s+(?:option\s+)?[(\[]?$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^(?:(?i:option|choice)\s+)?(?:[(\[]([A-Da-d])[)\]]|([A-Da-d])(?:[.):]|$))", re.IGNORECASE)


def _parse_letter(text: str, opens: bool) -> str | _Ambiguous | None:
    return _choices(_plain(text).replace("*", ""), opens, _LETTER_OPENS, _LETTER, _LETTER_PAIR, _NOT, str.upper)


def _letter_line(reply: str) -> str | None:
    """No declaration: a last line that is only an option letter (``C``, ``(B)``, ``**C**``, ``B. Paris``).
    When the line above is one too, the reply ends on a list of options, which names no answer."""
    lines = [line for line in reply.splitlines() if line.strip()][-2:]
    items = [_LIST_ITEM.match(_plain(line).replace("*", "").strip()) for line in lines]
    if not items or items[-1] is None or (len(items) == 2 and items[0] is not None):
        return None
    return next(g for g in items[-1].groups() if g).upper()


def read_letter(reply: str) -> str | None:
    """MMLU's option letter A-D, in any case and the forms models use (``(C)``, ``C)``, ``Option C``,
    ``**C**``, ``c.``); the text of an option alone ("Paris") is not read as its letter."""
    return _read(reply, (_LETTER_FIRST,), _parse_letter, _letter_line)


_LABEL_WORDS = r"(true|false|uncertain|unknown|undetermined|indeterminate|cannot\s+be\s+determined)"
_LABEL = re.compile(rf"\b{_LABEL_WORDS}\b", re.IGNORECASE)
_LABEL_PAIR = re.compile(rf"\b{_LABEL_WORDS}\s*(?:,|/|\bor\b|\band\b|\bnor\b)\s*{_LABEL_WORDS}\b", re.IGNORECASE)
_NOT_LABEL = re.compile(rf"\W*not\s+{_LABEL_WORDS}\b", re.IGNORECASE)
_LABEL_NOT = re.compile(r"\b(?:not|n't|never)\s+(?:necessarily\s+|definitely\s+|entirely\s+)?$", re.IGNORECASE)


def _label(word: str) -> str:
    word = word.lower()
    return word.capitalize() if word in ("true", "false") else "Uncertain"


def _parse_label(text: str, opens: bool) -> str | _Ambiguous | None:
    text = _plain(text)
    if _NOT_LABEL.match(_opening(text)):
        return _AMBIGUOUS  # "Not true" is no label: False or Uncertain
    return _choices(text, opens, _LABEL, _LABEL, _LABEL_PAIR, _LABEL_NOT, _label)


def _label_line(reply: str) -> str | None:
    """No declaration: a last line that is only a label (``False``, ``**Uncertain**.``)."""
    lines = [line for line in reply.splitlines() if line.strip()]
    m = _LABEL.fullmatch(_plain(lines[-1]).strip(" \t*_.!\"'`")) if lines else None
    return _label(m.group(1)) if m else None


def read_label(reply: str) -> str | None:
    """FOLIO's True, False or Uncertain in any case; ``Unknown``, ``Undetermined``, ``Indeterminate`` and
    "cannot be determined" read as Uncertain; "not true" is none of them."""
    return _read(reply, (_CONCLUSION, _CONCLUSION_LINE), _parse_label, _label_line)
