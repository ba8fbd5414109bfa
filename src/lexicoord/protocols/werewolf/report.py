"""A Werewolf run's report: the games, Table 7, Table 6 with the pseudo-lexicon, and a replay of every game
(nights and days in order, every event marked with its audience, the term pools as they grew, and each
player's own view); terminal tables, a figure (PNG, SVG), one HTML page (templates/report.html), JSON and CSV."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lexicoord.analysis.cells import records_csv, write_csv
from lexicoord.analysis.figures import _pyplot, save_figure
from lexicoord.analysis.html import inline_svg, render
from lexicoord.analysis.intervals import METHOD
from lexicoord.analysis.numbers import ci, num
from lexicoord.analysis.paper import Measure, bounds, comparison_table, rate, stored
from lexicoord.analysis.reading import Row, keeping_failed
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.analysis.term_figures import radar
from lexicoord.analysis.term_functions import WEREWOLF_FUNCTIONS, FunctionProfile, profiles, read_labels
from lexicoord.core.audience import Viewer, can_see
from lexicoord.core.events import Event
from lexicoord.errors import LexicoordError
from lexicoord.lexicon.events import TermsSharedEvent
from lexicoord.models.observe import ModelCallEvent
from lexicoord.models.tokenizer import named_tokenizer
from lexicoord.protocols.werewolf.events import RoleEvent
from lexicoord.protocols.werewolf.statistics import Sizes, WerewolfStats, compute, games_from
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.store import Store

ANNOTATIONS = "term_functions.csv"



def share(a: int, b: int) -> str:
    return f"{a}/{b}" + (f" ({100 * a / b:.0f}%)" if b else "")


def results_rows(stats: WerewolfStats) -> tuple[list[str], list[list[str]]]:
    head = ["condition", "games", "wins", "mean days [95% CI]", "saves", "guarded attacks", "checks on wolves",
            "poisons on wolves", "village votes on wolves", "invalid actions", "calls/game [95% CI]",
            "tokens/game [95% CI]",
            "calls/game by phase", "tokens/game by phase"]
    rows = [[r.condition, str(r.games), ", ".join(f"{k} {v}" for k, v in sorted(r.wins.items())),
             num(r.mean_days) + ci(r.intervals.get("mean_days")),
             str(r.saves), str(r.guarded_attacks), share(r.checks_on_wolves, r.checks),
             share(r.poisons_on_wolves, r.poisons), share(r.village_votes_on_wolves, r.village_votes),
             str(r.invalid_actions), num(r.mean_calls, ".1f") + ci(r.intervals.get("mean_calls"), ".1f"),
             num(r.mean_tokens, ".0f") + ci(r.intervals.get("mean_tokens"), ".0f"),
             ", ".join(f"{k} {v:.1f}" for k, v in r.calls_by_phase.items()),
             ", ".join(f"{k} {v:.0f}" for k, v in r.tokens_by_phase.items())] for r in stats.results]
    return head, rows


def lexical_rows(stats: WerewolfStats) -> tuple[list[str], list[list[str]]]:
    x = stats.lexical
    if x is None:
        return ["metric", "value"], [["COGENT games", "none in this run"]]
    def count(name: str) -> str:
        return f"{getattr(x, name)}{ci(x.intervals.get(name), '.0f')}"

    rows = [
        ["accepted terms", count("accepted_terms")], ["observed reuses", count("reuses")],
        ["uptake (reuses / terms)", num(x.uptake)],
        [f"final lexicon snapshot tokens ({stats.tokenizer})", count("lexicon_tokens")],
        ["lexicon footprint ratio (lexicon / public log)", num(x.footprint_ratio, ".3f")],
        ["reuse per 100 lexicon tokens", num(x.reuse_per_100_lexicon_tokens)],
        ["public terms / reuses", f"{count('public_terms')} / {count('public_reuses')}"],
        ["wolf-private terms / reuses", f"{count('wolf_terms')} / {count('wolf_reuses')}"],
        ["public reuse share", num(x.public_reuse_share, ".1%") if x.public_reuse_share is not None else "–"],
        ["public uptake advantage", num(x.public_uptake_advantage) + ("x" if x.public_uptake_advantage else "")],
        ["terms used in public speech", f"{count('terms_used_in_public')} / {x.accepted_terms}"],
        ["terms used by >= 2 public speakers", f"{count('terms_with_two_public_speakers')} / {x.accepted_terms}"],
        ["avg unique public speakers per term",
         num(x.mean_public_speakers_per_term, ".3f") + ci(x.intervals.get("mean_public_speakers_per_term"), ".3f")],
        ["public checkpoint persistence", num(x.public_checkpoint_persistence, ".3f")],
        ["rejected candidates", ", ".join(f"{k} {v}" for k, v in x.rejected.items()) or "none"],
    ]
    return ["metric (Table 7)", f"value [95% CI over the {x.games} games; {METHOD}]"], rows


def matched_rows(stats: WerewolfStats) -> tuple[list[str], list[list[str]]]:
    head = ["seed", "checkpoint (day)", "public log ORIGIN / COGENT", "personal logs ORIGIN / COGENT",
            "full-game tokens ORIGIN / COGENT", "pseudo-terms ORIGIN (taken up)", "pseudo-terms COGENT (taken up)"]

    def pair(a: int, b: int) -> str:
        return f"{a} / {b}" + (f" ({100 * (b / a - 1):+.1f}%)" if a else "")

    def sizes(m: Sizes) -> list[str]:
        return [pair(m.origin_public, m.cogent_public), pair(m.origin_personal, m.cogent_personal),
                pair(m.origin_total_tokens, m.cogent_total_tokens), f"{m.origin_pseudo_terms} ({m.origin_pseudo_shared})",
                f"{m.cogent_pseudo_terms} ({m.cogent_pseudo_shared})"]

    rows = [[str(m.seed), str(m.checkpoint_day), *sizes(m)] for m in stats.matched]
    if stats.matched_total is not None:  # the paper's figures are these totals
        total = stats.matched_total
        rows.append([f"total ({total.pairs} pair{'s' if total.pairs != 1 else ''})", "each pair's", *sizes(total)])
        if total.pairs > 1:
            def interval(field: str) -> str:
                return ci(total.intervals.get(field), ".0f").strip() or "–"

            rows.append(["95% CI of the total (pairs resampled)", "", *(
                f"{interval(f'origin_{k}')} / {interval(f'cogent_{k}')}" for k in ("public", "personal", "total_tokens")),
                "", ""])
    return head, rows


def function_rows(found: list[FunctionProfile]) -> tuple[list[str], list[list[str]]]:
    """Table 5: each function's weight (in terms) and share, per pool and over all labelled terms."""
    head = ["function", *[f"{p.model} pool: terms (share)" for p in found]]
    rows = [[c, *[f"{p.counts[c]:.2f} ({100 * p.shares[c]:.0f}%)" for p in found]]
            for c in WEREWOLF_FUNCTIONS.categories]
    rows.append(["labelled terms (unlabelled)", *[f"{p.terms} ({p.unlabelled})" for p in found]])
    rows.append(["annotators", *[", ".join(f"{k} {v}" for k, v in p.annotators.items()) for p in found]])
    return head, rows


