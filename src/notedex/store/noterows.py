"""What a note's rows need computed from the note alone (``derive``), made in the parse
workers (``indexing.pool.parse_chunk``) beside the note, so the writer's thread, a cold
build's critical path, only adds the file id, resolves the links and inserts.

Issue 12 moved the exact-name keys, the outline and the search texts here; issue 35
(build35b) moved the rest of the rows (``Prepared``: the properties' JSON and rows, the tags,
aliases, problems, tasks and links as tuples, each link's folded linkpath and name key),
which were a third of the writer's own CPU in a cold build at 100k notes. The worker then
drops from the note what only these rows read, as it drops the body: what crosses to the
writer is plain tuples, not a ``Link``, ``Tag`` or ``Task`` object each (unpickled by a call
of its class, in the writer's process)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from notedex.store.outline import encode_outline
from notedex.store.schema import LINK_KINDS, TASK_STATES, content_key, link_text
from notedex.vault.model import Note
from notedex.vault.properties import property_rows
from notedex.vault.resolve import candidate_names, key_crc, name_key
from notedex.vault.text import PARTICLES, fold, load_words, name_keys, segment

_KIND_CODES = {kind: code for code, kind in enumerate(LINK_KINDS)}
# ``json.dumps`` with these options, each encoder made once: ``dumps`` makes one per call
# when given any (issue 35, build35d: once or twice per note in a parse worker).
_PROPERTIES_JSON = json.JSONEncoder(ensure_ascii=False, default=str).encode
_TAGS_JSON = json.JSONEncoder(ensure_ascii=False).encode

FtsTexts = tuple[str, str, str]
"""A note's row of the ``note_fts_text`` view: its title, tags and aliases texts, segmented."""

LinkRow = tuple[Any, ...]
"""A link's ``links`` row without its source and target: (seq, kind, linkpath, subpath,
display, raw or None, line, col, in_comment), then its folded linkpath (what ``Resolver``
looks it up by) and its ``name_key`` (stored while it is unresolved), both None for a
self-link (no linkpath)."""


Probes = tuple[tuple[str, ...], tuple[int, ...]]
"""What the writer probes the index ``files_name_key`` by to resolve a note's links
(``store.links.LinkTargets.load_candidates``): the distinct ``lookup_key`` of its links, and
the ``key_crc`` of each of their ``candidate_names``."""


Prepared = tuple[
    tuple[Any, ...],
    list[tuple[Any, ...]],
    list[tuple[int, str, str, int]],
    list[tuple[int, str, str]],
    list[tuple[str, str, str]],
    list[tuple[Any, ...]],
    list[LinkRow],
    Probes,
]
"""A note's rows without its file id (``prepare``), a plain tuple (what crosses from a worker
is unpickled in the writer's process): the ``notes`` row less its file id, ``excluded`` and
outline (stem, frontmatter_title, first_h1, note_id, type, status, content_hash key,
properties JSON or None); then its ``properties``, ``tags`` (position, spelling, key,
inline), ``aliases`` (position, alias, alias_key), ``problems`` (severity, kind, message),
``tasks`` and links (``LinkRow``) rows; then its links' ``Probes``."""


Derived = tuple[frozenset[str], frozenset[str], "str | None", FtsTexts, Prepared]
"""What the rows of a note need computed from it alone (``derive``): the ``exact_names`` keys
of its titles and of its aliases, its encoded outline, its ``note_fts_texts`` and its other
rows (``prepare``). Parse workers compute it beside the note (``indexing.pool.parse_chunk``),
off the writer's thread: in a cold index the keys alone were a tenth of that thread's time,
its critical path, and the search texts 0.4 s of its end at 100k notes (issue 12, wall)."""


def derive(note: Note) -> Derived:
    """``Derived`` of a parsed note. Pure."""
    return (
        name_keys_of((note.stem, note.frontmatter_title, note.first_h1)),
        name_keys_of(note.aliases),
        encode_outline(note),
        note_fts_texts(note),
        prepare(note),
    )


