"""store/: the index file (mode, pragmas, place), its schema and version, FTS, and the SQL plans.

Real SQLite files under tmp_path; the CLI as a subprocess where the exit code matters.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from notedex.errors import IndexUnavailable
from notedex.indexing.apply import BATCH_SIZE
from notedex.indexing.reconcile import reconcile
from notedex.store import findings, read
from notedex.store.connect import BUSY_TIMEOUT_MS, connect_readonly
from notedex.store.schema import LINK_KIND, LINK_TEXT, NOTE_TITLE, SCHEMA_VERSION, content_key
from notedex.store.writer import IndexWriter, add_sql_functions
from notedex.vault.text import fts_phrase
from tests.helpers import dump_index, fresh_full_index, run_cli, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def build(vault: Path, db: Path) -> None:
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)


# -- the file ---------------------------------------------------------------------------------


def test_index_file_is_private_wal_and_outside_the_vault(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]]\n", "b.md": ""})
    old_umask = os.umask(0o022)
    try:
        result = run_cli("index", "--vault", vault)
    finally:
        os.umask(old_umask)
    assert result.code == 0, result.stderr
    state = Path(os.environ["XDG_STATE_HOME"]) / "notedex"
    [db] = list(state.glob("*.db"))
    assert re.fullmatch(r"v-[0-9a-f]+\.db", db.name)
    assert vault.resolve() not in db.resolve().parents
    for path in (db, *state.glob("*.db-wal"), *state.glob("*.db-shm"), *state.glob("*.lock")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    # A second vault with the same folder name gets its own file.
    other = make_vault(tmp_path / "elsewhere" / "v", {"z.md": ""})
    assert run_cli("index", "--vault", other).code == 0
    assert len(list(state.glob("*.db"))) == 2


def test_writer_connection_pragmas_and_sqlite_utils_without_plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite_utils
    from sqlite_utils import db as sqlite_utils_db

    called: list[object] = []
    monkeypatch.setattr(sqlite_utils_db, "ensure_plugins_loaded", lambda: called.append("load"))
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        assert isinstance(writer.db, sqlite_utils.Database)
        conn = writer.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        reconcile(writer)
    assert called == []  # execute_plugins=False: no plugin ever touches our connection


def test_reader_is_read_only_with_busy_timeout(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    db = tmp_path / "i.db"
    build(vault, db)
    conn = connect_readonly(db)
    try:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM notes")
    finally:
        conn.close()


def test_index_inside_the_vault_is_refused(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    (tmp_path / "link-into-vault").symlink_to(vault / "sub", target_is_directory=True)
    (vault / "sub").mkdir()
    for db in (
        vault / "i.db",
        vault / "sub" / "deep" / "i.db",
        tmp_path / "link-into-vault" / "i.db",
    ):
        result = run_cli("index", "--json", "--vault", vault, "--db", db)
        assert (result.code, result.stdout) == (2, ""), db
        assert "outside the vault" in result.stderr
    assert list(vault.rglob("*.db*")) == []
    via_env = run_cli("scan", "--json", "--vault", vault, env={"NOTEDEX_DB": str(vault / "x.db")})
    assert (via_env.code, via_env.stdout) == (2, "")


# -- schema version ---------------------------------------------------------------------------


def _set_version(db: Path, version: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    conn.close()


def test_schema_mismatch_reader_explains_writer_rebuilds(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]] #t\n", "b.md": "# B\n"})
    db = tmp_path / "i.db"
    build(vault, db)
    expected = dump_index(db)
    _set_version(db, str(SCHEMA_VERSION - 1))
    conn = sqlite3.connect(db)
    with conn:  # stale rows that a rebuild must not keep
        conn.execute(
            "INSERT INTO problems(path, severity, kind, message) VALUES ('zz.md', 'error', 'x', 'old')"
        )
    conn.close()

    for command in ("scan", "health", "graph", "status"):
        result = run_cli(command, "--json", "--no-refresh", "--vault", vault, "--db", db)
        assert (result.code, result.stdout) == (2, ""), command
        assert "Traceback" not in result.stderr
        assert f"schema version {SCHEMA_VERSION - 1}" in result.stderr
        assert "notedex index" in result.stderr
    with pytest.raises(IndexUnavailable):
        connect_readonly(db)

    # Without --no-refresh the writer rebuilds from the vault first; the answer is complete.
    result = run_cli("scan", "--json", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    assert [n["path"] for n in result.json()["notes"]] == ["a.md", "b.md"]
    assert dump_index(db) == expected
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    conn.close()


@pytest.mark.parametrize("version", ["999", "garbage", None])
def test_writer_rebuilds_on_any_version_mismatch(tmp_path: Path, version: str | None) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]]\n", "b.md": ""})
    db = tmp_path / "i.db"
    build(vault, db)
    expected = dump_index(db)
    if version is None:
        conn = sqlite3.connect(db)
        with conn:
            conn.execute("DELETE FROM meta")
        conn.close()
    else:
        _set_version(db, version)
    result = run_cli("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("added 2,")
    assert dump_index(db) == expected


def test_a_foreign_sqlite_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    db = tmp_path / "someone-elses.db"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY, amount REAL)")
        conn.execute("INSERT INTO invoices(amount) VALUES (12.5)")
    conn.close()
    result = run_cli("scan", "--json", "--vault", vault, "--db", db)
    assert (result.code, result.stdout) == (2, "")
    assert "not a notedex index" in result.stderr
    conn = sqlite3.connect(db)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == [
        "invoices"
    ]
    conn.close()


def test_an_empty_file_becomes_an_index(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    db = tmp_path / "i.db"
    db.touch()
    result = run_cli("scan", "--json", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    assert result.json()["noteCount"] == 1


# -- tables and FTS -----------------------------------------------------------------------------


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
            "SELECT title, tags, aliases, anchors, unresolved FROM note_fts WHERE rowid = ?",
            (hub["file_id"],),
        ).fetchone()
        assert "Hub" in fts["title"] and "The Hub" in fts["title"] and "Heading one" in fts["title"]
        assert "Top/Sub" in fts["tags"] and "Center" in fts["aliases"]
        assert "Missing.md" in fts["unresolved"]
        leaf_anchors = conn.execute(
            "SELECT anchors FROM note_fts WHERE rowid = ?", (files["Leaf.md"]["id"],)
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


# -- transactions -------------------------------------------------------------------------------


def test_writes_are_batched_begin_immediate_upserts(tmp_path: Path) -> None:
    count = BATCH_SIZE + 50
    vault = make_vault(
        tmp_path / "v", {f"n/{i:04}.md": f"[[{i + 1:04}]] #t{i % 7}\n" for i in range(count)}
    )
    statements: list[str] = []
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        writer.conn.set_trace_callback(statements.append)
        report = reconcile(writer)
        write(vault / "n/0001.md", "changed [[0002]]\n")
        (vault / "n/0002.md").unlink()
        reconcile(writer)
        writer.conn.set_trace_callback(None)
    assert report.added == count
    normalised = [" ".join(s.split()).upper() for s in statements]
    assert not any("INSERT OR REPLACE" in s or s.startswith("REPLACE") for s in normalised)
    begins = [i for i, s in enumerate(normalised) if s.startswith("BEGIN")]
    assert all(normalised[i] == "BEGIN IMMEDIATE" for i in begins)
    note_batches = sum(1 for s in normalised if s.startswith("INSERT INTO NOTES"))
    assert note_batches == count + 1
    assert len(begins) >= 3  # at least two batches of notes, plus the follow-up run
    inside = False
    for s in normalised:
        if s.startswith("BEGIN"):
            inside = True
        elif s in ("COMMIT", "ROLLBACK"):
            inside = False
        elif s.startswith(("INSERT", "UPDATE", "DELETE")) and "TEMP." not in s:
            assert inside, f"a write outside a transaction: {s[:80]}"


# -- query plans --------------------------------------------------------------------------------


def _health_sql(conn: sqlite3.Connection) -> dict[str, tuple[str, tuple[object, ...]]]:
    """The SQL each health query runs, captured from the real functions."""
    captured: dict[str, tuple[str, tuple[object, ...]]] = {}

    class Spy:
        name = ""

        def execute(self, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Cursor:
            captured[self.name] = (sql, params)
            return conn.execute(sql, params)

    spy = Spy()
    for name in (
        "notes_without_backlinks",
        "orphans",
        "unlinked",
        "broken_links",
        "ambiguous_links",
    ):
        spy.name = name
        getattr(read, name)(spy)
    for severity in ("error", "warning"):
        spy.name = f"problems:{severity}"
        read.problems(spy, severity)
    return captured


def test_health_queries_never_scan_the_links_table(tmp_path: Path) -> None:
    """EXPLAIN QUERY PLAN: links (the biggest table) is only probed by index, or scanned
    through a partial index that holds just the rows the answer needs (ambiguous); orphans,
    unlinked notes and broken links are read from the writer's tables of findings."""
    files: dict[str, str | bytes] = {
        f"n{i}.md": f"[[n{i + 1}]] [[n{i + 2}|x]] [[gone{i}]]\n" for i in range(60)
    }
    vault = make_vault(tmp_path / "v", files)
    db = tmp_path / "i.db"
    build(vault, db)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        for name, (sql, params) in _health_sql(conn).items():
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
            for step in plan:
                if re.match(r"SCAN l\b|SCAN links\b", step):
                    assert re.search(
                        r"USING (COVERING )?INDEX links_(unresolved|ambiguous)\b", step
                    ), (name, plan)
                if re.search(r"\blinks\b", step) or re.match(r"(SEARCH|SCAN) l\b", step):
                    assert "INDEX" in step or "PRIMARY KEY" in step, (name, plan)
                if name in ("notes_without_backlinks", "orphans", "unlinked", "broken_links"):
                    # Stored findings, read in report order: no probe per note, no sort.
                    assert not re.match(r"(SEARCH|SCAN) (l|n|f)\b", step), (name, plan)
                    assert "TEMP B-TREE" not in step, (name, plan)
    finally:
        conn.close()


