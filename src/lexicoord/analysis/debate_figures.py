"""The ambiguity study's figures (Davila et al., Figures 2 to 7, plus false alarms), as PNG and SVG."""

from __future__ import annotations

from pathlib import Path

from lexicoord.analysis.debate import StudyStats
from lexicoord.analysis.figures import _pyplot, save_figure

SINGLE, DEBATE = "#7f9cc0", "#3b6ea8"


def _bars(labels: list[str], values: list[float | None], colours: list[str], title: str, ylabel: str,
          stem: Path, notes: list[str] | None = None) -> list[Path]:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.5, 1.1 * len(labels) + 1.5), 3.6), dpi=150)
    heights = [100 * v if v is not None else 0 for v in values]
    bars = ax.bar(range(len(labels)), heights, color=colours)
    for i, (bar, v) in enumerate(zip(bars, values)):
        text = "n/a" if v is None else f"{100 * v:.1f}%"
        if notes:
            text += f"\n{notes[i]}"
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 118)
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, stem)


def study_figures(stats: StudyStats, out_dir: Path) -> dict[str, list[Path]]:
    """Every figure the report shows, by name; a figure with nothing to plot is left out."""
    figs: dict[str, list[Path]] = {}
    cfgs = stats.configs
    labels = [c.config for c in cfgs]
    colours = [SINGLE if c.condition == "single" else DEBATE for c in cfgs]
    if any(c.ambiguous for c in cfgs):
        figs["overall"] = _bars(labels, [c.success for c in cfgs], colours,
                                "Success on ambiguous instructions (Fig. 2)", "success rate (%)",
                                out_dir / "fig2_overall_success", [f"n={c.ambiguous}" for c in cfgs])
    for number, kind in zip((3, 4, 5), ("attribute", "numerical", "spatial")):
        if kind in stats.types:
            figs[kind] = _bars(labels, [c.success_by_type.get(kind) for c in cfgs], colours,
                               f"Success on {kind} ambiguity (Fig. {number})", "success rate (%)",
                               out_dir / f"fig{number}_{kind}_success")
    debates = [c for c in cfgs if c.condition == "debate"]
    if debates:
        plt = _pyplot()
        rounds = sorted({r for c in debates for r in c.rounds_to_consensus} or {1})
        fig, ax = plt.subplots(figsize=(max(4.5, 1.2 * len(rounds) + 2), 3.6), dpi=150)
        width = 0.8 / len(debates)
        for i, c in enumerate(debates):
            total = sum(c.rounds_to_consensus.values())
            shares = [100 * c.rounds_to_consensus.get(r, 0) / total if total else 0 for r in rounds]
            ax.bar([r + (i - (len(debates) - 1) / 2) * width for r in rounds], shares, width, label=c.config)
        ax.set_xticks(rounds, [str(r) for r in rounds])
        ax.set_xlabel("round in which consensus was reached")
        ax.set_ylabel("share of debates with consensus (%)")
        ax.set_title("Rounds to consensus (Fig. 6)", fontsize=10)
        ax.legend(fontsize=7)
        ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout()
        figs["rounds"] = save_figure(fig, out_dir / "fig6_rounds_to_consensus")
        figs["non_consensus"] = _bars([c.config for c in debates], [c.non_consensus_rate for c in debates],
                                      [DEBATE] * len(debates), "Non-consensus rate (Fig. 7)", "debates without consensus (%)",
                                      out_dir / "fig7_non_consensus")
    if any(c.unambiguous for c in cfgs):
        figs["false_alarms"] = _bars(labels, [c.false_alarms for c in cfgs], ["#c0504d"] * len(cfgs),
                                     "False alarms on unambiguous twins", "asked a question (%)",
                                     out_dir / "fig8_false_alarms", [f"n={c.unambiguous}" for c in cfgs])
    return figs
