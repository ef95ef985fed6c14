"""store/one_note.py: the note a name means; the title index only narrows the fold of every name."""

from __future__ import annotations

from pathlib import Path

from notedex.store import one_note
from notedex.store.connect import connect_readonly
from tests.indexcheck import fts_sound_after, make_vault
from tests.unit.store import build

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


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
        found = {
            title: [r["path"] for r in one_note.notes_by_title(conn, title)] for title in asked
        }
        assert found == {title: scanned(title) for title in asked}
    finally:
        conn.close()
    assert found["ROAD MAP"] == ["Road Map.md", "x/Roadmap 2.md", "sub/ROAD MAP.md"]
    assert found["日本語のノート"] and found["ÉTÉ PLAN"] and found["한국어 제목"] and found["AB"]
    assert one_note._title_candidates(fold("road map")) is not None  # the index was used
    # A plain title is one trigram search; a path's stem needs its own phrase.
    assert "UNION" not in (one_note._title_candidates(fold("road map")) or "UNION")
    assert "UNION" in (one_note._title_candidates(fold("sub/road map")) or "")
    assert "UNION" in (one_note._title_candidates(fold("road map.md")) or "")
    assert one_note._title_candidates(fold("ÉTÉ PLAN")) is None  # a cased letter beyond ASCII
