"""An LLM's suggested lexical-function weights for every accepted term of a run, for a person to check.

Suggestions only: the file it writes says ``annotator = llm:MODEL`` on every row it filled, a person edits
the weights and the annotator, and the report reads whatever the file holds. Rows already in the file are
kept as they are (a person's edits are never overwritten), so re-running annotates only new terms.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable

from rich.progress import Progress

from lexicoord.analysis.cogent import CogentEpisode
from lexicoord.analysis.term_functions import CATEGORIES, DEFINITIONS, TermLabel
from lexicoord.errors import ModelError
from lexicoord.models.model import Model
from lexicoord.models.types import GenerateConfig
from lexicoord.prompting import fence, render_prompt

STEPS = (0, 0.25, 0.5, 0.75, 1)
SLUGS = {c: re.sub(r"\W+", "_", c) for c in CATEGORIES}
SCHEMA = {
    "type": "object",
    "properties": {"weights": {
        "type": "object",
        # Quarter steps as an enum: grammar-constrained backends enforce an enum, not a numeric range.
        "properties": {slug: {"enum": list(STEPS)} for slug in SLUGS.values()},
        "required": list(SLUGS.values()),
        "additionalProperties": False,
    }},
    "required": ["weights"],
    "additionalProperties": False,
}


def key(label: TermLabel) -> tuple[int | None, str, str]:
    return (label.episode, label.coiner, label.term.casefold())


def labels_for(episodes: Iterable[CogentEpisode]) -> list[TermLabel]:
    """One row per accepted entry of every COGENT-family episode, weights empty."""
    return [TermLabel(task=e.task, model=e.model, variant=e.variant, episode=e.episode_id, item=e.item_id,
                      coiner=t.coiner, term=t.term, definition=t.definition)
            for e in episodes if e.variant.startswith("cogent") for t in e.entries]


async def annotate(labels: list[TermLabel], questions: dict[int | None, str], model: Model,
                   concurrency: int = 4, progress: bool = True) -> None:
    """Fill each label's weights from the model, in place; an unreadable reply leaves zeros and says why."""
    codebook = "\n".join(f"- {c.replace(' ', '_').replace('/', '_')}: {DEFINITIONS[c]}" for c in CATEGORIES)
    gate = asyncio.Semaphore(concurrency)
    config = GenerateConfig(json_schema=SCHEMA, temperature=0.0, max_tokens=160)

    async def one(label: TermLabel) -> None:
        prompt = render_prompt("cogent_annotate", codebook=codebook,
                               task=fence(questions.get(label.episode, ""), "TASK"),
                               term=fence(f"{label.term} = {label.definition}", "TERM"))
        async with gate:
            try:
                out = await model.generate(prompt, config)
            except ModelError as exc:
                label.annotator, label.note = f"llm:{model.spec} (failed)", " ".join(str(exc).split())[:300]
                return
        if out.ok and isinstance(out.parsed, dict):
            weights = out.parsed["weights"]
            label.weights = {c: float(weights[SLUGS[c]]) for c in CATEGORIES}
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
