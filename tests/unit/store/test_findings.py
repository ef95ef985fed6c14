"""store/findings.py: the stored findings (orphans, unlinked, broken links) equal the ones computed from the links table after every kind of change, and a save recomputes them from the dirty notes alone."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from notedex.codes import FILE_FINDINGS, LINK_FINDINGS
from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store import findings, health_lists
from notedex.store.connect import connect_readonly
from notedex.store.schema import LINK_TEXT, NOTE_TITLE
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def _findings_from_links(db: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Orphans/unlinked and broken links computed from scratch from the links table: the oracle
    for the writer's ``file_findings`` (orphans, unlinked) and ``broken_links``."""
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
            (2 if code == "unlinked" else 1, path, title)
            for code, path, title in conn.execute(
                "SELECT code, path, title FROM file_findings "
                "WHERE code IN ('orphan', 'unlinked') ORDER BY code, path"
            )
        ]
        broken = [tuple(r)[:5] for r in health_lists.broken_links(conn)]  # without the suggestion
    finally:
        conn.close()
    return lonely, broken


@pytest.mark.slow
def test_stored_findings_follow_every_kind_of_change(tmp_path: Path) -> None:
    """The orphans/unlinked and broken_links stay equal to a computation from the links table through
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


def test_stored_findings_are_refreshed_by_the_dirty_notes_alone(tmp_path: Path) -> None:
    """A save recomputes the findings of a few notes: every statement is driven by those
    notes (at 100k notes a scan of notes, files or the findings cost a save 100 ms)."""
    vault = make_vault(
        tmp_path / "v",
        {
            f"n{i}.md": f"# H\n[[n{i + 1}]] [[gone{i % 3}]] [[n{i + 1}#H]] [[n{i}#X]]\n"
            for i in range(200)
        },
    )
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        statements: list[str] = []
        writer.conn.set_trace_callback(statements.append)
        with writer.transaction():
            findings.set_dirty(writer.conn, [1, 2, 3])
            statements.clear()
            findings.refresh_findings(writer.conn, writer.links)
        writer.conn.set_trace_callback(None)
        plans = {
            s: [row[3] for row in writer.conn.execute("EXPLAIN QUERY PLAN " + s)]
            for s in statements
            if s.lstrip().startswith(("INSERT", "DELETE", "SELECT c.source_id", "SELECT f.path"))
        }
    # broken links: a DELETE and the links that have no row yet (inserted with their
    # suggestions, none here); broken anchors: the DELETE, the links to check (out of and into
    # the dirty notes) and the INSERT (executemany traces each row it inserts: one statement
    # per row, the same plan). The generic upkeep (issue 33): a DELETE and an INSERT per
    # declared link finding; the declared file findings now into temp.file_findings_now
    # (emptied first, an INSERT each), then a DELETE of the rows that went and an INSERT of
    # the new ones with their documents, an INSERT each (the trace shows the bound code).
    declared = 2 * len(LINK_FINDINGS) + 2 + 2 * len(FILE_FINDINGS)
    assert len({sql.split(" VALUES")[0] for sql in plans}) == 5 + declared
    for sql, plan in plans.items():
        for step in plan:
            if step.startswith("SCAN"):
                # w: temp.file_findings_now, the dirty notes' rows alone
                assert re.match(r"SCAN (d|c|w|notes USING INDEX notes_excluded)$", step), (
                    sql,
                    plan,
                )


def _anchor_findings(db: Path) -> list[tuple[str, str, str, str | None]]:
    conn = connect_readonly(db)
    try:
        return [
            (r["source"], r["text"], r["target"], r["suggestion"])
            for r in health_lists.broken_anchors(conn)
        ]
    finally:
        conn.close()


@pytest.mark.slow
def test_broken_anchors_follow_every_kind_of_change(tmp_path: Path) -> None:
    """SEMANTICS 10: a save re-checks the links out of and into the notes it touched; after
    each step the stored findings equal those of a fresh full index."""
    import json

    vault = make_vault(
        tmp_path / "v",
        {
            "Src.md": "[[Target#Intro]] [[Target#^b1]] ![[pic.png#page=3]] [[#Here]]\n# Here\n",
            "Target.md": "# Intro\ntext ^b1\n",
            "Other.md": "[[Target#Intro#Deep]]\n",
        },
    )
    write(vault / "pic.png", "png")
    db = tmp_path / "i.db"
    expected = [
        # the target's heading changes: links into it break, with a suggestion
        (
            lambda: write(vault / "Target.md", "# Introduction\ntext\n"),
            [
                ("Other.md", "[[Target#Intro#Deep]]", "Target.md", None),
                ("Src.md", "[[Target#Intro]]", "Target.md", "#Introduction"),
                ("Src.md", "[[Target#^b1]]", "Target.md", None),
            ],
        ),
        (
            lambda: write(vault / "Target.md", "# Intro\n## Deep\ntext ^B1\n"),
            [],
        ),
        # the source's own heading goes: its self link breaks
        (
            lambda: write(vault / "Src.md", "[[Target#Intro]] [[#Here]]\n# There\n"),
            [("Src.md", "[[#Here]]", "Src.md", "#There")],
        ),
        # the target goes: a broken link, not a broken anchor (SEMANTICS 10.7)
        (lambda: (vault / "Target.md").unlink(), [("Src.md", "[[#Here]]", "Src.md", "#There")]),
        # a new Target resolves the links again, in another folder
        (
            lambda: write(vault / "Sub" / "Target.md", "# Intro\n"),
            [
                ("Other.md", "[[Target#Intro#Deep]]", "Sub/Target.md", None),
                ("Src.md", "[[#Here]]", "Src.md", "#There"),
            ],
        ),
        # an excluded source is not reported
        (
            lambda: write(
                vault / ".obsidian" / "app.json", json.dumps({"userIgnoreFilters": ["Src.md"]})
            ),
            [("Other.md", "[[Target#Intro#Deep]]", "Sub/Target.md", None)],
        ),
    ]
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        assert _anchor_findings(db) == [("Other.md", "[[Target#Intro#Deep]]", "Target.md", None)]
        for step, findings_now in expected:
            step()
            writer.refresh_filters()
            reconcile(writer)
            assert _anchor_findings(db) == findings_now
            assert (
                dump_index(db)["broken_anchors"]
                == fresh_full_index(vault, tmp_path)["broken_anchors"]
            )


@pytest.mark.slow
def test_broken_anchors_after_moves_equal_a_fresh_index(tmp_path: Path) -> None:
    """A note dirty only by a re-resolution (not parsed again) has its anchored links re-checked
    only where their target changed (findings._ANCHORED_LINKS): folder renames that break and
    mend path-qualified anchored links, that move a tie-break between two targets with other
    headings, and a target's heading changed in the same batch as a move, each equal a fresh
    full index, and the moves are moves (nothing parsed but the edited note)."""
    vault = make_vault(
        tmp_path / "v",
        {
            "Src.md": "[[A/Target#Intro]] [[A/Target#Gone]] [[Target#Intro]] [[Twin#Left]]\n"
            "[[Solo#Missing]] [[Solo#Top]] [[#Here]]\n# Here\n",
            "A/Target.md": "# Intro\n[[Solo#Top]]\n",
            "A/Twin.md": "# Left\n",
            "B/Twin.md": "# Right\n",
            "B/Solo.md": "# Top\n",
            "C/Other.md": "[[Solo#Missing]] [[B/Solo#Top]] [[Twin#Right]] [[A/Target#Intro]]\n",
        },
    )
    db = tmp_path / "i.db"

    def rename(old: str, new: str) -> list[str]:
        (vault / new).parent.mkdir(parents=True, exist_ok=True)
        (vault / old).rename(vault / new)
        return [old, new]

    def remove(path: str) -> list[str]:
        (vault / path).unlink()
        return [path]

    def edit(path: str, text: str) -> list[str]:
        write(vault / path, text)
        return [path]

    steps = [
        lambda: rename("A", "A2"),  # [[A/Target#...]] break; [[Twin#...]] may change target
        lambda: rename("A2", "A"),  # and come back
        lambda: rename("B", "Z/B"),  # B/Solo by path breaks; bare [[Solo#...]] keep theirs
        # a moved target's heading changes in the same batch as a move
        lambda: [*rename("Z/B", "B"), *edit("B/Solo.md", "# Missing\n")],
        lambda: rename("C", "A/C"),  # a source moves: its links by path are re-resolved
        lambda: remove("B/Solo.md"),  # a target with broken anchors into it goes
    ]
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        fresh = fresh_full_index(vault, tmp_path)
        assert dump_index(db)["broken_anchors"] == fresh["broken_anchors"] != []
        for step in steps:
            parsed = writer.parsed
            hints = step()
            report = apply_paths(writer, hints)
            assert report.moved > 0 or report.removed == 1
            assert writer.parsed - parsed == (hints[-1:] == ["B/Solo.md"] and len(hints) == 3)
            fresh = fresh_full_index(vault, tmp_path)
            now = dump_index(db)
            assert now["broken_anchors"] == fresh["broken_anchors"]
            assert now == fresh
            # (dump_index joins the paths: a row left on a target that went would not show)
            with sqlite3.connect(db) as conn:
                assert not conn.execute(
                    "SELECT 1 FROM broken_anchors b WHERE NOT EXISTS (SELECT 1 FROM links l "
                    "WHERE l.source_id = b.source_id AND l.seq = b.seq "
                    "AND coalesce(l.target_id, l.source_id) = b.target_id)"
                ).fetchall()


@pytest.mark.slow
def test_a_kept_notes_unchanged_broken_anchors_are_not_written_again(tmp_path: Path) -> None:
    """A note dirty only by a re-resolution keeps the broken-anchor rows of its links whose
    target stayed (findings._STALE_ANCHORS, _ANCHORED_LINKS): the same subpath into the same
    outline has the same verdict. A row whose link changed target is taken out and the link
    checked again, broken under both targets or under the new one alone; each step equals a
    fresh full index."""
    vault = make_vault(
        tmp_path / "v",
        {
            # [[A/Note]] breaks with the rename: Src and A/Note are dirty, not parsed again.
            # [[Note#Nope]] keeps its target (the one Note). [[Twin#...]] moves from A/Twin to
            # B/Twin (SEMANTICS 7.7: the shorter path) and back: #Nope is broken under both,
            # #Left only under B/Twin.
            "Src.md": "[[A/Note]] [[Note#Nope]] [[Twin#Nope]] [[Twin#Left]]\n",
            "A/Note.md": "# Note\n",
            "A/Twin.md": "# Left\n",
            "B/Twin.md": "# Right\n",
        },
    )
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        conn = writer.conn
        conn.execute("CREATE TEMP TABLE anchors_written(seq INTEGER)")
        for event, row in (("INSERT", "new"), ("DELETE", "old")):
            conn.execute(
                f"CREATE TEMP TRIGGER anchors_{event.lower()} AFTER {event} ON main.broken_anchors "
                f"BEGIN INSERT INTO anchors_written(seq) VALUES ({row}.seq); END"
            )
        for old, new in (("A", "A2"), ("A2", "A")):
            conn.execute("DELETE FROM temp.anchors_written")
            (vault / old).rename(vault / new)
            parsed = writer.parsed
            report = apply_paths(writer, [old, new])
            assert report.moved == 2 and writer.parsed == parsed
            assert dump_index(db) == fresh_full_index(vault, tmp_path)
            written = {row[0] for row in conn.execute("SELECT seq FROM temp.anchors_written")}
            # the links' seq in Src: [[A/Note]] 0, [[Note#Nope]] 1, [[Twin#Nope]] 2, [[Twin#Left]] 3
            assert written == {2, 3}


@pytest.mark.slow
def test_a_dirty_notes_unchanged_file_findings_are_not_written_again(tmp_path: Path) -> None:
    """The generic upkeep writes only the orphan, unlinked and dead-end rows of the dirty notes
    that differ from the stored ones (linkfindings._FILE_CHANGES): a folder rename that breaks
    the one link into a note adds its orphan row and leaves the rest (ids, not paths: the move
    itself writes none), and a stale stored row of a dirty note goes. Each step equals a fresh
    full index."""
    vault = make_vault(
        tmp_path / "v",
        {
            "Src.md": "[[A/Note]]\n",  # unlinked (no link in, one out) throughout
            "A/Note.md": "# Note\n",  # a dead end; an orphan too while [[A/Note]] is broken
        },
    )
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        conn = writer.conn
        conn.execute("CREATE TEMP TABLE found_written(event TEXT, code TEXT, path TEXT)")
        for event, row in (("INSERT", "new"), ("DELETE", "old")):
            conn.execute(
                f"CREATE TEMP TRIGGER found_{event.lower()} AFTER {event} ON main.file_findings "
                f"BEGIN INSERT INTO found_written VALUES ('{event}', {row}.code, {row}.path); "
                "END"
            )

        def written() -> list[tuple[str, str, str]]:
            rows = conn.execute(
                "SELECT event, code, path FROM temp.found_written ORDER BY 1, 2, 3"
            ).fetchall()
            conn.execute("DELETE FROM temp.found_written")
            return rows

        for old, new, expected in (
            ("A", "A2", [("INSERT", "orphan", "A2/Note.md")]),
            ("A2", "A", [("DELETE", "orphan", "A/Note.md")]),
        ):
            (vault / old).rename(vault / new)
            report = apply_paths(writer, [old, new])
            assert report.moved == 1
            assert dump_index(db) == fresh_full_index(vault, tmp_path)
            assert written() == expected
        # A stored row the note no longer has goes at its refresh; its other rows stay.
        fresh = dump_index(db)
        src = writer.file_rows(["Src.md"])["Src.md"].id
        with writer.transaction():
            conn.execute(
                "INSERT INTO file_findings(code, path, title) VALUES ('orphan', 'Src.md', 'Src')"
            )
            written()
            findings.set_dirty(conn, [src])
            findings.refresh_findings(conn, writer.links)
        assert dump_index(db) == fresh
        assert written() == [("DELETE", "orphan", "Src.md")]


def test_every_finding_is_declared_with_exactly_one_upkeep() -> None:
    """issue 33: each finding of the registry is kept by the generic upkeep (a ``link_where``
    or a ``file_where``) or names its own hook, which the refresh knows, never both or none."""
    from notedex.codes import FINDINGS

    for finding in FINDINGS:
        ways = [finding.link_where, finding.file_where, finding.upkeep]
        assert sum(way is not None for way in ways) == 1, finding.code
        if finding.upkeep is not None:
            assert finding.upkeep in findings.UPKEEP, finding.code
    assert set(findings.UPKEEP) == {f.upkeep for f in FINDINGS if f.upkeep is not None}
