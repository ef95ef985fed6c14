"""store/health_lists.py: the health queries, their plans (links is never scanned) and the report
they make."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from notedex.store import health_lists, read
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
        getattr(health_lists, name)(spy)
    for name in ("orphanNotes", "unlinkedNotes", "deadEnds", "unusedAttachments"):
        captured[name] = health_lists.health_json_sql(name)
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


def _document_and_report(
    tmp_path: Path, files: dict[str, str]
) -> tuple[bytes, int, dict[str, Any]]:
    """The vault ``files`` indexed: health's SQLite-built document, its broken count, and the
    report ``query.reports.health`` builds, read in one connection."""
    from notedex.query.reports import health, health_json

    vault = make_vault(tmp_path / "v", files)
    db = tmp_path / "i.db"
    build(vault, db)
    conn = connect_readonly(db)
    try:
        document, broken = health_json(conn)
        return document, broken, health(conn)
    finally:
        conn.close()


def test_health_json_is_the_health_report_encoded(tmp_path: Path) -> None:
    """The SQLite-built document is byte for byte what emit_json writes for health() to a pipe."""
    import json

    document, broken, data = _document_and_report(
        tmp_path,
        {
            'Quote "q" \\ tab\t.md': '[[Missing "x"]] [[ctl\u0001]] ![[Nope.MD|w]]\n',
            "日本語 🎉.md": "---\ntitle: 'Ünïcode \u2028 title'\ntags: a, b\n---\n[t](No%20such.md)\n",
            "Lonely.md": "",
            "Linked.md": '[[Lonely]] [[日本語 🎉]] [[Lonely#"Nö" ^x]] [[#^a\tb]]\n# Real ^b\n',
            "bad.md": "---\n[: x\n---\n",
        },
    )
    expected = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    assert document == expected.encode()
    assert broken == data["brokenLinkCount"] + data["brokenAnchorCount"] == 4 + 2
    assert data["brokenAnchors"][0]["suggestion"] is None
    assert data["orphanNotes"] and data["unlinkedNotes"] and data["warnings"] and data["errors"]


def test_health_json_lists_warnings_as_health_does(tmp_path: Path) -> None:
    """warnings_json merges the stored warnings and the ambiguous links of each path in the
    order health() sorts them (stable by path: a path's stored warnings, then its links)."""
    import json

    document, _, data = _document_and_report(
        tmp_path,
        {
            "a/X.md": "",
            "b/X.md": "",
            "c/src.md": "---\ntags: [ok, two words]\nalias: old\n---\n[[X]] and [[X|again]]\n",
            "c/after.md": "---\ntags: [a b]\n---\n",
            "c/Before.md": "[[X]]\n",
            "bad.md": "---\n[: x\n---\n",
        },
    )
    messages = [(w["path"], w["message"][:20]) for w in data["warnings"]]
    assert sum("ambiguous" in w["message"] for w in data["warnings"]) == 3, messages
    assert [p for p, _ in messages].count("c/src.md") >= 3, messages  # both kinds on one path
    assert data["errors"]
    expected = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    assert document == expected.encode()
