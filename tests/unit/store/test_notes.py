"""store/notes.py: the compact link rows read back as the parser wrote them."""

from __future__ import annotations

from pathlib import Path

from notedex.store import read
from notedex.store.connect import connect_readonly
from tests.indexcheck import fts_sound_after, make_vault
from tests.unit.store import build

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


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