def _who(event: Event) -> str:
    a = event.audience
    return "everyone" if a.public else "moderator only" if a.kind == "agents" and not a.agents else a.describe()


def _line(e: Event) -> str:
    said = e.line() or e.type
    who = f"{e.agent} " if e.agent else ""
    return f"{who}{said}"


@dataclass(frozen=True)
class View:
    """What one player knew of a game: the lines of the events they could see."""

    player: str
    role: str
    seen: list[str]


@dataclass(frozen=True)
class Replay:
    """One game as the page shows it. Each of ``items`` is a stage heading (``{"stage": "Night 1"}``) or an
    event (``{"who": its audience, "line": what happened, "pool": a term pool's snapshot, or empty}``)."""

    summary: str
    items: list[dict[str, Any]]
    views: list[View]


def replay(record: EpisodeRecord, events: list[Event]) -> Replay:
    """One game as a page section: the whole record, then what each player saw."""
    shown = [e for e in events if not isinstance(e, ModelCallEvent) and e.type != "outcome"]
    items: list[dict[str, Any]] = []
    current = None
    for e in shown:
        stage = f"{'Night' if e.phase == 'night' else 'Day'} {e.round}" if e.round else "Setup"
        if stage != current:
            items.append({"stage": stage})
            current = stage
        items.append({"stage": "", "who": _who(e), "line": _line(e),
                      "pool": e.snapshot if isinstance(e, TermsSharedEvent) else []})
    roles = {e.agent or "": e.role for e in events if isinstance(e, RoleEvent)}
    wolves = {p for p, r in roles.items() if r == "werewolf"}
    views = []
    for player, role in roles.items():
        viewer = Viewer(name=player, groups=frozenset({"wolves"} if player in wolves else set()))
        views.append(View(player=player, role=role, seen=[_line(e) for e in shown
                                                          if can_see(viewer, e.audience) and e.type != "ww_over"]))
    o = record.outcome or {}
    summary = (f"game {record.spec.get('item', {}).get('id', record.item_id)} · {o.get('condition')} · "
               f"winner {o.get('winner')} · {o.get('days')} day(s)")
    return Replay(summary=summary, items=items, views=views)


