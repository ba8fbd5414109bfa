"""``lexicoord gate calibrate``: KnowNo's split-conformal threshold from a calibration file.

Each line of the file is an instruction whose meaning is known: ``{"instruction", "context"?, "options": [...],
"answer": <the option meant>}``. The scorer model gives each option's probability; the non-conformity of a line
is ``1 - p(answer)``; the threshold is their quantile for the target success level
(:func:`lexicoord.gate.conformal.quantile`). The threshold is only as good as the match between the scorer and
model used here and those the gate runs with, which is why it is written into the gate's configuration file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, Field, model_validator

from lexicoord.gate.conformal import probabilities, quantile
from lexicoord.gate.deliberation import PROMPTS, scene_text
from lexicoord.gate.settings import GateSettings
from lexicoord.models.pool import ModelPool
from lexicoord.seats.llm import LLMSeat
from lexicoord.tasks.asking import SCHEMES, load_asking
from lexicoord.tasks.jsonl import parse_jsonl, read_lines


class CalibrationItem(BaseModel):
    instruction: str = Field(min_length=1)
    context: str = ""
    options: list[str] = Field(min_length=2, max_length=26)
    answer: str

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> CalibrationItem:
        if self.answer not in self.options:
            raise ValueError(f"answer {self.answer!r} is not one of the options")
        return self


class Calibration(BaseModel):
    items: int
    success: float
    qhat: float
    #: Share of calibration items whose set at ``qhat`` holds the answer, and the mean set size there.
    coverage: float
    mean_set_size: float
    scores: list[float]


def read(source: str | Path) -> list[CalibrationItem]:
    """A JSONL file of calibration items, or a benchmark's (``knowno:PATH``, ``ambik:PATH``): its items that offer
    options and mean exactly one of them (KnowNo calibrates on the true option; a task where several are meant
    has no single one)."""
    text = str(source)
    if text.partition(":")[0] in (*SCHEMES, "ambik-indirect"):
        loaded = load_asking(text)
        return [CalibrationItem(instruction=i.instruction, context=i.context, options=i.options[:26],
                                answer=i.intended[0])
                for i in loaded.items if len(i.options) >= 2 and len(i.intended) == 1 and i.intended[0] in i.options[:26]]
    items, _ = parse_jsonl(read_lines(Path(source)), text, CalibrationItem)
    return items


async def calibrate(items: list[CalibrationItem], model: str, success: float, *,
                    pool: ModelPool | None = None, concurrency: int = 4) -> Calibration:
    """The threshold for ``success`` from ``items`` scored by ``model``."""
    pool = pool or ModelPool(cache=False)
    limit = asyncio.Semaphore(concurrency)

    async def one(i: int, item: CalibrationItem) -> dict[str, float]:
        """Scored as a check with these options as its candidates scores them (the same prompt)."""
        seat = LLMSeat(f"scorer-{i}", pool.get(model), system_prompt=PROMPTS.render("gate_system"))
        async with limit:
            scores = await probabilities(seat, scene_text(item.context, item.options), item.instruction, item.options)
            return scores.probabilities

    probs = await asyncio.gather(*(one(i, item) for i, item in enumerate(items)))
    scores = [1.0 - p[item.answer] for p, item in zip(probs, items)]
    qhat = quantile(scores, success)
    sets = [[o for o, v in p.items() if 1.0 - v <= qhat] for p in probs]
    covered = sum(1 for s, item in zip(sets, items) if item.answer in s)
    return Calibration(items=len(items), success=success, qhat=qhat, coverage=covered / len(items),
                       mean_set_size=sum(map(len, sets)) / len(items), scores=[round(s, 6) for s in scores])


def write_settings(path: Path, settings: GateSettings) -> None:
    """A gate configuration file (TOML, the keys of :class:`GateSettings` under ``[gate]``)."""
    data: dict[str, Any] = {"gate": settings.model_dump(mode="json", exclude_none=True)}
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
