"""A COGENT run's report: Table 1 with intervals and cost, paired tests, lexical ecology and functions,
case studies, and every transcript with the board as it grew; terminal tables, PNG/SVG, HTML (templates/report.html),
JSON, CSV."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lexicoord.analysis.cells import records_csv, write_csv
from lexicoord.analysis.html import inline_svg, render
from lexicoord.analysis.numbers import ci, num
from lexicoord.analysis.numbers import pct as percent
from lexicoord.analysis.paper import Measure, bounds, comparison_table, stored
from lexicoord.analysis.reading import keeping_failed
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.analysis.term_functions import (
    BENCHMARK_FUNCTIONS,
    FunctionProfile,
    TermLabel,
    dominant,
    macro_average,
    profiles,
    read_labels,
)
from lexicoord.errors import LexicoordError
from lexicoord.models.tokenizer import named_tokenizer
from lexicoord.protocols.cogent.figures import cogent_figures
from lexicoord.protocols.cogent.statistics import CogentEpisode, CogentStats, episodes_from, failed_cells, warnings
from lexicoord.protocols.cogent.statistics import compute as compute_stats
from lexicoord.runs.records import RunInfo
from lexicoord.runs.store import Store

ANNOTATIONS = "term_functions.csv"
CATEGORIES = BENCHMARK_FUNCTIONS.categories
CASES = 20
#: Illustrative terms per Table 4 row: the most used.
ILLUSTRATIVE = 4


def pct(x: float | None) -> str:
    return percent(x, sign="")




def table1_rows(stats: CogentStats) -> tuple[list[str], list[list[str]]]:
    head = ["model", "variant", "task", "n", "Acc % [95% CI]", "invalid answers", "invalid predictions", "ties",
            "failed", "CR [95% CI] (items)",
            f"Tok ({stats.tokenizer}) [95% CI]", "cut at limit (Tok's outputs; all replies)", "calls/item", "prompt tok/item",
            "completion tok/item"]
    rows = []
    for c in stats.cells:
        acc_ci = f" [{pct(c.acc_ci.low)}, {pct(c.acc_ci.high)}]" if c.acc_ci else ""
        rows.append([c.model, c.variant, c.task, str(c.n), f"{pct(c.acc) if c.n else '–'}{acc_ci}",
                     f"{c.invalid}/{c.n}", f"{c.invalid_predictions}/{c.predictions}", f"{c.ties}/{c.n}", str(c.failed),
                     "N/A" if c.variant == "single" else f"{num(c.cr)}{ci(c.cr_ci)} ({c.cr_n})",
                     f"{num(c.tok)}{ci(c.tok_ci)}" + (f" ({c.tok_n}/{c.n})" if c.tok_n != c.n else ""),
                     f"{c.tok_cut}/{c.tok_outputs}; {c.cut}/{c.replies}",
                     num(c.calls, ".1f"), num(c.prompt_tokens, ".0f"), num(c.completion_tokens, ".0f")])
    return head, rows


def paired_rows(stats: CogentStats) -> tuple[list[str], list[list[str]]]:
    head = ["model", "task", "first vs second", "paired items", "only first right", "only second right",
            "both", "neither", "exact McNemar p"]
    return head, [[p.model, p.task, f"{p.first} vs {p.second}", str(p.n), str(p.first_only), str(p.second_only),
                   str(p.both), str(p.neither), f"{p.p_value:.3g}"] for p in stats.paired]


def ecology_rows(stats: CogentStats) -> tuple[list[str], list[list[str]]]:
    head = ["model", "task", "variant", "episodes", "entries", "unique terms", "rejected (reasons)", "uses",
            "cross-agent uses", "terms taken up by the other", "Uptake (uses/entries)"]
    rows = []
    for e in stats.ecology:
        reasons = ", ".join(f"{k} {v}" for k, v in e.rejected.items()) or "none"
        rows.append([e.model, e.task, e.variant, str(e.episodes), str(e.entries), str(e.unique_terms),
                     f"{sum(e.rejected.values())}/{e.candidates} ({reasons})", str(e.uses), str(e.cross_uses),
                     f"{e.taken_up}/{e.entries}", num(e.uptake)])
    return head, rows


def qualitative_rows(stats: CogentStats, episodes: list[CogentEpisode], labels: list[TermLabel],
                     found: list[FunctionProfile]) -> tuple[list[str], list[list[str]]]:
    """Table 4's qualitative columns per task x model x variant: the dominant function of the annotated terms
    (the largest share of term weight), that function's criterion of correct use, and the most-used terms
    (those whose own largest weight is the dominant function first). Without an annotation file only the terms."""
    head = ["task", "model", "variant", "entries (unique terms)", "dominant function (share of term weight)",
            "criterion of correct use", "illustrative terms (uses)"]
    shares = {(p.task, p.model, p.variant): p.shares for p in found if p.terms}
    own = {(x.task, x.model, x.variant, x.term.casefold()): dominant(x.weights) for x in labels}
    rows = []
    for e in stats.ecology:
        key = (e.task, e.model, e.variant)
        uses: Counter[str] = Counter()
        names: dict[str, str] = {}
        for ep in episodes:
            if (ep.task, ep.model, ep.variant) == key:
                for t in ep.entries:
                    names.setdefault(t.term.casefold(), t.term)
                    uses[t.term.casefold()] += 0
                for u in ep.uses:
                    uses[u.term.casefold()] += u.count
        top = dominant(shares[key]) if key in shares else None
        ranked = sorted(names, key=lambda t: (own.get((*key, t)) != top if top else False, -uses[t], t))
        terms = "; ".join(f"{names[t]} ({uses[t]})" for t in ranked[:ILLUSTRATIVE]) or "none"
        if top is None:
            function, criterion = "– (no labelled terms: lexicoord cogent annotate RUN)", "–"
        else:
            function, criterion = f"{top} ({pct(shares[key][top])}%)", BENCHMARK_FUNCTIONS.criteria.get(top, "–")
        rows.append([e.task, e.model, e.variant, f"{e.entries} ({e.unique_terms})", function, criterion, terms])
    return head, rows


def function_rows(found: list[FunctionProfile], shares: dict[str, float]) -> tuple[list[str], list[list[str]]]:
    head = ["task", "model", "variant", "terms (unlabelled)", *CATEGORIES, "annotators"]
    rows = [[p.task, p.model, p.variant, f"{p.terms} ({p.unlabelled})", *(pct(p.shares[c]) for c in CATEGORIES),
             ", ".join(f"{k} {v}" for k, v in p.annotators.items())] for p in found]
    rows.append(["macro average", "", "", "", *(pct(shares[c]) for c in CATEGORIES), ""])
    return head, rows


def case_studies(episodes: list[CogentEpisode]) -> dict[str, list[tuple[CogentEpisode, CogentEpisode]]]:
    """Figure 4: items COGENT got right and VANILLA wrong, and the reverse (same task, model, item)."""
    by: dict[tuple[str, str, str], dict[str, CogentEpisode]] = defaultdict(dict)
    for e in episodes:
        by[(e.model, e.task, e.item_id)][e.variant] = e
    out: dict[str, list[tuple[CogentEpisode, CogentEpisode]]] = {"cogent_right": [], "vanilla_right": []}
    for key in sorted(by):
        cog, van = by[key].get("cogent"), by[key].get("vanilla")
        if cog and van and cog.correct != van.correct:
            out["cogent_right" if cog.correct else "vanilla_right"].append((cog, van))
    return out


@dataclass(frozen=True)
class CaseTerm:
    """A term of a case study as the page shows it: its definition, coiner, round and who used it."""

    term: str
    definition: str
    coiner: str
    round: str
    used_by: str


@dataclass(frozen=True)
class Case:
    """A case study: the item, both variants' answers, and the terms COGENT accepted on it."""

    summary: str
    question: str
    terms: list[CaseTerm]


