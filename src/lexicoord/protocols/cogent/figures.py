"""COGENT's figures as PNG and SVG: accuracy with 95% intervals and Tok (Table 1 drawn), the lexical-function
radar per task and model (Figure 2) and the macro-average bars (Figure 3)."""

from __future__ import annotations

from pathlib import Path

from lexicoord.analysis.figures import _pyplot, save_figure
from lexicoord.analysis.term_figures import radar
from lexicoord.analysis.term_functions import BENCHMARK_FUNCTIONS, FunctionProfile
from lexicoord.protocols.cogent.statistics import Cell, CogentStats

COLOURS = {"single": "#9aa9bd", "vanilla": "#3b6ea8", "vanilla_matched": "#7296c4", "cogent": "#c0504d",
           "cogent_private": "#d98b62", "cogent_free": "#e0a96d", "cogent_log": "#b59a8a"}


def _grouped(cells: list[Cell], value: str, ylabel: str, title: str, stem: Path, percent: bool) -> list[Path]:
    plt = _pyplot()
    groups = list(dict.fromkeys((c.model.split("/")[-1], c.task) for c in cells))
    variants = list(dict.fromkeys(c.variant for c in cells))
    width = 0.8 / max(1, len(variants))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(groups) + 2), 3.6), dpi=150)
    for j, variant in enumerate(variants):
        xs, ys, lo, hi = [], [], [], []
        for i, g in enumerate(groups):
            cell = next((c for c in cells if (c.model.split("/")[-1], c.task) == g and c.variant == variant), None)
            v = getattr(cell, value) if cell else None
            if v is None:
                continue
            scale = 100 if percent else 1
            xs.append(i + (j - (len(variants) - 1) / 2) * width)
            ys.append(v * scale)
            ci = cell.acc_ci if percent and cell else None
            lo.append(v * scale - ci.low * scale if ci else 0)
            hi.append(ci.high * scale - v * scale if ci else 0)
        ax.bar(xs, ys, width, label=variant, color=COLOURS.get(variant, "#888"),
               yerr=[lo, hi] if percent else None, capsize=2, error_kw={"elinewidth": 0.8})
    ax.set_xticks(range(len(groups)), [f"{t}\n{m}" for m, t in groups], fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if percent:
        ax.set_ylim(0, 105)
    ax.legend(fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, stem)


def macro_bars(shares: dict[str, float], stem: Path, xlabel: str) -> list[Path]:
    """Figure 3: each function's share of term weight, as bars."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.2), dpi=150)
    ax.barh(list(shares), [100 * v for v in shares.values()], color="#3b6ea8")
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.tick_params(labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return save_figure(fig, stem)


def cogent_figures(stats: CogentStats, out_dir: Path, found: list[FunctionProfile],
                   shares: dict[str, float] | None) -> dict[str, list[Path]]:
    figs = {
        "accuracy": _grouped(stats.cells, "acc", "accuracy (%)", "Accuracy with 95% Wilson intervals",
                             out_dir / "accuracy", True),
        "tokens": _grouped(stats.cells, "tok", f"Tok (tokens per output, {stats.tokenizer})",
                           "Tok: SINGLE's answer; the final debate round's outputs", out_dir / "tokens", False),
    }
    if found and shares is not None:
        figs["functions radar"] = radar(found, BENCHMARK_FUNCTIONS, out_dir / "functions_radar",
                                        "Lexical functions (% of weight, per task and model)")
        figs["functions macro"] = macro_bars(shares, out_dir / "functions_macro",
                                             "% of term weight (macro average over task x model)")
    return figs
