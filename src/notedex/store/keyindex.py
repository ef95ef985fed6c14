"""Which files a link may land on, in a few bytes per file: the writer's candidate index.

SEMANTICS 7 only ever compares a link with the files filed under its lookup key
(``resolve.lookup_key``): the fold of a file's name, or of a note's name without ``.md``
(``resolve.file_keys``). This index maps the hash of each such key to the ids of the files
filed under it, as two parallel sorted arrays: 16 bytes a key and no Python object per file,
where dicts of paths cost the daemon about 30 MB at 100k files. Paths stay in SQLite.

A hash can collide: ``ids`` may return a file that is not filed under the key. Callers fetch
the paths and file them under their real keys (``Resolver.add``), so a stray file is never
looked up and answers stay exact.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

from notedex.vault.resolve import file_keys, file_name_key, file_stem_key

_OFFSET = 1 << 63  # hash() is a signed 64-bit value; offset it to sort packed pairs
_LOW = (1 << 64) - 1
REBUILD_AT = 256
"""Adding more files than this at once re-sorts the arrays instead of inserting one by one."""


def key_hash(path: str, stem: int) -> int | None:
    """hash() of a file's name key (``stem`` 0) or of a note's stem key (1; None if not a note).

    For building the index from rows SQLite has sorted by this value (``from_sorted``).
    """
    if not stem:
        return hash(file_name_key(path))
    stem_key = file_stem_key(path)  # never the name key: that one ends with ".md"
    return None if stem_key is None else hash(stem_key)


def _key_hashes(path: str) -> tuple[int, ...]:
    name_key, stem_key = file_keys(path)
    if stem_key is None:
        return (hash(name_key),)
    return (hash(name_key), hash(stem_key))


class FileKeyIndex:
    """hash(key) -> file ids, for every file's ``file_keys``; kept current by the writer."""

    __slots__ = ("_hashes", "_ids")

    def __init__(self, files: Iterable[tuple[int, str]] = ()) -> None:
        self._hashes = array("q")
        self._ids = array("q")
        self._rebuild(files)

    @classmethod
    def from_sorted(cls, rows: Iterable[tuple[int, int]]) -> FileKeyIndex:
        """An index from ``(key hash, file id)`` rows already sorted by hash: no Python
        object per row is held (a sort here would hold every pair at once, about 15 MB)."""
        index = cls()
        for h, file_id in rows:
            index._hashes.append(h)
            index._ids.append(file_id)
        return index

    def __len__(self) -> int:
        return len(self._ids)

    def ids(self, key: str) -> array[int]:
        """Ids of the files filed under ``key`` (and, rarely, of a file whose key collides)."""
        h = hash(key)
        lo = bisect_left(self._hashes, h)
        return self._ids[lo : bisect_right(self._hashes, h, lo)]

    def has(self, key: str) -> bool:
        """Whether some file is filed under ``key`` (or, rarely, under a key whose hash
        collides: ``ids`` and the paths confirm). One binary search: a caller testing a few
        hundred names costs the same in any vault (issue 35)."""
        h = hash(key)
        at = bisect_left(self._hashes, h)
        return at < len(self._hashes) and self._hashes[at] == h

    def add(self, files: Iterable[tuple[int, str]]) -> None:
        """File new ``(id, path)`` rows under their keys."""
        files = list(files)
        if len(files) > REBUILD_AT:
            self._rebuild(files)
            return
        for file_id, path in files:
            for h in _key_hashes(path):
                at = bisect_right(self._hashes, h)
                self._hashes.insert(at, h)
                self._ids.insert(at, file_id)

    def remove(self, file_id: int, path: str) -> None:
        for h in _key_hashes(path):
            at = bisect_left(self._hashes, h)
            while at < len(self._hashes) and self._hashes[at] == h:
                if self._ids[at] == file_id:
                    del self._hashes[at]
                    del self._ids[at]
                    break
                at += 1

    def _rebuild(self, files: Iterable[tuple[int, str]]) -> None:
        """Merge ``files`` into the arrays with one sort of packed (hash, id) integers."""
        packed = [(h + _OFFSET) << 64 | i for h, i in zip(self._hashes, self._ids)]
        packed.extend(
            (h + _OFFSET) << 64 | file_id for file_id, path in files for h in _key_hashes(path)
        )
        packed.sort()
        self._hashes = array("q", ((p >> 64) - _OFFSET for p in packed))
        self._ids = array("q", (p & _LOW for p in packed))


__all__ = ["FileKeyIndex"]
