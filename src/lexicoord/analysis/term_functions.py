"""The lexical-function codebook (COGENT paper, Figures 2-3, Appendix C) and the file people edit.

Every accepted term gets soft weights over six functions. ``lexicoord cogent annotate RUN`` writes the file
with an LLM's suggestions (``annotator = llm``); a person edits the weights and sets ``annotator`` to their
name; the report reads it back. The paper's protocol is the other way round (a person labels, an LLM
verifies); either way the report uses whatever the file says, and counts the rows by annotator.

Shares: each term's weights are normalised to sum to 1 (a row of zeros is left out and counted), then
averaged over the terms of a task and model, as the paper's "normalized over problem-term counts within each
task and model". The macro average is the plain mean of those profiles.
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from pathlib import Path

from pydantic import BaseModel, Field

from lexicoord.analysis.cells import safe_cell
from lexicoord.errors import ConfigError

CATEGORIES = ("discriminative cue", "domain concept", "quantity/unit variable", "operation checkpoint",
              "proof-status logic", "gap/uncertainty marker")
DEFINITIONS = {
    "discriminative cue": "separates one option or reading from its strongest rival",
    "domain concept": "names a concept of the subject matter",
    "quantity/unit variable": "binds a quantity, a unit or a variable",
    "operation checkpoint": "names an operation or an intermediate step to check",
    "proof-status logic": "says whether a conclusion is forced, contradicted or left open",
    "gap/uncertainty marker": "marks missing information, doubt or an open question",
}
COLUMNS = ["task", "model", "variant", "episode", "item", "coiner", "term", "definition", *CATEGORIES,
           "annotator", "note"]


class TermLabel(BaseModel):
    task: str
    model: str
    variant: str
    episode: int | None
    item: str
    coiner: str
    term: str
    definition: str
    weights: dict[str, float] = Field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0.0))
    annotator: str = ""
    note: str = ""


def write_labels(path: Path, labels: list[TermLabel]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for x in labels:
            writer.writerow([safe_cell(v) for v in [x.task, x.model, x.variant, x.episode, x.item, x.coiner, x.term,
                             x.definition, *(f"{x.weights.get(c, 0.0):.3g}" for c in CATEGORIES),
                             x.annotator, x.note]])


def _unquote(value: str) -> str:
    return value[1:] if value[:2] in {"'" + c for c in "=+-@\t\r"} else value


def read_labels(path: Path) -> list[TermLabel]:
    """The edited file; a weight that is not a number in [0, 1] names its row and column."""
    try:
        fh = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read the annotation file '{path}': {exc.strerror}.") from None
    out = []
    with fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(f"{path}: missing column(s) {', '.join(missing)}.")
        for line, row in enumerate(reader, start=2):
            weights = {}
            for c in CATEGORIES:
                try:
                    w = float(row[c] or 0)
                except ValueError:
                    raise ConfigError(f"{path}, line {line}: '{c}' is not a number ({row[c]!r}).") from None
                if not 0 <= w <= 1:
                    raise ConfigError(f"{path}, line {line}: '{c}' must be between 0 and 1, not {w}.")
                weights[c] = w
            out.append(TermLabel(task=row["task"], model=_unquote(row["model"]), variant=row["variant"],
                                 episode=int(row["episode"]) if row["episode"] else None, item=_unquote(row["item"]),
                                 coiner=row["coiner"], term=_unquote(row["term"]),
                                 definition=_unquote(row["definition"]), weights=weights,
                                 annotator=row["annotator"], note=_unquote(row["note"] or "")))
    return out


class FunctionProfile(BaseModel):
    task: str
    model: str
    terms: int
    #: Rows whose weights were all zero (not annotated), left out of the shares.
    unlabelled: int
    shares: dict[str, float]
    annotators: dict[str, int]


def profiles(labels: list[TermLabel]) -> list[FunctionProfile]:
    groups: dict[tuple[str, str], list[TermLabel]] = defaultdict(list)
    for x in labels:
        groups[(x.task, x.model)].append(x)
    out = []
    for (task, model), rows in sorted(groups.items()):
        labelled = [x for x in rows if sum(x.weights.values()) > 0]
        shares = dict.fromkeys(CATEGORIES, 0.0)
        for x in labelled:
            total = sum(x.weights.values())
            for c in CATEGORIES:
                shares[c] += x.weights[c] / total / len(labelled)
        out.append(FunctionProfile(task=task, model=model, terms=len(labelled), unlabelled=len(rows) - len(labelled),
                                   shares=shares, annotators=dict(Counter(x.annotator or "?" for x in rows))))
    return out


def macro_average(found: list[FunctionProfile]) -> dict[str, float]:
    """Figure 3's bars: each function's share, averaged over the task x model profiles that have terms."""
    used = [p for p in found if p.terms]
    return {c: sum(p.shares[c] for p in used) / len(used) if used else 0.0 for c in CATEGORIES}
