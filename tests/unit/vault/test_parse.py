"""Parsing one note: SEMANTICS 2-6 and the parsing half of the section 9 edge cases.

Resolution outcomes of section 9 belong to the resolver's tests; here we pin the Link fields
the resolver starts from (kind, linkpath, subpath, display, line, column).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import unicodedata
from pathlib import Path

import pytest

from notedex.vault.model import Link, Note, Tag
from notedex.vault.parse import DEFAULT_MAX_BYTES, note_stem, parse_note, read_note


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
            "tag",
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


# --- SEMANTICS 2: frontmatter ------------------------------------------------------------------


def test_frontmatter_with_crlf() -> None:
    note = parse('---\r\ntitle: Hello\r\nlink: "[[Note]]"\r\n---\r\n# H\r\n[[a]]\r\n')
    assert note.properties == {"title": "Hello", "link": "[[Note]]"}
    assert note.title == "Hello"
    assert note.first_h1 == "H"
    assert [(link.linkpath, link.line, link.column) for link in note.links] == [
        ("Note", 3, 8),
        ("a", 6, 1),
    ]
    assert note.body == "# H\r\n[[a]]\r\n"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("\n---\ntags: [a]\n---\n", id="blank-line-first"),
        pytest.param(" ---\ntags: [a]\n---\n", id="indented-opener"),
        pytest.param("--- \ntags: [a]\n---\n", id="trailing-space-opener"),
        pytest.param("----\ntags: [a]\n---\n", id="four-dashes"),
        pytest.param("---\ntags: [a]\n", id="never-closed"),
        pytest.param("---\ntags: [a]\n--- \n", id="closing-with-space"),
        pytest.param("---\ntags: [a]\n ---\n", id="closing-indented"),
    ],
)
def test_frontmatter_only_at_byte_0_and_closed_by_an_exact_line(text: str) -> None:
    note = parse(text)
    assert (note.properties, note.tags, note.errors) == ({}, (), ())
    assert note.body == text


def test_frontmatter_closing_at_end_of_file() -> None:
    note = parse("---\na: 1\n---")
    assert (note.properties, note.body) == ({"a": 1}, "")


def test_empty_frontmatter_is_not_an_error() -> None:
    note = parse("---\n---\nbody [[x]]")
    assert (note.properties, note.errors, note.body) == ({}, (), "body [[x]]")
    assert note.links[0].line == 3


def test_utf8_bom_before_frontmatter_is_ignored() -> None:
    note = parse_note(b"\xef\xbb\xbf---\ntitle: T\n---\n[[x]]", "Src.md")
    assert note.title == "T"
    assert (note.links[0].line, note.links[0].column) == (4, 1)


def test_property_names_are_case_insensitive() -> None:
    note = parse("---\nTags: [a]\nALIASES: [Al]\nTitle: Shown\nID: 7\n---\n")
    assert (tag_names(note), note.aliases, note.title, note.id) == (["a"], ("Al",), "Shown", "7")
    assert note.properties == {"Tags": ["a"], "ALIASES": ["Al"], "Title": "Shown", "ID": 7}


def test_properties_differing_only_by_case_first_wins() -> None:
    note = parse("---\ntags: [first]\nTags: [second]\n---\n")
    assert tag_names(note) == ["first"]
    assert note.properties == {"tags": ["first"]}
    assert [(w.kind, w.message) for w in note.warnings] == [
        ("property", "duplicate property `Tags` ignored; the first one is used")
    ]


def test_invalid_yaml_keeps_the_body() -> None:
    note = parse("---\ntitle: [unclosed\ntags: a\n---\n# Heading #inline\n[[Target]]", "N/Name.md")
    assert note.properties == {}
    assert (note.title, note.first_h1, tag_names(note)) == ("Name", "Heading #inline", ["inline"])
    assert [(link.linkpath, link.line) for link in note.links] == [("Target", 6)]
    assert len(note.errors) == 1
    assert note.errors[0].kind == "yaml"
    assert note.errors[0].message.startswith("invalid YAML in frontmatter at line 3: ")
    assert note.errors[0].message.endswith("; properties ignored")


@pytest.mark.parametrize(
    ("yaml_text", "shape"), [("- a\n- b", "a list"), ("just text", "a single value")]
)
def test_non_mapping_frontmatter_is_an_error(yaml_text: str, shape: str) -> None:
    note = parse(f"---\n{yaml_text}\n---\n[[x]]")
    assert note.properties == {}
    assert [(e.kind, e.message) for e in note.errors] == [
        ("yaml", f"frontmatter is {shape}, not a mapping of properties; properties ignored")
    ]
    assert [link.linkpath for link in note.links] == ["x"]


@pytest.mark.parametrize(
    ("scalar", "value"),
    [
        ("yes", "yes"),
        ("no", "no"),
        ("on", "on"),
        ("off", "off"),
        ("y", "y"),
        ("n", "n"),
        ("Yes", "Yes"),
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("FALSE", False),
        ("tRuE", "tRuE"),
        ("012", 12),
        ("0o17", 15),
        ("0x1F", 31),
        ("-3", -3),
        ("1:20", "1:20"),
        ("1_000", "1_000"),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        (".inf", "inf"),
        ("null", None),
        ("~", None),
        ("", None),
        ("=", "="),
        ("<<", "<<"),
    ],
)
def test_yaml_12_core_scalars(scalar: str, value: object) -> None:
    note = parse(f"---\nv: {scalar}\n---\n")
    assert note.errors == ()
    assert note.properties == {"v": value}
    assert type(note.properties["v"]) is type(value)


@pytest.mark.parametrize(
    ("scalar", "iso"),
    [
        ("2023-01-05", "2023-01-05"),
        ("2023-01-05 10:30:00", "2023-01-05T10:30:00"),
        ("2023-01-05T10:30:00Z", "2023-01-05T10:30:00+00:00"),
        ("2023-02-30", "2023-02-30"),  # not a date: kept as written
    ],
)
def test_dates_become_iso_strings(scalar: str, iso: str) -> None:
    note = parse(f"---\ncreated: {scalar}\nid: {scalar}\n---\n")
    assert note.properties == {"created": iso, "id": iso}
    assert note.id == iso


def test_properties_are_json_safe() -> None:
    note = parse(
        "---\nd: 2023-01-05\nb: !!binary aGk=\ns: !!set {x: null}\nf: -.inf\n"
        "nested: {when: 2024-02-29, list: [1, {k: 2023-01-01}]}\n---\n"
    )
    assert json.loads(json.dumps(note.properties, allow_nan=False)) == {
        "d": "2023-01-05",
        "b": "aGk=",
        "s": ["x"],
        "f": "-inf",
        "nested": {"when": "2024-02-29", "list": [1, {"k": "2023-01-01"}]},
    }


def test_yaml_alias_bomb_is_refused_cheaply() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for name, previous in zip("bcdefghi", "abcdefgh"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    note = parse("---\n" + "\n".join(lines) + "\n---\n[[x]]")
    assert note.properties == {}
    assert [(e.kind, e.message) for e in note.errors] == [
        (
            "yaml",
            "frontmatter expands to more than 100000 values through YAML aliases; "
            "properties ignored",
        )
    ]
    assert [link.linkpath for link in note.links] == ["x"]


def test_small_aliases_are_fine() -> None:
    note = parse("---\nbase: &b [x, y]\ncopy: *b\n---\n")
    assert (note.properties, note.errors) == ({"base": ["x", "y"], "copy": ["x", "y"]}, ())


def test_recursive_yaml_alias_is_an_error() -> None:
    note = parse("---\na: &a [*a]\n---\n")
    assert note.properties == {}
    assert note.errors[0].message == (
        "frontmatter has a YAML alias that contains itself; properties ignored"
    )


@pytest.mark.parametrize(
    "yaml_text",
    ["x: !!python/object/apply:os.system [echo hi]", "x: !!int abc", "x: !custom 1"],
)
def test_unsafe_or_broken_tags_are_errors(yaml_text: str) -> None:
    note = parse(f"---\n{yaml_text}\n---\n")
    assert note.properties == {}
    assert [e.kind for e in note.errors] == ["yaml"]


def test_absurdly_deep_yaml_is_an_error_not_a_crash() -> None:
    note = parse("---\na: " + "[" * 900 + "]" * 900 + "\n---\n[[x]]")
    assert note.properties == {}
    assert [(e.kind, e.message) for e in note.errors] == [
        ("yaml", "frontmatter is nested too deeply to read; properties ignored")
    ]
    assert [link.linkpath for link in note.links] == ["x"]


def test_unquoted_double_brackets_are_a_nested_list() -> None:
    note = parse("---\nx: [[Y]]\n---\n")
    assert (note.properties, note.links) == ({"x": [["Y"]]}, ())


def test_frontmatter_links_at_any_depth_point_at_their_bracket() -> None:
    text = (
        "---\n"
        "related:\n"
        "  - '[[A]]'\n"
        '  - {up: "[[B#Sec|shown]]", other: "[[C]] and [[D]]"}\n'
        "block: |-\n"
        "  [[E]]\n"
        "---\n"
    )
    note = parse(text)
    assert [link_fields(link) for link in note.links] == [
        ("frontmatter", "A", None, None, 3, 6),
        ("frontmatter", "B", "#Sec", "shown", 4, 11),
        ("frontmatter", "E", None, None, 6, 3),
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
        ("property", "`status:` should be a single value; ['a', 'b'] is ignored")
    ]


# --- SEMANTICS 4: tags -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("#tag", ["tag"]),
        ("a #tag b", ["tag"]),
        ("foo#bar", []),
        ("https://x.y/#frag", []),
        ("#1984", []),
        ("#y1984", ["y1984"]),
        ("#12-3", ["12-3"]),
        ("#日本語", ["日本語"]),
        ("#🎉", ["🎉"]),
        ("#tag.", ["tag"]),
        ("#don't", ["don"]),
        ("#tag。", ["tag。"]),
        ("# Heading", []),
        ("#Heading", ["Heading"]),
        ("**#bold**", ["bold"]),
        ("_#under", ["under"]),
        ("[[Note]]#after", ["after"]),
        ("[t](Note.md)#after", ["after"]),
        ("`code`#after", ["after"]),
        ("#a/b/c", ["a/b/c"]),
        ("#a#b", ["a"]),
        ("#snake_case-and-dash", ["snake_case-and-dash"]),
        ("#em\u2014dash", ["em"]),
        ("#x\u2e2ey", ["x"]),
        ("(#paren)", []),
        ("\\#escaped", []),
        ("[[Note|#display]]", []),
        ("[[Note#Heading]]", []),
        ("[#text](Note.md)", []),
        ("tab\t#tab", ["tab"]),
        ("nbsp\u00a0#nbsp", ["nbsp"]),
        ("line\n#two", ["two"]),
    ],
)
def test_inline_tag_grammar(text: str, tags: list[str]) -> None:
    assert tag_names(parse(text)) == tags


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


def test_frontmatter_tag_warnings() -> None:
    note = parse("---\ntag: single\ntags: [ok, 2023, '', '#', null, two words, true]\n---\n")
    assert tag_names(note) == ["ok"]
    assert [(w.kind, w.message) for w in note.warnings] == [
        ("tag", "`tag:` is ignored by Obsidian; use `tags:`"),
        (
            "tag",
            "`tags:` item 2023 is not text and is ignored by Obsidian; "
            'quote it ("2023") to make it a tag',
        ),
        ("tag", "`tags:` item '' is empty; ignored"),
        ("tag", "`tags:` item '#' is empty; ignored"),
        ("tag", "`tags:` has an empty item; ignored"),
        (
            "tag",
            "`tags:` item 'two words' contains a space and is ignored by Obsidian; "
            "write a list (`tags: [a, b]`) or use - or _",
        ),
        (
            "tag",
            "`tags:` item true is not text and is ignored by Obsidian; "
            'quote it ("true") to make it a tag',
        ),
    ]


def test_frontmatter_tags_mapping_is_ignored_with_a_warning() -> None:
    note = parse("---\ntags: {a: 1}\n---\n")
    assert note.tags == ()
    assert [w.message for w in note.warnings] == [
        "`tags:` should be a string or a list; {'a': 1} is ignored"
    ]


def test_empty_tags_key_is_silent() -> None:
    note = parse("---\ntags:\n---\n")
    assert (note.tags, note.warnings) == ((), ())


# --- SEMANTICS 5: aliases ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frontmatter", "aliases"),
    [
        ("aliases: solo", ("solo",)),
        ("aliases: [' A ', B, '', '  ']", ("A", "B")),
        ("aliases: [x, x]", ("x",)),
        ("Aliases:\n  - One\n  - Two", ("One", "Two")),
        ("aliases:", ()),
    ],
)
def test_aliases(frontmatter: str, aliases: tuple[str, ...]) -> None:
    note = parse(f"---\n{frontmatter}\n---\n")
    assert (note.aliases, note.warnings) == (aliases, ())


def test_alias_key_is_ignored_with_a_warning() -> None:
    note = parse("---\nalias: AI\n---\n")
    assert note.aliases == ()
    assert [(w.kind, w.message) for w in note.warnings] == [
        ("property", "`alias:` is ignored by Obsidian; use `aliases:`")
    ]


def test_non_text_alias_items_are_dropped_with_a_warning() -> None:
    note = parse("---\naliases: [1984, AI]\n---\n")
    assert note.aliases == ("AI",)
    assert [(w.kind, w.message) for w in note.warnings] == [
        ("property", "`aliases:` item 1984 is not text and is ignored by Obsidian")
    ]


# --- SEMANTICS 6: links ------------------------------------------------------------------------


def test_links_in_document_order_with_positions() -> None:
    text = "---\ntitle: T\n---\nintro [t](Note.md) and [[B]]\n\n日本 ![[pic.png]] ![alt](img/a.png)"
    note = parse(text)
    assert [link_fields(link) for link in note.links] == [
        ("markdown", "Note.md", None, "t", 4, 7),
        ("wikilink", "B", None, None, 4, 24),
        ("embed", "pic.png", None, None, 6, 4),
        ("markdown-embed", "img/a.png", None, "alt", 6, 17),
    ]


def test_wikilinks_are_non_greedy_and_skip_an_inner_opening() -> None:
    note = parse("[[a]] and [[b]] then [[c [[d]]")
    assert [(link.linkpath, link.column) for link in note.links] == [("a", 1), ("b", 11), ("d", 26)]


@pytest.mark.parametrize(
    ("text", "linkpath", "subpath", "display"),
    [
        ("[[|x]]", "|x", None, None),  # a `|` at position 0 does not split
        ("[[a|]]", "a", None, ""),
        ("[[a|b|c]]", "a", None, "b|c"),
        ("[[a\\|b]]", "a", None, "b"),
        ("[[a\\\\|b]]", "a\\", None, "b"),  # only one trailing backslash is dropped
        ("[[ a #h ]]", "a", "#h", None),
        ("[[a#h|shown]]", "a", "#h", "shown"),
        ("[[#]]", "", "#", None),
    ],
)
def test_wikilink_target_and_display_split(
    text: str, linkpath: str, subpath: str | None, display: str | None
) -> None:
    link = only_link(text)
    assert (link.linkpath, link.subpath, link.display) == (linkpath, subpath, display)


@pytest.mark.parametrize("text", ["[[ ]]", "[[\u00a0]]", "[[ | x]]"])
def test_blank_wikilink_targets_give_nothing(text: str) -> None:
    assert parse(text).links == ()


@pytest.mark.parametrize(
    ("text", "linkpath", "subpath"),
    [
        ("[t](Note.md#Head%20ing)", "Note.md", "#Head ing"),
        ("[t](#Heading)", "", "#Heading"),
        ("[t](C%23.md)", "C#.md", None),
        ("[t](Caf%C3%A9.md)", "Café.md", None),
        ("[t](Cafe%CC%81.md)", "Café.md", None),
        ("[t](sub/My%C2%A0Note.md)", "sub/My Note.md", None),
        ('[t](Note.md "A title")', "Note.md", None),
        ("[t](<../Up One.md>)", "../Up One.md", None),
        ("[t](a(b).md)", "a(b).md", None),
    ],
)
def test_markdown_link_targets(text: str, linkpath: str, subpath: str | None) -> None:
    link = only_link(text)
    assert (link.kind, link.linkpath, link.subpath) == ("markdown", linkpath, subpath)


@pytest.mark.parametrize(
    "text",
    [
        "[t](mailto:a@b.c)",
        "[t](obsidian://open?vault=x)",
        "[t](//host/x.md)",
        "[t](file:///x.md)",
        "[t]()",
        "[t](<>)",
        "[t](%E0%A4.md)",
        "[t][ref]\n\n[ref]: Note.md",
        "[t]\n(Note.md)",
    ],
)
def test_markdown_non_internal_or_malformed(text: str) -> None:
    assert parse(text).links == ()


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("> ```\n> [[x]] #t\n> ```", id="fence-in-callout"),
        pytest.param("> [!note]\n> ~~~\n> [[x]] #t\n> ~~~", id="tilde-fence-in-callout"),
        pytest.param("- item\n  ```\n  [[x]] #t\n  ```", id="fence-in-list"),
        pytest.param("1. ```\n   [[x]] #t\n   ```", id="fence-on-list-marker-line"),
        pytest.param("````\n```\n[[x]] #t\n````", id="longer-fence-needs-longer-close"),
        pytest.param("```js\n[[x]] #t", id="unclosed-fence-runs-to-end"),
        pytest.param("``a ` [[x]] #t``", id="double-backtick-code"),
        pytest.param("`a\n[[x]] #t`", id="code-span-over-two-lines"),
        pytest.param("$$\n[[x]] #t\n$$", id="math-block"),
        pytest.param("> $$\n> [[x]] #t\n> $$", id="math-block-in-callout"),
        pytest.param("a $$[[x]]\n#t$$ b", id="display-math-over-two-lines"),
        pytest.param("$[[x]] #t$", id="inline-math"),
        pytest.param("<div>\n[[x]] #t\n</div>", id="html-block-lines"),
        pytest.param("<DIV class='x'>\n\n", id="html-block-upper-case"),
        pytest.param("<!--\n[[x]] #t\n-->", id="html-comment-block"),
        pytest.param("<pre>\n[[x]] #t\n\n[[y]]\n</pre>", id="pre-block-across-blank-lines"),
        pytest.param("\t[[x]] #t", id="tab-indented-code-at-start"),
        pytest.param("# H\n    [[x]] #t", id="indented-code-after-heading"),
    ],
)
def test_more_excluded_regions(text: str) -> None:
    note = parse(text)
    assert (note.links, note.tags) == ((), ())


@pytest.mark.parametrize(
    ("text", "linkpaths"),
    [
        pytest.param("> ```\n> [[a]]\n\n[[b]]", ["b"], id="callout-end-ends-fence"),
        pytest.param("```\n[[a]]\n```\n[[b]]", ["b"], id="after-fence"),
        pytest.param("<div>\n[[a]]\n</div>\n\n[[b]]", ["b"], id="html-block-ends-at-blank"),
        pytest.param("<span>[[a]]</span>", ["a"], id="inline-html-is-not-a-block"),
        pytest.param("para\n    [[a]]", ["a"], id="indented-continuation-line"),
        pytest.param("- item\n\n    [[a]]", ["a"], id="indented-list-continuation"),
        pytest.param("- a\n    - [[a]]", ["a"], id="nested-list-item"),
        pytest.param("text\n\n    code\n\n[[a]]", ["a"], id="after-indented-code"),
        pytest.param("costs $5 and [[a]] $10", ["a"], id="dollar-prices-are-not-math"),
        pytest.param("`a` [[a]] `b`", ["a"], id="between-code-spans"),
        pytest.param("``` [[a]] `x` ```", [], id="inline-code-with-triple-backticks"),
        pytest.param("`` ` `` [[a]]", ["a"], id="backtick-inside-double-backticks"),
        pytest.param("` unmatched [[a]]", ["a"], id="unmatched-backtick"),
        pytest.param("\\`[[a]]`", ["a"], id="escaped-backtick"),
        pytest.param("\\\\[[a]]", ["a"], id="escaped-backslash"),
        pytest.param("\\![[a]]", ["a"], id="escaped-bang-is-a-wikilink"),
        pytest.param("`a\n\n[[a]]`", ["a"], id="code-span-stops-at-blank-line"),
        pytest.param("%%\n[[a]]\n%%", ["a"], id="multi-line-comment"),
        pytest.param("[[a]] ```", ["a"], id="backticks-after-link"),
    ],
)
def test_exclusions_end_where_they_should(text: str, linkpaths: list[str]) -> None:
    assert [link.linkpath for link in parse(text).links] == linkpaths


def test_escaped_backtick_does_not_open_code() -> None:
    note = parse("\\``[[x]]`")
    assert note.links == ()  # the escaped tick is literal; `[[x]]` is a code span


def test_embed_kind_follows_the_bang() -> None:
    note = parse("\\![[a]] ![[b]] !![[c]]")
    assert [(link.kind, link.linkpath, link.column) for link in note.links] == [
        ("wikilink", "a", 3),
        ("embed", "b", 9),
        ("embed", "c", 17),
    ]


@pytest.mark.parametrize(
    ("text", "linkpaths"),
    [
        ("| a | b |\n|---|---|\n| [[A|B]] | [[C]] |", ["C"]),
        ("| a | b |\n|---|---|\n| [[A\\|B]] | x |", ["A"]),
        ("a | b\n--|--\n[[A|B]] | c", []),
        ("a | b\n--|--\n[[A\\|B]] | c", ["A"]),
        ("> | [[A|B]] |", []),
        ("[[A|B]] | not a table", ["A"]),
        ("a | b\n--|--\nrow | x\n\n[[A|B]]", ["A"]),
    ],
)
def test_table_rows(text: str, linkpaths: list[str]) -> None:
    assert [link.linkpath for link in parse(text).links] == linkpaths


def test_columns_are_code_points_and_lines_count_frontmatter() -> None:
    text = "---\na: 1\nb: 2\n---\n\n🎉é [[x]]\n\tz ![[y]]"
    note = parse(text)
    assert [(link.line, link.column) for link in note.links] == [(6, 4), (7, 4)]
    lines = text.split("\n")
    for link in note.links:
        assert lines[link.line - 1][link.column - 1 :].startswith(link.raw)


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
        ("encoding", "invalid UTF-8 at byte 3; decoded with replacement characters")
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
        ("size", "file is 5.2 MB, over the 5.0 MB size cap; indexed by name only")
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
        ("size", "file is 150 bytes, over the 100 bytes size cap; indexed by name only")
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


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="root (or Windows) ignores chmod 000"
)
def test_read_note_permission_denied(tmp_path: Path) -> None:
    disk = tmp_path / "Secret.md"
    disk.write_text("[[x]]")
    disk.chmod(0)
    try:
        note = read_note(disk, "Secret.md")
    finally:
        disk.chmod(0o644)
    assert [(e.kind, e.message) for e in note.errors] == [
        ("read", "cannot read file: Permission denied")
    ]
    assert (note.title, note.links) == ("Secret", ())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_read_note_does_not_block_on_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "Pipe.md")
    note = read_note(tmp_path / "Pipe.md", "Pipe.md")
    assert [(e.kind, e.message) for e in note.errors] == [
        ("read", "cannot read file: it is not a regular file")
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Big Title\n=========\n", "Big Title"),
        ("Set\n===\n\n# Atx\n", "Set"),  # the first level-1 heading wins, whichever style
        ("# Atx\n\nSet\n===\n", "Atx"),
        ("x\n\n===\n", None),  # a lone === line is text
        ("```\nA\n===\n```\n", None),  # inside code
        ("    code\n===\n", None),  # the text above is indented code
        ("- item\n===\n", None),  # a list item's lazy continuation
        ("Sub\n---\n", None),  # setext level 2
    ],
)
def test_setext_level_one_heading_counts_as_first_h1(text: str, expected: str | None) -> None:
    assert parse_note(text.encode(), "n.md").first_h1 == expected


@pytest.mark.parametrize(
    ("text", "links", "tags"),
    [
        ("> quote\n>\n>     [[QC]] #qc\n", [], []),  # indented code inside a quote/callout
        (">     [[First]]\n", [], []),  # a quote may open with indented code
        (">    three [[Three]]\n", ["Three"], []),  # `>` eats one space: only 3 left
        ("> quote\n>     [[Cont]] #cont\n", ["Cont"], ["cont"]),  # continues the paragraph
        ("- item\n\n      [[LC]] #lc\n", [], []),  # list content indent 2, + 4
        ("- item\n\n  [[Para]] #p\n", ["Para"], ["p"]),  # a paragraph of the item
        ("- a\n  - b\n\n        [[Deep]]\n", [], []),  # nested item: content indent 4, + 4
        ("- item\n      [[Lazy]]\n", ["Lazy"], []),  # no blank line: a continuation, not code
    ],
)
def test_indented_code_inside_containers(text: str, links: list[str], tags: list[str]) -> None:
    note = parse_note(text.encode(), "n.md")
    assert [link.linkpath for link in note.links] == links
    assert [tag.name for tag in note.tags] == tags
