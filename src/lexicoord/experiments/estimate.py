"""What a run will cost before it starts (``--dry-run``): episodes, model calls, tokens and dollars per model.

The counts come from each protocol's call pattern with every round played (an upper bound: games that converge
early call less). Tokens are estimated at four characters a token, the usual rule for English text; the cost
is computed only for models the file gives a price for, and is said to be an estimate.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import ceil

from pydantic import BaseModel

from lexicoord.experiments.experiment import Call, Price

#: Characters per token of English text with a BPE tokenizer, the rule of thumb providers publish.
CHARS_PER_TOKEN = 4


def tokens_of(text: str) -> int:
    return ceil(len(text) / CHARS_PER_TOKEN)


class ModelCost(BaseModel):
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    #: US dollars, or ``None`` when the file gives no price for the model.
    cost: float | None


def per_model(calls: Iterable[Call], prices: dict[str, Price]) -> list[ModelCost]:
    """The calls summed by model, in the order models first appear, with their cost where priced."""
    sums: dict[str, list[int]] = {}
    for c in calls:
        row = sums.setdefault(c.model, [0, 0, 0])
        row[0] += c.calls
        row[1] += c.prompt_tokens
        row[2] += c.completion_tokens
    out = []
    for model, (n, prompt, completion) in sums.items():
        price = prices.get(model)
        cost = None if price is None else (prompt * price.prompt + completion * price.completion) / 1e6
        out.append(ModelCost(model=model, calls=n, prompt_tokens=prompt, completion_tokens=completion, cost=cost))
    return out
