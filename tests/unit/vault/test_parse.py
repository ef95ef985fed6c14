"""Parsing one note (vault/parse.py): SEMANTICS 3, the note's tags, reading bytes, and the
parsing half of the section 9 edge cases (frontmatter and Markdown have their own files).

Resolution outcomes of section 9 belong to the resolver's tests; here we pin the Link fields
the resolver starts from (kind, linkpath, subpath, display, line, column).
"""

from __future__ import annotations

import hashlib
import os
import sys
import unicodedata
from pathlib import Path

import pytest

from notedex.vault.model import Link, Note, Tag
from notedex.vault.parse import DEFAULT_MAX_BYTES, note_stem, parse_note, read_note
from tests.privileges import lockout


def parse(text: str, path: str = "Src.md") -> Note:
    return parse_note(text.encode("utf-8"), path)


def only_link(text: str) -> Link:
    links = parse(text).links
    assert len(links) == 1, links
    return links[0]


def tag_names(note: Note) -> list[str]:
    return [tag.name for tag in note.tags]


def link_fields(link: Link) -> tuple[object, ...]:
    return (link.kind, link.linkpath, link.subpath, link.display, link.line, link.column)


# --- SEMANTICS 9, one test per parsing case ------------------------------------------------------


@pytest.mark.parametrize("text", ["[[note]]", "[[NOTE]]", "[[Note.MD]]"])
def test_s9_case_variants_keep_the_written_spelling(text: str) -> None:
    assert link_fields(only_link(text)) == ("wikilink", text[2:-2], None, None, 1, 1)


def test_s9_heading_chain_subpath_and_display() -> None:
    link = only_link("[[Note#H1#H2|x]]")
    assert link_fields(link) == ("wikilink", "Note", "#H1#H2", "x", 1, 1)
    assert link.raw == "[[Note#H1#H2|x]]"


def test_s9_block_subpath() -> None:
    assert link_fields(only_link("[[Note#^blk]]")) == ("wikilink", "Note", "#^blk", None, 1, 1)


@pytest.mark.parametrize("text", ["[[ Note ]]", "[[\u00a0Note\u00a0]]", "[[Note\u00a0]]"])
def test_s9_spaces_and_nbsp_are_trimmed(text: str) -> None:
    assert only_link(text).linkpath == "Note"


def test_s9_inner_nbsp_becomes_a_space() -> None:
    assert only_link("[[My\u00a0Note]]").linkpath == "My Note"


@pytest.mark.parametrize("target", ["A/B/Dup", "a/b/dup", "wrong/Note", "Dup", "B/Dup"])
def test_s9_paths_are_kept_for_the_resolver(target: str) -> None:
    assert link_fields(only_link(f"[[{target}]]")) == ("wikilink", target, None, None, 1, 1)


@pytest.mark.parametrize("target", ["pic", "pic.png", "v1.2"])
def test_s9_names_with_and_without_extension(target: str) -> None:
    link = only_link(f"see [[{target}]]")
    assert (link.linkpath, link.subpath, link.column) == (target, None, 5)


def test_s9_embed_with_size() -> None:
    link = only_link("x ![[pic.png|100]] y")
    assert link_fields(link) == ("embed", "pic.png", None, "100", 1, 3)
    assert link.raw == "![[pic.png|100]]"


@pytest.mark.parametrize(
    ("text", "linkpath"),
    [
        ("[t](Note.md)", "Note.md"),
        ("[t](My%20Note.md)", "My Note.md"),
        ("[t](<My Note.md>)", "My Note.md"),
    ],
)
def test_s9_markdown_links(text: str, linkpath: str) -> None:
    link = only_link(text)
    assert link_fields(link) == ("markdown", linkpath, None, "t", 1, 1)
    assert link.raw == text


