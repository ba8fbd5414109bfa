"""A coordination run's report: tables, the depth figure, a self-contained HTML page (templates/report.html), JSON
and CSV."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

from lexicoord.analysis.cells import write_csv
from lexicoord.analysis.figures import depth_distribution
from lexicoord.analysis.html import inline_svg, render
from lexicoord.analysis.numbers import ci, num
from lexicoord.analysis.paper import Measure, comparison_table, rate, stored
from lexicoord.analysis.report import Report, ReportTable
from lexicoord.core.events import ChoiceEvent
from lexicoord.errors import LexicoordError
from lexicoord.protocols.coordination.statistics import CoordinationStats, Game, Tally, games_from
from lexicoord.runs.records import RunInfo
from lexicoord.runs.store import Store


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1%}"


def _of(num: int, den: int) -> str:
    """A count with its share and its denominator, so no rate is read without what it is out of."""
    return f"{num} of {den} ({_pct(num / den if den else None)})"


def summary_rows(stats: CoordinationStats) -> list[tuple[str, str]]:
    first = stats.depth_distribution.get(0, 0)
    rows = [
        ("games", str(stats.games)),
        ("converged (win)", _of(stats.converged, stats.games)),
        ("failed (loss)", _of(stats.failed, stats.games)),
        ("first-round convergence, of all games", _of(first, stats.games)),
        ("first-round convergence, of convergent games", _of(first, stats.converged)),
        ("converged after clarification (depth 1 or more), of all games", _of(stats.converged - first, stats.games)),
        ("mean depth of converged games [95% CI]", num(stats.mean_depth) + ci(stats.mean_depth_ci)),
    ]
    rows += accuracy_rows(stats)
    rows += [(f"failed: {k}", str(v)) for k, v in sorted(stats.failure_reasons.items())]
    rows += [(f"failed games that lasted {n} round{'s' if n != 1 else ''}", str(v))
             for n, v in stats.failed_rounds.items()]
    rows += [(f"before failure: {k}", str(v)) for k, v in sorted(stats.failure_causes.items())]
    return rows + alignment_rows(stats)


ACCURACY_HEAD = ["answer", "of converged games with an intended meaning",
                 "of all games with an intended meaning (not converged counts as wrong)"]


def accuracy_rows(stats: CoordinationStats) -> list[tuple[str, str]]:
    """The team's accuracy beside the two baselines, each as k of n on the same games."""
    opened = [("games of open items (no intended meaning; outside accuracy)", str(stats.open_games))]
    if not stats.accuracy_table or not stats.accuracy_table[0].games_all:
        return [("accuracy", "no game has an intended meaning"), *opened]
    team, first, frequent = stats.accuracy_table
    rows = [
        ("accuracy of the converged meaning, of converged games with an intended meaning", _of(team.right, team.games)),
        ("first-listed-sense baseline, same games", _of(first.right, first.games)),
        ("most-frequent-sense baseline (leave-one-out), same games", _of(frequent.right, frequent.games)),
        ("accuracy of the team, of all games with an intended meaning (not converged counts as wrong)",
         _of(team.right_all, team.games_all)),
        ("first-listed-sense baseline, of all games with an intended meaning", _of(first.right_all, first.games_all)),
        ("most-frequent-sense baseline (leave-one-out), of all games with an intended meaning",
         _of(frequent.right_all, frequent.games_all)),
    ]
    if stats.open_games:
        rows += opened
    if stats.single_item_games:
        rows.append(("games whose senses no other item of the run shares (the first-listed sense stands in)",
                     str(stats.single_item_games)))
    return rows


def accuracy_cells(stats: CoordinationStats) -> list[list[str]]:
    """The accuracy table's rows: each answer, then k of n over converged games and over all games."""
    return [[r.answer, _of(r.right, r.games), _of(r.right_all, r.games_all)] for r in stats.accuracy_table]


def alignment_rows(stats: CoordinationStats) -> list[tuple[str, str]]:
    """The people's round-1 agreement against the outcome, each count over its group."""
    who = "simulated people" if stats.people_simulated else "people"
    rows: list[tuple[str, str]] = []
    for row in stats.alignment:
        if not row.games:
            continue
        label = f"{who} {row.group} in round 1"
        rows += [(label, _of(row.games, stats.games)),
                 (f"{label}: converged at once", _of(row.at_once, row.games)),
                 (f"{label}: converged later", _of(row.later, row.games)),
                 (f"{label}: failed", _of(row.failed, row.games))]
    if stats.alignment_fewer_than_two:
        rows.append((f"games with fewer than two {who} (not in the agreement rows)", str(stats.alignment_fewer_than_two)))
    if stats.alignment_failed_move:
        rows.append((f"games where one of the {who} had no valid round-1 move (not in the agreement rows)",
                     str(stats.alignment_failed_move)))
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


GAMES_HEAD = ["item", "rep", "outcome", "depth", "rounds", "agreed meaning", "intended"]
CSV_HEAD = ["item", "repetition", "converged", "reason", "depth", "rounds", "interpretation", "intended", "correct",
            "simulated_agents", "participants"]

#: Games listed on the page (a run's first, in grid order); games.csv holds every game.
PAGE_GAMES = 1000


