"""A gate run's numbers: how often it said clear, asked, refused or failed, and what a check cost.

Every rate names its denominator: the checks that ended (``done`` episodes; a failed episode is counted as an
``error`` verdict, never dropped). Costs are means over the same checks, with the median latency beside them.
"""

from __future__ import annotations

import json
import statistics as stats
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lexicoord.analysis.html import render
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.core.events import Event
from lexicoord.runs.records import EpisodeRecord, RunInfo
from lexicoord.runs.store import Store

STATUSES = ("clear", "refuse", "error")


class GateStatistics(BaseModel):
    checks: int
    by_status: dict[str, int]
    #: Checks in which the person was asked at least once.
    asked: int
    #: ``adaptive``: checks the cheap check passed on to the full policy.
    escalated: int
    mean_model_calls: float | None
    mean_tokens: float | None
    median_latency_s: float | None


def statistics(rows: Iterable[tuple[EpisodeRecord, list[Event]]]) -> GateStatistics:
    ended = [(r, ev) for r, ev in rows if r.status in ("done", "failed")]
    status = Counter((r.outcome or {}).get("status", "error") if r.status == "done" else "error" for r, _ in ended)
    latencies = [r.finished_at - r.started_at for r, _ in ended if r.finished_at and r.started_at]
    return GateStatistics(
        checks=len(ended), by_status={s: status.get(s, 0) for s in STATUSES},
        asked=sum(1 for _, ev in ended if any(e.type == "gate_question" for e in ev)),
        escalated=sum(1 for r, _ in ended if (r.outcome or {}).get("escalated")),
        mean_model_calls=stats.fmean(r.model_calls for r, _ in ended) if ended else None,
        mean_tokens=stats.fmean(r.prompt_tokens + r.completion_tokens for r, _ in ended) if ended else None,
        median_latency_s=stats.median(latencies) if latencies else None,
    )


def _share(n: int, of: int) -> str:
    return f"{n}/{of} ({n / of:.0%})" if of else "0/0"


def report(store: Store, run: RunInfo, out_dir: Path) -> Report:
    s = statistics(store.iter_run_events(run.id))
    out_dir.mkdir(parents=True, exist_ok=True)
    data = out_dir / "gate.json"
    data.write_text(json.dumps(s.model_dump(), indent=2), encoding="utf-8")
    head = ["checks", "clear", "refuse", "error", "asked a person", "escalated", "model calls (mean)",
            "tokens (mean)", "wall time (median, s; a person's answering included)"]
    row = [str(s.checks), *(_share(s.by_status[k], s.checks) for k in STATUSES), _share(s.asked, s.checks),
           _share(s.escalated, s.checks), f"{s.mean_model_calls:.2f}" if s.mean_model_calls is not None else "-",
           f"{s.mean_tokens:.0f}" if s.mean_tokens is not None else "-",
           f"{s.median_latency_s:.2f}" if s.median_latency_s is not None else "-"]
    checks = [[r.item_id, (r.spec.get("settings") or {}).get("policy", ""),
               (r.spec.get("item") or {}).get("instruction", ""), (r.outcome or {}).get("status", "error"),
               (r.outcome or {}).get("interpretation") or (r.outcome or {}).get("reason") or r.error or ""]
              for r, _ in store.iter_run_events(run.id)]
    table = ReportTable(title=f"Agreement gate: {run.id} (shares of the checks that ended)", head=head, rows=[row])
    result = Report(tables=[table], files={"json": data})
    benchmark = {"evaluation": [], "paper": None, "figure": None, "judged": "", "source": "",
                 **evaluation(store, run, out_dir, result)}
    page = out_dir / "report.html"
    page.write_text(render("lexicoord.gate", run=run.id, head=head, row=row, checks=checks,
                           settings=json.dumps(run.config, ensure_ascii=False, indent=2), **benchmark),
                    encoding="utf-8")
    result.files["html"] = page
    return result


def evaluation(store: Store, run: RunInfo, out_dir: Path, result: Report) -> dict[str, Any]:
    """An evaluation's tables, CSV, figure and published numbers, added to ``result``; the page's parts."""
    from lexicoord.gate.evaluation.scoring import score

    scored = [x for r, ev in store.iter_run_events(run.id) if r.status in ("done", "failed")
              and (x := score(r, ev)) is not None]
    if not scored:
        return {}
    from lexicoord.analysis.html import inline_svg
    from lexicoord.analysis.paper import comparison_table, stored
    from lexicoord.gate.evaluation.metrics import cells
    from lexicoord.gate.evaluation.report import figure, judges_line, tables, write_csv

    found = cells(scored)
    made = tables(found)
    models = "+".join(run.config.get("models") or [])
    measures = [m.model_copy(update={"model": models}) for c in found for m in c.measures.values()]
    paper = comparison_table(stored(run.config), measures)
    result.tables += made + ([paper] if paper else [])
    result.files["csv"] = write_csv(scored, out_dir / "checks.csv")
    png, svg = figure(found, out_dir / "policies")
    result.files["figure"] = png
    judged = judges_line(found)
    result.warnings.append(judged)
    skipped = run.config.get("skipped") or "nothing"
    source = (f"{run.config.get('items', len({x.item_id for x in scored}))} items of {run.config.get('dataset', '?')}"
              f" (the loader skipped {skipped}), seats filled from {', '.join(run.config.get('models') or ['?'])}"
              + (f", judge {run.config['judge']}" if run.config.get("judge") else ""))
    return {"evaluation": made, "paper": paper, "figure": inline_svg(svg), "judged": judged, "source": source}

