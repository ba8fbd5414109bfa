"""An LLM's suggested lexical-function weights for every accepted term of a run, for a person to check.

Suggestions only: the file it writes says ``annotator = llm:MODEL`` on every row it filled, a person edits
the weights and the annotator, and the report reads whatever the file holds. Rows already in the file are
kept as they are (a person's edits are never overwritten), so re-running annotates only new terms.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from rich.progress import Progress

from lexicoord.analysis.term_functions import Codebook, TermLabel, read_labels, write_labels
from lexicoord.errors import ModelError
from lexicoord.models.model import Model
from lexicoord.models.types import GenerateConfig
from lexicoord.prompting import Prompts, fence

PROMPTS = Prompts("lexicoord")

STEPS = (0, 0.25, 0.5, 0.75, 1)


def slug(category: str) -> str:
    return re.sub(r"\W+", "_", category)


def schema(codebook: Codebook) -> dict[str, Any]:
    slugs = [slug(c) for c in codebook.categories]
    return {
        "type": "object",
        "properties": {"weights": {
            "type": "object",
            # Quarter steps as an enum: grammar-constrained backends enforce an enum, not a numeric range.
            "properties": {s: {"enum": list(STEPS)} for s in slugs},
            "required": slugs,
            "additionalProperties": False,
        }},
        "required": ["weights"],
        "additionalProperties": False,
    }


async def annotate(labels: list[TermLabel], contexts: dict[int | None, str], model: Model, codebook: Codebook,
                   concurrency: int = 4, progress: bool = True) -> None:
    """Fill each label's weights from the model, in place; an unreadable reply leaves zeros and says why.
    ``contexts`` is what the agents were doing, per episode (the task, or the game)."""
    listed = "\n".join(f"- {slug(c)}: {d}" for c, d in codebook.definitions.items())
    reply = "{" + ", ".join(f'"{slug(c)}": w' for c in codebook.categories) + "}"
    gate = asyncio.Semaphore(concurrency)
    config = GenerateConfig(json_schema=schema(codebook), temperature=0.0, max_tokens=40 + 12 * len(codebook.categories))

    async def one(label: TermLabel) -> None:
        prompt = PROMPTS.render("term_annotate", codebook=listed, reply=reply,
                               task=fence(contexts.get(label.episode, ""), "TASK"),
                               term=fence(f"{label.term} = {label.definition}", "TERM"))
        async with gate:
            try:
                out = await model.generate(prompt, config)
            except ModelError as exc:
                label.annotator, label.note = f"llm:{model.spec} (failed)", " ".join(str(exc).split())[:300]
                return
        if out.ok and isinstance(out.parsed, dict):
            weights = out.parsed["weights"]
            label.weights = {c: float(weights[slug(c)]) for c in codebook.categories}
            label.annotator = f"llm:{model.spec}"
        else:
            label.annotator = f"llm:{model.spec} (unreadable)"
            label.note = " ".join(f"{out.parse_error}: {out.text}".split())[:300]  # one line in the file

    with Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("annotating terms", total=len(labels))

        async def counted(label: TermLabel) -> None:
            await one(label)
            bar.advance(task)

        await asyncio.gather(*(counted(x) for x in labels))


def key(label: TermLabel) -> tuple[int | None, str, str]:
    return (label.episode, label.coiner, label.term.casefold())


async def annotate_file(path: Path, labels: list[TermLabel], contexts: dict[int | None, str], model: Model,
                        codebook: Codebook, concurrency: int = 4) -> tuple[int, int]:
    """Annotate the terms ``path`` does not hold yet, keep every row it holds, write them all back:
    ``(annotated, kept)``. The model is asked only about what is new."""
    kept = read_labels(path, codebook) if path.is_file() else []
    known = {key(x) for x in kept}
    fresh = [x for x in labels if key(x) not in known]
    if fresh:
        await annotate(fresh, contexts, model, codebook, concurrency)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_labels(path, kept + fresh, codebook)
    return len(fresh), len(kept)