@pytest.mark.parametrize("text", ["[t](My Note.md)", "[t](https://x/#a)", "[t](bad%E0%A4%A.md)"])
def test_s9_markdown_non_links(text: str) -> None:
    assert parse(text).links == ()


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("`[[x]] #t`", id="inline-code"),
        pytest.param("```\n[[x]] #t\n```", id="backtick-fence"),
        pytest.param("~~~\n[[x]] #t\n~~~", id="tilde-fence"),
        pytest.param("text\n\n    [[x]] #t", id="indented-code"),
        pytest.param("$$[[x]] #t$$", id="display-math"),
        pytest.param("<div>[[x]] #t</div>", id="html-block"),
    ],
)
def test_s9_excluded_regions_give_nothing(text: str) -> None:
    note = parse(text)
    assert (note.links, note.tags) == ((), ())


def test_s9_comments_are_indexed() -> None:
    note = parse("%%[[x]] #t%%")
    assert [link_fields(link) for link in note.links] == [("wikilink", "x", None, None, 1, 3)]
    assert tag_names(note) == ["t"]


def test_s9_escaped_brackets_are_not_a_link() -> None:
    assert parse(r"\[\[x\]\]").links == ()


def test_s9_table_row_with_escaped_pipe_links_to_target() -> None:
    link = only_link("| [[A\\|B]] |")
    assert link_fields(link) == ("wikilink", "A", None, "B", 1, 3)
    assert link.raw == "[[A\\|B]]"


def test_s9_table_row_with_unescaped_pipe_gives_nothing() -> None:
    assert parse("| [[A|B]] |").links == ()


@pytest.mark.parametrize("text", ["[[]]", "[[a\nb]]"])
def test_s9_empty_and_multiline_wikilinks_give_nothing(text: str) -> None:
    assert parse(text).links == ()


def test_s9_frontmatter_tags_list() -> None:
    note = parse('---\ntags: [a, "#b", c/d]\n---\n')
    assert note.tags == (
        Tag("a", "frontmatter"),
        Tag("b", "frontmatter"),
        Tag("c/d", "frontmatter"),
    )
    assert note.warnings == ()


def test_s9_frontmatter_tags_string_is_one_tag() -> None:
    assert tag_names(parse("---\ntags: solo\n---\n")) == ["solo"]


def test_s9_frontmatter_tags_comma_string_gives_none_and_a_warning() -> None:
    note = parse("---\ntags: a, b\n---\n")
    assert note.tags == ()
    assert [(w.kind, w.message) for w in note.warnings] == [
        (
            "tag-with-space",
            "`tags:` item 'a, b' contains a space and is ignored by Obsidian; "
            "write a list (`tags: [a, b]`) or use - or _",
        )
    ]


def test_s9_frontmatter_tag_yes_stays_a_string() -> None:
    assert tag_names(parse("---\ntags: [yes]\n---\n")) == ["yes"]


def test_s9_frontmatter_tag_number_is_dropped_quoted_is_kept() -> None:
    assert parse("---\ntags: [2023]\n---\n").tags == ()
    assert tag_names(parse('---\ntags: ["2023"]\n---\n')) == ["2023"]


def test_s9_aliases_string_is_not_split() -> None:
    assert parse("---\naliases: AI, ML\n---\n").aliases == ("AI, ML",)


def test_s9_frontmatter_link() -> None:
    note = parse('---\nlink: "[[Note]]"\n---\nbody')
    assert [link_fields(link) for link in note.links] == [("frontmatter", "Note", None, None, 2, 8)]
    assert note.links[0].raw == "[[Note]]"


def test_s9_frontmatter_text_around_a_link_is_not_a_link() -> None:
    assert parse('---\nx: "see [[Note]]"\n---\n').links == ()


def test_s9_link_text_is_nfc() -> None:
    nfd = unicodedata.normalize("NFD", "Été")
    assert nfd != "Été"
    assert only_link(f"[[{nfd}]]").linkpath == "Été"
    assert only_link("[[ÉTÉ]]").linkpath == "ÉTÉ"


