"""GSM8K, FOLIO and MMLU as tasks: local files in their public formats, seeded slices, and each
benchmark's own answer extraction and equality.

Where to get the files: GSM8K ``test.jsonl`` (github.com/openai/grade-school-math), FOLIO
``folio-validation.jsonl`` (github.com/Yale-LILY/FOLIO), MMLU's ``data/test/*.csv`` (github.com/hendrycks/test).
Loaders take a path (or ``hf:NAME``); nothing is downloaded otherwise.
"""

from __future__ import annotations

import csv
import hashlib
import random
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lexicoord.errors import ConfigError
from lexicoord.tasks import jsonl
from lexicoord.tasks.answers import format_number, number_value, read_label, read_letter, read_number
from lexicoord.tasks.base import Task
from lexicoord.tasks.jsonl import DatasetError, LineError


class Prediction(Protocol):
    """What a benchmark scores of an outcome: the final answer as the task reads it (``None``: invalid)."""

    @property
    def answer(self) -> str | None: ...


def stable_id(prefix: str, text: str) -> str:
    """An id from the item's own text, so a slice names the same items whatever order the file is in."""
    return f"{prefix}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def seeded_slice(items: list[Any], n: int | None, seed: int) -> list[Any]:
    """``n`` items drawn with ``seed`` (all, shuffled, when ``n`` is ``None`` or larger than the set)."""
    rng = random.Random(seed)
    chosen = rng.sample(items, len(items))
    return chosen if n is None else chosen[:n]


class Benchmark(Task[Any, Prediction]):
    """A benchmark task: :meth:`render` words an item for a prompt, :meth:`extract` reads a reply,
    :meth:`equal` compares with the gold answer. Each benchmark owns its wording."""

    name: ClassVar[str]
    #: How a reply must end, said in every prompt that asks for an answer.
    answer_format: ClassVar[str] = ""
    #: The mean length in characters of an item as :meth:`render` words it, measured on the public file, so that a
    #: dry run can estimate a run's tokens before the data is on disk.
    mean_chars: ClassVar[int] = 400

    def render(self, item: dict[str, Any]) -> str:
        """The item as a prompt shows it (fenced by the caller: it is dataset text)."""
        return str(item["question"])

    def extract(self, reply: str) -> str | None:
        raise NotImplementedError

    def equal(self, predicted: str | None, gold: str) -> bool:
        return predicted is not None and predicted == gold

    def score(self, item: dict[str, Any], outcome: Prediction) -> bool | None:
        return self.equal(outcome.answer, str(item["answer"]))


