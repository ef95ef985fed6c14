"""The files a base evaluates, read from the index (store/bases.py): a row per vault file, its
properties as Bases values, and its tags and links loaded once per run, only when asked for."""

from __future__ import annotations

import datetime as dt

from notedex.query.bases.values import Date, FileValue, Link, parse_date
from notedex.store import bases as store
from notedex.vault.files import _json_loads  # json's C scanner: no `json`, no `re`
from notedex.vault.properties import TEXT, declared_value, fold_name

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any


def property_value(
    value: Any, resolver: Callable[[str], str | None] | None = None, shaped: bool = True
) -> Any:
    """A frontmatter value as Bases sees it: a date text is a date (unless ``shaped`` is
    false: a property the vault declares as text), ``[[x]]`` a link (resolved by ``resolver``
    when its target is first asked for)."""
    if isinstance(value, str):
        if shaped and len(value) >= 10 and value[:4].isdigit() and value[4] == "-":
            date = parse_date(value)
            if date is not None:
                return date
        if value.startswith("[[") and value.endswith("]]") and "]]" not in value[2:-2]:
            target, _, display = value[2:-2].partition("|")
            target = target.split("#", 1)[0]
            return Link(target, display or None, resolver=resolver)
        return value
    if isinstance(value, list):
        return [property_value(item, resolver, shaped) for item in value]
    if isinstance(value, dict):
        return {key: property_value(item, resolver, shaped) for key, item in value.items()}
    return value


def typed_properties(
    raw: dict[str, Any], declared: Mapping[str, str], resolver: Callable[[str], str | None]
) -> dict[str, Any]:
    """A note's properties as Bases values, each read first as the vault's
    ``.obsidian/types.json`` declares its type (SEMANTICS 14.4, the note filter's rule:
    ``vault.properties.declared_value``), then by its shape."""
    if not declared:
        return property_value(raw, resolver)
    typed = {}
    for key, value in raw.items():
        kind = declared.get(fold_name(key))
        typed[key] = property_value(declared_value(value, kind), resolver, kind != TEXT)
    return typed


def _local(ns: int) -> Date:
    """A file time (ns since the epoch) as a local date and time, to the second."""
    return Date(dt.datetime.fromtimestamp(ns / 1e9).replace(microsecond=0))


class FileRow:
    __slots__ = (
        "_props",
        "_raw",
        "ctime_ns",
        "id",
        "is_note",
        "mtime_ns",
        "path",
        "size",
        "vault",
    )

    def __init__(self, row: sqlite3.Row, vault: Vault) -> None:
        self.id = row["id"]
        self.path = row["path"]
        self.size = row["size"]
        self.mtime_ns = row["mtime_ns"]
        self.ctime_ns = row["ctime_ns"]
        self.is_note = bool(row["is_note"])
        self._raw = row["properties"]
        self._props: dict[str, Any] | None = None
        self.vault = vault

    def properties(self) -> dict[str, Any]:
        if self._props is None:
            raw = _json_loads(self._raw) if self._raw else {}
            if isinstance(raw, dict):
                self._props = typed_properties(raw, self.vault.declared, self._resolve)
            else:
                self._props = {}
        return self._props

    def _resolve(self, text: str) -> str | None:
        return self.vault.resolve_from(self.id, text)

    def property(self, name: str) -> Any:
        props = self.properties()
        if name in props:
            return props[name]
        folded = name.lower()  # Obsidian's property names are case-insensitive
        for key, value in props.items():
            if key.lower() == folded:
                return value
        return None

    def mtime(self) -> Date:
        return _local(self.mtime_ns)

    def ctime(self) -> Date:
        """SEMANTICS 14.7's creation time, the one ``--created-since`` reads: ``st_ctime``."""
        return _local(self.ctime_ns)

    def tags(self) -> list[str]:
        return [tag.lstrip("#") for tag, _key in self.vault.tags_of(self.id)]

    def tag_keys(self) -> list[str]:
        return [key.lstrip("#") for _tag, key in self.vault.tags_of(self.id)]

    def links(self) -> list[Link]:
        return self.vault.links()[0].get(self.id, [])

    def embeds(self) -> list[Link]:
        return self.vault.links()[1].get(self.id, [])

    def backlinks(self) -> list[Link]:
        return self.vault.links()[2].get(self.path, [])


