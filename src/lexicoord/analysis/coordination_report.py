"""A coordination run's report: tables, the depth figure, a self-contained HTML page, JSON and CSV."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from lexicoord.analysis.cells import write_csv
from lexicoord.analysis.coordination import CoordinationStats, Game, games_from, statistics
from lexicoord.analysis.figures import depth_distribution
from lexicoord.analysis.html import inline_svg, table
from lexicoord.analysis.html import page as html_page
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.errors import LexicoordError
from lexicoord.runs.records import RunInfo
from lexicoord.runs.store import Store


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1%}"


def summary_rows(stats: CoordinationStats) -> list[tuple[str, str]]:
    rows = [
        ("games", str(stats.games)),
        ("converged (win)", f"{stats.converged} ({_pct(stats.converged / stats.games if stats.games else None)})"),
        ("failed (loss)", f"{stats.failed} ({_pct(stats.failed / stats.games if stats.games else None)})"),
        ("first-round convergence", _pct(stats.first_round_rate)),
        ("mean depth of converged games", "–" if stats.mean_depth is None else f"{stats.mean_depth:.2f}"),
        ("accuracy of converged meaning", f"{_pct(stats.accuracy)} of {stats.accuracy_games} games with a settled meaning"),
    ]
    rows += [(f"failed: {k}", str(v)) for k, v in sorted(stats.failure_reasons.items())]
    rows += [(f"before failure: {k}", str(v)) for k, v in sorted(stats.failure_causes.items())]
    return rows


def agent_rows(stats: CoordinationStats) -> list[dict[str, Any]]:
    rows = []
    for name, r in stats.revisions.items():
        toward = stats.toward_leader.get(name)
        rows.append({
            "agent": f"{name} (simulated)" if r.get("simulated") else name,
            "kind": r["kind"] if r["kind"] == "simulated" or not r.get("simulated") else f"{r['kind']} (simulated)",
            "model": r.get("model") or "",
            "games": r["games"],
            "revisions": r["revisions"],
            "revision rate": _pct(r["revisions"] / r["opportunities"] if r["opportunities"] else None),
            "moved to leader": "leader" if r.get("leads") else "–" if toward is None else f"{toward['moved']}/{toward['opportunities']}",
        })
    return rows


def _label_pair(pair: str, stats: CoordinationStats) -> str:
    names = pair.split(" / ")
    return " / ".join(f"{n} (simulated)" if stats.revisions.get(n, {}).get("simulated") else n for n in names)


def write_report(run: RunInfo, stats: CoordinationStats, games: list[Game], out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    png, svg = depth_distribution(stats, out_dir / "depth_distribution")
    (out_dir / "stats.json").write_text(json.dumps(stats.model_dump(mode="json"), indent=2), encoding="utf-8")
    write_csv(out_dir / "games.csv", ["item", "repetition", "converged", "reason", "depth", "interpretation",
                                      "intended", "correct", "simulated_agents"],
              ([g.item_id, g.repetition, g.converged, g.reason, g.depth, g.interpretation, g.intended, g.correct,
                " ".join(n for n, a in g.agents.items() if a.simulated)] for g in games))

    agents = agent_rows(stats)
    svg_text = inline_svg(svg)
    body = f"""<h1>Coordination report: {html.escape(run.id)}</h1>
<p class="muted">protocol {html.escape(run.protocol)} · {run.done} episodes done, {run.failed} failed ·
settings {html.escape(json.dumps(run.config, ensure_ascii=False))}</p>
<h2>Outcomes</h2>
{table(["measure", "value"], [list(r) for r in summary_rows(stats)])}
<h2>Clarification depth distribution</h2>
{svg_text}
<h2>Agents</h2>
{table(list(agents[0]) if agents else ["agent"], [list(a.values()) for a in agents])}
<h2>Pairwise agreement (share of rounds with the same choice)</h2>
{table(["pair", "agreement"], [[_label_pair(k, stats), _pct(v)] for k, v in stats.pairwise_agreement.items()])}
<h2>Games</h2>
{table(["item", "rep", "outcome", "depth", "agreed meaning", "intended"],
        [[g.item_id, str(g.repetition), "converged" if g.converged else g.reason,
          "" if g.depth is None else str(g.depth), g.interpretation or "", g.intended or "(open)"] for g in games])}
"""
    page = html_page(f"{run.id}: coordination report", body)
    report = out_dir / "report.html"
    report.write_text(page, encoding="utf-8")
    return {"html": report, "png": png, "svg": svg, "json": out_dir / "stats.json", "csv": out_dir / "games.csv"}


def report(store: Store, run: RunInfo, out_dir: Path) -> Report:
    """The coordination game's report of a stored run (registered for ``lexicoord report``)."""
    rows = list(store.iter_run_events(run.id))
    games = games_from(rows)
    if not games:
        raise LexicoordError(f"Run '{run.id}' has no finished coordination games yet.")
    bound = (run.config.get("settings") or {}).get("clarification_bound", run.config.get("bound"))
    stats = statistics(rows, bound=bound)
    agents = agent_rows(stats)
    depth = [[str(d), str(n)] for d, n in stats.depth_distribution.items()] + [["failed", str(stats.failed)]]
    tables = [
        ReportTable(title=f"{run.id}: {stats.games} games", head=["measure", "value"],
                    rows=[list(r) for r in summary_rows(stats)]),
        ReportTable(title="clarification depth", head=["depth", "games"], rows=depth),
        ReportTable(title="agents", head=list(agents[0]) if agents else ["agent"],
                    rows=[[str(v) for v in a.values()] for a in agents]),
    ]
    return Report(tables=tables, files=write_report(run, stats, games, out_dir))
