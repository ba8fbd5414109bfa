"""The CoarseWSD-20 word-sense format as coordination items.

Each word has a folder with ``classes_map.txt`` (sense id -> Wikipedia-title
label), ``test.data.txt`` (target token index, a tab, the tokenised lower-cased
sentence) and ``test.gold.txt`` (the sense id per line). Labels become
readable glosses by one rule for every word (:func:`glosses`):
``bank_bank_(geography)`` -> "bank (geography)", ``seal_pinniped`` -> "seal
(pinniped)", and ``bank_bank`` -> "bank (the Wikipedia article Bank, not the
geography sense)".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import ValidationError

from lexicoord.errors import ConfigError
from lexicoord.tasks.ambiguous import MAX_GLOSS_CHARS, AmbiguityItem, DatasetError, LineError


def _title(word: str, label: str) -> str:
    """The Wikipedia title a label stands for, as words: the ``WORD_`` prefix dropped, underscores as spaces.

    A label may lack the prefix; ``java_(programming_language)`` is then the title itself (no title
    starts with a bracket), not ``java_`` before ``(programming_language)``.
    """
    rest = label[len(word) + 1 :]
    prefixed = label.casefold().startswith(f"{word.casefold()}_") and not rest.lstrip("_").startswith("(")
    title = rest if prefixed else label
    return " ".join(title.replace("_", " ").split())


def _is_bare(word: str, label: str) -> bool:
    text = _title(word, label)
    return not text or text.casefold() == word.casefold()


def gloss(word: str, label: str) -> str:
    """A sense label as a gloss that reads as a meaning of ``word``, by one rule for every word.

    Labels are ``WORD_TITLE`` with TITLE a Wikipedia title (``bank_bank_(geography)``); the
    ``WORD_`` prefix may be missing. A title that holds the word as a whole word is the gloss
    (``bank (geography)``, ``double bass``). A title without the word (``chairman``,
    ``pinniped``) is put in brackets after it (``seal (pinniped)``), so every option still
    says which word it is a meaning of. A title that is the bare word stands for the article
    Wikipedia files under the word itself, and the gloss says so (``bank (the Wikipedia article
    Bank)``); :func:`glosses` adds what it is not. No word has an entry of its own: users bring
    words this code has never seen.
    """
    text = _title(word, label)
    if _is_bare(word, label):
        return f"{word} (the Wikipedia article {_article(word)})"
    if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE):
        return text
    return f"{word} ({text})"


def _article(word: str) -> str:
    """The word as Wikipedia titles it: the first letter upper case (the data is lower-cased)."""
    return word[:1].upper() + word[1:]


def _sense_name(word: str, gloss_text: str) -> str:
    """How a contrast names another sense: the bracket of ``word (X)``, else the whole gloss."""
    match = re.fullmatch(rf"{re.escape(word)} \((.+)\)", gloss_text, re.IGNORECASE)
    return match.group(1) if match else gloss_text


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def glosses(word: str, labels: list[str]) -> list[str]:
    """Every sense label of ``word`` as a gloss, in the labels' order.

    "java (main sense)" would tell a player nothing (and a reader may take it for coffee),
    so a label that is the bare word names the article it stands for and sets it against
    the word's other senses: ``java_java`` beside ``java_java_(programming_language)``
    becomes "java (the Wikipedia article Java, not the programming language sense)". The
    article is Wikipedia's primary topic for the word (for java, the island), which players
    who know Wikipedia recognise and everyone else can narrow down by what it is not. Other
    labels keep :func:`gloss`. A contrast too long for an option says "not its other senses".
    """
    plain = [gloss(word, label) for label in labels]
    others = [_sense_name(word, g) for label, g in zip(labels, plain) if not _is_bare(word, label)]
    made: list[str] = []
    for label, text in zip(labels, plain):
        if not _is_bare(word, label) or not others:
            made.append(text)
            continue
        senses = "sense" if len(others) == 1 else "senses"
        full = f"{word} (the Wikipedia article {_article(word)}, not the {_either(others)} {senses})"
        made.append(full if len(full) <= MAX_GLOSS_CHARS else
                    f"{word} (the Wikipedia article {_article(word)}, not its other senses)")
    return made


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
    ids = sorted(classes, key=int)
    by_id = dict(zip(ids, glosses(word, [classes[k] for k in ids])))
    options = [by_id[k] for k in ids]
    items: list[AmbiguityItem] = []
    errors: list[LineError] = []
    for number, (line, sense) in enumerate(zip(data, gold), start=1):
        index, _, sentence = line.partition("\t")
        tokens = sentence.split()
        try:
            position = int(index)
            target = tokens[position]
            intended = by_id[sense.strip()]
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