class Vault:
    """Every row of one run, by path and by name, and the tables read on demand."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        rows: Sequence[sqlite3.Row],
        declared: Mapping[str, str] | None = None,
    ) -> None:
        self.conn = conn
        self.declared = declared or {}
        """The vault's declared property types (``vault.properties.declared_types``)."""
        self.rows = [FileRow(row, self) for row in rows]
        self.by_path = {row.path: row for row in self.rows}
        self._all: dict[str, FileRow] | None = None
        self._by_name: dict[str, list[str]] | None = None
        self._tags: dict[int, list[tuple[str, str]]] | None = None
        self._tag_ids: set[int] = set()
        self._frontmatter: dict[tuple[int, str], str | None] | None = None
        self._links: tuple[dict[int, list[Link]], ...] | None = None

    def _every_file(self) -> dict[str, FileRow]:
        """All files, not only the narrowed rows: a link may point out of them."""
        if self._all is None:
            self._all = {row["path"]: FileRow(row, self) for row in store.file_rows(self.conn)}
            self._all.update(self.by_path)
        return self._all

    def _row(self, path: str) -> FileRow | None:
        """The file at ``path``: a row of this run, else read alone (no full read for it)."""
        if self._all is not None:
            return self._all.get(path)
        row = self.by_path.get(path)
        if row is None:
            found = store.file_row(self.conn, path)
            if found is not None:
                row = self.by_path[path] = FileRow(found, self)
        return row

    def resolve(self, text: str) -> str | None:
        """The vault path a link text names: a path, a path without .md, or a file name."""
        text = text.strip().lstrip("/")
        for candidate in (text, text + ".md"):
            if self._row(candidate) is not None:
                return candidate
        if self._by_name is None:
            self._by_name = {}
            for path in sorted(self._every_file(), key=lambda p: (p.count("/"), p)):
                name = path.rsplit("/", 1)[-1]
                stem = name[:-3] if name.endswith(".md") else name
                self._by_name.setdefault(stem.lower(), []).append(path)
                self._by_name.setdefault(name.lower(), []).append(path)
        found = self._by_name.get(text.lower())
        return found[0] if found else None

    def resolve_from(self, source_id: int, text: str) -> str | None:
        """A property link's target: as the index resolved that note's frontmatter link
        (SEMANTICS 7), else by name (a link the index did not record)."""
        if self._frontmatter is None:
            self._frontmatter = {
                (source, linkpath): target
                for source, linkpath, target in store.frontmatter_links(self.conn)
            }
        key = (source_id, text)
        if key in self._frontmatter:
            return self._frontmatter[key]
        return self.resolve(text)

    def link_to(self, text: str, display: str | None) -> Link:
        path = self.resolve(text)
        return Link(path, display, resolved=True) if path else Link(text, display)

    def file_of(self, text: str) -> FileValue | None:
        path = self.resolve(text)
        row = None if path is None else self._row(path)
        return None if row is None else FileValue(row)

    def targets_of(self, other: Any) -> set[str]:
        if isinstance(other, FileValue):
            return {other.row.path}
        if isinstance(other, Link):
            return {other.path}
        if isinstance(other, str):
            path = self.resolve(other)
            return {path} if path else set()
        return set()

    def tags_of(self, file_id: int) -> list[tuple[str, str]]:
        """A file's tags: the run's rows' read at once (narrowed in SQL), any other alone."""
        if self._tags is None:
            self._tag_ids = {row.id for row in self.by_path.values()}
            self._tags = store.tags_of_files(self.conn, sorted(self._tag_ids))
        if file_id not in self._tag_ids:
            self._tag_ids.add(file_id)
            self._tags.update(store.tags_of_files(self.conn, [file_id]))
        return self._tags.get(file_id, [])

    def links(self) -> tuple[dict[Any, list[Link]], ...]:
        if self._links is None:
            links: dict[Any, list[Link]] = {}
            embeds: dict[Any, list[Link]] = {}
            back: dict[Any, list[Link]] = {}
            linked: set[tuple[str, int]] = set()
            for source, path, target, linkpath, embed in store.links_of_files(self.conn):
                link = Link(target, resolved=True) if target else Link(linkpath)
                (embeds if embed else links).setdefault(source, []).append(link)
                if target and (target, source) not in linked:
                    linked.add((target, source))  # a file is a backlink once
                    back.setdefault(target, []).append(Link(path, resolved=True))
            self._links = (links, embeds, back)
        return self._links
