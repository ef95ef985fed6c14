"""store/notes.py: the compact link rows read back as the parser wrote them."""

from __future__ import annotations

from pathlib import Path

from notedex.indexing.reconcile import reconcile
from notedex.store import health_lists, one_note
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
        row = one_note.note_by_path(conn, "Src.md")
        assert row is not None
        stored = one_note.outgoing_links(conn, row["file_id"])
        raw_null = conn.execute("SELECT count(*) FROM links WHERE raw IS NULL").fetchone()[0]
        broken = {r["text"]: r["target"] for r in health_lists.broken_links(conn)}
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


def _exact_rows(db: Path) -> set[tuple[str, str, int]]:
    conn = connect_readonly(db)
    try:
        rows = conn.execute(
            "SELECT x.key, f.path, x.alias FROM exact_names x JOIN files f ON f.id = x.file_id"
        ).fetchall()
        return {tuple(row) for row in rows}
    finally:
        conn.close()


def test_exact_names_follow_titles_aliases_moves_and_deletes(tmp_path: Path) -> None:
    """exact_names (lookup's tier 1) holds each note's folded stem, frontmatter title, first H1
    and aliases, once per key; edits, a rename (a move: same row id, new stem), a folder move
    and a delete keep it equal to what a fresh index holds."""
    from notedex.indexing.reconcile import reconcile
    from notedex.store.writer import IndexWriter
    from tests.helpers import dump_index, fresh_full_index, write

    vault = make_vault(
        tmp_path / "v",
        {
            "Manage Vaults.md": "---\ntitle: Ｍａｎａｇｅ vault\naliases: [MV, mv, 整理]\n---\n# Vaults!\n",
            "F/Cobra CLI.md": "# Cobra\n",
            "Gone.md": "---\naliases: [Away]\n---\n",
            "Empty !!.md": "---\naliases: ['!!']\n---\n",
        },
    )
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        assert _exact_rows(db) == {
            ("manage vault", "Manage Vaults.md", 0),  # stem and the width-folded title: one row
            ("vault", "Manage Vaults.md", 0),
            ("mv", "Manage Vaults.md", 1),
            ("整理", "Manage Vaults.md", 1),
            ("cobra cli", "F/Cobra CLI.md", 0),
            ("cobra", "F/Cobra CLI.md", 0),
            ("gone", "Gone.md", 0),
            ("away", "Gone.md", 1),
            ("empty", "Empty !!.md", 0),  # an alias with no word has no key
        }
        conn = connect_readonly(db)
        cobra_id = one_note.note_by_path(conn, "F/Cobra CLI.md")["file_id"]  # type: ignore[index]
        conn.close()
        (vault / "F" / "Cobra CLI.md").rename(vault / "F" / "Viper.md")  # a move: new stem
        (vault / "F").rename(vault / "G")  # a folder move: the stem stays
        write(vault / "Manage Vaults.md", "---\naliases: [Other]\n---\n")
        (vault / "Gone.md").unlink()
        reconcile(writer)
    conn = connect_readonly(db)
    assert one_note.note_by_path(conn, "G/Viper.md")["file_id"] == cobra_id  # type: ignore[index]
    conn.close()
    assert _exact_rows(db) == {
        ("manage vault", "Manage Vaults.md", 0),
        ("other", "Manage Vaults.md", 1),
        ("viper", "G/Viper.md", 0),
        ("cobra", "G/Viper.md", 0),
        ("empty", "Empty !!.md", 0),
    }
    assert dump_index(db) == fresh_full_index(vault, tmp_path)


def test_a_notes_exact_names_derived_again_from_its_rows_are_its_rows(tmp_path: Path) -> None:
    """The writer deletes a note's exact names by their keys, derived again from its notes and
    aliases rows (issue 35, size: no index by note): for every note, stop and hub words, a
    particle, a width fold, a title equal to the stem, an alias with no word, the derivation
    gives exactly its stored rows."""
    from notedex.store.notes import _stored_exact_names
    from notedex.store.writer import IndexWriter

    vault = make_vault(
        tmp_path / "v",
        {
            "Manage Vaults.md": "---\ntitle: Ｍａｎａｇｅ vault\naliases: [MV, mv, 整理]\n---\n# Vaults!\n",
            "The Guide to Python MOC.md": "---\naliases: [the one, 東京の天気, '!!']\n---\n# Index\n",
            "Kafka.md": "---\ntitle: Kafka\n---\n# Kafka\n",
            "F/東京の天気.md": "# 東京 天気 Dashboard\n",
            "Plain.md": "no title at all\n",
        },
    )
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        conn = writer.conn
        ids = [row[0] for row in conn.execute("SELECT file_id FROM notes")]
        assert len(ids) == 5
        for file_id in ids:
            stored = set(
                conn.execute(
                    "SELECT key, file_id, alias FROM exact_names WHERE file_id = ?", (file_id,)
                )
            )
            assert stored and _stored_exact_names(conn, file_id) == stored


def test_note_fts_texts_equal_the_view(tmp_path: Path) -> None:
    """``noterows.note_fts_texts`` (what a build aside stages for note_fts and name_fts) is the
    ``note_fts_text`` view's row of each note, as written: titles, tag spellings (nested, in
    two cases, repeated) and aliases in order, CJK segmented, '' where there are none."""
    from notedex.store.noterows import note_fts_texts
    from notedex.store.writer import IndexWriter
    from notedex.vault.parse import read_note

    vault = make_vault(
        tmp_path / "v",
        {
            "Plain.md": "no title, no tags\n",
            "Titled.md": "---\ntitle: Front Title\naliases: [One, 'Two words', One]\n---\n# H1 here\n",
            "会议记录.md": "---\ntags: [项目/进行中, Project, project]\naliases: [周会]\n---\n"
            "# 第一次会议\n#日本語タグ #Project text #a/b/c\n",
            "한국어 노트.md": "---\naliases:\n  - 회의록\n  - ''\n---\n본문 #태그\n",
            "Only tags.md": "#x #y/z #x\n",
            "Setext.md": "Heading\n=======\n\n  ",
        },
    )
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        view = {
            path: (title, tags, aliases)
            for path, title, tags, aliases in writer.conn.execute(
                "SELECT f.path, v.title, v.tags, v.aliases FROM note_fts_text v "
                "JOIN files f ON f.id = v.file_id"
            )
        }
    assert len(view) == 6
    assert view["会议记录.md"][1] != ""  # the vault has what the comparison is about
    assert view["Titled.md"][2] != ""
    for path, row in view.items():
        assert note_fts_texts(read_note(str(vault / path), path)) == row, path
