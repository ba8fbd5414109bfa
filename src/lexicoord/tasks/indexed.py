"""A JSONL dataset held as an index: every line checked once, each item read back from the file when it is used.

Playing one item of a large file must not cost the whole file in memory: a validated item is a few kilobytes
of Python objects, so a 220 MB file held as items took 1.2 GB to play one (benchmarks/dataset_memory.py). Here the file is still read and checked to the
end (every bad line reported with its number, ids unique, as :func:`lexicoord.tasks.jsonl.parse_jsonl` does),
but what stays is each kept item's byte offset and line number (16 bytes), and, while the file is read, one
hash per id for the uniqueness check. An item is parsed again from its line when it is asked for; a file that
changed since it was checked is refused rather than read as something else.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, overload

from pydantic import BaseModel

from lexicoord.errors import ConfigError
from lexicoord.tasks.jsonl import DatasetError, LineError, check_line, dataset_caps, line_validator, numbered_lines

M = TypeVar("M", bound=BaseModel)


#: How the uniqueness check hashes an id (a hit is only a candidate: it is confirmed by reading the ids again).
key_hash: Callable[[str], int] = hash


def _stamp(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError as exc:
        raise ConfigError(f"Cannot read the dataset {path}: {exc.strerror}.") from None
    return info.st_size, info.st_mtime_ns


class IndexedItems(Sequence[M]):
    """The kept items of a checked JSONL file, in file order (or the order :meth:`select` gave)."""

    def __init__(self, path: Path, validate: Callable[[dict[str, Any]], M], offsets: array[int],
                 numbers: array[int], stamp: tuple[int, int]) -> None:
        self.path = path
        self._validate = validate
        self._offsets = offsets
        self._numbers = numbers
        self._stamp = stamp

    def __len__(self) -> int:
        return len(self._offsets)

    @overload
    def __getitem__(self, index: int) -> M: ...
    @overload
    def __getitem__(self, index: slice) -> IndexedItems[M]: ...
    def __getitem__(self, index: int | slice) -> M | IndexedItems[M]:
        if isinstance(index, slice):
            return self._view(self._offsets[index], self._numbers[index])
        offset, number = self._offsets[index], self._numbers[index]  # IndexError past the end, as a list
        with self._open() as fh:
            return self._read(fh, offset, number)

    def __iter__(self) -> Iterator[M]:
        with self._open() as fh:
            for offset, number in zip(self._offsets, self._numbers):
                yield self._read(fh, offset, number)

    def select(self, positions: Iterable[int]) -> IndexedItems[M]:
        """The items at ``positions`` (indexes into this sequence), in that order: nothing is read."""
        picked = list(positions)
        return self._view(array("q", (self._offsets[p] for p in picked)), array("q", (self._numbers[p] for p in picked)))

    def _view(self, offsets: array[int], numbers: array[int]) -> IndexedItems[M]:
        return IndexedItems(self.path, self._validate, offsets, numbers, self._stamp)

    def _open(self) -> BinaryIO:
        if _stamp(self.path) != self._stamp:
            raise self._changed()
        try:
            return self.path.open("rb")
        except OSError as exc:
            raise ConfigError(f"Cannot read the dataset {self.path}: {exc.strerror}.") from None

    def _read(self, fh: BinaryIO, offset: int, number: int) -> M:
        fh.seek(offset)
        raw = fh.readline(dataset_caps()[1] + 1)
        try:
            checked = check_line(raw.decode("utf-8").rstrip("\r\n"), number, self._validate)
        except UnicodeDecodeError:
            checked = None
        if checked is None or isinstance(checked, LineError):
            raise self._changed(number)
        return checked

    def _changed(self, number: int | None = None) -> ConfigError:
        where = f" (line {number} is no longer the item it was)" if number is not None else ""
        return ConfigError(f"The dataset {self.path} changed since it was checked{where}; run the command again "
                           "to check it anew.")


def index_jsonl(path: str | Path, model: type[M] | Callable[[dict[str, Any]], M], *,
                keep: Callable[[M], bool] | None = None) -> IndexedItems[M]:
    """Check every line of ``path`` as :func:`~lexicoord.tasks.jsonl.parse_jsonl` does (a bad line or a repeated
    id raises :class:`DatasetError` with line numbers) and index the items ``keep`` accepts (all by default)."""
    path = Path(path)
    validate = line_validator(model)
    stamp = _stamp(path)
    offsets, numbers = array("q"), array("q")
    errors: list[LineError] = []
    hashes: set[int] = set()
    maybe_repeated: set[str] = set()
    items = 0
    for number, offset, line in numbered_lines(path):
        checked = check_line(line, number, validate)
        if checked is None:
            continue
        if isinstance(checked, LineError):
            errors.append(checked)
            continue
        key = str(getattr(checked, "id", number))
        hashed = key_hash(key)
        if hashed in hashes:
            maybe_repeated.add(key)  # a repeat or two ids of one hash: told apart below
        hashes.add(hashed)
        items += 1
        if keep is None or keep(checked):
            offsets.append(offset)
            numbers.append(number)
    del hashes
    if maybe_repeated:
        errors = sorted(errors + _repeats(path, validate, maybe_repeated), key=lambda e: e.line)
    if errors:
        raise DatasetError(str(path), errors)
    if not items:
        raise ConfigError(f"{path} holds no items.")
    if _stamp(path) != stamp:
        raise ConfigError(f"The dataset {path} changed while it was being checked; run the command again.")
    return IndexedItems(path, validate, offsets, numbers, stamp)


def _repeats(path: Path, validate: Callable[[dict[str, Any]], Any], keys: set[str]) -> list[LineError]:
    """The lines whose id repeats an earlier line's, among ids in ``keys``: a second read, only when a hash
    was seen twice (a file with repeated ids, which fails to load anyway)."""
    first: dict[str, int] = {}
    out: list[LineError] = []
    for number, _, line in numbered_lines(path):
        checked = check_line(line, number, validate)
        if checked is None or isinstance(checked, LineError):
            continue
        key = str(getattr(checked, "id", number))
        if key not in keys:
            continue
        if key in first:
            out.append(LineError(line=number, reason=f"id {key!r} repeats line {first[key]}"))
        else:
            first[key] = number
    return out


def pick(items: Sequence[M], positions: Sequence[int]) -> Sequence[M]:
    """``items`` at ``positions``, in that order: a view for an indexed file (nothing read), else a list."""
    if isinstance(items, IndexedItems):
        return items.select(positions)
    return [items[p] for p in positions]


__all__ = ["DatasetError", "IndexedItems", "index_jsonl", "pick"]
