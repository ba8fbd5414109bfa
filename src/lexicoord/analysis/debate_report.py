"""An ambiguity study's report: terminal tables, figures, a self-contained HTML page, JSON and CSV."""

from __future__ import annotations

import html
import json
from pathlib import Path

from lexicoord.analysis.cells import records_csv
from lexicoord.analysis.debate import Episode, StudyStats, episodes_from, statistics
from lexicoord.analysis.debate_figures import study_figures
from lexicoord.analysis.html import inline_svg, table
from lexicoord.analysis.html import page as html_page
from lexicoord.analysis.numbers import num, pct
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.errors import LexicoordError
from lexicoord.runs.records import RunInfo
from lexicoord.runs.store import Store

MAX_TRANSCRIPTS = 300




def success_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """Figure 2 to 5 and false alarms as one table: a row per configuration."""
    head = ["configuration", "ambiguous", "success", *stats.types, "unambiguous", "false alarms",
            "ended in error", "failed episodes"]
    rows = [[c.config, str(c.ambiguous), pct(c.success), *[pct(c.success_by_type.get(t)) for t in stats.types],
             str(c.unambiguous), pct(c.false_alarms), str(c.errors), str(c.failed)] for c in stats.configs]
    return head, rows


def consensus_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """Table 1 (with the non-consensus rate of Figure 7) and the rounds distribution of Figure 6."""
    head = ["leader", "consensus reached", "non-consensus", "avg rounds to consensus", "success of consensus outcomes",
            "consensus in round 1/2/3/4/5+"]
    rows = []
    for c in stats.configs:
        if c.condition != "debate":
            continue
        dist = c.rounds_to_consensus
        spread = "/".join(str(dist.get(r, 0)) for r in range(1, 5)) + f"/{sum(v for k, v in dist.items() if k >= 5)}"
        rows.append([c.config, pct(c.consensus_rate), pct(c.non_consensus_rate), num(c.mean_rounds_to_consensus),
                     pct(c.consensus_success), spread])
    return head, rows


def time_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    """Table 2: mean wall time per episode, and its model calls' latencies summed.

    The sum can exceed the wall time: followers are asked at once, and a call waiting for a busy
    model counts its wait.
    """
    head = ["configuration", "mean time per ambiguous instruction (s)", "model-call latency, summed (s)"]
    return head, [[c.config, num(c.mean_time), num(c.mean_model_time)] for c in stats.configs]


def judge_rows(stats: StudyStats) -> tuple[list[str], list[list[str]]]:
    j = stats.judge
    if j is None:
        return ["measure", "value"], [["LLM judge", "not used in this run (debate run --judge MODEL)"]]
    return ["measure", "value"], [["answers judged by rule and judge", str(j.judged)],
                                  ["agreement", pct(j.agree)], ["Cohen's kappa", num(j.kappa)]]


def _transcript(e: Episode) -> str:
    lines = []
    for m in e.moves:
        who = html.escape(f"round {m.get('round', '?')} · {m.get('agent', '')}")
        if m["type"] == "proposal":
            said = f"{m.get('verdict') or 'unreadable'}" + (f": {m['question']}" if m.get("question") else "")
        elif m["type"] == "feedback":
            said = f"{m.get('stance') or 'unreadable'}" + (f" (alternative: {m['alternative']})" if m.get("alternative") else "")
        else:
            said = f"judge: {'asks about the ambiguity' if m.get('asks_slot') else 'does not ask about it'}"
        why = m.get("reasoning") or m.get("failure") or ""
        raw = f"<pre>{html.escape(m['raw'])}</pre>" if m.get("raw") else ""
        lines.append(f"<li><b>{who}</b>: {html.escape(said)}<br><span class=muted>{html.escape(why)}</span>{raw}</li>")
    verdict = "success" if e.success else "n/a" if e.success is None else "failure"
    summary = html.escape(f"{e.item_id} · {e.config} · {e.termination} · {e.rounds} round(s) · {verdict}")
    return (f"<details><summary>{summary}</summary><p>{html.escape(e.instruction)}</p>"
            f"<ol>{''.join(lines)}</ol></details>")


def write_report(run: RunInfo, stats: StudyStats, episodes: list[Episode], out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    figs = study_figures(stats, out_dir)
    (out_dir / "stats.json").write_text(json.dumps(stats.model_dump(mode="json"), indent=2), encoding="utf-8")
    columns = ["item_id", "pair", "type", "subtype", "ambiguous", "condition", "config", "model", "termination",
               "consensus", "rounds", "verdict", "question", "rule", "judge", "success", "false_alarm", "wall_time",
               "model_time", "calls", "error"]
    records_csv(out_dir / "episodes.csv", columns, (e.model_dump() for e in episodes))
    sections = [("Success by configuration (Figures 2 to 5) and false alarms", success_rows(stats)),
                ("Debate dynamics (Table 1, Figures 6 and 7)", consensus_rows(stats)),
                ("Time (Table 2)", time_rows(stats)),
                ("Rule and LLM judge", judge_rows(stats))]
    tables = "".join(f"<h2>{html.escape(t)}</h2>{table(*rows)}" for t, rows in sections)
    figures = "".join(f"<figure>{inline_svg(paths[1])}</figure>" for paths in figs.values())
    shown = episodes[:MAX_TRANSCRIPTS]
    more = f"<p class=muted>{len(episodes) - len(shown)} more in episodes.csv and the store.</p>" if len(episodes) > len(shown) else ""
    body = f"""<h1>Ambiguity study: {html.escape(run.id)}</h1>
<p class="muted">{stats.episodes} finished episodes, {stats.failed} failed (see <code>lexicoord runs show</code>) ·
settings {html.escape(json.dumps(run.config, ensure_ascii=False))}</p>
<p class="muted">Success on an ambiguous instruction: the verdict is "ambiguous" and the question names the ambiguous
slot (rule). On an unambiguous twin: the verdict is "clear"; a question there is a false alarm.</p>
{tables}
<h2>Figures</h2>
{figures}
<h2>Transcripts</h2>
{''.join(_transcript(e) for e in shown)}{more}
"""
    page = html_page(f"{run.id}: ambiguity study", body)
    report = out_dir / "report.html"
    report.write_text(page, encoding="utf-8")
    out = {"html": report, "json": out_dir / "stats.json", "csv": out_dir / "episodes.csv"}
    for name, paths in figs.items():
        out[f"{name} (png)"] = paths[0]
    return out


def report(store: Store, run: RunInfo, out_dir: Path) -> Report:
    """The ambiguity study's report of a stored run (registered for ``lexicoord report``)."""
    rows = list(store.iter_run_events(run.id))
    episodes = episodes_from(rows)
    if not episodes:
        raise LexicoordError(f"Run '{run.id}' has no finished ambiguity episodes yet.")
    stats = statistics(rows)
    failed = stats.failed
    tables = [ReportTable(title=f"{run.id}: success ({stats.episodes} episodes, {failed} failed)",
                          head=success_rows(stats)[0], rows=success_rows(stats)[1])]
    head, consensus = consensus_rows(stats)
    if consensus:
        tables.append(ReportTable(title="debates (Table 1, Figures 6-7)", head=head, rows=consensus))
    tables.append(ReportTable(title="time (Table 2)", head=time_rows(stats)[0], rows=time_rows(stats)[1]))
    tables.append(ReportTable(title="rule and LLM judge", head=judge_rows(stats)[0], rows=judge_rows(stats)[1]))
    return Report(tables=tables, files=write_report(run, stats, episodes, out_dir))
