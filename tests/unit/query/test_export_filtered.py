"""A filtered `export` reads the kept notes' rows, tags and links only (issue 32) and writes, for
each kept note, the record the whole export writes for it, byte for byte, for every kind of
filter (and with --changed-since)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from notedex.query.export import export_connector
from notedex.query.filters import NoteFilter, parse_where
from notedex.query.stream import Document
from notedex.store import read
from notedex.store.connect import connect_readonly
from tests.helpers import cli_json, write

NOW = dt.datetime(2026, 3, 10, 15, 4, 5, tzinfo=dt.UTC)
NOTES = {
    "A/one.md": "---\nstatus: draft\ntype: Method\ntags: [p, q]\n---\n#inline [[two]] [[Nope]]\n",
    "A/two.md": "---\nstatus: done\n---\n#p #p/sub see [[one]] and [[#Self]]\n",
    "A/sub/three.md": "---\nstatus: draft\n---\nno tags, [[B/four]] ![[pic.png]]\n",
    "B/four.md": "---\nstatus: draft\ntags: [z]\n---\n[[A/one]] [[A/one]]\n",
    "B/five.md": "#p plain [[three]]\n",
    "Hidden/six.md": "---\nstatus: draft\ntags: [p]\n---\n[[one]]\n",
    "top.md": "---\nstatus: Draft\ntags: [p]\n---\n[[five]]\n",
}
FILTERS = [
    NoteFilter(where=(parse_where("status=draft"),)),
    NoteFilter(folders=("A",), where=(parse_where("status=draft"),)),
    NoteFilter(folders=("B", "A/sub")),
    NoteFilter(tags=("p",)),
    NoteFilter(where=(parse_where("!status"),)),
    NoteFilter(folders=("Nowhere",)),
    NoteFilter(tags=("p",), sort="title", reverse=True),  # an export is by path whatever the sort
    NoteFilter(note_type="method"),
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("exportfilter")
    vault, db = root / "vault", root / "index.db"
    write(vault / ".obsidian" / "app.json", '{"userIgnoreFilters": ["Hidden/"]}')
    for rel, text in NOTES.items():
        write(vault / rel, text)
    write(vault / "A" / "pic.png", "not a note")
    cli_json(vault, db, "status")  # builds the index
    return vault, db


def _export(vault: Path, db: Path, nf: NoteFilter | None, **options: Any) -> dict[str, Any]:
    conn = connect_readonly(db)
    try:
        parts: list[str] = []
        doc = Document(parts.append)
        export_connector(conn, doc, vault, nf=nf, now=NOW, **options)
        doc.flush()
        kept = None if nf is None else [r["path"] for r in read.notes(conn, nf)]
    finally:
        conn.close()
    answer: dict[str, Any] = json.loads("".join(parts))
    answer["kept"] = kept
    return answer


@pytest.mark.parametrize("nf", FILTERS, ids=repr)
@pytest.mark.parametrize("since", [None, dt.datetime(2000, 1, 1, tzinfo=dt.UTC)])
def test_a_filtered_export_is_the_whole_exports_kept_records(
    db: tuple[Path, Path], nf: NoteFilter, since: dt.datetime | None
) -> None:
    vault, path = db
    whole = _export(vault, path, None, changed_since=since)
    filtered = _export(vault, path, nf, changed_since=since)
    kept = set(filtered.pop("kept"))
    whole.pop("kept")
    expected = [r for r in whole["records"] if r["sourceMetadata"]["relativePath"] in kept]
    assert filtered["records"] == expected
    assert {k: v for k, v in filtered.items() if k != "records"} == {
        k: v for k, v in whole.items() if k != "records"
    }
    # The records carry what the merge reads: tags, links and folder labels of their own note.
    if nf == FILTERS[1]:
        record = filtered["records"][0]
        assert [r["id"] for r in filtered["records"]] == [
            "obsidian:A/one.md",
            "obsidian:A/sub/three.md",
        ]
        assert record["tags"] == ["p", "q", "inline", "link:A/two.md", "link:Nope", "folder:A"]
