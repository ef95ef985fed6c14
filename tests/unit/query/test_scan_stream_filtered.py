"""A filtered scan streamed (query.stream_scan.scan_json) reads the tags and aliases of the notes
the filter keeps only (issue 32), merged by path in path order or by id in another, and writes the
document ``query.listing.scan`` answers, byte for byte, for every kind of filter and order."""

from __future__ import annotations

from pathlib import Path

import pytest

from notedex.query.filters import NoteFilter, parse_where
from notedex.query.listing import scan
from notedex.query.output import compact_json
from notedex.query.stream import Document
from notedex.query.stream_scan import scan_json
from notedex.store import listing_rows
from notedex.store.connect import connect_readonly
from tests.indexcheck import indexed_vault

NOTES = {
    "A/one.md": "---\nstatus: draft\ntype: Method\naliases: [Uno, First]\ntags: [p, q]\n---\n#inline\n",
    "A/two.md": "---\nstatus: done\naliases: [Dos]\n---\n#p #p/sub\n",
    "A/sub/three.md": "---\nstatus: draft\n---\nno tags\n",
    "B/four.md": "---\nstatus: draft\naliases: [Cuatro]\ntags: [z]\n---\n",
    "B/five.md": "#p plain\n",
    "Hidden/six.md": "---\nstatus: draft\naliases: [Seis]\ntags: [p]\n---\n",
    "top.md": "---\nstatus: Draft\ntags: [p]\n---\n",
}
FILTERS = [
    NoteFilter(where=(parse_where("status=draft"),)),
    NoteFilter(folders=("A",), where=(parse_where("status=draft"),)),
    NoteFilter(folders=("B", "A/sub")),
    NoteFilter(tags=("p",)),
    NoteFilter(where=(parse_where("!status"),)),
    NoteFilter(folders=("Nowhere",)),
    NoteFilter(where=(parse_where("status=draft"),), sort="title"),
    NoteFilter(folders=("A", "B"), sort="status", reverse=True),
    NoteFilter(tags=("p",), sort="path", reverse=True),
    NoteFilter(note_type="method"),  # a SQL function, registered once for three queries
    NoteFilter(note_type="method", sort="title"),
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_vault(
        tmp_path_factory, "scanstream", NOTES, '{"userIgnoreFilters": ["Hidden/"]}'
    )


@pytest.mark.parametrize("nf", FILTERS, ids=repr)
def test_the_streamed_filtered_scan_is_the_whole_answer(db: Path, nf: NoteFilter) -> None:
    conn = connect_readonly(db)
    try:
        whole = compact_json(scan(conn, nf))
        parts: list[str] = []
        doc = Document(parts.append)
        scan_json(conn, doc, nf)
        doc.flush()
    finally:
        conn.close()
    assert "".join(parts) == whole


def test_only_the_kept_notes_names_are_read(db: Path) -> None:
    nf = NoteFilter(folders=("A",), where=(parse_where("status=draft"),))
    conn = connect_readonly(db)
    try:
        tags = listing_rows.names_in_path_order(conn, "tags", nf).fetchall()
        aliases = listing_rows.names_in_path_order(conn, "aliases", nf).fetchall()
        every = listing_rows.names_in_path_order(conn, "tags").fetchall()
    finally:
        conn.close()
    assert [tuple(r) for r in tags] == [
        ("A/one.md", "p"),
        ("A/one.md", "q"),
        ("A/one.md", "inline"),
    ]
    assert [tuple(r) for r in aliases] == [("A/one.md", "Uno"), ("A/one.md", "First")]
    assert len(every) > len(tags)  # without a filter: every file's
