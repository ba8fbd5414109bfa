"""KnowNo's conformal prediction over an instruction's options (Ren et al., CoRL 2023), as one module.

The scorer reads the options lettered A, B, C ... and the probability of each letter is its next-token
probability, normalised over the letters offered (KnowNo's multiple-choice scoring). The prediction set keeps
every option whose non-conformity ``1 - p`` is at most ``qhat``; ``qhat`` is the split-conformal quantile of
the calibration items' non-conformity of their true option, at level ``ceil((n + 1)(1 - epsilon)) / n``
(numpy's "higher" quantile, as KnowNo's code takes it),
which guarantees that the set holds the true option with probability at least ``1 - epsilon`` (the target
success level) on items drawn like the calibration items.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from lexicoord.core.seat import Request, Seat
from lexicoord.errors import ConfigError, LexicoordError
from lexicoord.prompting import Prompts, fence

PROMPTS = Prompts("lexicoord.gate")
LETTERS = string.ascii_uppercase
#: Top alternatives asked for: enough that every offered letter is among them for any sane model.
TOP = 20


def letter_of(token: str) -> str | None:
    """The option letter a token stands for (``"A"``, ``" B"``, ``"C)"``, ``"(d"``), or ``None``."""
    core = token.strip().strip("().:*[]").upper()
    return core if len(core) == 1 and core in LETTERS else None


def letter_mass(logprobs: Mapping[str, float], letters: Sequence[str]) -> float:
    """How much of the first token's probability the offered letters hold (their spellings summed)."""
    return sum(math.exp(lp) for token, lp in logprobs.items()
               if (letter := letter_of(token)) is not None and letter in letters and math.isfinite(lp))


def normalised(logprobs: Mapping[str, float], letters: Sequence[str]) -> dict[str, float]:
    """Each offered letter's probability among the offered letters (spellings of one letter summed).

    Raises when none of the letters is among the model's top tokens: no probability is then known, and a
    check that cannot score fails rather than guessing."""
    mass: dict[str, float] = {}
    for token, lp in logprobs.items():
        letter = letter_of(token)
        if letter is not None and letter in letters and math.isfinite(lp):
            mass[letter] = mass.get(letter, 0.0) + math.exp(lp)
    total = sum(mass.values())
    if total <= 0:
        raise LexicoordError("the scorer's first token was none of the option letters, so no option has a probability")
    return {letter: mass.get(letter, 0.0) / total for letter in letters}


class Scores(NamedTuple):
    """Each option's probability (normalised over the options) and the share of the first token's probability
    the option letters held before normalising (a scorer that mostly said something else barely answered)."""

    probabilities: dict[str, float]
    mass: float


async def probabilities(seat: Seat, scene: str, instruction: str, options: Sequence[str]) -> Scores:
    """Each option's probability as the scorer's letter, normalised over the options."""
    if not 2 <= len(options) <= len(LETTERS):
        raise ConfigError(f"A conformal check needs 2 to {len(LETTERS)} options, not {len(options)}.")
    letters = LETTERS[: len(options)]
    listed = "\n".join(f"{letter}) {option}" for letter, option in zip(letters, options))
    prompt = PROMPTS.render("gate_score", scene=fence(scene, "SCENE"), instruction=fence(instruction, "INSTRUCTION"),
                           options=fence(listed, "OPTIONS"))
    answer = await seat.answer(Request(kind="score", prompt=prompt, logprobs=TOP, max_tokens=1, temperature=0.0))
    if not answer.ok or answer.value is None:
        raise LexicoordError(f"{seat.name} gave no scores: {answer.failure}")
    logprobs = answer.value.get("logprobs") or {}
    by_letter = normalised(logprobs, letters)
    return Scores({option: by_letter[letter] for letter, option in zip(letters, options)},
                  letter_mass(logprobs, letters))


def prediction_set(probs: Mapping[str, float], qhat: float) -> list[str]:
    """The options whose non-conformity ``1 - p`` is at most ``qhat``, most probable first."""
    return sorted((o for o, p in probs.items() if 1.0 - p <= qhat), key=lambda o: -probs[o])


def quantile(scores: Sequence[float], success: float) -> float:
    """The split-conformal threshold exactly as KnowNo computes it: ``np.quantile(scores, level,
    method="higher")`` at ``level = ceil((n + 1) * success) / n``, that is the sorted score at index
    ``ceil(level * (n - 1))``."""
    n = len(scores)
    if not 0 < success < 1:
        raise ConfigError(f"The target success level must be between 0 and 1, not {success}.")
    level = math.ceil((n + 1) * success) / n if n else 2.0
    if level > 1:
        need = math.ceil(success / (1 - success))
        raise ConfigError(f"{n} calibration item(s) cannot give {success:.0%} success; at least {need} are needed.")
    return sorted(scores)[math.ceil(level * (n - 1))]
