"""store/tagcounts.py and the stored brokenAnchors documents: the counts `tags` reads and the
JSON health prints equal what the tables give from scratch after every kind of change, and a
save recounts only what it marked."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.indexing.reconcile import reconcile
from notedex.store import findings, health_lists, listing_rows, maintenance, tagcounts
from notedex.store.connect import connect_readonly
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def _tag_counts_from_scratch(db: Path) -> tuple[object, ...]:
    """The oracle: the counts from every (note, tag) row, as `tags` computed them before."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    visible = "t.file_id NOT IN (SELECT file_id FROM notes WHERE excluded = 1)"
    try:
        uses = conn.execute(
            f"SELECT k.tag_key, k.tag, count(*) FROM tags t JOIN tag_names k ON k.id = t.tag_id "
            f"WHERE {visible} GROUP BY t.tag_id ORDER BY k.tag_key, k.tag"
        ).fetchall()
        keys = {key for key, _, _ in uses}
        prefixes = sorted(
            {"/".join(k.split("/")[:d]) for k in keys for d in range(1, k.count("/") + 2)}
        )
        rollup = {
            p: conn.execute(
                f"SELECT count(DISTINCT t.file_id) FROM tags t JOIN tag_names k ON k.id = t.tag_id "
                f"WHERE {visible} AND (k.tag_key = ? OR k.tag_key LIKE ? ESCAPE '!')",
                (p, p.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "/%"),
            ).fetchone()[0]
            for p in prefixes
        }
        tagged = conn.execute(f"SELECT count(DISTINCT t.file_id) FROM tags t WHERE {visible}")
        return uses, rollup, tagged.fetchone()[0]
    finally:
        conn.close()


def _tag_counts_stored(db: Path) -> tuple[object, ...]:
    conn = connect_readonly(db)
    try:
        uses = [tuple(row) for row in listing_rows.tag_spellings(conn)]
        stored = listing_rows.notes_tagged_under(conn)
        keys = {key for key, _, _ in uses}
        wanted = {"/".join(k.split("/")[:d]) for k in keys for d in range(1, k.count("/") + 2)}
        return (
            uses,
            {k: stored.get(k, 0) for k in sorted(wanted)},
            listing_rows.tagged_note_count(conn),
        )
    finally:
        conn.close()


def _anchor_docs(db: Path) -> tuple[list[object], list[object]]:
    """(the stored documents, the same objects built by joining at read time)."""
    conn = connect_readonly(db)
    try:
        count, text = health_lists.health_list_json(conn, "brokenAnchors")
        stored = json.loads(b"[" + text + b"]")
        assert count == len(stored)
        return stored, [dict(row) for row in health_lists.broken_anchors(conn)]
    finally:
        conn.close()


@pytest.mark.slow
def test_tag_counts_and_anchor_documents_follow_every_kind_of_change(tmp_path: Path) -> None:
    vault = make_vault(
        tmp_path / "v",
        {
            "a.md": "# Top\n#Area/Work #area/home [[b#Gone]] [[b#Top]]\n",
            "b.md": "---\ntags: [area, Area/Work/deep]\n---\n# Top\n[[a#Nope]] #x\n",
            "Old/c.md": "#area/home/kid [[a#^blk]] [[Old/d#H]]\n",
            "Old/d.md": "#Área [[c#Missing]]\n",
            "e.md": "no tags [[a#Top]]\n",
        },
    )
    steps = [
        lambda: write(vault / "a.md", "# Top\n#area/WORK [[b#Gone]]\n"),  # spelling and count
        lambda: write(vault / "e.md", "#area/home/kid #new/one [[Old/c#Nope]]\n"),  # tags added
        lambda: (vault / "b.md").unlink(),  # a note and its tags gone; anchors into it too
        lambda: (vault / "Old" / "c.md").rename(vault / "Old" / "c2.md"),  # a move in place
        lambda: shutil.move(vault / "Old", vault / "New"),  # a folder: both ends renamed
        lambda: write(vault / ".obsidian" / "app.json", json.dumps({"userIgnoreFilters": ["e"]})),
        lambda: write(vault / "b.md", "# Top\n#area\n[[a#Top]] [[New/d#x]]\n"),  # back again
        lambda: write(vault / ".obsidian" / "app.json", json.dumps({"userIgnoreFilters": []})),
    ]
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        for step in [lambda: None, *steps]:
            step()
            reconcile(writer)
            assert _tag_counts_stored(db) == _tag_counts_from_scratch(db)
            stored, joined = _anchor_docs(db)
            assert stored == joined and stored
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