@dataclass(frozen=True)
class Transcript:
    """An episode as the page shows it; each move a dict with its ``kind`` and the texts that kind shows."""

    summary: str
    question: str
    moves: list[dict[str, Any]]


def case(cog: CogentEpisode, van: CogentEpisode) -> Case:
    counts: dict[str, Counter[tuple[str, bool]]] = defaultdict(Counter)
    for u in cog.uses:
        counts[u.term.casefold()][(u.agent, u.agent != u.coiner)] += u.count
    uses = {term: [f"{agent} x{n}" + (" (uptake)" if other else "") for (agent, other), n in c.items()]
            for term, c in counts.items()}
    terms = [CaseTerm(term=t.term, definition=t.definition, coiner=t.coiner, round=str(t.round),
                      used_by=", ".join(uses.get(t.term.casefold(), [])) or "nobody") for t in cog.entries]
    return Case(summary=f"{cog.task} · {cog.item_id} · gold {cog.gold} · COGENT {cog.answer} ({cog.rule}) · "
                        f"VANILLA {van.answer} ({van.rule})", question=cog.question, terms=terms)


def transcript(e: CogentEpisode) -> Transcript:
    moves: list[dict[str, Any]] = []
    for m in e.moves:
        where = f"round {m.get('round', '?')} · {m.get('agent') or 'board'}"
        kind = m["type"]
        if kind == "response":
            label = m["stage"] + (f" pass {m['coin_pass']} (private)" if m["stage"] == "coin" else "")
            extra = f" → {m['prediction']}" if "prediction" in m else ""
            moves.append({"kind": kind, "where": where, "label": label + extra, "failure": m.get("failure") or "",
                          "text": m.get("text", "")})
        elif kind == "term_candidate":
            verdict = "accepted" if m.get("accepted") else f"rejected ({m.get('reason')})"
            moves.append({"kind": kind, "where": where, "term": m["term"], "definition": m["definition"],
                          "verdict": verdict})
        elif kind == "terms_shared":
            moves.append({"kind": kind, "where": where, "snapshot": m.get("snapshot", [])})
        elif kind == "term_used":
            whose = "own" if m.get("coiner") == m.get("agent") else f"{m.get('coiner')}'s"
            moves.append({"kind": kind, "where": where, "whose": whose, "term": m["term"], "count": m.get("count", 1)})
    verdict = "right" if e.correct else "wrong"
    return Transcript(summary=f"{e.task} · {e.item_id} · {e.variant} · {e.model} · answer {e.answer} (gold {e.gold}, "
                              f"{e.rule}) · {verdict}", question=e.question, moves=moves)


