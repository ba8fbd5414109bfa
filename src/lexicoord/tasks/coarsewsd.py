"""The CoarseWSD-20 word-sense format as coordination items.

Each word has a folder with ``classes_map.txt`` (sense id -> Wikipedia-title
label), ``test.data.txt`` (target token index, a tab, the tokenised lower-cased
sentence) and ``test.gold.txt`` (the sense id per line). Labels become
readable glosses: ``bank_bank_(geography)`` -> "bank (geography)"; a sense
whose title is the word itself gets a gloss from :data:`PRIMARY_GLOSSES`.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from lexicoord.errors import ConfigError
from lexicoord.tasks.ambiguous import AmbiguityItem, DatasetError, LineError

#: Glosses for senses whose Wikipedia title is just the word (what the bare article is about).
PRIMARY_GLOSSES = {
    "apple": "apple (the fruit)",
    "arm": "arm (the limb)",
    "bank": "bank (financial institution)",
    "chair": "chair (the seat)",
    "club": "club (association)",
    "java": "Java (the island)",
    "pitcher": "pitcher (baseball player)",
}


def gloss(word: str, label: str) -> str:
    """``bank_bank_(geography)`` -> ``bank (geography)``; ``bass_double_bass`` -> ``double bass``."""
    title = label[len(word) + 1 :] if label.startswith(f"{word}_") else label
    if title == word:
        return PRIMARY_GLOSSES.get(word, f"{word} (main sense)")
    return title.replace("_", " ")


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
