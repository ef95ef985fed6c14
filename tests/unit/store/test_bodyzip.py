"""store.bodyzip: body_store's streams share one preset dictionary of the vault's own text
(issue 35, size), every body reads back as it was indexed, and rows written before the
dictionary existed still read and delete right."""

from __future__ import annotations

import random
import sqlite3
import zlib
from pathlib import Path

from notedex.store import bodyzip
from notedex.store.database import add_sql_functions
from notedex.vault.text import segment
from tests.helpers import dump_index, fresh_full_index, fts_integrity_ok, run_inprocess, write

WORDS = (
    "the index keeps every note of the vault fresh while the daemon watches for saves and "
    "search finds words in bodies titles tags aliases links headings blocks tasks 框架 相關"
).split()


def _body(rng: random.Random, words: int) -> str:
    lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(words // 12)]
    return "\n".join(lines) + "\n"


def _index(vault: Path, db: Path) -> None:
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr


def _streams(db: Path) -> list[tuple[int, bytes, str]]:
    """Every body_store row: file id, stream and text as nx_inflate reads it, in a connection
    of its own (which reads the dictionary from the file)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    add_sql_functions(conn)
    try:
        return conn.execute(
            "SELECT s.file_id, s.z, t.body FROM body_store s JOIN body_text t USING (file_id)"
        ).fetchall()
    finally:
        conn.close()


def _uses_dictionary(stream: bytes) -> bool:
    return bool(stream[1] & 0x20)


def test_bodies_share_the_vaults_dictionary(tmp_path: Path) -> None:
    rng = random.Random(7)
    vault = tmp_path / "vault"
    bodies = {f"n{i:03}.md": _body(rng, 300) for i in range(80)}
    for name, body in bodies.items():
        write(vault / name, body)
    db = tmp_path / "index.db"
    _index(vault, db)

    conn = sqlite3.connect(db)
    (dict_rows,) = conn.execute("SELECT count(*) FROM body_dict").fetchone()
    ((adler, zdict),) = conn.execute("SELECT adler, d FROM body_dict").fetchall()
    paths = dict(conn.execute("SELECT id, path FROM files"))
    conn.close()
    assert dict_rows == 1 and len(zdict) == bodyzip.DICT_SIZE
    assert zlib.adler32(zdict) == adler

    streams = _streams(db)
    assert len(streams) == len(bodies)
    for file_id, stream, text in streams:
        assert _uses_dictionary(stream)
        assert int.from_bytes(stream[2:6], "big") == adler
        assert text == segment(bodies[paths[file_id]])
    # Smaller than each body compressed alone, as before (schema 26), by more than a fifth.
    stored = sum(len(stream) for _, stream, _ in streams)
    alone = sum(len(zlib.compress(text.encode(), bodyzip.LEVEL)) for _, _, text in streams)
    assert stored < alone * 4 / 5


def test_rows_from_before_the_dictionary_still_read_and_change(tmp_path: Path) -> None:
    rng = random.Random(11)
    vault = tmp_path / "vault"
    write(vault / "small a.md", "a small note about the daemon\n")
    write(vault / "small b.md", "another small note 框架相關\n")
    db = tmp_path / "index.db"
    _index(vault, db)
    assert not any(_uses_dictionary(stream) for _, stream, _ in _streams(db))

    for i in range(60):  # a batch with text enough for a dictionary
        write(vault / f"big {i:02}.md", _body(rng, 250))
    _index(vault, db)
    kinds = {_uses_dictionary(stream) for _, stream, _ in _streams(db)}
    assert kinds == {False, True}

    # Each kind of row is read back by FTS5 to delete it: an edit, a deletion.
    write(vault / "small a.md", "the small note changed: tasks and headings\n")
    (vault / "small b.md").unlink()
    write(vault / "big 03.md", "a big note made small\n")
    (vault / "big 04.md").unlink()
    _index(vault, db)
    assert fts_integrity_ok(db)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
    result = run_inprocess("search", "changed", "--vault", vault, "--db", db, "--paths")
    assert result.stdout.split("\n")[:1] == ["small a.md"]


def test_the_writer_that_made_the_dictionary_reads_with_it(tmp_path: Path) -> None:
    """One writer connection makes the dictionary, then deletes rows compressed with it (the
    daemon's first index, then a save): its nx_inflate reads the dictionary it just stored."""
    from notedex.indexing.reconcile import reconcile
    from notedex.store.writer import IndexWriter

    rng = random.Random(3)
    vault = tmp_path / "vault"
    for i in range(60):
        write(vault / f"n{i:02}.md", _body(rng, 250))
    db = tmp_path / "index.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        write(vault / "n07.md", "rewritten to a few words\n")
        (vault / "n08.md").unlink()
        reconcile(writer)
    assert all(_uses_dictionary(stream) for _, stream, _ in _streams(db))
    assert fts_integrity_ok(db)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