def _figure(stats: WerewolfStats, out_dir: Path) -> list[Path]:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.2), dpi=150)
    conditions = [r.condition for r in stats.results]
    bottom = [0.0] * len(conditions)
    for winner, colour in (("villagers", "#3b6ea8"), ("wolves", "#c0504d"), ("draw", "#9aa9bd")):
        counts = [float(r.wins.get(winner, 0)) for r in stats.results]
        ax.bar(conditions, counts, bottom=bottom, label=winner, color=colour)
        bottom = [b + c for b, c in zip(bottom, counts)]
    ax.set_ylabel("games")
    ax.set_title("Wins by faction", fontsize=10)
    ax.legend(fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, out_dir / "wins")


def measures(stats: WerewolfStats, functions: Sequence[FunctionProfile] = ()) -> list[Measure]:
    """The figures of Section 5 and Tables 2, 5, 6 and 7, in the paper's units. Over the COGENT games: accepted
    terms, reuses and the pools' terms and reuses (counts over the run's games), the uptake rate (reuses per
    term), the public pool's share of reuse and of entries and public checkpoint persistence (percent), its
    uptake advantage, the terms used in public speech and by at least two public speakers (counts of the accepted
    terms), the average unique public speakers per term, the final lexicon's tokens, its footprint ratio and the
    reuse per 100 of its tokens. Over the ORIGIN/COGENT pairs (Table 6's totals): the public and personal logs at
    the matched checkpoints and the full games' tokens, per condition, and the logs' reductions (percent, Table 2).
    From the lexical-function file, when the report has one (``functions``): Table 5's count of each function,
    summed over the pools."""
    found: list[Measure | None] = []
    lex = stats.lexical
    if lex is not None:
        def counted(metric: str, field: str, n: int) -> Measure:
            return Measure(metric=metric, cell={}, value=getattr(lex, field), n=n, **bounds(lex.intervals.get(field)))

        found += [counted("accepted_terms", "accepted_terms", lex.games), counted("observed_reuses", "reuses", lex.games),
                  counted("cross_speaker_public_uptake", "terms_with_two_public_speakers", lex.accepted_terms)]
        if lex.uptake is not None:
            found.append(Measure(metric="lexical_uptake_rate", cell={}, value=lex.uptake, n=lex.accepted_terms))
        found += [rate("public_reuse_share", {}, lex.public_reuses, lex.reuses),
                  rate("public_share_of_entries", {}, lex.public_terms, lex.accepted_terms)]
        if lex.public_uptake_advantage is not None:
            found.append(Measure(metric="public_uptake_advantage", cell={}, value=lex.public_uptake_advantage))
        found += [counted("lexicon_snapshot_tokens", "lexicon_tokens", lex.games),
                  counted("public_terms", "public_terms", lex.games), counted("public_reuses", "public_reuses", lex.games),
                  counted("wolf_private_terms", "wolf_terms", lex.games),
                  counted("wolf_private_reuses", "wolf_reuses", lex.games),
                  counted("terms_used_in_public_speech", "terms_used_in_public", lex.accepted_terms)]
        if lex.footprint_ratio is not None:
            found.append(Measure(metric="lexicon_footprint_ratio", cell={}, value=lex.footprint_ratio, n=lex.games))
        if lex.reuse_per_100_lexicon_tokens is not None:
            found.append(Measure(metric="reuse_per_100_lexicon_tokens", cell={}, value=lex.reuse_per_100_lexicon_tokens,
                                 n=lex.games))
        if lex.mean_public_speakers_per_term is not None:
            found.append(Measure(metric="avg_public_speakers_per_term", cell={},
                                 value=lex.mean_public_speakers_per_term, n=lex.accepted_terms,
                                 **bounds(lex.intervals.get("mean_public_speakers_per_term"))))
        found.append(rate("public_checkpoint_persistence", {}, lex.persistence_used, lex.persistence_pairs))
    total = stats.matched_total
    if total is not None:
        for metric, field in (("common_prefix_public_log_tokens", "public"),
                              ("common_prefix_personal_log_tokens", "personal"),
                              ("full_game_total_tokens", "total_tokens")):
            found += [Measure(metric=metric, cell={"condition": side}, value=getattr(total, f"{side}_{field}"),
                              n=total.pairs, **bounds(total.intervals.get(f"{side}_{field}")))
                      for side in ("origin", "cogent")]
        for metric, origin, cogent in (
                ("common_prefix_public_token_reduction", total.origin_public, total.cogent_public),
                ("common_prefix_personal_token_reduction", total.origin_personal, total.cogent_personal)):
            if origin:
                found.append(Measure(metric=metric, cell={}, value=100 * (1 - cogent / origin), n=total.pairs))
    if functions:
        labelled = sum(p.terms for p in functions)
        for c in WEREWOLF_FUNCTIONS.categories:
            found.append(Measure(metric="term_function_count", cell={"function": c},
                                 value=sum(p.counts.get(c, 0.0) for p in functions), n=labelled))
    return [m for m in found if m is not None]


