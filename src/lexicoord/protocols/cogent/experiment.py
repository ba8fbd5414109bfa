"""COGENT as an experiment file: agents A and B, one benchmark's slice, the rounds, passes and tie rule, and the
variants. ``lexicoord cogent run`` writes exactly this file from its flags.

    protocol = "cogent"
    [models]
    a = "openai/gpt-4o-mini"
    b = "openai/gpt-4o-mini"        # default: A's model
    [data]
    task = "gsm8k"
    file = "data/gsm8k/test.jsonl"  # default: the task's file under $LEXICOORD_DATA
    items = 500                     # default: the paper's slice
    [settings]
    rounds = 3
    passes = 2
    coin_rounds = 2
    [grid]
    variants = ["single", "vanilla", "cogent"]
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from lexicoord.core.spec import AgentSpec, EpisodeSpec
from lexicoord.errors import ConfigError
from lexicoord.experiments.estimate import tokens_of
from lexicoord.experiments.experiment import (
    Call,
    Campaign,
    DataPath,
    Experiment,
    ModelName,
    Plan,
    Strict,
    placed_elsewhere,
)
from lexicoord.protocols.cogent.rules import MAIN_VARIANTS, CogentSettings, Variant, calls
from lexicoord.protocols.cogent.statistics import statistics, warnings
from lexicoord.runs.grid import grid
from lexicoord.runs.store import Store
from lexicoord.tasks.benchmarks import BENCHMARKS, PAPER_SIZES, seeded_slice, stratified_slice

#: Where each benchmark's file lies under ``$LEXICOORD_DATA``, as the public releases name it.
DATA_FILES = {"gsm8k": "gsm8k/test.jsonl", "folio": "folio/folio-validation.jsonl", "mmlu": "mmlu/test"}
#: The folder of public benchmark files a file's ``data.file`` defaults into.
DATA_VARIABLE = "LEXICOORD_DATA"
#: The key of a dry run's stand-in item (the data not on disk yet): text as long as the benchmark's mean item.
STAND_IN = "stand_in_text"
#: Tokens of a COGENT prompt beyond the question (the instructions, the answer format, a lexicon block).
PROMPT_OVERHEAD = 250


class Models(Strict):
    a: ModelName = "local/smollm2-135m"
    #: B's model; A's when not given.
    b: ModelName | None = None


class Data(Strict):
    task: Literal["gsm8k", "folio", "mmlu"] = "gsm8k"
    #: The benchmark's file (GSM8K test.jsonl, FOLIO validation JSONL, MMLU's test folder), or ``hf:NAME``.
    file: DataPath | None = None
    #: Items; default: the paper's slice (500 of GSM8K and MMLU, all of FOLIO's validation set).
    items: int | None = Field(default=None, ge=1)
    #: Seed of the slice only (default: the run's seed), so that another seed draws fresh samples on the same items.
    slice_seed: int | None = None

    def path(self) -> str:
        """The file to read: the one given, else the task's file under ``$LEXICOORD_DATA``."""
        if self.file:
            return self.file
        folder = os.environ.get(DATA_VARIABLE)
        if not folder:
            raise ConfigError(f"data.file is not given and {DATA_VARIABLE} is not set: give data.file, or set "
                              f"{DATA_VARIABLE} to the folder holding {DATA_FILES[self.task]}.")
        return str(Path(folder) / DATA_FILES[self.task])


class Settings(CogentSettings, Strict):
    @model_validator(mode="before")
    @classmethod
    def _not_here(cls, values: Any) -> Any:
        return placed_elsewhere(values, {"variant": "grid.variants", "task": "data.task"})


class Grid(Strict):
    variants: list[Variant] = Field(default_factory=lambda: list(MAIN_VARIANTS), min_length=1)


class Parts(Strict):
    models: Models = Field(default_factory=Models)
    data: Data = Field(default_factory=Data)
    settings: Settings = Field(default_factory=Settings)
    grid: Grid = Field(default_factory=Grid)


def lineups(a: str, b: str) -> dict[str, list[AgentSpec]]:
    """SINGLE seats A; the debates seat A, then B."""
    return {"single": [AgentSpec(name="A", model=a)], "debate": [AgentSpec(name="A", model=a), AgentSpec(name="B", model=b)]}


