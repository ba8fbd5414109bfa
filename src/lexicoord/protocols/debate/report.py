"""A debate study's report: terminal tables, figures, a self-contained HTML page (templates/report.html), JSON
and CSV."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lexicoord.analysis.cells import records_csv
from lexicoord.analysis.html import inline_svg, render
from lexicoord.analysis.numbers import ci, num, pct
from lexicoord.analysis.paper import Measure, bounds, comparison_table, rate, stored
from lexicoord.analysis.reading import keeping_failed
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.errors import LexicoordError
from lexicoord.protocols.debate.figures import study_figures
from lexicoord.protocols.debate.statistics import (
    Episode,
    Share,
    StudyStats,
    compute,
    episodes_from,
    failed_by_config,
)
from lexicoord.runs.records import RunInfo
from lexicoord.runs.store import RUNTIME, Store

MAX_TRANSCRIPTS = 300


def share(x: Share | None) -> str:
    """A rate with its count and denominator: ``45.0% (9/20)``; a dash when nothing was measured."""
    if x is None:
        return "–"
    return f"{pct(x.rate)} ({x.k}/{x.n})"


def detection_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """Figures 2 to 5, the paper's measure: verdict "ambiguous" on the ambiguous instructions."""
    head = ["configuration", "detection (the paper's success)", *stats.types, "ended in error", "failed, in no rate"]
    rows = [[c.config, share(c.detection), *[share(c.detection_by_type.get(t)) for t in stats.types],
             f"{c.ambiguous_errors} of {c.ambiguous}", str(c.failed_ambiguous)] for c in stats.configs]
    return head, rows


def right_slot_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """The stricter measure beside it: detected, and the question asks about the right slot and no other."""
    head = ["configuration", "right-slot question (stricter)", *stats.types, "shotgun question"]
    rows = [[c.config, share(c.right_slot), *[share(c.right_slot_by_type.get(t)) for t in stats.types],
             share(c.shotgun)] for c in stats.configs]
    return head, rows


def twin_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """The unambiguous twins: clear (right), false alarm and error, shares of the same finished twins."""
    head = ["configuration", "clear (right)", "false alarms", "ended in error", "failed, in no rate"]
    rows = [[c.config, share(c.clear), share(c.false_alarms), f"{c.unambiguous_errors} of {c.unambiguous}",
             str(c.failed_unambiguous)] for c in stats.configs if c.unambiguous or c.failed_unambiguous]
    return head, rows


def consensus_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """Table 1 and Figures 6 and 7: consensus, non-consensus and error are shares of the same debates."""
    head = ["leader", "consensus reached", "non-consensus (R rounds)", "ended in error", "avg rounds to consensus [95% CI]",
            "detection of consensus outcomes", "right slot of consensus outcomes", "consensus in round 1/2/3/4/5+"]
    rows = []
    for c in stats.configs:
        if c.condition != "debate":
            continue
        dist = c.rounds_to_consensus
        spread = "/".join(str(dist.get(r, 0)) for r in range(1, 5)) + f"/{sum(v for k, v in dist.items() if k >= 5)}"
        rounds = num(c.mean_rounds_to_consensus) + ci(c.mean_rounds_ci) + (f" (over {c.consensus.k})" if c.consensus else "")
        rows.append([c.config, share(c.consensus), share(c.non_consensus), share(c.debate_errors), rounds,
                     share(c.consensus_detection), share(c.consensus_right_slot), spread])
    return head, rows


def time_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """Table 2: mean wall time per episode, and its model calls' latencies summed, at the run's concurrency.

    Episodes with a reply from the cache are left out (a cached reply takes no time); when every one
    had one, there is no time to report. The sum can exceed the wall time: followers are asked at once,
    and a call waiting for a busy model counts its wait.
    """
    head = ["configuration", "concurrency", "episodes timed", "mean time per ambiguous instruction (s) [95% CI]",
            "model-call latency, summed (s)"]
    concurrency = ", ".join(map(str, stats.concurrency)) or "not recorded"
    if len(stats.concurrency) > 1:
        concurrency += " (resumed at another concurrency: times mix them)"
    rows = []
    for c in stats.configs:
        total = c.timed + c.cached_excluded
        timed = f"{c.timed} of {total}" + (f" ({c.cached_excluded} with cached replies left out)"
                                           if c.cached_excluded else "")
        if not c.timed:
            rows.append([c.config, concurrency, timed, "not measured: every episode used cached replies "
                         "(run with --no-cache to time it)", "–"])
        else:
            rows.append([c.config, concurrency, timed, num(c.mean_time) + ci(c.mean_time_ci), num(c.mean_model_time)])
    return head, rows