def report(store: Store, run: RunInfo, out_dir: Path, tokenizer: str = "words", annotations: Path | None = None) -> Report:
    """The Werewolf report of a stored run (registered for ``lexicoord report``); the lexical-function file is
    read from ``annotations`` or, when there is one, ``OUT_DIR/term_functions.csv``."""
    rows, failed = keeping_failed(store.iter_run_events(run.id))
    replays: list[Replay] = []

    def replayed(rows: Iterable[Row]) -> Iterator[Row]:
        for record, events in rows:
            if record.status == "done":
                replays.append(replay(record, events))
            yield record, events

    # One pass: a game's summary and its replay (what each player saw) are kept, not its events.
    games = games_from(replayed(rows), named_tokenizer(tokenizer))
    if not games:
        raise LexicoordError(f"Run '{run.id}' has no finished Werewolf games yet.")
    stats = compute(games, len(failed), tokenizer)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "stats.json").write_text(json.dumps(stats.model_dump(mode="json"), indent=2), encoding="utf-8")
    columns = ["episode_id", "seed", "condition", "winner", "days", "calls", "prompt_tokens", "completion_tokens",
               "invalid_actions", "saves", "checks_on_wolves", "village_votes_on_wolves", "public_tokens"]
    records_csv(out_dir / "games.csv", columns, (g.model_dump() for g in games))
    write_csv(out_dir / "terms.csv", ["episode_id", "term", "pool", "coiner", "day", "reuses", "public_reuses",
                                      "public_speakers"],
              ([g.episode_id, t.term, t.pool, t.coiner, t.day, t.reuses, t.public_reuses, " ".join(t.public_speakers)]
               for g in games for t in g.terms))
    figure = _figure(stats, out_dir)
    path = annotations or out_dir / ANNOTATIONS
    found = profiles(read_labels(path, WEREWOLF_FUNCTIONS), WEREWOLF_FUNCTIONS) if annotations or path.is_file() else []
    sections = [("Games", results_rows(stats)), ("Lexical grounding (Table 7)", lexical_rows(stats)),
                ("ORIGIN vs COGENT at matched checkpoints (Table 6)", matched_rows(stats))]
    figures = [figure]
    if found:
        sections.append(("Functions of Werewolf terms (Table 5), from the annotation file", function_rows(found)))
        figures.append(radar(found, WEREWOLF_FUNCTIONS, out_dir / "functions_radar",
                             "Functions of Werewolf terms (% of weight, per pool)"))
    page = out_dir / "report.html"
    page.write_text(render("lexicoord.protocols.werewolf", run=run, stats=stats,
                           settings=json.dumps(run.config, ensure_ascii=False, indent=2),
                           tables=[(title, head, body) for title, (head, body) in sections],
                           figures=[inline_svg(f[1]) for f in figures],
                           replays=replays, paper=comparison_table(stored(run.config), measures(stats, found))),
                    encoding="utf-8")
    tables = [ReportTable(title=f"{run.id}: games", head=results_rows(stats)[0], rows=results_rows(stats)[1]),
              ReportTable(title="lexical grounding (Table 7)", head=lexical_rows(stats)[0], rows=lexical_rows(stats)[1])]
    if stats.matched:
        tables.append(ReportTable(title="matched checkpoints (Table 6)", head=matched_rows(stats)[0],
                                  rows=matched_rows(stats)[1]))
    if found:
        tables.append(ReportTable(title="functions of Werewolf terms (Table 5)", head=function_rows(found)[0],
                                  rows=function_rows(found)[1]))
    paper = comparison_table(stored(run.config), measures(stats, found))
    if paper:
        tables.append(paper)
    return Report(tables=tables, files={"html": page, "json": out_dir / "stats.json", "csv": out_dir / "games.csv",
                                        "terms": out_dir / "terms.csv", "wins (png)": figure[0],
                                        **({"functions radar (png)": figures[1][0]} if found else {})})