@pytest.mark.parametrize(("text", "subpath"), [("[[#Heading]]", "#Heading"), ("[[#^id]]", "#^id")])
def test_s9_self_links(text: str, subpath: str) -> None:
    link = only_link(text)
    assert (link.linkpath, link.subpath, link.is_self) == ("", subpath, True)


def test_s9_embed_and_frontmatter_links_are_references() -> None:
    note = parse('---\nup: "[[Parent]]"\n---\n![[Diagram.png]]')
    assert [(link.kind, link.linkpath) for link in note.links] == [
        ("frontmatter", "Parent"),
        ("embed", "Diagram.png"),
    ]


# --- SEMANTICS 3: title and identity -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "stem"),
    [("A/B/Dup.md", "Dup"), ("x.MD", "x"), ("v1.2.md", "v1.2"), ("Top.md", "Top"), ("a.b", "a.b")],
)
def test_stem(path: str, stem: str) -> None:
    assert note_stem(path) == stem
    assert parse("", path).stem == stem


@pytest.mark.parametrize(
    ("frontmatter", "title", "frontmatter_title"),
    [
        ("title: Shown", "Shown", "Shown"),
        ("title: '  Padded  '", "Padded", "Padded"),
        ("title: ''", "Stem", None),
        ("title: '   '", "Stem", None),
        ("title: 2023", "Stem", None),
        ("title: [a]", "Stem", None),
        ("other: x", "Stem", None),
    ],
)
def test_title_rules(frontmatter: str, title: str, frontmatter_title: str | None) -> None:
    note = parse(f"---\n{frontmatter}\n---\n# Heading", "Dir/Stem.md")
    assert (note.title, note.frontmatter_title, note.first_h1) == (
        title,
        frontmatter_title,
        "Heading",
    )


@pytest.mark.parametrize(
    ("text", "first_h1"),
    [
        ("# Title", "Title"),
        ("#   Spaced   ", "Spaced"),
        ("# Closed ##", "Closed"),
        ("# Hash#inside #", "Hash#inside"),
        ("   # Indented", "Indented"),
        ("intro\n## Two\n# One\n# Later", "One"),
        ("#\n# \n# Real", "Real"),
        ("```\n# In code\n```\n# After", "After"),
        ("# `code` title", "`code` title"),
        ("#Tag only", None),
        ("    # Indented code", None),
        ("> # Quoted", None),
        ("Setext\n===", "Setext"),  # setext level 1 is a level-1 heading too
        ("no heading", None),
    ],
)
def test_first_h1(text: str, first_h1: str | None) -> None:
    assert parse(text).first_h1 == first_h1


def test_identity_fields() -> None:
    note = parse("---\nid: 42\ntype: ' project '\nstatus: true\n---\n")
    assert (note.id, note.type, note.status) == ("42", "project", "true")


@pytest.mark.parametrize("frontmatter", ["", "id: ''", "id: null", "id:"])
def test_identity_absent_or_empty_is_none(frontmatter: str) -> None:
    assert parse(f"---\n{frontmatter}\n---\n").id is None


def test_identity_container_is_ignored_with_a_warning() -> None:
    note = parse("---\nstatus: [a, b]\n---\n")
    assert note.status is None
    assert [(w.kind, w.message) for w in note.warnings] == [
        ("not-single-value", "`status:` should be a single value; ['a', 'b'] is ignored")
    ]


# --- SEMANTICS 4: tags of a note -----------------------------------------------------------


def test_tags_unique_case_insensitively_first_spelling_frontmatter_first() -> None:
    note = parse("---\ntags: [Project]\n---\n#project #Other #PROJECT #other #new")
    assert note.tags == (
        Tag("Project", "frontmatter"),
        Tag("Other", "inline"),
        Tag("new", "inline"),
    )


def test_nested_tag_counts_for_its_parents() -> None:
    (tag,) = parse("#a/b/c").tags
    assert tag.prefixes() == ("a", "a/b", "a/b/c")