def game_cells(game: Game) -> list[str]:
    """A row of the page's games table: a game's outcome and the meaning agreed beside the intended one."""
    return [game.item_id, str(game.repetition), "converged" if game.converged else game.reason,
            "" if game.depth is None else str(game.depth), str(game.played), game.interpretation or "",
            game.intended or "(open)"]


def measures(stats: CoordinationStats) -> list[Measure]:
    """The figures the LexiCoord paper published, in its units (percent of all games, or of converged games).
    ``converged_after_clarification`` is the games that converged at depth 1 or more, of all games (the paper's
    "remaining 29%", read with its 70% and 99% as shares of all games); ``share_depth_ge_1`` counts the failed
    games too."""
    first = stats.depth_distribution.get(0, 0)
    found = [rate("converged_rate", {}, stats.converged, stats.games), rate("failed_rate", {}, stats.failed, stats.games),
             rate("first_round_convergence", {}, first, stats.games),
             rate("first_round_convergence_of_converged", {}, first, stats.converged),
             rate("converged_after_clarification", {}, stats.converged - first, stats.games),
             rate("share_depth_ge_1", {}, stats.games - first, stats.games)]
    return [m for m in found if m is not None]


def write_report(run: RunInfo, games: Iterable[Game], out_dir: Path,
                 bound: int | None = None) -> tuple[CoordinationStats, dict[str, Path]]:
    """Every file of a report from one pass over ``games``: each game goes to games.csv and into the tally as it
    passes, and only the page's first rows are kept, so a run of any size is read in bounded memory."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tally = Tally(bound)
    shown: list[list[str]] = []

    def rows() -> Iterator[list[Any]]:
        for g in games:
            tally.add(g)
            if len(shown) < PAGE_GAMES:
                shown.append(game_cells(g))
            yield [g.item_id, g.repetition, g.converged, g.reason, g.depth, g.played, g.interpretation, g.intended,
                   g.correct, " ".join(n for n, a in g.agents.items() if a.simulated),
                   "; ".join(f"{seat}={pid}" for seat, pid in g.participants.items())]

    write_csv(out_dir / "games.csv", CSV_HEAD, rows())
    stats = tally.stats()
    png, svg = depth_distribution(stats, out_dir / "depth_distribution")
    (out_dir / "stats.json").write_text(json.dumps(stats.model_dump(mode="json"), indent=2), encoding="utf-8")
    agents = agent_rows(stats)
    page = render("lexicoord.protocols.coordination", run=run,
                  settings=json.dumps(run.config, ensure_ascii=False, indent=2),
                  summary=[list(r) for r in summary_rows(stats)], accuracy_head=ACCURACY_HEAD,
                  accuracy=accuracy_cells(stats), figure=inline_svg(svg),
                  failed_rounds=[[str(n), str(v)] for n, v in stats.failed_rounds.items()],
                  agents_head=list(agents[0]) if agents else ["agent"], agents=[list(a.values()) for a in agents],
                  pairs=[[_label_pair(k, stats), _pct(v)] for k, v in stats.pairwise_agreement.items()],
                  games_head=GAMES_HEAD, games=shown, games_total=stats.games,
                  paper=comparison_table(stored(run.config), measures(stats)))
    report = out_dir / "report.html"
    report.write_text(page, encoding="utf-8")
    return stats, {"html": report, "png": png, "svg": svg, "json": out_dir / "stats.json",
                   "csv": out_dir / "games.csv"}


def report(store: Store, run: RunInfo, out_dir: Path) -> Report:
    """The coordination game's report of a stored run (registered for ``lexicoord report``)."""
    # One pass over the choices (all a game's summary reads of its events), games counted as they stream by.
    games = games_from(store.iter_run_events(run.id, types=[ChoiceEvent.model_fields["type"].default]))
    first = next(games, None)
    if first is None:
        raise LexicoordError(f"Run '{run.id}' has no finished coordination games yet.")
    bound = (run.config.get("settings") or {}).get("clarification_bound", run.config.get("bound"))
    stats, files = write_report(run, chain([first], games), out_dir, bound=bound)
    agents = agent_rows(stats)
    depth = [[str(d), str(n)] for d, n in stats.depth_distribution.items()] + [["failed", str(stats.failed)]]
    lengths = [[str(n), str(stats.failed_rounds.get(n, 0))] for n in range(1, max([*stats.failed_rounds, 1]) + 1)]
    tables = [
        ReportTable(title=f"{run.id}: {stats.games} games", head=["measure", "value"],
                    rows=[list(r) for r in summary_rows(stats)]),
        ReportTable(title="accuracy against the intended meaning (same games for every answer)", head=ACCURACY_HEAD,
                    rows=accuracy_cells(stats)),
        ReportTable(title="clarification depth", head=["depth", "games"], rows=depth),
        ReportTable(title=f"failed games by rounds played ({stats.failed} failed)", head=["rounds", "failed games"],
                    rows=lengths),
        ReportTable(title="agents", head=list(agents[0]) if agents else ["agent"],
                    rows=[[str(v) for v in a.values()] for a in agents]),
    ]
    paper = comparison_table(stored(run.config), measures(stats))
    return Report(tables=tables + ([paper] if paper else []), files=files)