def judge_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """The judge as it went: not configured, or its model, its failures "k of n questions" with the
    reason, and its agreement with the rule over the questions it answered (a failure is not a "no")."""
    j = stats.judge
    if j is None:
        return ["measure", "value"], [["LLM judge", "not used in this run (debate run --judge MODEL)"]]
    kappa = num(j.kappa) if j.kappa is not None else j.kappa_note or "undefined"
    failed = f"{j.failed} of {j.asked} questions" + (f": {'; '.join(j.failures)}" if j.failures else "")
    judged = f"{j.judged} of {j.asked} questions" + (f" ({j.failed} failed)" if j.failed else "")
    return ["measure", "value"], [["LLM judge", ", ".join(j.models) or "configured (model not recorded)"],
                                  ["final questions sent to the judge", str(j.asked)],
                                  ["judge failed (no verdict; in no rate)", failed],
                                  ["answers judged by rule and judge (right-slot measure)", judged],
                                  ["agreement", share(j.agree)], ["Cohen's kappa", kappa]]


def sections(stats: StudyStats) -> list[tuple[str, tuple[list[str], list[list[str]]]]]:
    """Every table of the report, titled, in order; a table with no rows is left out."""
    out = [("Detection, the paper's measure (Figures 2 to 5)", detection_rows(stats)),
           ("Right-slot questions, a stricter measure", right_slot_rows(stats)),
           ("Unambiguous twins: false alarms", twin_rows(stats)),
           ("Debate dynamics (Table 1, Figures 6 and 7)", consensus_rows(stats)),
           ("Time (Table 2)", time_rows(stats)),
           ("Rule and LLM judge", judge_rows(stats))]
    return [(title, rows) for title, rows in out if rows[1]]


@dataclass(frozen=True)
class Move:
    """One move of a transcript as the page shows it: who, what they said, why, and the raw reply if kept."""

    who: str
    said: str
    why: str
    raw: str


@dataclass(frozen=True)
class Transcript:
    """One episode as the page shows it: a summary line, the instruction, and its moves in order."""

    summary: str
    instruction: str
    moves: list[Move]


def transcript(e: Episode) -> Transcript:
    moves = []
    for m in e.moves:
        if m["type"] == "proposal":
            said = f"{m.get('verdict') or 'unreadable'}" + (f": {m['question']}" if m.get("question") else "")
        elif m["type"] == "feedback":
            said = f"{m.get('stance') or 'unreadable'}" + (f" (alternative: {m['alternative']})" if m.get("alternative") else "")
        elif m.get("asks_slot") is None:  # unreachable or unreadable: no verdict, and never a "no"
            said = "the judge failed: no verdict"
        else:
            said = f"judge: {'asks about the ambiguity' if m['asks_slot'] else 'does not ask about it'}"
        moves.append(Move(who=f"round {m.get('round', '?')} · {m.get('agent', '')}", said=said,
                          why=m.get("reasoning") or m.get("failure") or "", raw=m.get("raw") or ""))
    verdict = ("detected" if e.success else "not detected") if e.ambiguous else ("clear" if e.success else "failure")
    if e.ambiguous and e.asks:
        verdict += f", question: {e.asks}"
    return Transcript(summary=f"{e.item_id} · {e.config} · {e.termination} · {e.rounds} round(s) · {verdict}",
                      instruction=e.instruction, moves=moves)


