"""WiC-TSV (Breit et al. 2021) as coordination-game items: a word in a sentence, and glosses written by people.

A folder holds ``{split}_examples.txt`` (``word<TAB>token index<TAB>sentence``), ``{split}_definitions.txt`` (a
gloss) and ``{split}_labels.txt`` (``T``/``F``: does the gloss give the word's sense in the sentence), aligned
line by line (``{split}_hypernyms.txt`` is not needed). A context is a sentence with its word; its options are the
word's distinct glosses across the file (a sense the context's own rows mark ``F`` first, then the word's
other senses), its intended meaning the gloss marked ``T``. A context without a ``T`` gloss, with two, or whose
word has only one gloss in the file is skipped and counted, as is a gloss too long for an option.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

from pydantic import ValidationError

from lexicoord.errors import ConfigError
from lexicoord.tasks.ambiguous import MAX_GLOSS_CHARS, AmbiguityItem
from lexicoord.tasks.asking import Skips
from lexicoord.tasks.jsonl import DatasetError, LineError, validation_reason

#: Options per item at most (the game's item model holds five).
MAX_OPTIONS = 5


class Context:
    """One sentence with its word, the rows that label glosses for it, and the first line it was read from."""

    def __init__(self, word: str, index: int, sentence: str, line: int) -> None:
        self.word, self.index, self.sentence, self.line = word, index, sentence, line
        self.true: list[str] = []
        self.false: list[str] = []


def _files(folder: Path, split: str) -> dict[str, Path]:
    names = {k: folder / f"{split}_{k}.txt" for k in ("examples", "definitions", "labels")}
    missing = [p.name for p in names.values() if not p.is_file()]
    if missing:
        raise ConfigError(f"{folder} is not a WiC-TSV folder for split '{split}': no {', '.join(missing)}.")
    return names


def load_wictsv(folder: str | Path, *, split: str = "train", limit: int | None = None,
                skips: Skips | None = None) -> list[AmbiguityItem]:
    """Coordination items from a WiC-TSV folder (``split``: train, dev or test, as the files are named)."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise ConfigError(f"WiC-TSV folder not found: {folder}.")
    skips = skips if skips is not None else Skips()
    paths = _files(folder, split)
    contexts: dict[tuple[str, int, str], Context] = {}
    glosses: dict[str, list[str]] = defaultdict(list)
    errors: list[LineError] = []
    with paths["examples"].open(encoding="utf-8") as ex, paths["definitions"].open(encoding="utf-8") as de, \
            paths["labels"].open(encoding="utf-8") as la:
        for number, (example, gloss, label) in enumerate(itertools.zip_longest(ex, de, la), start=1):
            if example is None or gloss is None or label is None:
                errors.append(LineError(line=number, reason="the examples, definitions and labels files differ in length"))
                break
            parts = example.rstrip("\n").split("\t")
            gloss, label = " ".join(gloss.split()), label.strip().upper()
            if len(parts) != 3 or not parts[1].strip().lstrip("-").isdigit() or label not in ("T", "F") or not gloss:
                errors.append(LineError(line=number, reason="expected word<TAB>index<TAB>sentence, a gloss and T or F"))
                continue
            word, index, sentence = parts[0].strip(), int(parts[1]), parts[2].strip()
            key = (word.casefold(), index, sentence)
            context = contexts.setdefault(key, Context(word, index, sentence, number))
            (context.true if label == "T" else context.false).append(gloss)
            if gloss not in glosses[word.casefold()]:
                glosses[word.casefold()].append(gloss)
    if errors:
        raise DatasetError(str(folder), errors)
    items: list[AmbiguityItem] = []
    for context in contexts.values():
        item = _item(context, glosses[context.word.casefold()], skips, split)
        if item is not None:
            items.append(item)
            if limit is not None and len(items) >= limit:
                break
    return items


def _item(c: Context, word_glosses: list[str], skips: Skips, split: str) -> AmbiguityItem | None:
    true = list(dict.fromkeys(c.true))
    if len(true) != 1:
        skips["contexts without exactly one gloss marked T" if true else "contexts with no gloss marked T"] += 1
        return None
    if len(word_glosses) < 2:
        skips["contexts whose word has one gloss in the file"] += 1
        return None
    if len(true[0]) > MAX_GLOSS_CHARS:
        skips[f"contexts whose true gloss is longer than {MAX_GLOSS_CHARS} characters"] += 1
        return None
    others = [g for g in dict.fromkeys([*c.false, *word_glosses]) if g != true[0] and len(g) <= MAX_GLOSS_CHARS]
    options = [true[0], *others[: MAX_OPTIONS - 1]]
    if len(options) < 2:
        skips[f"contexts left with one gloss of at most {MAX_GLOSS_CHARS} characters"] += 1
        return None
    tokens = c.sentence.split()
    token = tokens[c.index] if 0 <= c.index < len(tokens) else ""
    word = token if token.casefold().startswith(c.word.casefold()[:3]) else c.word  # the inflected form, if it is one
    options = sorted(options, key=lambda g: word_glosses.index(g))  # the file's order: the true gloss is not always first
    try:
        return AmbiguityItem(id=f"wictsv-{split}-{c.line:05d}", sentence=c.sentence, word=word, options=options,
                             intended=true[0], category="wsd", domain="general",
                             note=f"WiC-TSV {split} line {c.line}")
    except ValidationError as exc:
        skips[f"contexts the game cannot hold ({validation_reason(exc)})"] += 1
        return None
