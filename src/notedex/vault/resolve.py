"""Link resolution (SEMANTICS 7): a linkpath written in a source note -> a vault file.

Pure functions over the set of vault paths (notes and attachments); no I/O. The ``Resolver``
builds two lookup maps once, so one ``resolve`` is a couple of dict look-ups and, only for an
ambiguous name, a sort of that name's few candidates.

Name lookup and the ``+ ".md"`` retry (7.2) are done on the *name without ``.md``* for notes:
``[[X]]`` finds the files whose ``fold(stem) == fold("X")``. Appending ``.md`` before folding
would give a different key for a Greek capital sigma at the end of the name (``str.lower()``
turns a final ``Σ`` into ``ς`` but ``Σ.md`` into ``σ.md``), so ``[[ΛΌΓΟΣ]]`` would miss
``Λόγος.md``. The same keys drive ``affected_name_keys``, which keeps that contract exact.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import NamedTuple

from notedex.vault.files import is_note_name
from notedex.vault.text import fold, nfc

__all__ = [
    "Resolution",
    "Resolver",
    "affected_name_keys",
    "broken_key",
    "candidate_names",
    "file_keys",
    "file_name_key",
    "file_stem_key",
    "lookup_key",
    "name_key",
]


class Resolution(NamedTuple):
    """Where a link lands."""

    target: str | None
    """The vault path as given to the ``Resolver`` (NFC, original case), or None: unresolved."""
    ambiguous: bool
    """True when the tie-break of SEMANTICS 7.7 chose among several matching files (a warning)."""


_UNRESOLVED = Resolution(None, False)


def _last_segment(path: str) -> str:
    return path.rpartition("/")[2]


def _note_stem(name: str) -> str | None:
    """``Foo.MD`` -> ``Foo``; None when the name is not a note name (SEMANTICS 1)."""
    return name[:-3] if is_note_name(name) else None


def _has_extension(name: str) -> bool:
    """``pic.png``, ``v1.2``: a dot that is neither the first nor the last character."""
    dot = name.rfind(".")
    return 0 < dot < len(name) - 1


def broken_key(linkpath: str) -> str:
    """The key of an unresolved link: linkpath without a trailing ``.md``, case kept (SEMANTICS 7).

    ``Foo`` and ``foo`` are two keys; ``Foo.md`` and ``Foo.MD`` are both ``Foo``. A linkpath
    that is only ``.md`` (or ends in ``/.md``) keeps its suffix rather than becoming empty.
    """
    linkpath = nfc(linkpath)
    stem = _note_stem(linkpath)
    if stem is None or stem == "" or stem.endswith("/"):
        return linkpath
    return stem


def name_key(linkpath: str) -> str:
    """What a link stores so it can be found again when files appear or go: fold(last segment)."""
    return fold(_last_segment(linkpath))


def affected_name_keys(path: str) -> tuple[str, ...]:
    """The ``name_key`` of every link whose resolution may change when ``path`` appears or goes.

    ``x/Foo.md`` -> ``("foo.md", "foo")``; ``img/pic.png`` -> ``("pic.png",)``. These are
    exactly the keys ``Resolver`` looks candidates up by (SEMANTICS 7.2), so a link with
    another ``name_key`` can never have this file as a candidate.
    """
    name_key_, stem_key = file_keys(path)
    if stem_key is None or stem_key == name_key_:
        return (name_key_,)
    return (name_key_, stem_key)


def file_keys(path: str) -> tuple[str, str | None]:
    """The keys a file is filed under: fold(file name), and for a note fold(name without .md).

    A ``Resolver`` that holds only the files filed under ``lookup_key(linkpath)`` resolves
    that linkpath exactly as one that holds the whole vault.
    """
    return file_name_key(path), file_stem_key(path)


def file_name_key(path: str) -> str:
    """``file_keys(path)[0]``: fold(file name)."""
    return fold(_last_segment(path))


def key_crc(key: str) -> int:
    """A stable 32-bit hash of a name key (the same in every process, unlike ``hash``): the
    index files_name_key holds it, a few bytes a file, not the folded name (issue 35's size)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass"))


def file_name_crc(path: str) -> int:
    """``key_crc(file_name_key(path))``: what the index files_name_key files a path under."""
    return key_crc(file_name_key(path))


def file_stem_key(path: str) -> str | None:
    """``file_keys(path)[1]``: fold(name without .md) for a note, else None."""
    stem = _note_stem(_last_segment(path))
    return fold(stem) if stem is not None else None


def lookup_key(linkpath: str) -> str:
    """The one key ``Resolver.resolve`` looks ``linkpath``'s candidates up by (SEMANTICS 7.2)."""
    return _last_segment(fold(linkpath))


def candidate_names(key: str) -> tuple[str, ...]:
    """The folded file names whose files a ``Resolver`` may answer a ``lookup_key`` of ``key``
    with: the notes named ``key`` + ``.md`` (their stem key is ``key``: the 7.2 retry), and,
    only when ``key`` has an extension, the files named ``key`` (``resolve`` looks a key
    without one up by stem alone: a file named ``key`` is never its candidate)."""
    return (key + ".md", key) if _has_extension(key) else (key + ".md",)


# A bucket is the one path with that name (the common case), or a tuple of several. A plain
# string instead of a dict per name keeps a 100k-file vault's maps at a third of the memory
# the daemon would otherwise hold for its whole life.
Bucket = str | tuple[str, ...]


def _add_to(index: dict[str, Bucket], key: str, path: str) -> None:
    bucket = index.get(key)
    if bucket is None:
        index[key] = path
    elif isinstance(bucket, str):
        if bucket != path:
            index[key] = (bucket, path)
    elif path not in bucket:
        index[key] = (*bucket, path)


def _remove_from(index: dict[str, Bucket], key: str, path: str) -> None:
    bucket = index.get(key)
    if bucket is None:
        return
    if isinstance(bucket, str):
        if bucket == path:
            del index[key]
        return
    rest = tuple(p for p in bucket if p != path)
    index[key] = rest[0] if len(rest) == 1 else rest


def _paths(bucket: Bucket) -> tuple[str, ...]:
    return (bucket,) if isinstance(bucket, str) else bucket


def _first(paths: list[str], source_folder: str | None) -> Resolution:
    """Pick one of several matching files (SEMANTICS 7.7), deterministically.

    Files inside the source note's folder (subfolders included) first, then by shortest path,
    then by code-point order so the answer never depends on the order files were listed in.
    """
    if len(paths) == 1:
        return Resolution(paths[0], False)
    if source_folder is None:
        best = min(paths, key=lambda p: (len(p), p))
    else:
        prefix = f"{source_folder}/" if source_folder else ""
        best = min(paths, key=lambda p: (not p.startswith(prefix), len(p), p))
    return Resolution(best, True)


def _join_relative(source_folder: str, linkkey: str) -> str | None:
    """``./x`` and ``../x`` against the source folder (both folded); None above the vault root."""
    parts = source_folder.split("/") if source_folder else []
    for segment in linkkey.split("/"):
        if segment == ".":
            continue
        if segment == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(segment)
    return "/".join(parts)


class Resolver:
    """SEMANTICS 7 over a set of vault paths; ``add``/``remove`` keep it current in O(1).

    Paths are vault-relative, ``/``-separated and NFC, as the walker produces them; they are
    returned exactly as given. Aliases never take part (7.8): this class never sees them.
    """

    __slots__ = ("_by_name", "_by_stem")

    def __init__(self, paths: Iterable[str] = ()) -> None:
        # fold(file name) -> path(s): lookups of a linkpath that has an extension.
        self._by_name: dict[str, Bucket] = {}
        # fold(name without .md) -> note path(s): the ".md" retry of 7.2, compared without the
        # suffix on both sides (see the module docstring).
        self._by_stem: dict[str, Bucket] = {}
        for path in paths:
            self.add(path)

    def copy(self) -> Resolver:
        """Another resolver over the same paths, to change apart (buckets are immutable: the
        maps are copied, not the paths)."""
        other = Resolver()
        other._by_name, other._by_stem = dict(self._by_name), dict(self._by_stem)
        return other

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        bucket = self._by_name.get(fold(_last_segment(path)))
        return bucket is not None and path in _paths(bucket)

    def add(self, path: str, keys: tuple[str, str | None] | None = None) -> None:
        """File ``path`` under its ``file_keys`` (``keys``, when the caller has them)."""
        name_key_, stem_key = file_keys(path) if keys is None else keys
        _add_to(self._by_name, name_key_, path)
        if stem_key is not None:
            _add_to(self._by_stem, stem_key, path)

    def remove(self, path: str) -> None:
        name_key_, stem_key = file_keys(path)
        _remove_from(self._by_name, name_key_, path)
        if stem_key is not None:
            _remove_from(self._by_stem, stem_key, path)

    def resolve(self, linkpath: str, source: str, folded: str | None = None) -> Resolution:
        """The file ``linkpath`` points to when written in the note ``source`` (SEMANTICS 7).
        ``folded``: ``fold(linkpath)``, when the caller has it (a parse worker folded it)."""
        if not linkpath:
            return Resolution(source, False)  # 7.1: [[#Heading]] points at its own note
        key = fold(linkpath) if folded is None else folded
        last = _last_segment(key)  # lookup_key(linkpath)
        bucket: Bucket | None = None
        by_stem = False
        if _has_extension(last):
            bucket = self._by_name.get(last)
        if bucket is None:
            # 7.2: no extension, or the extension found nothing ([[v1.2]] -> v1.2.md).
            bucket = self._by_stem.get(last)
            by_stem = True
        if bucket is None:
            return _UNRESOLVED  # 7.3
        if "/" not in key:
            if isinstance(bucket, str):
                return Resolution(bucket, False)  # 7.4: unique name, anywhere
            return self._closest(key, bucket, by_stem, source)
        candidates = _paths(bucket)
        if key.startswith(("./", "../")):
            # 7.5: relative to the source note's folder, exact path only.
            wanted = _join_relative(fold(source.rpartition("/")[0]), key)
            if wanted is None:
                return _UNRESOLVED
            return self._exact(wanted, candidates, by_stem)
        absolute = key.startswith("/")
        exact = self._exact(key[1:] if absolute else key, candidates, by_stem)  # 7.6
        if exact.target is not None or absolute:
            return exact
        return self._closest(key, candidates, by_stem, source)

    @staticmethod
    def _compare_key(path: str, by_stem: bool) -> str:
        return fold(path[:-3] if by_stem else path)

    @classmethod
    def _exact(cls, wanted: str, candidates: tuple[str, ...], by_stem: bool) -> Resolution:
        matches = [path for path in candidates if cls._compare_key(path, by_stem) == wanted]
        if not matches:
            return _UNRESOLVED
        # Several only when paths differ just by case (a case-sensitive file system).
        return _first(matches, None)

    @classmethod
    def _closest(
        cls, key: str, candidates: tuple[str, ...], by_stem: bool, source: str
    ) -> Resolution:
        # 7.7: "the candidates whose lower-cased path ends with the linkpath", a plain string
        # suffix as the spec words it ([[ub/Note]] finds sub/Note.md; [[wrong/Note]] misses).
        matches = [path for path in candidates if cls._compare_key(path, by_stem).endswith(key)]
        if not matches:
            return _UNRESOLVED
        return _first(matches, source.rpartition("/")[0])
