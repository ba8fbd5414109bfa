"""The CoarseWSD-20 word-sense format as coordination items.

Each word has a folder with ``classes_map.txt`` (sense id -> Wikipedia-title
label), ``test.data.txt`` (target token index, a tab, the tokenised lower-cased
sentence) and ``test.gold.txt`` (the sense id per line). Labels become
readable glosses by one rule for every word (:func:`gloss`):
``bank_bank_(geography)`` -> "bank (geography)", ``bank_bank`` -> "bank (main
sense)", ``seal_pinniped`` -> "seal (pinniped)".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import ValidationError

from lexicoord.errors import ConfigError
from lexicoord.tasks.ambiguous import AmbiguityItem, DatasetError, LineError

MAIN_SENSE = "main sense"


def gloss(word: str, label: str) -> str:
    """A sense label as a gloss that reads as a meaning of ``word``, by one rule for every word.

    Labels are ``WORD_TITLE`` with TITLE a Wikipedia title (``bank_bank_(geography)``); the
    ``WORD_`` prefix may be missing. A title that holds the word as a whole word is the gloss
    (``bank (geography)``, ``double bass``). A title that is the bare word names the article the
    word itself leads to, so it becomes ``WORD (main sense)``. A title without the word
    (``chairman``, ``pinniped``) is put in brackets after it (``seal (pinniped)``), so every
    option still says which word it is a meaning of. No word has an entry of its own: users
    bring words this code has never seen.
    """
    title = label[len(word) + 1 :] if label.casefold().startswith(f"{word.casefold()}_") else label
    text = " ".join(title.replace("_", " ").split())
    if not text or text.casefold() == word.casefold():
        return f"{word} ({MAIN_SENSE})"
    if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE):
        return text
    return f"{word} ({text})"


def load_word(folder: Path, *, limit: int | None = None) -> list[AmbiguityItem]:
    word = folder.name
    try:
        classes = json.loads((folder / "classes_map.txt").read_text(encoding="utf-8"))
        data = (folder / "test.data.txt").read_text(encoding="utf-8").splitlines()
        gold = (folder / "test.gold.txt").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{folder} is not a CoarseWSD-20 word folder ({exc}).") from None
    if not isinstance(classes, dict) or not classes or not all(str(k).isdigit() and isinstance(v, str) for k, v in classes.items()):
        raise ConfigError(f"{folder / 'classes_map.txt'} must map sense numbers to labels, like {{\"0\": \"bank_bank\"}}.")
    if len(data) != len(gold):
        raise ConfigError(f"{folder}: test.data.txt has {len(data)} lines but test.gold.txt has {len(gold)}.")
    options = [gloss(word, classes[k]) for k in sorted(classes, key=int)]
    items: list[AmbiguityItem] = []
    errors: list[LineError] = []
    for number, (line, sense) in enumerate(zip(data, gold), start=1):
        index, _, sentence = line.partition("\t")
        tokens = sentence.split()
        try:
            position = int(index)
            target = tokens[position]
            intended = gloss(word, classes[sense.strip()])
        except (ValueError, IndexError, KeyError):
            errors.append(LineError(line=number, reason=f"bad target index or sense ({index!r}, {sense!r})"))
            continue
        if target != word and not target.startswith(word):
            errors.append(LineError(line=number, reason=f"token {position} is {target!r}, not {word!r}"))
            continue
        try:
            item = AmbiguityItem(
                id=f"{word}-{number:05d}", sentence=sentence, word=target, options=options, intended=intended,
                open=False, category="wsd", domain="general", note=f"CoarseWSD-20 test line {number}",
            )
        except ValidationError as exc:
            errors.append(LineError(line=number, reason=str(exc.errors()[0]["msg"])))
            continue
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    if errors:
        raise DatasetError(str(folder / "test.data.txt"), errors)
    return items


def load_coarsewsd(root: str | Path, *, words: list[str] | None = None, per_word: int | None = None) -> list[AmbiguityItem]:
    """Items from a CoarseWSD-20 copy: ``root`` holds one folder per word."""
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"CoarseWSD-20 folder not found: {root}.")
    folders = sorted(p for p in root.iterdir() if (p / "classes_map.txt").is_file())
    if words:
        missing = sorted(set(words) - {p.name for p in folders})
        if missing:
            raise ConfigError(f"{root} has no folder for: {', '.join(missing)}.")
        folders = [p for p in folders if p.name in words]
    if not folders:
        raise ConfigError(f"{root} holds no CoarseWSD-20 word folders (each with classes_map.txt).")
    return [item for folder in folders for item in load_word(folder, limit=per_word)]
