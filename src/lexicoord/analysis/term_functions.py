"""Lexical-function codebooks and the file people edit: the six functions of benchmark terms (COGENT paper,
Figures 2-3, Appendix C) and the seven of Werewolf terms (Table 5).

Every accepted term gets soft weights over its codebook's functions. ``lexicoord cogent annotate RUN`` writes the file
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

from lexicoord.analysis.cells import write_csv
from lexicoord.errors import ConfigError


class Codebook(BaseModel):
    """Named functions, each with the sentence an annotator (a person or a model) reads."""

    name: str
    definitions: dict[str, str]
    #: What using a term of each function correctly preserves (the "criterion of correct use" of the paper's
    #: Table 4, which gives one per task): a task's criterion is its dominant function's.
    criteria: dict[str, str] = Field(default_factory=dict)

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(self.definitions)

    @property
    def columns(self) -> list[str]:
        return ["task", "model", "variant", "episode", "item", "coiner", "term", "definition", *self.categories,
                "annotator", "note"]


BENCHMARK_FUNCTIONS = Codebook(name="benchmark", definitions={
    "discriminative cue": "separates one option or reading from its strongest rival",
    "domain concept": "names a concept of the subject matter",
    "quantity/unit variable": "binds a quantity, a unit or a variable",
    "operation checkpoint": "names an operation or an intermediate step to check",
    "proof-status logic": "says whether a conclusion is forced, contradicted or left open",
    "gap/uncertainty marker": "marks missing information, doubt or an open question",
}, criteria={
    "discriminative cue": "the term must keep the contrast that puts one answer ahead of its closest rival",
    "domain concept": "the term must mean what the subject means by it, not a near neighbour",
    "quantity/unit variable": "the term must keep its unit and its binding to one quantity wherever it recurs",
    "operation checkpoint": "the term must name a step whose intermediate result can be checked",
    "proof-status logic": "the term must keep whether the premises force, contradict or leave open the conclusion",
    "gap/uncertainty marker": "the term must name exactly what is missing, and go once it is settled",
})
WEREWOLF_FUNCTIONS = Codebook(name="werewolf", definitions={
    "hidden-information management": "keeps visibility boundaries around night actions, protection, potions and roles",
    "role-claim evidence": "tracks claims, counterclaims, checks and the force of role speech",
    "deception strategy": "marks wolf cover, blending, safe echoing or misdirection",
    "process structure": "organises the discussion, pressure and what is left to examine",
    "voting action": "ties public reasoning to exile votes and vote accountability",
    "trust alignment": "stabilises soft-clears, core trust and late coalitions",
    "other social reasoning": "another pattern of social inference",
})


class TermLabel(BaseModel):
    task: str
    model: str
    variant: str
    episode: int | None
    item: str
    coiner: str
    term: str
    definition: str
    #: Function -> weight in [0, 1]; a function left out weighs 0.
    weights: dict[str, float] = Field(default_factory=dict)
    annotator: str = ""
    note: str = ""


def write_labels(path: Path, labels: list[TermLabel], codebook: Codebook) -> None:
    write_csv(path, codebook.columns, ([x.task, x.model, x.variant, x.episode, x.item, x.coiner, x.term, x.definition,
                                        *(f"{x.weights.get(c, 0.0):.3g}" for c in codebook.categories), x.annotator,
                                        x.note] for x in labels))


def _unquote(value: str) -> str:
    return value[1:] if value[:2] in {"'" + c for c in "=+-@\t\r"} else value


def read_labels(path: Path, codebook: Codebook) -> list[TermLabel]:
    """The edited file; a weight that is not a number in [0, 1] names its row and column."""
    try:
        fh = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read the annotation file '{path}': {exc.strerror}.") from None
    out = []
    with fh:
        reader = csv.DictReader(fh)
        missing = [c for c in codebook.columns if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(f"{path}: missing column(s) {', '.join(missing)}.")
        for line, row in enumerate(reader, start=2):
            weights = {}
            for c in codebook.categories:
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
    #: Profiles keep variants apart: an ablation's terms never blend into COGENT's.
    variant: str = ""
    terms: int
    #: Rows whose weights were all zero (not annotated), left out of the shares.
    unlabelled: int
    shares: dict[str, float]
    #: Each function's weight summed over the labelled terms (Table 5's counts, in term-equivalents).
    counts: dict[str, float]
    annotators: dict[str, int]


def profiles(labels: list[TermLabel], codebook: Codebook) -> list[FunctionProfile]:
    groups: dict[tuple[str, str, str], list[TermLabel]] = defaultdict(list)
    for x in labels:
        groups[(x.task, x.model, x.variant)].append(x)
    out = []
    for (task, model, variant), rows in sorted(groups.items()):
        labelled = [x for x in rows if sum(x.weights.values()) > 0]
        counts = dict.fromkeys(codebook.categories, 0.0)
        for x in labelled:
            total = sum(x.weights.values())
            for c in codebook.categories:
                counts[c] += x.weights.get(c, 0.0) / total
        shares = {c: n / len(labelled) if labelled else 0.0 for c, n in counts.items()}
        out.append(FunctionProfile(task=task, model=model, variant=variant, terms=len(labelled), unlabelled=len(rows) - len(labelled),
                                   shares=shares, counts=counts, annotators=dict(Counter(x.annotator or "?" for x in rows))))
    return out


def dominant(shares: dict[str, float]) -> str | None:
    """The function with the largest share (the first in codebook order on a tie); ``None`` when nothing is labelled."""
    best = max(shares, key=lambda c: shares[c], default=None)
    return best if best is not None and shares[best] > 0 else None


def macro_average(found: list[FunctionProfile], codebook: Codebook) -> dict[str, float]:
    """Figure 3's bars: each function's share, averaged over the task x model profiles that have terms (of the
    paper's COGENT variant when there are any, so ablations do not shift the paper's figure)."""
    used = [p for p in found if p.terms and p.variant == "cogent"] or [p for p in found if p.terms]
    return {c: sum(p.shares[c] for p in used) / len(used) if used else 0.0 for c in codebook.categories}
