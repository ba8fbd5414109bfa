"""AmbiK (Ivanova et al., ACL 2025): kitchen tasks in ambiguous/unambiguous pairs, read from its own CSV.

The user brings the file (``AmbiK_data.csv``, or the ``ambik_calib_100.csv`` / ``ambik_test_400.csv`` splits of
its repository, which carry an unnamed index column and ``unambiguous_indirect`` too); no copy ships here. Each
row is a pair and becomes two items, so that asking about the clear twin counts as a false alarm:

- ``ID/ambiguous``: ``ambiguous_task``, of AmbiK's ``ambiguity_type`` (preferences, common_sense_knowledge,
  safety), needing a question;
- ``ID/unambiguous``: ``unambiguous_direct`` (or ``unambiguous_indirect``), of type ``unambiguous_direct`` as
  AmbiK's own aggregation names it, needing none.

The scene is ``environment_full``. ``variants`` one per line are the readings offered (a one-line list, mostly
the intent itself, offers none: the gate writes its own); the intended ones are those that name the most of
``user_intent``'s elements, read by AmbiK's own success rule (:func:`intent_share`).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from lexicoord.errors import ConfigError
from lexicoord.tasks.asking import AskingItem, Loaded, Skips, collect, names
from lexicoord.tasks.jsonl import LineError, validation_reason

REQUIRED = ("id", "environment_full", "unambiguous_direct", "ambiguity_type", "ambiguous_task", "question", "answer",
            "user_intent", "variants")
TYPES = frozenset({"preferences", "common_sense_knowledge", "safety"})
Twin = Literal["direct", "indirect"]


def elements(user_intent: str) -> list[str]:
    """``user_intent`` as AmbiK's success rule splits it: at commas, each a whole."""
    return [e.strip().casefold() for e in user_intent.split(",") if e.strip()]


def intent_share(text: str, intent: list[str]) -> float:
    """AmbiK's success rule (``utils/metrics.py``, ``success_rate``) on one answer: the share of intent elements
    the text satisfies. An element ``a|b`` is satisfied when the text holds either; ``-x`` when it holds none.
    AmbiK matches raw substrings of the lower-cased answer; here an element must appear as whole words (so
    "pan" is not found in "panko"), with case, punctuation and articles ignored."""
    if not intent:
        return 0.0
    met = 0
    for element in intent:
        negated = element.startswith("-")
        found = any(names(text, v) for v in element.lstrip("-").split("|") if v.strip())
        met += found != negated
    return met / len(intent)


def variants(value: str) -> list[tuple[str, bool]]:
    """The variants with whether each is marked as not meant (a leading ``-``)."""
    parts = value.splitlines() if "\n" in value.strip() else value.split(",")
    out = []
    for part in parts:
        text = part.strip()
        if text:
            out.append((text.lstrip("-").strip(), text.startswith("-")))
    return [(t, neg) for t, neg in dict.fromkeys(out) if t]


def items_of(row: dict[str, str], source: str, twin: Twin) -> list[AskingItem]:
    kind = row["ambiguity_type"].strip()
    if kind not in TYPES:
        raise ValueError(f"ambiguity_type {kind!r} is not one of {', '.join(sorted(TYPES))}")
    intent = elements(row["user_intent"])
    if not intent:
        raise ValueError("user_intent is empty")
    listed = variants(row["variants"] or "")
    # variants one per line are alternatives; a one-line list is mostly the intent itself ("yolks, whites"), whose
    # parts are all meant: offering them would hand the seats the answer
    options = [t for t, _ in listed] if len(listed) > 1 and "\n" in (row["variants"] or "").strip() else []
    shares = {o: intent_share(o, intent) for o, neg in listed if not neg} if options else {}
    best = max(shares.values(), default=0.0)
    intended = [o for o, s in shares.items() if best > 0 and s == best]
    shortlist = [s.strip() for s in (row.get("amb_shortlist") or "").split(",") if s.strip()]
    element = shortlist or [t for t, _ in listed]
    ambiguous_set = [o for o in options if any(names(o, s) for s in shortlist)] if shortlist else []
    clear = row.get(f"unambiguous_{twin}") or ""
    if not clear.strip():
        raise ValueError(f"unambiguous_{twin} is empty")
    pair = f"ambik-{row['id'].strip()}"
    common = {"benchmark": "ambik", "context": f"Objects in the kitchen: {row['environment_full'].strip()}",
              "options": options, "intended": intended, "intent": row["user_intent"].strip(), "intent_elements": intent,
              "ambiguous_set": ambiguous_set, "element": element, "question": row["question"].strip() or None,
              "answer": row["answer"].strip() or None, "source": source}
    return [AskingItem(id=f"{pair}/ambiguous", instruction=row["ambiguous_task"].strip(), ambiguous=True,
                       category=kind, pair=f"{pair}/unambiguous", **common),
            AskingItem(id=f"{pair}/unambiguous", instruction=clear.strip(), ambiguous=False,
                       category=f"unambiguous_{twin}", pair=f"{pair}/ambiguous", **common)]


def rows(path: Path, skips: Skips, twin: Twin = "direct") -> Iterator[AskingItem | LineError]:
    """The file's pairs one row at a time; a row's line number is where it starts in the file."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        header = [h for h in reader.fieldnames or [] if h]
        needed = [*REQUIRED, f"unambiguous_{twin}"] if twin == "indirect" else list(REQUIRED)
        missing = [c for c in needed if c not in header]
        if missing:
            yield LineError(line=1, reason=f"not AmbiK's columns: no {', '.join(missing)} (found {', '.join(header)})")
            return
        start = reader.line_num + 1
        for row in reader:
            where = start
            start = reader.line_num + 1
            if None in row:
                yield LineError(line=where, reason=f"{len(row[None]) + len(header)} fields where the header has {len(header)}")
                continue
            if not any((v or "").strip() for v in row.values()):
                skips["empty rows"] += 1
                continue
            try:
                yield from items_of({k: v or "" for k, v in row.items()}, f"{path.name}:{where}", twin)
            except (ValueError, ValidationError) as exc:
                reason = validation_reason(exc) if isinstance(exc, ValidationError) else str(exc)
                yield LineError(line=where, reason=f"row id {row.get('id', '?')!r}: {reason}")


def load_ambik(path: str | Path, *, limit: int | None = None, twin: Twin = "direct") -> Loaded:
    """Items from an AmbiK CSV (both twins of each row; ``limit`` counts items)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"AmbiK file not found: {path} (its CSV, e.g. ambik_dataset/ambik_test_400.csv).")
    skips = Skips()
    try:
        return collect(rows(path, skips, twin), str(path), skips, limit)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f"{path} is not a readable CSV file ({exc}).") from None
