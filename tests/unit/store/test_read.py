"""store/read.py: the health queries, their plans (links is never scanned) and the report they make."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from notedex.store import read
from notedex.store.connect import connect_readonly
from tests.indexcheck import fts_sound_after, make_vault
from tests.unit.store import build

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def _health_sql(conn: sqlite3.Connection) -> dict[str, tuple[str, tuple[object, ...]]]:
    """The SQL each health query runs, captured from the real functions."""
    captured: dict[str, tuple[str, tuple[object, ...]]] = {}

    class Spy:
        name = ""

        def execute(self, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Cursor:
            captured[self.name] = (sql, params)
            return conn.execute(sql, params)

    spy = Spy()
    for name in ("broken_links", "ambiguous_links"):
        spy.name = name
        getattr(read, name)(spy)
    for name in ("orphanNotes", "unlinkedNotes", "deadEnds", "unusedAttachments"):
        captured[name] = read.health_json_sql(name)
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
                if name in ("orphanNotes", "unlinkedNotes", "deadEnds", "broken_links"):
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
    finally:
        conn.close()
    assert [o["path"] for o in data["orphanNotes"]] == ["orphan.md"]
    assert [u["path"] for u in data["unlinkedNotes"]] == [
        "broken-only.md",
        "embedder.md",
        "fm.md",
        "pic-user.md",
    ]


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
            "Linked.md": '[[Lonely]] [[日本語 🎉]] [[Lonely#"Nö" ^x]] [[#^a\tb]]\n# Real ^b\n',
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
    expected = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    assert document == expected.encode()
    assert broken == data["brokenLinkCount"] + data["brokenAnchorCount"] == 4 + 2
    assert data["brokenAnchors"][0]["suggestion"] is None
    assert data["orphanNotes"] and data["unlinkedNotes"] and data["warnings"] and data["errors"]


def test_health_json_lists_warnings_as_health_does(tmp_path: Path) -> None:
    """warnings_json merges the stored warnings and the ambiguous links of each path in the
    order health() sorts them (stable by path: a path's stored warnings, then its links)."""
    import json

    from notedex.query.reports import health, health_json

    vault = make_vault(
        tmp_path / "v",
        {
            "a/X.md": "",
            "b/X.md": "",
            "c/src.md": "---\ntags: [ok, two words]\nalias: old\n---\n[[X]] and [[X|again]]\n",
            "c/after.md": "---\ntags: [a b]\n---\n",
            "c/Before.md": "[[X]]\n",
            "bad.md": "---\n[: x\n---\n",
        },
    )
    db = tmp_path / "i.db"
    build(vault, db)
    conn = connect_readonly(db)
    try:
        document, _ = health_json(conn)
        data = health(conn)
    finally:
        conn.close()
    messages = [(w["path"], w["message"][:20]) for w in data["warnings"]]
    assert sum("ambiguous" in w["message"] for w in data["warnings"]) == 3, messages
    assert [p for p, _ in messages].count("c/src.md") >= 3, messages  # both kinds on one path
    assert data["errors"]
    expected = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    assert document == expected.encode()


def test_json_lists_keep_the_order_of_their_rows(tmp_path: Path) -> None:
    """group_concat over an ordered subquery concatenates in that order (here against the
    table's own key order, so a planner that dropped the ORDER BY would fail this)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany(
        "INSERT INTO t VALUES (?, ?)", [(i, f"v{(i * 7919) % 1000}") for i in range(1000)]
    )
    count, text = read._json_list(conn, "SELECT json_quote(v) AS j FROM t ORDER BY v DESC")
    values = [f"v{(i * 7919) % 1000}" for i in range(1000)]
    assert count == 1000
    assert text == ",".join(f'"{v}"' for v in sorted(values, reverse=True)).encode()
    assert read._json_list(conn, "SELECT v AS j FROM t WHERE k < 0") == (0, b"")


def test_notes_by_title_through_the_trigram_index_equals_the_scan(tmp_path: Path) -> None:
    """The title index only narrows: for every form (title, stem, path with and without .md,
    any case, CJK, names with cased letters beyond ASCII, too short for trigrams) the notes
    found are those a fold of every note's names finds."""
    import unicodedata

    from notedex.store.schema import NOTE_TITLE

    names = {
        "Road Map.md": "",
        "sub/ROAD MAP.md": "",
        "x/Roadmap 2.md": "---\ntitle: Road map\n---\n",
        "日本語のノート.md": "",
        "Été Plan.md": "",
        "İstanbul trip.md": "",
        "ΟΔΟΣ.md": "",
        "ab.md": "",
        "deep/er/Quiet.md": "---\ntitle: 한국어 제목\n---\n",
    }
    vault = make_vault(tmp_path / "v", names)
    db = tmp_path / "i.db"
    build(vault, db)
    conn = connect_readonly(db)

    def fold(text: str) -> str:
        return unicodedata.normalize("NFC", text).lower()

    def scanned(title: str) -> list[str]:
        key = fold(title)
        return [
            row["path"]
            for row in conn.execute(
                f"SELECT f.path, n.stem, {NOTE_TITLE} AS title FROM notes n "
                "JOIN files f ON f.id = n.file_id ORDER BY length(f.path), f.path"
            )
            if fold(row["path"]) in (key, key + ".md")
            or key in (fold(row["stem"]), fold(row["title"]))
        ]

    asked = [
        "road map",
        "ROAD MAP",
        "Road Map.md",
        "sub/road map",
        "SUB/ROAD MAP.MD",
        "road map 2",
        "x/roadmap 2",
        "日本語のノート",
        "日本語のノート.md",
        "été plan",
        "ÉTÉ PLAN",
        "i̇stanbul trip",
        "İSTANBUL TRIP",
        "οδος",
        "ΟΔΟΣ",
        "AB",
        "ab.md",
        "한국어 제목",
        "deep/er/quiet",
        "quiet",
        "nothing here",
        "Road",
    ]
    try:
        found = {title: [r["path"] for r in read.notes_by_title(conn, title)] for title in asked}
        assert found == {title: scanned(title) for title in asked}
    finally:
        conn.close()
    assert found["ROAD MAP"] == ["Road Map.md", "x/Roadmap 2.md", "sub/ROAD MAP.md"]
    assert found["日本語のノート"] and found["ÉTÉ PLAN"] and found["한국어 제목"] and found["AB"]
    assert read._title_candidates(fold("road map")) is not None  # the index was used
    # A plain title is one trigram search; a path's stem needs its own phrase.
    assert "UNION" not in (read._title_candidates(fold("road map")) or "UNION")
    assert "UNION" in (read._title_candidates(fold("sub/road map")) or "")
    assert "UNION" in (read._title_candidates(fold("road map.md")) or "")
    assert read._title_candidates(fold("ÉTÉ PLAN")) is None  # a cased letter beyond ASCII