# ------------------------------------------------------------------------------------------------ GSM8K
class MathItem(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    question: str = Field(min_length=1)
    #: The gold number, as written after ``####`` (separators removed).
    answer: str
    solution: str = ""

    @field_validator("answer")
    @classmethod
    def _number(cls, v: str) -> str:
        value = number_value(v)
        if value is None:
            raise ValueError(f"the answer {v!r} is not a number")
        return format_number(value)


class GSM8K(Benchmark):
    """Grade-school maths: the declared number (see :mod:`lexicoord.tasks.answers`), compared exactly as a
    number, so ``18.00``, ``$18`` and ``18`` are equal and ``0.75`` equals ``3/4``."""

    name = "gsm8k"
    mean_chars = 240  # the 1,319 items of test.jsonl
    item_model = MathItem
    answer_format = "End your reply with the final answer on its own line, as '#### <number>'."

    def parse_line(self, data: dict[str, Any]) -> MathItem:
        answer = str(data.get("answer", ""))
        gold = answer.rsplit("####", 1)[-1].strip() if "####" in answer else answer
        return MathItem(id=str(data.get("id") or stable_id("gsm8k", str(data.get("question", "")))),
                        question=data.get("question", ""), answer=gold, solution=answer)

    def extract(self, reply: str) -> str | None:
        value = read_number(reply)
        return None if value is None else format_number(value)

    def equal(self, predicted: str | None, gold: str) -> bool:
        if predicted is None:
            return False
        mine, theirs = number_value(predicted), number_value(gold)
        return mine is not None and mine == theirs


# ------------------------------------------------------------------------------------------------ FOLIO
class LogicItem(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    premises: list[str] = Field(min_length=1)
    conclusion: str = Field(min_length=1)
    answer: Literal["True", "False", "Uncertain"]


class FOLIO(Benchmark):
    """First-order logic in English: is the conclusion True, False or Uncertain given the premises?"""

    name = "folio"
    item_model = LogicItem
    mean_chars = 487  # the 204 items of folio-validation.jsonl
    answer_format = "End your reply with 'Answer: True', 'Answer: False' or 'Answer: Uncertain'."

    def render(self, item: dict[str, Any]) -> str:
        premises = "\n".join(f"- {p}" for p in item["premises"])
        return f"Premises:\n{premises}\nConclusion: {item['conclusion']}\n" \
               "Given only the premises, is the conclusion True, False or Uncertain?"

    def parse_line(self, data: dict[str, Any]) -> LogicItem:
        premises = data.get("premises", [])
        premises = [p.strip() for p in (premises.split("\n") if isinstance(premises, str) else premises) if p.strip()]
        label = str(data.get("label", ""))
        label = "Uncertain" if label.lower() in ("unknown", "uncertain") else label.capitalize()
        key = data.get("example_id") or stable_id("folio", " ".join(premises) + "|" + str(data.get("conclusion")))
        return LogicItem(id=str(key), premises=premises, conclusion=data.get("conclusion", ""), answer=label)

    def extract(self, reply: str) -> str | None:
        return read_label(reply)


# ------------------------------------------------------------------------------------------------- MMLU
class ChoiceItem(BaseModel):
    id: str
    subject: str
    question: str = Field(min_length=1)
    choices: list[str] = Field(min_length=4, max_length=4)
    answer: Literal["A", "B", "C", "D"]


class MMLU(Benchmark):
    """Multiple choice over 57 subjects: one letter A-D. Loads a folder of ``<subject>_test.csv`` files
    (or one such file); a slice is stratified across subjects."""

    name = "mmlu"
    mean_chars = 454  # the 14,079 items of the 57 test CSV files
    item_model = ChoiceItem
    answer_format = "End your reply with 'Answer: <letter>', one of A, B, C or D."

    def render(self, item: dict[str, Any]) -> str:
        options = "\n".join(f"{letter}. {text}" for letter, text in zip("ABCD", item["choices"]))
        return f"{item['question']}\n{options}"

    def load_file(self, path: str) -> list[ChoiceItem]:
        root = Path(path)
        files = sorted(root.glob("*.csv")) if root.is_dir() else [root]
        if not files or not all(f.is_file() for f in files):
            raise ConfigError(f"No MMLU CSV files at {root} (a folder of <subject>_test.csv files, or one file).")
        items: list[ChoiceItem] = []
        for f in files:
            subject = f.stem.removesuffix("_test").removesuffix("_dev").removesuffix("_val")
            errors: list[LineError] = []
            jsonl.check_size(f)
            with f.open(encoding="utf-8", newline="") as fh:
                reader = csv.reader(fh)
                for n, row in enumerate(_rows(reader, f), start=1):
                    try:
                        if len(row) != 6:
                            raise ValueError(f"{len(row)} fields, not 6 (question, A, B, C, D, answer)")
                        items.append(ChoiceItem(id=f"{subject}-{n}", subject=subject, question=row[0],
                                                choices=row[1:5], answer=row[5].strip().upper()))
                    except (ValueError, ValidationError) as exc:
                        reason = jsonl.validation_reason(exc) if isinstance(exc, ValidationError) else str(exc)
                        errors.append(LineError(line=reader.line_num, reason=f"row {n}: {reason}"))
            if errors:
                raise DatasetError(str(f), errors)
        return items

    def extract(self, reply: str) -> str | None:
        return read_letter(reply)


def _rows(reader: Any, path: Path) -> Iterator[list[str]]:
    """CSV rows; a field over the csv module's size limit, or text that is not UTF-8, is one clear error."""
    try:
        yield from reader
    except csv.Error as exc:
        raise ConfigError(f"{path}, line {reader.line_num}: {exc}.") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason}).") from None


def stratified_slice(items: list[ChoiceItem], n: int | None, seed: int) -> list[ChoiceItem]:
    """``n`` items taken in turn from every subject (each shuffled with ``seed``), so no subject dominates."""
    rng = random.Random(seed)
    by_subject: dict[str, list[ChoiceItem]] = defaultdict(list)
    for item in items:
        by_subject[item.subject].append(item)
    queues = [rng.sample(v, len(v)) for _, v in sorted(by_subject.items())]
    out: list[ChoiceItem] = []
    while queues and (n is None or len(out) < n):
        for q in list(queues):
            if n is not None and len(out) >= n:
                break
            out.append(q.pop())
            if not q:
                queues.remove(q)
    return out


BENCHMARKS: dict[str, Benchmark] = {"gsm8k": GSM8K(), "folio": FOLIO(), "mmlu": MMLU()}
#: The paper's slice sizes (FOLIO: every validation item; the paper used 282, the public file has 204).
PAPER_SIZES: dict[str, int | None] = {"gsm8k": 500, "folio": None, "mmlu": 500}