def prepare(note: Note) -> Prepared:
    """``Prepared`` of a parsed note: its rows as the writer inserts them, less what only the
    index knows (the file id, its exclusion, the links' targets). Pure."""
    properties = note.properties
    links = [_link_row(seq, link) for seq, link in enumerate(note.links)]
    return (
        (
            note.stem,
            note.frontmatter_title,
            note.first_h1,
            note.id,
            note.type,
            note.status,
            content_key(note.content_hash),
            _PROPERTIES_JSON(properties) if properties else None,
        ),
        property_rows(properties) if properties else [],
        [(i, tag.name, tag.key, int(tag.source == "inline")) for i, tag in enumerate(note.tags)],
        [(i, alias, name_key(alias)) for i, alias in enumerate(note.aliases)],
        [
            *(("error", p.kind, p.message) for p in note.errors),
            *(("warning", p.kind, p.message) for p in note.warnings),
        ],
        [_task_row(seq, task) for seq, task in enumerate(note.tasks)],
        links,
        probes(row[9] for row in links if row[9] is not None),
    )


def probes(folded: Iterable[str]) -> Probes:
    """``Probes`` of links by their folded linkpaths (``LinkRow``'s tenth value): hashed in
    the parse workers, not on the writer's thread, a cold build's critical path (issue 35,
    build35d: a fifth of loading a batch's candidates there)."""
    keys = tuple(dict.fromkeys(path.rpartition("/")[2] for path in folded))  # lookup_key
    return keys, tuple({key_crc(name) for key in keys for name in candidate_names(key)})


def _link_row(seq: int, link: Any) -> LinkRow:
    kind = _KIND_CODES[link.kind]
    linkpath = link.linkpath
    usual = link_text(kind, linkpath, link.subpath, link.display)
    return (
        seq,
        kind,
        linkpath,
        link.subpath,
        link.display,
        None if link.raw == usual else link.raw,
        link.line,
        link.column,
        int(link.in_comment),
        fold(linkpath) if linkpath else None,
        name_key(linkpath) if linkpath else None,
    )


def _task_row(seq: int, task: Any) -> tuple[Any, ...]:
    """A ``tasks`` row (SEMANTICS 13) without its file id."""
    return (
        seq,
        task.line,
        task.column,
        task.status,
        TASK_STATES.index(task.state),
        task.text,
        _TAGS_JSON(task.tags) if task.tags else None,
        task.due,
        task.scheduled,
        task.start,
        task.created,
        task.done,
        task.cancelled,
    )


def note_fts_texts(note: Note) -> FtsTexts:
    """The ``note_fts_text`` view's row of ``note`` once written (its ``nx_segment`` of the
    stem, title and first H1, of the tags' spellings and of the aliases, each in order and
    joined by spaces; '' for none), computed from the note: a build aside stages it for the
    end's search rows (``findings.stage_fts_rows``) instead of reading the view for every
    note. A test holds the two equal."""
    title = f"{note.stem} {note.frontmatter_title or ''} {note.first_h1 or ''}"
    tags = " ".join(tag.name for tag in note.tags)
    aliases = " ".join(note.aliases)
    return segment(title), segment(tags) if tags else "", segment(aliases) if aliases else ""


_STOP_LISTS: list[tuple[frozenset[str], frozenset[str]]] = []


def _stop_lists() -> tuple[frozenset[str], frozenset[str]]:
    """The English stop words (the list ``query.terms`` reads) and the hub words, read once."""
    if not _STOP_LISTS:
        stop, hubs = load_words("stopwords-en"), load_words("hubwords-en")
        _STOP_LISTS.append((frozenset(stop), frozenset(hubs)))
    return _STOP_LISTS[0]


def name_keys_of(names: Iterable[str | None]) -> frozenset[str]:
    """The distinct non-empty ``vault.text.name_keys`` of these names: each name's
    ``exact_name_key``, and its keys less stop and hub words (issue 30). Each distinct
    name is keyed once (a first H1 is often the stem: a quarter of the 3k bench vault's
    notes)."""
    stop, hubs = _stop_lists()
    return frozenset(
        key for name in set(names) if name for key in name_keys(name, stop, hubs, PARTICLES)
    )
