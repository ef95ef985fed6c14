"""Bad input never stops indexing: each bad file becomes an errors entry (or is handled as
SEMANTICS says) and the rest of the vault is indexed.

Every test puts its bad file next to the same healthy pair of notes (``good.md`` links to
``other.md``) and checks, through the CLI, that the pair is indexed as usual. Unreadable files and
folders are made so for real, also as root (tests/privileges.py), and by injection.
"""

from __future__ import annotations

import os
import sqlite3
import unicodedata
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from notedex.indexing import pool as parse_pool
from notedex.indexing.etagcheck import current_file_count
from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import (
    Result,
    dump_index,
    fresh_full_index,
    fts_integrity_ok,
    run_cli,
    run_inprocess,
    write,
)
from tests.indexcheck import age, fts_sound_after, make_vault
from tests.privileges import Lockout, lockout

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test

HEALTHY = {"good.md": "---\ntags: [ok]\n---\n# Good\n[[other]]\n", "other.md": "[[good]]\n"}


def index(
    vault: Path, db: Path, run: Callable[..., Result] = run_inprocess
) -> tuple[dict[str, Any], dict[str, Any]]:
    """scan --json and health --json; both must parse and exit as the contract says. In-process
    by default (the same code and exit codes: tests/system/test_exit_codes.py and test_cli.py
    run them in child processes); the privilege tests run them as another user (``lock.run``)."""
    scan = run("scan", "--json", "--vault", vault, "--db", db)
    assert scan.code == 0, scan.stderr
    assert "Traceback" not in scan.stderr
    health = run("health", "--json", "--vault", vault, "--db", db)
    data = health.json()
    assert health.code == (1 if data["brokenLinkCount"] else 0)
    return scan.json(), data


def assert_healthy_pair_indexed(scan: dict[str, Any], health: dict[str, Any]) -> None:
    notes = {n["path"]: n for n in scan["notes"]}
    assert notes["good.md"]["tags"] == ["ok"] and notes["good.md"]["title"] == "good"
    assert "other.md" in notes
    lonely = {n["path"] for n in health["orphanNotes"] + health["unlinkedNotes"]}
    assert not {"good.md", "other.md"} & lonely  # they link each other: both resolved


def errors_for(scan: dict[str, Any], path: str) -> list[str]:
    return [e["message"] for e in scan["errors"] if e["path"] == path]


def test_broken_yaml_is_an_error_and_the_body_still_counts(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            **HEALTHY,
            "bad.md": "---\ntitle: [unclosed\ntags: x\n---\n# Heading\nsee [[good]] #inline\n",
        },
    )
    scan, health = index(vault, tmp_path / "i.db")
    assert_healthy_pair_indexed(scan, health)
    [message] = errors_for(scan, "bad.md")
    assert "YAML" in message
    bad = next(n for n in scan["notes"] if n["path"] == "bad.md")
    assert bad["title"] == "bad" and bad["tags"] == ["inline"]  # body tags, no properties
    assert "bad.md" in {u["path"] for u in health["unlinkedNotes"]}  # its link counts
    assert errors_for(health, "bad.md") == [message]


def test_frontmatter_that_is_not_a_mapping_is_an_error(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {**HEALTHY, "list.md": "---\n- a\n- b\n---\n[[good]]\n"})
    scan, health = index(vault, tmp_path / "i.db")
    assert_healthy_pair_indexed(scan, health)
    assert errors_for(scan, "list.md")


def test_invalid_utf8_is_an_error_and_the_rest_is_read(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v", {**HEALTHY, "latin1.md": "caf\xe9 [[good]] #t\n".encode("latin-1")}
    )
    scan, health = index(vault, tmp_path / "i.db")
    assert_healthy_pair_indexed(scan, health)
    [message] = errors_for(scan, "latin1.md")
    assert "UTF-8" in message
    note = next(n for n in scan["notes"] if n["path"] == "latin1.md")
    assert note["tags"] == ["t"]