def test_health_splits_notes_without_backlinks_into_orphans_and_unlinked(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            "orphan.md": "[[#Heading]] [[orphan]]\n",  # self-links only: still an orphan
            "broken-only.md": "[[nowhere]]\n",  # an outgoing (broken) reference: unlinked
            "embedder.md": "![[embedded]]\n",
            "embedded.md": "",
            "fm.md": '---\nup: "[[fm-target]]"\n---\n',
            "fm-target.md": "",
            "pic-user.md": "![[p.png]]\n",
            "p.png": b"png",
        },
    )
    db = tmp_path / "i.db"
    build(vault, db)
    conn = connect_readonly(db)
    try:
        from notedex.query.reports import health

        data = health(conn)
        assert [r["path"] for r in read.orphans(conn)] == [o["path"] for o in data["orphanNotes"]]
        assert [r["path"] for r in read.unlinked(conn)] == [
            u["path"] for u in data["unlinkedNotes"]
        ]
    finally:
        conn.close()
    assert [o["path"] for o in data["orphanNotes"]] == ["orphan.md"]
    assert [u["path"] for u in data["unlinkedNotes"]] == [
        "broken-only.md",
        "embedder.md",
        "fm.md",
        "pic-user.md",
    ]


def test_incremental_writes_match_a_fresh_index(tmp_path: Path) -> None:
    """A smoke check of the writer's bookkeeping; test_incremental does this at length."""
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]] [[c]]\n", "b.md": "[[a|A text]]\n"})
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        write(vault / "c.md", "[[b]]\n")
        reconcile(writer)
        (vault / "b.md").rename(vault / "B2.md")
        reconcile(writer)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