# --- bytes, encoding, size, reading ------------------------------------------------------------


def test_content_hash_is_sha256_of_the_bytes() -> None:
    data = b"---\ntitle: x\n---\nhello"
    assert parse_note(data, "a.md").content_hash == hashlib.sha256(data).hexdigest()


def test_body_is_text_without_frontmatter() -> None:
    assert parse("---\na: 1\n---\nline 1\nline 2\n").body == "line 1\nline 2\n"
    assert parse("no frontmatter\n").body == "no frontmatter\n"


def test_invalid_utf8_is_decoded_with_replacement() -> None:
    note = parse_note(b"ok\n\xff\xfe [[x]] #t", "a.md")
    assert [(e.kind, e.message) for e in note.errors] == [
        ("bad-encoding", "invalid UTF-8 at byte 3; decoded with replacement characters")
    ]
    assert note.body == "ok\n\ufffd\ufffd [[x]] #t"
    assert [(link.linkpath, link.line, link.column) for link in note.links] == [("x", 2, 4)]
    assert tag_names(note) == ["t"]


def test_binary_content_is_indexed_by_name_only() -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00[[x]] #t"
    note = parse_note(data, "img/Fake.md")
    assert [(e.kind, e.message) for e in note.errors] == [
        ("binary", "binary content (NUL bytes); not parsed as Markdown")
    ]
    assert (note.title, note.links, note.tags, note.body) == ("Fake", (), (), "")
    assert note.content_hash == hashlib.sha256(data).hexdigest()


def test_nul_after_the_first_8kb_is_still_text() -> None:
    note = parse_note(b"[[x]]" + b" " * 9000 + b"\x00", "a.md")
    assert [link.linkpath for link in note.links] == ["x"]
    assert note.errors == ()


def test_parse_note_over_the_cap() -> None:
    note = parse_note(b"x" * 5_200_000, "Big.md")
    assert [(e.kind, e.message) for e in note.errors] == [
        ("too-large", "file is 5.2 MB, over the 5.0 MB size cap; indexed by name only")
    ]
    assert (note.title, note.body, note.links) == ("Big", "", ())
    assert DEFAULT_MAX_BYTES == 5_000_000


def test_read_note_matches_parse_note(tmp_path: Path) -> None:
    data = "---\ntags: [a]\n---\n# Title: é\n[[Link]] #b\n".encode()
    (tmp_path / "Note.md").write_bytes(data)
    assert read_note(tmp_path / "Note.md", "Note.md") == parse_note(data, "Note.md")


def test_read_note_over_the_cap(tmp_path: Path) -> None:
    disk = tmp_path / "Big.md"
    disk.write_bytes(b"[[x]]" * 30)
    note = read_note(disk, "Dir/Big.md", max_bytes=100)
    assert [(e.kind, e.message) for e in note.errors] == [
        ("too-large", "file is 150 bytes, over the 100 bytes size cap; indexed by name only")
    ]
    assert (note.title, note.links, note.body) == ("Big", (), "")
    assert len(note.content_hash) == 64


def test_read_note_over_the_cap_hash_changes_past_the_cap(tmp_path: Path) -> None:
    disk = tmp_path / "Big.md"
    disk.write_bytes(b"a" * 3000)
    os.utime(disk, ns=(1_000_000_000, 1_000_000_000))
    before = read_note(disk, "Big.md", max_bytes=1000).content_hash
    disk.write_bytes(b"a" * 2000 + b"b" * 1000)
    os.utime(disk, ns=(2_000_000_000, 2_000_000_000))
    assert read_note(disk, "Big.md", max_bytes=1000).content_hash != before


@pytest.mark.parametrize("size_kb", [5, 999])
def test_size_message_in_kilobytes(tmp_path: Path, size_kb: int) -> None:
    disk = tmp_path / "K.md"
    disk.write_bytes(b"x" * (size_kb * 1000))
    note = read_note(disk, "K.md", max_bytes=2000)
    assert note.errors[0].message == (
        f"file is {size_kb}.0 KB, over the 2.0 KB size cap; indexed by name only"
    )