def measures(stats: StudyStats) -> list[Measure]:
    """The figures the debate paper published, in its units: success (detection) overall and by type,
    consensus and non-consensus per leader, mean rounds to consensus, the success of consensus outcomes (Table 1:
    detection among the debates that reached consensus), the share of a leader's consensus reached in each round
    (Figure 6: cell ``round``, for every round some debate of the run reached consensus in, so a leader's 0% is
    shown) and mean debate time."""
    out: list[Measure | None] = []
    reached = sorted({r for c in stats.configs for r in c.rounds_to_consensus})
    for c in stats.configs:
        model = c.model
        out.append(rate("success_rate", {"condition": c.condition, "type": "overall"}, c.detection.k, c.detection.n,
                        model))
        for kind, share in c.detection_by_type.items():
            out.append(rate("success_rate", {"condition": c.condition, "type": kind}, share.k, share.n, model))
        if c.condition == "debate":
            for metric, agreed in (("consensus_rate", c.consensus), ("non_consensus_rate", c.non_consensus)):
                if agreed is not None:
                    out.append(rate(metric, {}, agreed.k, agreed.n, model))
            if c.mean_rounds_to_consensus is not None and c.consensus is not None:
                out.append(Measure(metric="avg_rounds_to_consensus", cell={}, model=model,
                                   value=c.mean_rounds_to_consensus, n=c.consensus.k, **bounds(c.mean_rounds_ci)))
            if c.consensus_detection is not None:
                out.append(rate("consensus_success_rate", {}, c.consensus_detection.k, c.consensus_detection.n, model))
            if c.consensus is not None:
                out += [rate("consensus_round_share", {"round": str(r)}, c.rounds_to_consensus.get(r, 0),
                             c.consensus.k, model) for r in reached]
            if c.mean_time is not None:
                out.append(Measure(metric="avg_debate_time", cell={}, model=model, value=c.mean_time, n=c.timed,
                                   **bounds(c.mean_time_ci)))
    return [m for m in out if m is not None]


def write_report(run: RunInfo, stats: StudyStats, episodes: list[Episode], out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    figs = study_figures(stats, out_dir)
    (out_dir / "stats.json").write_text(json.dumps(stats.model_dump(mode="json"), indent=2), encoding="utf-8")
    columns = ["item_id", "pair", "type", "subtype", "ambiguous", "condition", "config", "model", "termination",
               "consensus", "rounds", "verdict", "question", "detected", "asks", "rule", "judge", "judge_failure", "success",
               "false_alarm", "wall_time", "model_time", "calls", "cached_calls", "error"]
    records_csv(out_dir / "episodes.csv", columns, (e.model_dump() for e in episodes))
    shown = episodes[:MAX_TRANSCRIPTS]
    page = render("lexicoord.protocols.debate", run=run, stats=stats,
                  settings=json.dumps(run.config, ensure_ascii=False, indent=2),
                  tables=[(title, head, rows) for title, (head, rows) in sections(stats)],
                  figures=[inline_svg(paths[1]) for paths in figs.values()],
                  transcripts=[transcript(e) for e in shown], more=len(episodes) - len(shown),
                  paper=comparison_table(stored(run.config), measures(stats)))
    report = out_dir / "report.html"
    report.write_text(page, encoding="utf-8")
    out = {"html": report, "json": out_dir / "stats.json", "csv": out_dir / "episodes.csv"}
    for name, paths in figs.items():
        out[f"{name} (png)"] = paths[0]
    return out


def report(store: Store, run: RunInfo, out_dir: Path) -> Report:
    """The debate study's report of a stored run (registered for ``lexicoord report``)."""
    rows, failed = keeping_failed(store.iter_run_events(run.id))
    episodes = episodes_from(rows)  # one pass; summaries, not events, are kept
    if not episodes:
        raise LexicoordError(f"Run '{run.id}' has no finished debate episodes yet.")
    stats = compute(episodes, failed=len(failed), failed_configs=failed_by_config(failed))
    used = (run.config.get(RUNTIME) or {}).get("concurrency") or []
    stats.concurrency = [c for c in used if isinstance(c, int)]
    tables = [ReportTable(title=f"{run.id}: {title}" if i == 0 else title, head=head, rows=body)
              for i, (title, (head, body)) in enumerate(sections(stats))]
    tables[0].title += f" ({stats.episodes} finished episodes, {stats.failed} failed)"
    paper = comparison_table(stored(run.config), measures(stats))
    return Report(tables=tables + ([paper] if paper else []), files=write_report(run, stats, episodes, out_dir))