# -- stored findings and compact rows (issue 6) ---------------------------------------------------


def _findings_from_links(db: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Orphans/unlinked and broken links computed from scratch from the links table: the oracle
    for the writer's ``lonely_notes`` and ``broken_links``."""
    from notedex.vault.resolve import broken_key

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        outgoing = "l.linkpath <> '' AND (l.target_id IS NULL OR l.target_id <> l.source_id)"
        lonely = conn.execute(
            f"""
            SELECT CASE WHEN EXISTS (SELECT 1 FROM links l WHERE l.source_id = n.file_id AND {outgoing})
                        THEN 2 ELSE 1 END, f.path, {NOTE_TITLE}
            FROM notes n JOIN files f ON f.id = n.file_id
            WHERE n.excluded = 0 AND NOT EXISTS (
                SELECT 1 FROM links l WHERE l.target_id = n.file_id AND l.source_id <> n.file_id
                  AND l.source_id NOT IN (SELECT file_id FROM notes WHERE excluded = 1))
            ORDER BY 1, 2
            """
        ).fetchall()
        broken = [
            (source, line, col, text, broken_key(linkpath))
            for source, line, col, text, linkpath in conn.execute(
                f"""
                SELECT f.path, l.line, l.col, {LINK_TEXT}, l.linkpath
                FROM links l JOIN notes n ON n.file_id = l.source_id JOIN files f ON f.id = l.source_id
                WHERE l.target_id IS NULL AND l.linkpath <> '' AND n.excluded = 0
                ORDER BY f.path, l.line, l.col, l.seq
                """
            )
        ]
    finally:
        conn.close()
    return lonely, broken


def _stored_findings(db: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    conn = connect_readonly(db)
    try:
        lonely = [
            (2 if r["has_outgoing"] else 1, r["path"], r["title"])
            for r in read.notes_without_backlinks(conn)
        ]
        broken = [tuple(r) for r in read.broken_links(conn)]
    finally:
        conn.close()
    return lonely, broken


def test_stored_findings_follow_every_kind_of_change(tmp_path: Path) -> None:
    """lonely_notes and broken_links stay equal to a computation from the links table through
    new notes that resolve broken links, renames, deletions, duplicate names resolved by path,
    attachments, title edits and a change of Obsidian's "Excluded files"."""
    import json

    vault = make_vault(
        tmp_path / "v",
        {
            "Hub.md": "[[Later]] [[A/Dup]] [[Dup]] ![[pic.png]] [[#Self]]\n",
            "A/Dup.md": "[[Hub]]\n",
            "B/Dup.md": "",
            "Lonely.md": "---\ntitle: A title\n---\n",
            "Old/Gone.md": "[[Nowhere.md]] [[nowhere]]\n",
        },
    )
    db = tmp_path / "i.db"
    steps = [
        lambda: write(vault / "Later.md", "[[Lonely]]\n"),  # resolves Hub's broken link
        lambda: (vault / "B/Dup.md").rename(vault / "B/Other.md"),  # [[Dup]] is no longer a tie
        lambda: (vault / "A/Dup.md").unlink(),  # Hub's [[A/Dup]] and [[Dup]] break
        lambda: write(vault / "img/pic.png", "png"),  # an attachment appears
        lambda: write(vault / "Lonely.md", "---\ntitle: Renamed title\n---\n[[Old/Gone]]\n"),
        lambda: write(
            vault / ".obsidian" / "app.json", json.dumps({"userIgnoreFilters": ["Old/"]})
        ),
        lambda: write(vault / ".obsidian" / "app.json", json.dumps({"userIgnoreFilters": ["Hub"]})),
        lambda: shutil.rmtree(vault / "Old"),
    ]
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        assert _stored_findings(db) == _findings_from_links(db)
        for step in steps:
            step()
            reconcile(writer)
            assert _stored_findings(db) == _findings_from_links(db)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


def test_health_json_is_the_health_report_encoded(tmp_path: Path) -> None:
    """The SQLite-built document is byte for byte what emit_json writes for health() to a pipe."""
    import json

    from notedex.query.reports import health, health_json

    vault = make_vault(
        tmp_path / "v",
        {
            'Quote "q" \\ tab\t.md': '[[Missing "x"]] [[ctl\u0001]] ![[Nope.MD|w]]\n',
            "日本語 🎉.md": "---\ntitle: 'Ünïcode \u2028 title'\ntags: a, b\n---\n[t](No%20such.md)\n",
            "Lonely.md": "",
            "Linked.md": "[[Lonely]] [[日本語 🎉]]\n",
            "bad.md": "---\n[: x\n---\n",
        },
    )
    db = tmp_path / "i.db"
    build(vault, db)
    conn = connect_readonly(db)
    try:
        document, broken = health_json(conn)
        data = health(conn)
    finally:
        conn.close()
    assert document == json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    assert broken == data["brokenLinkCount"] == 4
    assert data["orphanNotes"] and data["unlinkedNotes"] and data["warnings"] and data["errors"]


def test_links_read_back_as_written(tmp_path: Path) -> None:
    """links.raw is stored only when the usual spelling differs: every link still reads back
    exactly as the parser saw it, kind included, and broken keys are SEMANTICS 7's."""
    from notedex.store.schema import link_text
    from notedex.vault.parse import read_note
    from notedex.vault.resolve import broken_key

    text = (
        "---\nup: \"[[Up#H|shown]]\"\nrel: '[[ Spaced ]]'\n---\n"
        "[[Plain]] [[Plain#H1#H2|d]] [[Pipe|]] ![[pic.png|100]] [[A\u00a0B]] [[ Trim ]]\n"
        "| [[Tab\\|le]] | x |\n|---|---|\n"
        "[t](My%20Note.md) [t](<My Note.md>) ![a](img%2Fp.png#x) [](Empty.md) [t](Ü.MD)\n"
    )
    vault = make_vault(tmp_path / "v", {"Src.md": text})
    db = tmp_path / "i.db"
    build(vault, db)
    note = read_note(str(vault / "Src.md"), "Src.md")
    conn = connect_readonly(db)
    try:
        row = read.note_by_path(conn, "Src.md")
        assert row is not None
        stored = read.outgoing_links(conn, row["file_id"])
        raw_null = conn.execute("SELECT count(*) FROM links WHERE raw IS NULL").fetchone()[0]
        broken = {r["text"]: r["target"] for r in read.broken_links(conn)}
    finally:
        conn.close()
    expected = sorted(note.links, key=lambda link: (link.line, link.column))
    assert [(r["kind"], r["raw"], r["linkpath"], r["subpath"], r["display"]) for r in stored] == [
        (link.kind, link.raw, link.linkpath, link.subpath, link.display) for link in expected
    ]
    assert raw_null >= 5  # the usual spellings are not stored twice
    assert broken == {link.raw: broken_key(link.linkpath) for link in note.links if link.linkpath}
    kinds = {"wikilink": 0, "embed": 1, "markdown": 2, "markdown-embed": 3, "frontmatter": 4}
    assert link_text(kinds["markdown"], "My Note.md", None, "t") == "[t](My%20Note.md)"


def test_stored_findings_are_refreshed_by_the_dirty_notes_alone(tmp_path: Path) -> None:
    """A save recomputes the findings of a few notes: every statement is driven by those
    notes (at 100k notes a scan of notes, files or the findings cost a save 100 ms)."""
    vault = make_vault(
        tmp_path / "v", {f"n{i}.md": f"[[n{i + 1}]] [[gone{i % 3}]]\n" for i in range(200)}
    )
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        statements: list[str] = []
        writer.conn.set_trace_callback(statements.append)
        with writer.transaction():
            findings.set_dirty(writer.conn, [1, 2, 3])
            statements.clear()
            findings.refresh_findings(writer.conn)
        writer.conn.set_trace_callback(None)
        plans = {
            s: [row[3] for row in writer.conn.execute("EXPLAIN QUERY PLAN " + s)]
            for s in statements
            if s.lstrip().startswith(("INSERT", "DELETE"))
        }
    assert len(plans) == 4
    for sql, plan in plans.items():
        for step in plan:
            if step.startswith("SCAN"):
                assert re.match(r"SCAN (d|notes USING INDEX notes_excluded)$", step), (sql, plan)
