"""SEMANTICS 4: tags from frontmatter and body, nesting, boundaries, case.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers; rules about parsing
alone go through the pure parser.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import (
    SpecVault,
    cli_json,
    nfd,
    paths_of,
    run_inprocess,
    tag_names,
    warned_paths,
    write,
)

FRONTMATTER_TAG_CASES = [
    ('tags: [a, "#b", c/d]', ["a", "b", "c/d"], False),
    ("tags: solo", ["solo"], False),
    ("tags: a, b", [], True),
    ("tags: [yes]", ["yes"], False),
    ("tags: [2023]", [], True),
    ('tags: ["2023"]', ["2023"], False),
    ("tags: '#hash'", ["hash"], False),
    ('tags:\n  - "#x"\n  - y', ["x", "y"], False),
    ("tags: [日本語, 🎉]", ["日本語", "🎉"], False),
    ("tags: ['', ok]", ["ok"], True),
    ("tag: single", [], True),
    ("tags: [Proj, proj, PROJ]", ["Proj"], False),
]


def test_frontmatter_tags(v: SpecVault) -> None:
    v.write("Other.md", "")
    for n, (frontmatter, _tags, _warned) in enumerate(FRONTMATTER_TAG_CASES):
        v.write(f"T{n:02}.md", f"---\n{frontmatter}\n---\n")
    notes = {n["path"]: n for n in v.scan()["notes"]}
    warned = warned_paths(v.health())
    got = {
        fm: (notes[f"T{n:02}.md"]["tags"], f"T{n:02}.md" in warned)
        for n, (fm, _t, _w) in enumerate(FRONTMATTER_TAG_CASES)
    }
    assert got == {fm: (tags, w) for fm, tags, w in FRONTMATTER_TAG_CASES}


INLINE_TAGS = """\
#日本語 #🎉 #tag. #don't #tag。 #y1984 #12-3 #1984
**bold**#afterbold _em_#afterem [[Other]]#afterlink `code`#aftercode
#Heading
# Not a tag heading
#Foo and #foo and #FOO
#a/b/c #ab\u2014cd #ef\u2e1agh
text#glued https://x.y/#frag (#paren) #under_score #dash-ed
"""


def test_inline_tags(v: SpecVault) -> None:
    v.write("Other.md", "")
    v.write("T.md", INLINE_TAGS)
    tags = v.note("T.md")["tags"]
    assert sorted(tags) == sorted(
        [
            "日本語",
            "🎉",
            "tag",
            "don",
            "tag。",
            "y1984",
            "12-3",
            "afterbold",
            "afterem",
            "afterlink",
            "aftercode",
            "Heading",
            "Foo",
            "a/b/c",
            "ab",
            "ef",
            "under_score",
            "dash-ed",
        ]
    )
    assert len(tags) == len(set(tags))


def test_tags_dedupe_across_frontmatter_and_body_keeping_first_spelling(v: SpecVault) -> None:
    v.write("T.md", "---\ntags: [Proj]\n---\n#proj #PROJ #Other #other\n")
    assert v.note("T.md")["tags"] == ["Proj", "Other"]


def test_nested_tags_filter_by_every_prefix_case_insensitively(v: SpecVault) -> None:
    v.write("T.md", "#a/b/c\n")
    v.write("U.md", "#ab\n")
    for tag, expected in (
        ("a", ["T.md"]),
        ("a/b", ["T.md"]),
        ("A/B/C", ["T.md"]),
        ("b", []),
        ("ab", ["U.md"]),
    ):
        assert paths_of(v.scan("--tag", tag)["notes"]) == expected, tag


def test_tags_in_callouts_and_lists_count_but_not_in_their_code(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write(
        "C.md",
        "> [!note] Title\n> See [[Note]] #calltag\n>\n> ```\n> [[Nope1]] #nope1\n> ```\n\n"
        "- item\n  ```js\n  [[Nope2]] #nope2\n  ```\n- after [[Note#H]] #listtag\n"
        "  1. nested\n     ~~~\n     [[Nope3]]\n     ~~~\n",
    )
    assert sorted(v.note("C.md")["tags"]) == ["calltag", "listtag"]
    assert v.targets("C.md") == ["Note.md", "Note.md"]


def test_no_tags_inside_links_or_escapes(v: SpecVault) -> None:
    v.write("Note.md", "# Heading\n")
    v.write(
        "T.md",
        "[[Note| #display]] [[#Heading]] [t](#Heading) \\#escaped [#txt](Note.md)\n"
        "- #listitem\n1. #numbered\n> #quoted\n## Section #inheading\n",
    )
    assert sorted(v.note("T.md")["tags"]) == ["inheading", "listitem", "numbered", "quoted"]
    links = v.show("T.md")["links"]
    # [[#Heading]] and [t](#Heading) are self-links: not broken, no edge
    assert [lk["text"] for lk in links] == [
        "[[Note| #display]]",
        "[[#Heading]]",
        "[t](#Heading)",
        "[#txt](Note.md)",
    ]
    assert [lk["target"] for lk in links][::3] == ["Note.md", "Note.md"]
    assert not any(lk["broken"] for lk in links)
    edges = [(e["source"], e["target"]) for e in v.graph()["edges"]]
    assert ("T.md", "T.md") not in edges


def test_tag_boundaries_unicode(v: SpecVault) -> None:
    v.write(
        "T.md",
        "#tag\u00a0after #日本\u3000語 #👨\u200d👩 #❤\ufe0f #x\u2e80y\n",
    )
    assert sorted(v.note("T.md")["tags"]) == sorted(["tag", "日本", "👨", "❤\ufe0f", "x\u2e80y"])


def test_more_tag_property_shapes(v: SpecVault) -> None:
    cases = {
        "Hash.md": ('tags: ["#"]', [], True),
        "Spaced.md": ('tags: "a b"', [], True),
        "Int.md": ("tags: 2023", [], True),
        "Nested.md": ("tags: [[a, b], c]", ["c"], True),
        "Nul.md": ("tags:", [], False),
        "Padded.md": ("tags: [' pad ']", ["pad"], False),
    }
    for name, (fm, _tags, _warned) in cases.items():
        v.write(name, f"---\n{fm}\n---\n")
    notes = {n["path"]: n for n in v.scan()["notes"]}
    warned = warned_paths(v.health())
    got = {name: (notes[name]["tags"], name in warned) for name in cases}
    assert got == {name: (tags, warned_) for name, (_fm, tags, warned_) in cases.items()}


def test_unicode_tags_compare_case_insensitively(v: SpecVault) -> None:
    v.write("T.md", "#Été #été #ÉTÉ #Ωmega #ωmega\n")
    assert v.note("T.md")["tags"] == ["Été", "Ωmega"]
    assert paths_of(v.scan("--tag", "été")["notes"]) == ["T.md"]


# --- SEMANTICS 4: "The # must start ... an inline chunk (... after a link ...)" ----------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[site](https://example.org)#after", ["after"]),
        ("<https://example.org>#auto", ["auto"]),
        ("[a](Note.md)#x [b](http://q.example)#y #z", ["x", "y", "z"]),
        # still no tag inside the URL itself, nor an all-digit one after it
        ("[site](https://example.org/#frag)", []),
        ("<https://example.org/#frag>", []),
        ("[site](https://example.org)#1984", []),
    ],
)
def test_s4_a_tag_may_start_right_after_an_external_link(text: str, expected: list[str]) -> None:
    assert tag_names(text) == expected


# --- SEMANTICS 4: "The # must start the line or an inline chunk" -------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (">#quoted", ["quoted"]),  # the line start inside a blockquote
        (">>#deep", ["deep"]),
        ("> [!note] Title\n>#incallout", ["incallout"]),
        ("|#head|b|\n|-|-|\n|#cell|x|", ["head", "cell"]),  # a table cell's start
        # still not tags: mid-word after > or |, outside a quote or a table
        ("a>#no x|#no <b>#no</b>", []),
        (">#1984", []),
        ("># Heading", []),
    ],
)
def test_s4_a_tag_may_start_a_quoted_line_or_a_table_cell(text: str, expected: list[str]) -> None:
    assert tag_names(text) == expected


def test_s4_tag_and_type_filters_accept_an_argument_typed_nfd(tmp_path: Path) -> None:
    # Paths and tags are NFC (SEMANTICS 1, 4); a macOS terminal can hand us NFD arguments.
    vault, db = tmp_path / "v", tmp_path / "db.sqlite"
    write(vault / ".obsidian" / "app.json", "{}")
    write(vault / "Summer.md", "---\ntype: réunion\n---\n#été/juillet\n")
    for args in (("--tag", nfd("été")), ("--tag", nfd("ÉTÉ/Juillet")), ("--type", nfd("réunion"))):
        scan = cli_json(vault, db, "scan", *args)
        assert [n["path"] for n in scan["notes"]] == ["Summer.md"], args
    found = cli_json(vault, db, "lookup", "summer", "--tag", nfd("été"), "--type", nfd("réunion"))
    assert [c["path"] for c in found["candidates"]] == ["Summer.md"]


def test_tags_command_rolls_nested_tags_up_like_the_tag_pane(v: SpecVault) -> None:
    """SEMANTICS 4.10 through `notedex tags --json`."""
    v.write("A.md", "---\ntags: [Project/Alpha]\n---\n#project/beta #todo\n")
    v.write("B.md", "#project/alpha/x #Todo #project/beta\n")
    v.write("C.md", "#area/home/garden\n")
    v.write("D.md", "#todo #todo\n")
    v.write(".obsidian/app.json", '{"userIgnoreFilters": ["Archive/"]}')
    v.write("Archive/E.md", "#todo #archived\n")
    v.write("Plain.md", "no tags\n")
    data = v.json("tags")
    assert data["tags"] == [
        {"tag": "area", "count": 1, "direct": 0, "parent": None, "depth": 0},
        {"tag": "area/home", "count": 1, "direct": 0, "parent": "area", "depth": 1},
        {"tag": "area/home/garden", "count": 1, "direct": 1, "parent": "area/home", "depth": 2},
        # A and B each count once for `project`, although both hold two tags under it.
        {"tag": "Project", "count": 2, "direct": 0, "parent": None, "depth": 0},
        {"tag": "Project/Alpha", "count": 2, "direct": 1, "parent": "Project", "depth": 1},
        {"tag": "project/alpha/x", "count": 1, "direct": 1, "parent": "Project/Alpha", "depth": 2},
        {"tag": "project/beta", "count": 2, "direct": 2, "parent": "Project", "depth": 1},
        # Two spellings: the one more notes use; the excluded note does not count.
        {"tag": "todo", "count": 3, "direct": 3, "parent": None, "depth": 0},
    ]
    assert data["tagCount"] == 8 and data["taggedNoteCount"] == 4


def test_tags_text_output_indents_nested_tags(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault / ".obsidian" / "app.json", "{}")
    write(vault / "A.md", "#a/b #c\n")
    result = run_inprocess("tags", "--vault", vault, "--db", tmp_path / "i.db")
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == ["#a  1", "  #a/b  1", "#c  1", "", "3 tags on 1 notes"]