def test_a_save_recounts_only_the_tags_it_changed(tmp_path: Path) -> None:
    """Every statement is driven by the marked notes (tagged_dirty): no scan of tags, notes,
    tag_names or the counts beyond the excluded notes' index; nothing marked, no statement."""
    vault = make_vault(
        tmp_path / "v",
        {f"n{i}.md": f"#t{i % 5}/sub{i % 3} #top [[n{i + 1}]]\n" for i in range(200)},
    )
    counts = ("tag_uses", "tag_rollup", "tagged_notes", "tag_note_keys", "tagged_dirty")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        statements: list[str] = []
        write(vault / "n7.md", "#t9/new #top [[n8]]\n")  # one spelling gone, one new
        writer.conn.set_trace_callback(statements.append)
        reconcile(writer)
        writer.conn.set_trace_callback(None)
        # the marks themselves are read and emptied whole: they hold what changed, no more
        marks = ("SELECT 1 FROM tagged_dirty LIMIT 1", "DELETE FROM tagged_dirty")
        ours = {s for s in statements if s not in marks and any(t in s for t in counts)}
        ours = {
            s
            for s in ours
            if not s.lstrip().upper().startswith(("INSERT INTO TAGS", "DELETE FROM TAGS"))
        }
        plans = {
            s: [row[3] for row in writer.conn.execute("EXPLAIN QUERY PLAN " + s)] for s in ours
        }
        statements.clear()
        with writer.transaction() as conn:
            conn.set_trace_callback(statements.append)
            tagcounts.refresh(conn)  # nothing marked any more
            conn.set_trace_callback(None)
        assert [s for s in statements if not s.lstrip().startswith("SELECT 1")] == []
    assert any("tag_rollup" in s for s in plans) and any("tag_uses" in s for s in plans)
    for sql, plan in plans.items():
        for step in plan:
            if step.startswith("SCAN"):
                assert re.match(SCAN_OK, step), (sql, plan)
    assert _tag_counts_stored(tmp_path / "i.db") == _tag_counts_from_scratch(tmp_path / "i.db")


# What a refresh may scan: the marks (d), the excluded notes, and a marked note's own tag ids
# (j: json_each of its tag_note_keys row, whose keys are looked up by id).
SCAN_OK = r"SCAN (d|notes USING INDEX notes_excluded|j VIRTUAL TABLE INDEX \d+:)$"


@pytest.mark.parametrize("ids", [set(), {7}, {3, 1, 2}, {10**12, -1, 0}, set(range(50))])
def test_the_note_ids_json_is_json_dumps(ids: set[int]) -> None:
    """tag_note_keys.tag_ids as the JSON module writes it, and read back by it."""
    assert tagcounts._int_list(ids) == json.dumps(sorted(ids))
    assert json.loads(tagcounts._int_list(ids)) == sorted(ids)


@settings(max_examples=300)
@given(st.lists(st.text(st.characters(exclude_categories=())), min_size=1))  # surrogates too
def test_the_keys_derived_from_the_ids_are_the_keys_counted(keys: list[str]) -> None:
    """tag_note_keys keeps a note's tag ids only (issue 35, size): the keys a refresh
    subtracts, rolled up again from the ids' keys, are exactly the keys ``count`` added."""
    ids = list(range(len(keys)))
    rows, _, rollup = tagcounts.count(
        (json.dumps([1] * len(keys)), json.dumps(ids), json.dumps(keys))
    )
    assert rows == [(1, json.dumps(sorted(set(ids))))]
    assert tagcounts._rolled_up(keys) == set(rollup) and set(rollup.values()) == {1}


def test_a_spelling_counted_survives_the_prune_until_its_count_goes(tmp_path: Path) -> None:
    """What a note added is derived from the spellings it was counted with, so optimize's
    prune of unused spellings keeps those still counted: a note's tags deleted, the prune
    run before the refresh (as when an apply defers its findings), the counts stay exact."""
    vault = make_vault(tmp_path / "v", {"a.md": "#solo/deep/key\n", "b.md": "#other\n"})
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        with writer.transaction() as conn:
            (a,) = conn.execute("SELECT id FROM files WHERE path = 'a.md'").fetchone()
            findings.withdraw(conn, [a])  # its note_fts row holds its tags
            conn.execute("DELETE FROM tags WHERE file_id = ?", (a,))
            maintenance.prune_tag_names(conn)  # counted still: kept
            findings.refresh_fts(conn, set(), writer.links)  # the counts among the findings
            maintenance.prune_tag_names(conn)  # counted no more: gone
        rollup = writer.conn.execute("SELECT tag_key, notes FROM tag_rollup").fetchall()
        names = [r[0] for r in writer.conn.execute("SELECT tag FROM tag_names ORDER BY tag")]
    assert rollup == [("other", 1)] and names == ["other"]
    assert _tag_counts_stored(db) == _tag_counts_from_scratch(db)


def test_nested_and_flat_keys_count_for_every_prefix_once(tmp_path: Path) -> None:
    """A flat key is its own only prefix; a nested one counts for each of its parents."""
    vault = tmp_path / "v"
    write(vault / "a.md", "#x #x/y/z #w\n")
    write(vault / "b.md", "#x/y\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
    assert _tag_counts_stored(tmp_path / "i.db") == _tag_counts_from_scratch(tmp_path / "i.db")
    conn = sqlite3.connect(tmp_path / "i.db")
    rollup = dict(conn.execute("SELECT tag_key, notes FROM tag_rollup"))
    conn.close()
    assert rollup == {"x": 2, "x/y": 2, "x/y/z": 1, "w": 1}
