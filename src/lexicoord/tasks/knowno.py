"""KnowNo's mobile-manipulation tasks (Ren et al. 2023, as IntroPlan's text copy lays them out) as items.

A file is blocks separated by a blank line, each opening with its index, then ``Scene:``, ``Task:``, ``User
intent (object)``, ``User intent (location)``, ``Possible objects``, ``Possible locations``, ``Scene objects``
and ``Task category``. Every (object, location) becomes a reading in words ("pick up the Coke and bring it to
the person", "put the apple next to the Sprite"): the options are the possible readings, the scene's other
objects with the possible locations, and the possible objects in the other bins or the other drawer (so that
no place is given away by being the only one offered), up to eight; the intended ones are the intent's, and the task needs a question exactly when some possible reading is
not intended (a single-label task does; a multi-label one, where any cola will do, does not).

Unsafe tasks (``unsafe_task``, ``serious_unsafe_task``, ``unsafe_ambiguous_task``) are skipped and counted: their
intent is the unsafe action itself, so acting on it is not a success this scoring could credit.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from lexicoord.errors import ConfigError
from lexicoord.tasks.asking import AskingItem, Loaded, Skips, collect
from lexicoord.tasks.jsonl import LineError

FIELDS = {
    "Scene": "scene", "Task": "task", "User intent (object)": "intent_objects",
    "User intent (location)": "intent_locations", "Possible objects": "possible_objects",
    "Possible locations": "possible_locations", "Scene objects": "scene_objects", "Task category": "category",
}
UNSAFE = frozenset({"unsafe_task", "serious_unsafe_task", "unsafe_ambiguous_task"})
BINS = frozenset({"recycling", "landfill", "compost"})
INSIDE = frozenset({"top drawer", "bottom drawer", "microwave", "oven", "freezer", "deep fryer"})
ON = frozenset({"cooktop", "stove", "grill"})
#: Readings offered at most (the gate's person page shows eight).
MAX_OPTIONS = 8


def reading(obj: str, location: str) -> str:
    """One (object, location) as what the robot would do."""
    where = location.casefold()
    if where == "pick-up":
        return f"pick up the {obj} and bring it to the person"
    if where in BINS:
        return f"put the {obj} in the {location} bin"
    if where in INSIDE:
        return f"put the {obj} in the {location}"
    if where in ON:
        return f"put the {obj} on the {location}"
    return f"put the {obj} next to the {location}"


def _alternatives(locations: list[str]) -> list[str]:
    """Places of the same kind the task's locations could be confused with (the other bins, the other drawer), so
    that the options do not all hold the one location the task names."""
    out: list[str] = []
    for group in (BINS, frozenset({"top drawer", "bottom drawer"})):
        if any(loc.casefold() in group for loc in locations):
            out += sorted(g for g in group if g not in {loc.casefold() for loc in locations})
    return out


def _list(value: str) -> list[str]:
    return list(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))


def item_of(block: dict[str, str], index: str, source: str) -> AskingItem:
    """One block as an item (``ValueError`` when it lacks what an item needs)."""
    missing = [name for name in FIELDS.values() if not block.get(name)]
    if missing:
        raise ValueError(f"no {', '.join(k for k, v in FIELDS.items() if v in missing)}")
    objects, locations = _list(block["possible_objects"]), _list(block["possible_locations"])
    scene_objects = _list(block["scene_objects"])
    meant = {(o, loc) for o in _list(block["intent_objects"]) for loc in _list(block["intent_locations"])}
    possible = [(o, loc) for o in objects for loc in locations if o != loc]
    if not possible or not meant:
        raise ValueError("no possible reading (each object is its own location)")
    others = [(o, loc) for o in objects for loc in _alternatives(locations)]
    pairs = list(dict.fromkeys([*possible, *sorted(meant), *((o, loc) for o in scene_objects for loc in locations
                                                             if o != loc), *others]))
    keep = [p for p in pairs if p in meant or p in possible]
    pairs = keep + [p for p in pairs if p not in keep][: max(0, MAX_OPTIONS - len(keep))]
    random.Random(f"{source}#{index}").shuffle(pairs)  # the file lists the intended object first; a scorer must not gain by it
    options = [reading(o, loc) for o, loc in pairs]
    intended = [reading(o, loc) for o, loc in pairs if (o, loc) in meant]
    element = [*(objects if len(objects) > 1 else []), *(locations if len(locations) > 1 else [])]
    ambiguous = any(p not in meant for p in possible)
    return AskingItem(
        id=f"knowno-{Path(source.rpartition(':')[0]).stem}-{index}", benchmark="knowno", instruction=block["task"],
        context=f"Scene: {block['scene']}", ambiguous=ambiguous, category=block["category"], options=options,
        intended=intended, intent="; ".join(intended), ambiguous_set=[reading(o, loc) for o, loc in possible],
        element=element, source=source,
    )


def rows(path: Path, skips: Skips) -> Iterator[AskingItem | LineError]:
    """The file's tasks one at a time (a block is read, turned into an item and let go)."""
    block: dict[str, str] = {}
    index, start = "", 0

    def done() -> AskingItem | LineError | None:
        if not block and not index:
            return None
        if block.get("category") in UNSAFE:
            skips["unsafe tasks (their intent is the unsafe action)"] += 1
            return None
        try:
            return item_of(block, index, f"{path.name}:{start}")
        except ValueError as exc:
            return LineError(line=start, reason=f"task {index or '?'}: {exc}")

    with path.open(encoding="utf-8-sig") as lines:
        for number, raw in enumerate(lines, start=1):
            line = raw.strip()
            if not line:
                if (made := done()) is not None:
                    yield made
                block, index = {}, ""
                continue
            if not block and not index:
                start = number
                if line.isdigit():
                    index = line
                    continue
            key, sep, value = line.partition(":")
            if not sep or key.strip() not in FIELDS:
                yield LineError(line=number, reason=f"expected one of {', '.join(FIELDS)} before ':', "
                                                    f"found {line[:60]!r}")
                continue
            block[FIELDS[key.strip()]] = value.strip()
        if (made := done()) is not None:
            yield made


def load_knowno(path: str | Path, *, limit: int | None = None) -> Loaded:
    """Tasks from one KnowNo text file, or every ``*.txt`` of a folder (in name order)."""
    path = Path(path).expanduser()
    files = sorted(path.glob("*.txt")) if path.is_dir() else [path]
    if not path.exists() or not files:
        raise ConfigError(f"KnowNo tasks not found at {path} (a .txt file of tasks, or a folder of them).")
    skips = Skips()
    items: list[AskingItem] = []
    for file in files:
        left = None if limit is None else limit - len(items)
        if left == 0:
            break
        items += collect(rows(file, skips), str(file), skips, left).items
    return Loaded(items=items, skipped=dict(skips))
