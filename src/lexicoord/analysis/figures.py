"""Figures as PNG and SVG (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lexicoord.protocols.coordination.statistics import CoordinationStats


def _pyplot() -> Any:
    """matplotlib on first use: importing it costs half a second and a large heap a server does not need."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, stem: Path) -> list[Path]:
    """Write a figure as PNG and SVG beside each other, and free it."""
    plt = _pyplot()
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    for path in paths:
        fig.savefig(path)
    plt.close(fig)
    return paths


def depth_distribution(stats: CoordinationStats, stem: Path, title: str = "") -> list[Path]:
    """The paper's Figure 1: converged games by clarification depth, with failed games beside them (by the
    number of rounds they lasted)."""
    plt = _pyplot()
    depths = list(stats.depth_distribution)
    counts = [stats.depth_distribution[d] for d in depths]
    labels = [str(d) for d in depths] + ["failed"]
    fig, ax = plt.subplots(figsize=(5.5, 3.4), dpi=150)
    bars = ax.bar(labels, counts + [0], color="#3b6ea8")
    # The failed bar is stacked by rounds played: the paper's long sequences were mostly non-convergent.
    bottom, reds = 0, plt.get_cmap("Reds")
    lengths = sorted(stats.failed_rounds.items())
    for k, (played, n) in enumerate(lengths):
        ax.bar(["failed"], [n], bottom=bottom, color=reds(0.35 + 0.6 * (k + 1) / len(lengths)),
               label=f"failed after {played} round{'s' if played != 1 else ''}")
        bottom += n
    if lengths:
        ax.legend(fontsize=7, frameon=False, loc="upper center")
    bars[-1].set_height(stats.failed)
    for bar, n in zip(bars, counts + [stats.failed]):
        share = f"{n / stats.games:.0%}" if stats.games else ""
        ax.annotate(f"{n}\n{share}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=7)
    ax.set_xlabel("clarification depth (0 = agreed in the first round)")
    ax.set_ylabel("games")
    ax.set_title(title or f"Clarification depth distribution ({stats.games} games)", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_ylim(0, max(counts + [stats.failed, 1]) * 1.25)
    fig.tight_layout()
    return save_figure(fig, stem)