EPISODE_COLUMNS = ["episode_id", "item_id", "task", "variant", "model", "gold", "answer", "correct", "rule", "B", "F",
                   "W", "cr", "tok", "calls", "prompt_tokens", "completion_tokens", "wall_time"]


def measures(stats: CogentStats) -> list[Measure]:
    """Table 1's figures per variant and task, in the paper's units: accuracy in percent with its Wilson
    interval (over finished items, invalid answers wrong), CR and Tok as the table defines them."""
    out = []
    for c in stats.cells:
        cell = {"variant": c.variant, "task": c.task}
        low, high = (100 * c.acc_ci.low, 100 * c.acc_ci.high) if c.acc_ci else (None, None)
        out.append(Measure(metric="accuracy", cell=cell, model=c.model, value=100 * c.acc, low=low, high=high, n=c.n))
        if c.cr is not None:
            out.append(Measure(metric="compression_rate", cell=cell, model=c.model, value=c.cr, n=c.cr_n,
                               **bounds(c.cr_ci)))
        if c.tok is not None:
            out.append(Measure(metric="tokens", cell=cell, model=c.model, value=c.tok, n=c.tok_n, **bounds(c.tok_ci)))
    return out


def write_files(run: RunInfo, stats: CogentStats, episodes: list[CogentEpisode], out_dir: Path,
                labels: list[TermLabel], found: list[FunctionProfile], shares: dict[str, float] | None) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    figs = cogent_figures(stats, out_dir, found, shares)
    payload = {"stats": stats.model_dump(mode="json"),
               "functions": {"profiles": [p.model_dump() for p in found], "macro": shares} if found else None}
    (out_dir / "stats.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    records_csv(out_dir / "episodes.csv", EPISODE_COLUMNS, (e.model_dump() for e in episodes))
    rows = []
    for e in episodes:
        for t in e.entries:
            own = sum(u.count for u in e.uses if u.term.casefold() == t.term.casefold() and u.agent == t.coiner)
            other = sum(u.count for u in e.uses if u.term.casefold() == t.term.casefold() and u.agent != t.coiner)
            rows.append([e.task, e.model, e.variant, e.episode_id, e.item_id, t.term, t.definition, t.coiner, t.round,
                         t.coin_pass, own, other])
    write_csv(out_dir / "terms.csv", ["task", "model", "variant", "episode_id", "item_id", "term", "definition",
                                      "coiner", "round", "coin_pass", "uses_by_coiner", "uses_by_other"], rows)
    sections = [("Table 1: accuracy, compression and tokens, with what the paper does not report", table1_rows(stats)),
                ("Paired tests on the same items", paired_rows(stats)),
                ("Lexical ecology (Table 4)", ecology_rows(stats)),
                ("Table 4: dominant function, criterion of correct use, illustrative terms",
                 qualitative_rows(stats, episodes, labels, found))]
    if found and shares is not None:
        sections.append(("Lexical functions (Figures 2-3), from the annotation file", function_rows(found, shares)))
    cases = case_studies(episodes)
    page = render("lexicoord.protocols.cogent", run=run, stats=stats,
                  settings=json.dumps(run.config, ensure_ascii=False, indent=2), warnings=warnings(stats),
                  tables=[(title, head, rows) for title, (head, rows) in sections],
                  figures=[inline_svg(paths[1]) for paths in figs.values()],
                  cases=[(title, len(cases[key]), [case(c, v) for c, v in cases[key][:CASES]])
                         for key, title in (("cogent_right", "COGENT right, VANILLA wrong"),
                                            ("vanilla_right", "VANILLA right, COGENT wrong"))],
                  transcripts=[transcript(e) for e in episodes],
                  paper=comparison_table(stored(run.config), measures(stats)))
    report = out_dir / "report.html"
    report.write_text(page, encoding="utf-8")
    out = {"html": report, "json": out_dir / "stats.json", "csv": out_dir / "episodes.csv",
           "terms": out_dir / "terms.csv"}
    for name, paths in figs.items():
        out[f"{name} (png)"] = paths[0]
    return out


def report(store: Store, run: RunInfo, out_dir: Path, tokenizer: str = "backend",
           annotations: Path | None = None) -> Report:
    """The COGENT report of a stored run (registered for ``lexicoord report``); the annotation file is read
    from ``annotations`` or, when there is one, ``OUT_DIR/term_functions.csv``."""
    rows, failed = keeping_failed(store.iter_run_events(run.id))
    episodes = episodes_from(rows, named_tokenizer(tokenizer))  # one pass; summaries, not events, are kept
    if not episodes:
        raise LexicoordError(f"Run '{run.id}' has no finished COGENT episodes yet.")
    stats = compute_stats(episodes, failed_cells(failed), tokenizer)
    path = annotations or (out_dir / ANNOTATIONS)
    labels = read_labels(path, BENCHMARK_FUNCTIONS) if annotations or path.is_file() else []
    found = profiles(labels, BENCHMARK_FUNCTIONS) if labels else []
    shares = macro_average(found, BENCHMARK_FUNCTIONS) if found else None
    tables = [ReportTable(title=f"{run.id}: Table 1 ({stats.episodes} episodes, {stats.failed} failed)",
                          head=table1_rows(stats)[0], rows=table1_rows(stats)[1])]
    if stats.paired:
        tables.append(ReportTable(title="paired tests (exact McNemar)", head=paired_rows(stats)[0],
                                  rows=paired_rows(stats)[1]))
    if stats.ecology:
        tables.append(ReportTable(title="lexical ecology (Table 4)", head=ecology_rows(stats)[0],
                                  rows=ecology_rows(stats)[1]))
        head, qrows = qualitative_rows(stats, episodes, labels, found)
        tables.append(ReportTable(title="Table 4: dominant function, criterion, illustrative terms", head=head,
                                  rows=qrows))
    if found and shares is not None:
        head, frows = function_rows(found, shares)
        tables.append(ReportTable(title="lexical functions (% of term weight)", head=head, rows=frows))
    paper = comparison_table(stored(run.config), measures(stats))
    return Report(tables=tables + ([paper] if paper else []),
                  files=write_files(run, stats, episodes, out_dir, labels, found, shares), warnings=warnings(stats))
