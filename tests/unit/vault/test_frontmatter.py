"""Frontmatter through the parser: SEMANTICS 2 (block, YAML 1.2, errors), the frontmatter
half of SEMANTICS 4 (tags) and SEMANTICS 5 (aliases)."""

from __future__ import annotations

import json

import pytest

from notedex.vault.parse import parse_note
from tests.unit.vault.test_parse import link_fields, parse, tag_names

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
        ("duplicate-property", "duplicate property `Tags` ignored; the first one is used")
    ]


def test_invalid_yaml_keeps_the_body() -> None:
    note = parse("---\ntitle: [unclosed\ntags: a\n---\n# Heading #inline\n[[Target]]", "N/Name.md")
    assert note.properties == {}
    assert (note.title, note.first_h1, tag_names(note)) == ("Name", "Heading #inline", ["inline"])
    assert [(link.linkpath, link.line) for link in note.links] == [("Target", 6)]
    assert len(note.errors) == 1
    assert note.errors[0].kind == "bad-yaml"
    assert note.errors[0].message.startswith("invalid YAML in frontmatter at line 3: ")
    assert note.errors[0].message.endswith("; properties ignored")


@pytest.mark.parametrize(
    ("yaml_text", "shape"), [("- a\n- b", "a list"), ("just text", "a single value")]
)
def test_non_mapping_frontmatter_is_an_error(yaml_text: str, shape: str) -> None:
    note = parse(f"---\n{yaml_text}\n---\n[[x]]")
    assert note.properties == {}
    assert [(e.kind, e.message) for e in note.errors] == [
        ("bad-yaml", f"frontmatter is {shape}, not a mapping of properties; properties ignored")
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
            "bad-yaml",
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
    assert [e.kind for e in note.errors] == ["bad-yaml"]


def test_absurdly_deep_yaml_is_an_error_not_a_crash() -> None:
    note = parse("---\na: " + "[" * 900 + "]" * 900 + "\n---\n[[x]]")
    assert note.properties == {}
    assert [(e.kind, e.message) for e in note.errors] == [
        ("bad-yaml", "frontmatter is nested too deeply to read; properties ignored")
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


# --- SEMANTICS 4: frontmatter tags --------------------------------------------------------


def test_frontmatter_tag_warnings() -> None:
    note = parse("---\ntag: single\ntags: [ok, 2023, '', '#', null, two words, true]\n---\n")
    assert tag_names(note) == ["ok"]
    assert [(w.kind, w.message) for w in note.warnings] == [
        ("singular-key", "`tag:` is ignored by Obsidian; use `tags:`"),
        (
            "tag-not-text",
            "`tags:` item 2023 is not text and is ignored by Obsidian; "
            'quote it ("2023") to make it a tag',
        ),
        ("empty-tag", "`tags:` item '' is empty; ignored"),
        ("empty-tag", "`tags:` item '#' is empty; ignored"),
        ("empty-tag", "`tags:` has an empty item; ignored"),
        (
            "tag-with-space",
            "`tags:` item 'two words' contains a space and is ignored by Obsidian; "
            "write a list (`tags: [a, b]`) or use - or _",
        ),
        (
            "tag-not-text",
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
        ("singular-key", "`alias:` is ignored by Obsidian; use `aliases:`")
    ]


def test_non_text_alias_items_are_dropped_with_a_warning() -> None:
    note = parse("---\naliases: [1984, AI]\n---\n")
    assert note.aliases == ("AI",)
    assert [(w.kind, w.message) for w in note.warnings] == [
        ("alias-not-text", "`aliases:` item 1984 is not text and is ignored by Obsidian")
    ]
