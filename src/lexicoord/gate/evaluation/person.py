"""The simulated person of an evaluation: answers the gate's question from the item's gold fields, nothing else.

It stands where a person answers on the gate's page, as a seat of its own kind (``simulated``) and name
(``simulated-person``), so the record and the verdict's seats tell its moves from a real person's. It reads
only ``item["gold"]`` (the benchmark's intent, intended readings and gold answer) and the question's offered
options; it never sees the models' reasoning. An attentive person: an offered option they mean is chosen; the
words are the benchmark's own gold answer (AmbiK), else the intent ("I mean: ...").
"""

from __future__ import annotations

from typing import Any

from lexicoord.core.context import EpisodeContext
from lexicoord.core.seat import Answer, Request, Seat, SeatInfo
from lexicoord.core.spec import AgentSpec
from lexicoord.errors import ConfigError
from lexicoord.gate.deliberation import MAX_ANSWER
from lexicoord.gate.items import GateItem
from lexicoord.tasks.asking import normalise

#: The seat's name in an evaluation's line-up.
NAME = "simulated-person"


def person_spec() -> AgentSpec:
    return AgentSpec(name=NAME, kind="simulated", role="person", options={"answers_from": "gold"})


def meant(option: str, intended: list[str]) -> bool:
    """Whether ``option`` is one the person means (the same words, case and punctuation aside)."""
    return normalise(option) in {normalise(i) for i in intended}


def reply(gold: dict[str, Any], options: list[str]) -> dict[str, str]:
    """The person's answer to a question offering ``options``: the first offered option they mean, and the gold
    answer or the intent in words."""
    intended = [str(i) for i in gold.get("intended") or []]
    said: dict[str, str] = {}
    choice = next((o for o in options if meant(o, intended)), None)
    if choice is not None:
        said["choice"] = choice
    text = str(gold.get("answer") or "").strip()
    if not text and len(intended) > 1:
        text = "Any of these: " + "; ".join(intended) + "."
    elif not text:
        text = f"I mean: {gold.get('intent') or '; '.join(intended)}."
    said["text"] = text[:MAX_ANSWER]
    return said


class SimulatedPerson(Seat):
    kind = "simulated"
    simulated = True

    def __init__(self, name: str, gold: dict[str, Any], role: str | None = "person") -> None:
        super().__init__(name, role)
        self.gold = gold

    def describe(self) -> SeatInfo:
        return SeatInfo(**super().describe().model_dump(), policy="answers from the item's gold fields")

    async def answer(self, request: Request) -> Answer:
        value = reply(self.gold, list(request.view.get("options") or []))
        return Answer(value=value, raw=value.get("text", ""))


def simulated_person(spec: AgentSpec, ctx: EpisodeContext[GateItem], system_prompt: str | None = None) -> SimulatedPerson:
    """The line-up's ``simulated`` seat; an item without ``gold`` has no one to answer for (a configuration error)."""
    gold = ctx.item.gold
    if gold is None:
        raise ConfigError(f"Seat '{spec.name}' is a simulated person, but item {ctx.spec.item_id!r} has no gold fields "
                          "to answer from (evaluation items come from knowno:PATH or ambik:PATH).")
    return SimulatedPerson(spec.name, gold, role=spec.role)