def test_read_note_on_a_directory(tmp_path: Path) -> None:
    (tmp_path / "Dir.md").mkdir()
    note = read_note(tmp_path / "Dir.md", "Dir.md")
    assert [(e.kind, e.message) for e in note.errors] == [
        ("read", "cannot read file: it is a directory")
    ]
    assert (note.title, note.links, note.content_hash) == ("Dir", (), "")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_read_note_closes_its_file_on_every_path(tmp_path: Path) -> None:
    (tmp_path / "Dir.md").mkdir()
    (tmp_path / "Big.md").write_bytes(b"x" * 200)
    (tmp_path / "Ok.md").write_bytes(b"[[x]]")
    before = len(list(Path("/proc/self/fd").iterdir()))
    for _ in range(20):
        read_note(tmp_path / "Dir.md", "Dir.md")
        read_note(tmp_path / "Big.md", "Big.md", max_bytes=100)
        read_note(tmp_path / "Ok.md", "Ok.md")
    assert len(list(Path("/proc/self/fd").iterdir())) == before


def test_read_note_on_a_vanished_file(tmp_path: Path) -> None:
    note = read_note(tmp_path / "Gone.md", "Gone.md")
    assert [(e.kind, e.message) for e in note.errors] == [
        ("read", "cannot read file: No such file or directory")
    ]
    assert note.title == "Gone"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlink loop")
def test_read_note_on_a_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "a.md").symlink_to(tmp_path / "b.md")
    (tmp_path / "b.md").symlink_to(tmp_path / "a.md")
    note = read_note(tmp_path / "a.md", "a.md")
    assert [(e.kind, e.message) for e in note.errors] == [
        ("read", "cannot read file: Too many levels of symbolic links")
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
@pytest.mark.parametrize("mode", ["privileges", "injection"])
def test_read_note_permission_denied(mode: str) -> None:
    """Runs for real as root too: the read happens in a child that dropped to `nobody`."""
    with lockout(mode) as (locker, base, chown):
        disk = base / "Secret.md"
        disk.write_text("[[x]]")
        chown()
        locker.lock(disk)

        def read() -> list[object]:
            note = read_note(disk, "Secret.md")
            return [[[e.kind, e.message] for e in note.errors], note.title, len(note.links)]

        errors, title, links = locker.call(read)
    assert errors == [["read", "cannot read file: Permission denied"]]
    assert (title, links) == ("Secret", 0)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_read_note_does_not_block_on_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "Pipe.md")
    note = read_note(tmp_path / "Pipe.md", "Pipe.md")
    assert [(e.kind, e.message) for e in note.errors] == [
        ("read", "cannot read file: it is not a regular file")
    ]


def test_a_parsed_note_pickles_as_a_call_of_its_class_and_comes_back_equal() -> None:
    """Parsed notes cross from the parse workers to the writer (vault.model._Value): every
    field, nested values and the frontmatter mapping included, comes back; no dataclass
    ``__setstate__`` runs."""
    import pickle
    import pickletools

    data = (
        b"---\ntitle: T\naliases: [A]\ntags: [x/y]\nwhen: 2024-01-02\n---\n"
        b"# Head\n\nSee [[B#Sec|b]] and ![img](p.png) #tag ^blk\n\nSetext\n---\n"
    )
    note = parse_note(data, "n.md")
    assert note.links and note.tags and note.headings and note.block_ids and note.properties
    blob = pickle.dumps(note)
    back = pickle.loads(blob)
    assert back == note and back.properties == note.properties
    assert type(back.links[0]) is type(note.links[0]) and back.headings == note.headings
    assert all(op.name != "BUILD" for op, _arg, _pos in pickletools.genops(blob))
