"""store/database.py: the writer opens (creating) a private WAL index outside the vault, and rebuilds it on any schema mismatch; a foreign SQLite file is refused and left alone."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest

from notedex.error_kinds import IndexUnavailable
from notedex.indexing.reconcile import reconcile
from notedex.store.connect import BUSY_TIMEOUT_MS, connect_readonly
from notedex.store.schema import RETIRED_TABLES, SCHEMA_VERSION
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, run_inprocess
from tests.indexcheck import fts_sound_after, make_vault
from tests.unit.store import build

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def test_index_file_is_private_wal_and_outside_the_vault(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": "[[b]]\n", "b.md": ""})
    old_umask = os.umask(0o022)
    try:
        result = run_inprocess("index", "--vault", vault)
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
    assert run_inprocess("index", "--vault", other).code == 0
    assert len(list(state.glob("*.db"))) == 2


def test_writer_connection_pragmas_and_sqlite_utils_without_plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlite_utils import db as sqlite_utils_db

    called: list[object] = []
    monkeypatch.setattr(sqlite_utils_db, "ensure_plugins_loaded", lambda: called.append("load"))
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        conn = writer.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
        reconcile(writer)
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    # An index of another version: sqlite-utils inspects and drops it, then the schema is new.
    with IndexWriter(db, vault, workers=1) as writer:
        version = writer.conn.execute(
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ).fetchone()[0]
        assert version == str(SCHEMA_VERSION)
        assert writer.conn.execute("SELECT count(*) FROM files").fetchone()[0] == 0
    assert called == []  # execute_plugins=False: no plugin ever touches our connection


def test_index_inside_the_vault_is_refused(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {"a.md": ""})
    (tmp_path / "link-into-vault").symlink_to(vault / "sub", target_is_directory=True)
    (vault / "sub").mkdir()
    for db in (
        vault / "i.db",
        vault / "sub" / "deep" / "i.db",
        tmp_path / "link-into-vault" / "i.db",
    ):
        result = run_inprocess("index", "--json", "--vault", vault, "--db", db)
        assert (result.code, result.stdout) == (2, ""), db
        assert "outside the vault" in result.stderr
    assert list(vault.rglob("*.db*")) == []
    via_env = run_inprocess(
        "scan", "--json", "--vault", vault, env={"NOTEDEX_DB": str(vault / "x.db")}
    )
    assert (via_env.code, via_env.stdout) == (2, "")


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
        result = run_inprocess(command, "--json", "--no-refresh", "--vault", vault, "--db", db)
        assert (result.code, result.stdout) == (2, ""), command
        assert "Traceback" not in result.stderr
        assert f"schema version {SCHEMA_VERSION - 1}" in result.stderr
        assert "notedex index" in result.stderr
    with pytest.raises(IndexUnavailable):
        connect_readonly(db)

    # Without --no-refresh the writer rebuilds from the vault first; the answer is complete.
    result = run_inprocess("scan", "--json", "--vault", vault, "--db", db)
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
    result = run_inprocess("index", "--vault", vault, "--db", db)
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
    result = run_inprocess("scan", "--json", "--vault", vault, "--db", db)
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
    result = run_inprocess("scan", "--json", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    assert result.json()["noteCount"] == 1


def test_set_aside_moves_the_index_with_its_wal_and_shm_and_overwrites_nothing(
    tmp_path: Path,
) -> None:
    from notedex.store.database import set_aside

    db = tmp_path / "i.db"
    for suffix, data in (("", b"main"), ("-wal", b"wal"), ("-shm", b"shm")):
        Path(f"{db}{suffix}").write_bytes(data)
    first = set_aside(db)
    assert not db.exists() and not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()
    assert first.name.startswith("i.db.corrupt-")
    assert first.read_bytes() == b"main" and Path(f"{first}-wal").read_bytes() == b"wal"
    db.write_bytes(b"again")
    second = set_aside(db)  # within the same second: a new name, the first kept
    assert second != first and first.read_bytes() == b"main" and second.read_bytes() == b"again"


def test_an_existing_index_never_gains_permissions(tmp_path: Path) -> None:

    from notedex.store.database import open_writer_connection

    db = tmp_path / "i.db"
    open_writer_connection(db).close()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    db.chmod(0o640)
    open_writer_connection(db).close()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600  # group bits taken away, nothing added


def test_the_triggers_are_each_writers_own_and_not_in_the_file(tmp_path: Path) -> None:
    """The triggers that keep health's and tags' stored answers are TEMP triggers of every
    writer connection: the file's schema, which every query parses when it opens the index,
    has none; a writer reopening the index has them all again, and they still keep the
    answers (a broken anchor written after a reopen gets its stored document)."""
    from notedex.store.database import open_writer_connection
    from notedex.store.schema import split_ddl

    vault = make_vault(tmp_path / "v", {"a.md": "[[b#Nope]]\n", "b.md": "# Yes\n"})
    db = tmp_path / "i.db"
    build(vault, db)
    reader = connect_readonly(db)
    try:
        kinds = {row[0] for row in reader.execute("SELECT type FROM sqlite_master")}
        docs = reader.execute("SELECT count(*) FROM broken_anchor_docs").fetchone()[0]
    finally:
        reader.close()
    assert "trigger" not in kinds and {"table", "index", "view"} <= kinds
    assert docs == 1
    conn = open_writer_connection(db)
    try:
        names = {
            row[0]
            for row in conn.execute("SELECT name FROM sqlite_temp_master WHERE type = 'trigger'")
        }
        # three fewer: lonely_docs went (issue 33); three more: broken_link_docs went (issue 35)
        assert len(names) == len(split_ddl()[1]) == 7
        conn.execute("DELETE FROM broken_anchors")
        assert conn.execute("SELECT count(*) FROM broken_anchor_docs").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_retired_table_goes_with_an_index_of_an_earlier_version(tmp_path: Path) -> None:
    """Schema 27 retired lonely_notes, lonely_docs and unused_attachments (file_findings holds
    them): an index of an earlier version rebuilt in place keeps no table of them."""
    vault = make_vault(tmp_path / "v", {"a.md": "", "b.md": "[[a]]\n"})
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        for table in RETIRED_TABLES:
            writer.conn.execute(f"CREATE TABLE {table} (lonely, path, doc)")
        writer.conn.execute("UPDATE meta SET value = '26' WHERE key = 'schema_version'")
    with IndexWriter(db, vault, workers=1) as writer:
        tables = {row[0] for row in writer.conn.execute("SELECT name FROM sqlite_master")}
    assert RETIRED_TABLES and not tables & set(RETIRED_TABLES)
    assert "file_findings" in tables