def test_a_binary_md_file_is_an_error(tmp_path: Path) -> None:
    blob = bytes(range(256)) * 64 + b"[[good]]"
    vault = make_vault(tmp_path / "v", {**HEALTHY, "blob.md": blob})
    scan, health = index(vault, tmp_path / "i.db")
    assert_healthy_pair_indexed(scan, health)
    assert any("binary" in m for m in errors_for(scan, "blob.md"))
    show = run_inprocess("show", "blob.md", "--json", "--vault", vault, "--db", tmp_path / "i.db")
    assert show.code == 0 and show.json()["links"] == []


def test_a_50_mb_note_is_an_error_and_is_not_read_whole(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", HEALTHY)
    with open(vault / "huge.md", "wb") as handle:
        handle.write(b"# Huge\n[[good]]\n")
        handle.truncate(50 * 1024 * 1024)  # sparse: cheap to make
    db = tmp_path / "i.db"
    scan, health = index(vault, db)
    assert_healthy_pair_indexed(scan, health)
    [message] = errors_for(scan, "huge.md")
    assert "size cap" in message
    assert next(n for n in scan["notes"] if n["path"] == "huge.md")["title"] == "huge"
    assert db.stat().st_size < 5 * 1024 * 1024  # nothing of it went into body_fts


@pytest.fixture(params=["privileges", "injection"])
def locker(request: pytest.FixtureRequest) -> Iterator[tuple[Lockout, Path, Callable[[], None]]]:
    """Unreadable entries for real (as root too: tests/privileges.py) and by injection."""
    with lockout(request.param) as (lock, base, chown):
        if lock.reason:  # visible in the summary: a fallback, never a silent skip
            warnings.warn(f"permission test by injection instead: {lock.reason}", stacklevel=1)
        yield lock, base, chown


def problems_of(db: Path, path: str) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT kind, message FROM problems WHERE path = ?", (path,))
        return [tuple(row) for row in rows]
    finally:
        conn.close()


def test_an_unreadable_note_is_an_error_until_it_is_readable_again(
    locker: tuple[Lockout, Path, Callable[[], None]],
) -> None:
    lock, base, chown = locker
    vault = make_vault(base / "v", {**HEALTHY, "locked.md": "[[good]] #secret\n"})
    db = base / "i.db"
    chown()
    lock.lock(vault / "locked.md")
    scan, health = index(vault, db, lock.run)
    assert_healthy_pair_indexed(scan, health)
    assert errors_for(scan, "locked.md") == ["cannot read file: Permission denied"]
    assert problems_of(db, "locked.md") == [("read", "cannot read file: Permission denied")]
    # SEMANTICS 1: still a note, known by its name, with nothing read from it
    assert next(n for n in scan["notes"] if n["path"] == "locked.md")["tags"] == []
    lock.unlock(vault / "locked.md")
    scan, _ = index(vault, db, lock.run)
    assert errors_for(scan, "locked.md") == []
    assert next(n for n in scan["notes"] if n["path"] == "locked.md")["tags"] == ["secret"]
    assert fts_integrity_ok(db)


def test_an_unreadable_note_moved_with_its_folder_is_read_again_not_moved_as_it_was(
    locker: tuple[Lockout, Path, Callable[[], None]],
) -> None:
    """Issue 31.4: a chmod moves no etag, so a note made unreadable and then moved with its
    folder was paired as a move by its etag and kept its old tags and links, for good."""
    lock, base, chown = locker
    vault = make_vault(base / "v", {**HEALTHY, "P/moved.md": "[[good]] #secret\n"})
    db = base / "i.db"
    age(vault)  # settled: a racy row would never be paired by its etag
    chown()
    result = lock.run("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    lock.lock(vault / "P" / "moved.md")
    os.rename(vault / "P", vault / "Q")
    lock.locked = {path.replace(f"{os.sep}P{os.sep}", f"{os.sep}Q{os.sep}") for path in lock.locked}
    result = lock.run("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    scan, health = index(vault, db, lock.run)
    assert_healthy_pair_indexed(scan, health)
    assert errors_for(scan, "Q/moved.md") == ["cannot read file: Permission denied"]
    assert next(n for n in scan["notes"] if n["path"] == "Q/moved.md")["tags"] == []
    assert "P/moved.md" not in {n["path"] for n in scan["notes"]}
    lock.unlock(vault / "Q" / "moved.md")
    scan, _ = index(vault, db, lock.run)  # a plain refresh reads it again
    assert errors_for(scan, "Q/moved.md") == []
    assert next(n for n in scan["notes"] if n["path"] == "Q/moved.md")["tags"] == ["secret"]
    assert dump_index(db) == fresh_full_index(vault, base)


@pytest.mark.slow
def test_a_folder_that_cannot_be_listed_deletes_nothing_from_the_index(
    locker: tuple[Lockout, Path, Callable[[], None]],
) -> None:
    """ARCHITECTURE "Freshness": a folder the walk cannot list keeps its rows (it may be a
    permission slip or a cloud placeholder, not a deletion) and is named in the errors."""
    lock, base, chown = locker
    files: dict[str, str | bytes] = {
        **HEALTHY,
        "Locked/Deep/secret.md": "[[good]] #hidden\n",
        "Locked/top.md": "[[secret]]\n",
    }
    vault = make_vault(base / "v", files)
    db = base / "i.db"
    chown()
    result = lock.run("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    before = dump_index(db)
    assert "Locked/Deep/secret.md" in {row[0] for row in before["notes"]}
    lock.lock(vault / "Locked" / "Deep")
    write(vault / "good.md", HEALTHY["good.md"] + "edited\n")  # the refresh has work to do
    chown()
    result = lock.run("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    scan, health = index(vault, db, lock.run)
    assert_healthy_pair_indexed(scan, health)
    assert errors_for(scan, "Locked/Deep") == ["cannot list folder: Permission denied"]
    after = dump_index(db)
    for table in ("files", "notes", "tags", "links"):
        kept = [row for row in after[table] if str(row[0]).startswith("Locked/")]
        assert kept == [row for row in before[table] if str(row[0]).startswith("Locked/")], table
    secret = next(n for n in scan["notes"] if n["path"] == "Locked/Deep/secret.md")
    assert secret["tags"] == ["hidden"]
    # Issue 31.5: kept, and marked possibly stale in `show`; a note elsewhere is not.
    shown = lock.run("show", "Locked/Deep/secret.md", "--json", "--vault", vault, "--db", db)
    assert shown.json()["staleBecause"] == [
        {"path": "Locked/Deep", "message": "cannot list folder: Permission denied"}
    ]
    assert shown.json()["possiblyStale"] is True
    shown = lock.run("show", "Locked/top.md", "--json", "--vault", vault, "--db", db)
    assert shown.json()["possiblyStale"] is False and shown.json()["staleBecause"] == []
    lock.unlock(vault / "Locked" / "Deep")
    result = lock.run("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    scan, _ = index(vault, db, lock.run)
    assert errors_for(scan, "Locked/Deep") == []
    shown = lock.run("show", "Locked/Deep/secret.md", "--json", "--vault", vault, "--db", db)
    assert shown.json()["possiblyStale"] is False
    assert dump_index(db) == fresh_full_index(vault, base)
    assert fts_integrity_ok(db)


def test_a_note_that_could_not_be_read_is_retried_with_the_same_etag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The root-proof version of the test above: the first read fails (EACCES), the file's
    (size, mtime, inode) never changes, and the next reconcile reads it after all."""
    vault = make_vault(tmp_path / "v", {**HEALTHY, "locked.md": "[[good]] #secret\n"})
    age(vault)  # out of the racy window: only the etag speaks
    db = tmp_path / "i.db"
    real = parse_pool.read_note
    monkeypatch.setattr(
        parse_pool,
        "read_note",
        lambda disk, path, **kw: real(
            os.devnull + "/x" if path == "locked.md" else disk, path, **kw
        ),
    )
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        assert (
            writer.conn.execute(
                "SELECT count(*) FROM problems WHERE path = 'locked.md'"
            ).fetchone()[0]
            == 1
        )
        monkeypatch.setattr(parse_pool, "read_note", real)
        # The query path's stdlib check must not call this index current either.
        assert current_file_count(vault, db) is None
        report = reconcile(writer)
        assert report.changed == 1
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


def test_symlink_loops_are_errors_and_followed_links_are_indexed(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", {**HEALTHY, "real/inside.md": "[[good]]\n"})
    (vault / "self.md").symlink_to("self.md")  # a file link to itself (ELOOP)
    (vault / "real" / "up").symlink_to("..", target_is_directory=True)  # a folder loop
    (vault / "dangling.md").symlink_to("nowhere.md")
    (vault / "alias.md").symlink_to("good.md")
    scan, health = index(vault, tmp_path / "i.db")
    assert_healthy_pair_indexed(scan, health)
    paths = {n["path"] for n in scan["notes"]}
    assert {"real/inside.md", "alias.md"} <= paths
    assert not any(p.startswith("real/up/") for p in paths)
    assert (
        errors_for(scan, "self.md")
        and errors_for(scan, "real/up")
        and errors_for(scan, "dangling.md")
    )


@pytest.mark.slow
def test_awkward_file_names(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "Été à Noël.md")
    vault = make_vault(
        tmp_path / "v",
        {
            **HEALTHY,
            "with spaces.md": "",
            "C# notes.md": "",
            "emoji 🎉 party.md": "",
            nfd: "",
            "line\nbreak.md": "",
            "links.md": "[[with spaces]] [[emoji 🎉 party]] [[été à noël]] [[ÉTÉ À NOËL]] "
            "[x](C%23%20notes.md) [y](<with spaces.md>) [[C# notes]]\n",
        },
    )
    assert unicodedata.is_normalized("NFD", os.listdir(vault)[0]) or nfd in os.listdir(vault)
    db = tmp_path / "i.db"
    scan, health = index(vault, db)
    assert_healthy_pair_indexed(scan, health)
    paths = {n["path"] for n in scan["notes"]}
    nfc = unicodedata.normalize("NFC", nfd)
    assert {"with spaces.md", "C# notes.md", "emoji 🎉 party.md", nfc, "line\nbreak.md"} <= paths
    assert nfd not in paths  # SEMANTICS 1: stored NFC
    show = run_cli("show", "links", "--json", "--vault", vault, "--db", db).json()
    targets = [link["target"] for link in show["links"]]
    assert targets[:6] == [
        "with spaces.md",
        "emoji 🎉 party.md",
        nfc,
        nfc,
        "C# notes.md",
        "with spaces.md",
    ]
    # SEMANTICS 6: a wikilink target is split at the first '#': [[C# notes]] is the key "C".
    assert show["links"][6]["broken"] is True and show["links"][6]["key"] == "C"
    assert [b["target"] for b in health["brokenLinks"]] == ["C"]
    # --body reads the NFD file through its on-disk name.
    body = run_cli("show", nfc, "--body", "--json", "--vault", vault, "--db", db)
    assert body.code == 0 and body.json()["body"] == ""
    # The text output keeps working with a newline in a path.
    assert run_cli("scan", "--vault", vault, "--db", db).code == 0


def test_a_file_name_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", HEALTHY)
    try:
        with open(os.path.join(os.fsencode(vault), b"bad\xff.md"), "wb") as handle:
            handle.write(b"[[good]]\n")
    except OSError:
        pytest.skip("this file system refuses non-UTF-8 names")
    scan, health = index(vault, tmp_path / "i.db")
    assert_healthy_pair_indexed(scan, health)
    assert any("UTF-8" in e["message"] for e in scan["errors"])
    assert all("bad" not in n["path"] for n in scan["notes"])


def test_all_bad_inputs_at_once_incremental_equals_full(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            **HEALTHY,
            "bad.md": "---\n: [\n---\n",
            "latin1.md": b"caf\xe9",
            "blob.md": b"\0\1\2",
            unicodedata.normalize("NFD", "é.md"): "[[good]]",
        },
    )
    (vault / "loop.md").symlink_to("loop.md")
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        write(vault / "late.md", "[[é]]")
        (vault / "bad.md").write_text("---\ntitle: fixed\n---\n", encoding="utf-8")
        reconcile(writer)
    assert dump_index(db) == fresh_full_index(vault, tmp_path)