class CogentPlan(Plan[Parts]):
    parts = Parts
    prefix = "cogent"
    grows = ("items", "variants")
    report_command = "lexicoord cogent report"

    def prefix_of(self, parts: Parts) -> str:
        return f"cogent-{parts.data.task}"

    def campaign(self, experiment: Experiment, parts: Parts) -> Campaign:
        d = parts.data
        data = d.path()
        benchmark = BENCHMARKS[d.task]
        loaded = benchmark.load(data)
        size = d.items if d.items is not None else PAPER_SIZES[d.task]
        seed = experiment.seed if d.slice_seed is None else d.slice_seed
        chosen = stratified_slice(loaded, size, seed) if d.task == "mmlu" else seeded_slice(loaded, size, seed)
        return self._episodes(parts, [benchmark.as_task(i) for i in chosen], data)

    def without_data(self, experiment: Experiment, parts: Parts) -> tuple[Campaign, str] | None:
        """The slice's size from the file (``data.items``, else the paper's), each item as long as the benchmark's
        items are on average, while the benchmark's file is not on disk."""
        d = parts.data
        size = d.items if d.items is not None else PAPER_SIZES[d.task]
        try:
            data = d.path()
        except ConfigError as exc:
            data, why = f"$LEXICOORD_DATA/{DATA_FILES[d.task]}", str(exc)
        else:
            why = f"no file or folder at {data}."
        if size is None or Path(data).exists():
            return None
        benchmark = BENCHMARKS[d.task]
        items = [{"id": f"(stand-in {i + 1})", STAND_IN: "x" * benchmark.mean_chars} for i in range(size)]
        return self._episodes(parts, items, data), (
            f"{why} The estimate counts {size} items of {benchmark.mean_chars} characters, the mean of "
            f"{d.task}'s public file; put the file there before running.")

    def _episodes(self, parts: Parts, tasks: list[dict[str, Any]], data: str) -> Campaign:
        task = parts.data.task
        a, b = parts.models.a, parts.models.b or parts.models.a
        seats = lineups(a, b)
        variants: list[str] = list(dict.fromkeys(parts.grid.variants))
        base = CogentSettings.model_validate({**parts.settings.model_dump(), "task": task})
        episodes: list[EpisodeSpec] = []
        # Longest episodes first, so that the end of a run is short episodes filling the free slots rather than
        # one long episode holding the run open (the variants' order in the report is fixed elsewhere).
        for s in sorted((base.model_copy(update={"variant": v}) for v in variants), key=calls, reverse=True):
            episodes += grid(tasks, [seats["single" if s.variant == "single" else "debate"]], settings=[s.model_dump()])
        config = {"task": task, "data": data, "items": len(tasks), "variants": variants,
                  "models": [a] if parts.models.b is None else [a, b],
                  "settings": base.model_dump(exclude={"variant", "task"}),
                  **({"slice_seed": parts.data.slice_seed} if parts.data.slice_seed is not None else {})}
        return Campaign(episodes=episodes, config=config)

    def calls(self, parts: Parts, episode: EpisodeSpec) -> list[Call]:
        """The variant's call count (``rules.calls``), shared between A and B for the debates; every prompt
        holds the question and, from the first debate round on, the other agent's latest reply."""
        settings = CogentSettings.model_validate(episode.settings)
        n = calls(settings)
        item = episode.item
        question = tokens_of(item[STAND_IN] if STAND_IN in item else BENCHMARKS[settings.task].render(item))
        seats = [s.model for s in episode.lineup if s.model]
        out = []
        for i, model in enumerate(seats):
            share = n // len(seats) + (1 if i < n % len(seats) else 0)
            prompt = share * (PROMPT_OVERHEAD + question + (settings.max_tokens if len(seats) > 1 else 0))
            out.append(Call(model=model, calls=share, prompt_tokens=prompt, completion_tokens=share * settings.max_tokens))
        return out

    def after(self, store: Store, run_id: str, say: Callable[[str], None]) -> None:
        for line in warnings(statistics(store.iter_run_events(run_id))):
            say(f"warning: {line}")
        say(f"transcripts: lexicoord runs show {run_id} --transcript")


PLAN = CogentPlan()
