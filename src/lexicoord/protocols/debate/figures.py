"""The debate study's figures (Davila et al., Figures 2 to 7, plus the right-slot measure and false alarms).

Every bar is labelled with its rate, its count and its denominator; Figure 7 shows
debates without consensus and debates that ended in error as separate bars.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lexicoord.analysis.figures import _pyplot, save_figure
from lexicoord.protocols.debate.statistics import ConfigStats, Share, StudyStats

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


def _n(shares: list[Share]) -> list[str]:
    return [f"{s.k}/{s.n}" for s in shares]


def _non_consensus(debates: list[ConfigStats], stem: Path) -> list[Path]:
    """Figure 7: non-consensus and error side by side, each a share of the configuration's debates."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.5, 1.4 * len(debates) + 1.5), 3.6), dpi=150)
    width = 0.38
    for offset, name, colour, values in ((-width / 2, "no consensus after R rounds", DEBATE,
                                          [c.non_consensus or Share() for c in debates]),
                                         (width / 2, "ended in error", "#c0504d",
                                          [c.debate_errors or Share() for c in debates])):
        xs = [i + offset for i in range(len(debates))]
        bars = ax.bar(xs, [100 * (v.rate or 0) for v in values], width, color=colour, label=name)
        for bar, v in zip(bars, values):
            text = "n/a" if v.rate is None else f"{100 * v.rate:.1f}%\n{v.k}/{v.n}"
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom",
                        fontsize=6)
    ax.set_xticks(range(len(debates)), [c.config for c in debates], rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("debates (%)")
    ax.set_ylim(0, 125)
    ax.set_title("Non-consensus and errors (Fig. 7)", fontsize=10)
    ax.legend(fontsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, stem)


def rounds_to_consensus(debates: list[ConfigStats]) -> Any:
    """Figure 6 (the paper's): among each leader's debates that reached consensus, the share that reached
    it in each round. The axis is categorical over the rounds some debate reached consensus in, so a round
    nobody reached leaves no gap; every bar, zero included, reads "k/n" over that leader's consensus debates.
    A leader that never reached consensus has no share to show: the legend names it with its count.
    Returns the matplotlib figure, unsaved."""
    plt = _pyplot()
    from matplotlib.patches import Patch

    rounds = sorted({r for c in debates for r in c.rounds_to_consensus})
    plotted = [c for c in debates if c.rounds_to_consensus]
    fig, ax = plt.subplots(figsize=(max(4.5, 0.6 * len(rounds) * max(1, len(plotted)) + 2), 3.6 + 0.18 * len(debates)),
                           dpi=150)
    width = 0.8 / max(1, len(plotted))
    handles = []
    for c in debates:
        total = sum(c.rounds_to_consensus.values())
        label = f"{c.config}: {total} of {c.consensus.n if c.consensus else total} debates reached consensus"
        if not total:
            handles.append(Patch(facecolor="none", edgecolor="grey", label=label))
            continue
        i = plotted.index(c)
        counts = [c.rounds_to_consensus.get(r, 0) for r in rounds]
        xs = [x + (i - (len(plotted) - 1) / 2) * width for x in range(len(rounds))]
        bars = ax.bar(xs, [100 * k / total for k in counts], width, label=label)
        handles.append(bars)
        for bar, k in zip(bars, counts):
            ax.annotate(f"{100 * k / total:.1f}%\n{k}/{total}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=6)
    if rounds:  # below the axes: inside them, "best" can still sit on a bar's label
        ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    else:
        debated = sum(c.consensus.n for c in debates if c.consensus)
        ax.text(0.5, 0.5, f"no debate reached consensus (0 of {debated})", ha="center", va="center",
                transform=ax.transAxes, fontsize=8)
    ax.set_xticks(range(len(rounds)), [str(r) for r in rounds])
    ax.set_xlabel("round in which consensus was reached")
    ax.set_ylabel("share of debates with consensus (%)")
    ax.set_ylim(0, 118)
    ax.set_title("Rounds to consensus (Fig. 6)", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def study_figures(stats: StudyStats, out_dir: Path) -> dict[str, list[Path]]:
    """Every figure the report shows, by name; a figure with nothing to plot is left out."""
    figs: dict[str, list[Path]] = {}
    cfgs = stats.configs
    labels = [c.config for c in cfgs]
    colours = [SINGLE if c.condition == "single" else DEBATE for c in cfgs]
    if any(c.ambiguous for c in cfgs):
        figs["overall"] = _bars(labels, [c.detection.rate for c in cfgs], colours,
                                "Ambiguity detected, the paper's success (Fig. 2)", "detection rate (%)",
                                out_dir / "fig2_overall_success", _n([c.detection for c in cfgs]))
        figs["right_slot"] = _bars(labels, [c.right_slot.rate for c in cfgs], colours,
                                   "Question asks about the right slot (stricter)", "right-slot rate (%)",
                                   out_dir / "fig2b_right_slot", _n([c.right_slot for c in cfgs]))
    for number, kind in zip((3, 4, 5), ("attribute", "numerical", "spatial")):
        if kind in stats.types:
            shares = [c.detection_by_type.get(kind) or Share() for c in cfgs]
            figs[kind] = _bars(labels, [s.rate for s in shares], colours,
                               f"Ambiguity detected, {kind} (Fig. {number})", "detection rate (%)",
                               out_dir / f"fig{number}_{kind}_success", _n(shares))
    debates = [c for c in cfgs if c.condition == "debate"]
    if debates:
        figs["rounds"] = save_figure(rounds_to_consensus(debates), out_dir / "fig6_rounds_to_consensus")
        figs["non_consensus"] = _non_consensus(debates, out_dir / "fig7_non_consensus")
    if any(c.unambiguous for c in cfgs):
        figs["false_alarms"] = _bars(labels, [c.false_alarms.rate for c in cfgs], ["#c0504d"] * len(cfgs),
                                     "False alarms on unambiguous twins", "asked a question (%)",
                                     out_dir / "fig8_false_alarms", _n([c.false_alarms for c in cfgs]))
    return figs
