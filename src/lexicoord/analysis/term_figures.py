"""The figure of coined terms' lexical functions (COGENT's Figure 2), drawn for any protocol that coins terms:
COGENT's debate per task and model, Werewolf's public and wolf-private pools."""

from __future__ import annotations

import math
from pathlib import Path

from lexicoord.analysis.figures import _pyplot, save_figure
from lexicoord.analysis.term_functions import Codebook, FunctionProfile


def radar(found: list[FunctionProfile], codebook: Codebook, stem: Path, title: str) -> list[Path]:
    """Figure 2: each task x model profile (or each pool) as a polygon over the codebook's functions."""
    plt = _pyplot()
    CATEGORIES = codebook.categories  # noqa: N806
    angles = [2 * math.pi * i / len(CATEGORIES) for i in range(len(CATEGORIES))]
    fig = plt.figure(figsize=(5.2, 4.6), dpi=150)
    ax = fig.add_subplot(polar=True)
    for p in found:
        if not p.terms:
            continue
        values = [100 * p.shares[c] for c in CATEGORIES]
        ax.plot([*angles, angles[0]], [*values, values[0]], label=f"{p.task} · {p.model.split('/')[-1]}"
                + (f" · {p.variant}" if p.variant not in ("cogent", "") else "") + f" ({p.terms})")
        ax.fill([*angles, angles[0]], [*values, values[0]], alpha=0.08)
    ax.set_xticks(angles, [c.replace(" ", "\n", 1) for c in CATEGORIES], fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="upper right", bbox_to_anchor=(1.35, 1.12), frameon=False)
    fig.tight_layout()
    return save_figure(fig, stem)
