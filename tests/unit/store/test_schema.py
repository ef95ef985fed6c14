"""store/schema.py: the tables a note becomes, and the FTS tokenizing (CJK bigrams, stemmed Latin words)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from notedex.store.database import add_sql_functions
from notedex.store.schema import LINK_KIND, LINK_TEXT, NOTE_TITLE, SCHEMA_VERSION, content_key
from notedex.vault.text import fts_phrase
from tests.indexcheck import fts_sound_after, make_vault
from tests.unit.store import build

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def test_tables_hold_notes_tags_aliases_links_attachments_problems_meta(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            "Hub.md": "---\ntitle: The Hub\nid: h1\ntype: map\nstatus: live\ntags: [Top/Sub]\naliases: [Center]\n---\n"
            "# Heading one\n\nSee [[Leaf|the leaf]] and ![[img/pic.png]]\n[[Missing.md]] #inline\n",
            "Leaf.md": "body text\n",
            "img/pic.png": b"\x89PNG\r\n",
            "bad.md": "---\n[: x\n---\n",
        },
    )
    db = tmp_path / "i.db"
    build(vault, db)
    conn = sqlite3.connect(db)
    add_sql_functions(conn)  # note_fts's content is a view over the tables
    conn.row_factory = sqlite3.Row
    try:
        files = {r["path"]: r for r in conn.execute("SELECT * FROM files")}
        assert set(files) == {"Hub.md", "Leaf.md", "img/pic.png", "bad.md"}
        assert files["img/pic.png"]["is_note"] == 0 and files["Hub.md"]["is_note"] == 1
        for path, row in files.items():
            st = (vault / path).stat()
            assert (row["size"], row["mtime_ns"], row["inode"]) == (
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
            )
        hub = conn.execute(
            f"SELECT n.*, {NOTE_TITLE} AS title FROM notes n WHERE file_id = ?",
            (files["Hub.md"]["id"],),
        ).fetchone()
        assert (hub["stem"], hub["title"], hub["frontmatter_title"], hub["first_h1"]) == (
            "Hub",
            "The Hub",
            "The Hub",
            "Heading one",
        )
        assert (hub["note_id"], hub["type"], hub["status"]) == ("h1", "map", "live")
        hub_bytes = (vault / "Hub.md").read_bytes()
        assert hub["content_hash"] == content_key(hashlib.sha256(hub_bytes).hexdigest())
        tags = conn.execute(
            "SELECT k.tag, k.tag_key, t.inline FROM tags t JOIN tag_names k ON k.id = t.tag_id "
            "WHERE t.file_id = ? ORDER BY t.position",
            (hub["file_id"],),
        )
        assert [tuple(r) for r in tags] == [("Top/Sub", "top/sub", 0), ("inline", "inline", 1)]
        assert [r[0] for r in conn.execute("SELECT alias FROM aliases")] == ["Center"]
        links = conn.execute(
            f"SELECT {LINK_KIND}, {LINK_TEXT}, l.linkpath, l.display, l.line, l.col, t.path AS target "
            "FROM links l LEFT JOIN files t ON t.id = l.target_id ORDER BY l.line, l.col"
        ).fetchall()
        assert [tuple(r) for r in links] == [
            ("wikilink", "[[Leaf|the leaf]]", "Leaf", "the leaf", 11, 5, "Leaf.md"),
            ("embed", "![[img/pic.png]]", "img/pic.png", None, 11, 27, "img/pic.png"),
            ("wikilink", "[[Missing.md]]", "Missing.md", None, 12, 1, None),
        ]
        [problem] = conn.execute("SELECT path, severity FROM problems").fetchall()
        assert tuple(problem) == ("bad.md", "error")
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert meta["schema_version"] == str(SCHEMA_VERSION) and "last_indexed" in meta
        fts = conn.execute(
            "SELECT title, tags, aliases FROM note_fts WHERE rowid = ?", (hub["file_id"],)
        ).fetchone()
        assert "Hub" in fts["title"] and "The Hub" in fts["title"] and "Heading one" in fts["title"]
        assert "Top/Sub" in fts["tags"] and "Center" in fts["aliases"]
        # Link texts live apart (link_fts), so they never lengthen the BM25 row of note_fts.
        unresolved = conn.execute(
            "SELECT unresolved FROM link_fts WHERE rowid = ?", (hub["file_id"],)
        ).fetchone()[0]
        assert "Missing.md" in unresolved
        leaf_anchors = conn.execute(
            "SELECT anchors FROM link_fts WHERE rowid = ?", (files["Leaf.md"]["id"],)
        ).fetchone()[0]
        assert "the leaf" in leaf_anchors  # the text other notes use for Leaf
        body = conn.execute(
            "SELECT body FROM body_fts WHERE rowid = ?", (files["Leaf.md"]["id"],)
        ).fetchone()
        assert body[0].strip() == "body text"
    finally:
        conn.close()


def _fts_paths(db: Path, table: str, column: str, term: str) -> set[str]:
    expression = fts_phrase(term)
    assert expression is not None
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            f"SELECT f.path FROM {table} x JOIN files f ON f.id = x.rowid WHERE {table} MATCH ?",
            (f"{{{column}}} : {expression}" if column else expression,),
        ).fetchall()
    finally:
        conn.close()
    return {r[0] for r in rows}


def test_fts_segments_cjk_and_stems_latin(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            "Cobra CLI 框架.md": "",
            "重跑gen-itgc后.md": "",
            "Internal links.md": "---\naliases: [知識管理系統]\n---\n",
            "日.md": "",
            "body.md": "今天研究了命令列框架的設計\n",
        },
    )
    db = tmp_path / "i.db"
    build(vault, db)
    assert _fts_paths(db, "note_fts", "title", "框架") == {"Cobra CLI 框架.md"}
    assert _fts_paths(db, "note_fts", "title", "cli") == {"Cobra CLI 框架.md"}
    assert _fts_paths(db, "note_fts", "title", "itgc") == {"重跑gen-itgc后.md"}
    assert _fts_paths(db, "note_fts", "title", "重跑") == {"重跑gen-itgc后.md"}
    assert _fts_paths(db, "note_fts", "title", "后") == {"重跑gen-itgc后.md"}
    assert _fts_paths(db, "note_fts", "title", "link") == {"Internal links.md"}  # porter
    assert _fts_paths(db, "note_fts", "aliases", "管理") == {"Internal links.md"}
    assert _fts_paths(db, "note_fts", "title", "日") == {"日.md"}
    assert _fts_paths(db, "body_fts", "", "框架") == {"body.md"}
    assert _fts_paths(db, "body_fts", "", "框架設計") == set()  # not adjacent in the body
    assert _fts_paths(db, "body_fts", "", "命令列") == {"body.md"}
