"""SEMANTICS 9: the listed edge cases on one vault, plus CRLF everywhere.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers.
"""

from __future__ import annotations

import pytest

from tests.helpers import (
    SpecVault,
    broken,
    by_line,
    paths_of,
    pure_json,
    warned_paths,
)

LINKS_MD = (
    "\n".join(
        [
            "[[note]]",  # 1
            "[[NOTE]]",  # 2
            "[[Note.MD]]",  # 3
            "[[Note#H1#H2|x]]",  # 4
            "[[Note#^blk]]",  # 5
            "[[Note#No such heading]]",  # 6
            "[[ Note ]]",  # 7
            "[[\u00a0Note\u00a0]]",  # 8
            "[[A/B/Dup]]",  # 9
            "[[a/b/dup]]",  # 10
            "[[wrong/Note]]",  # 11
            "[[B/Dup]]",  # 12
            "[[pic]]",  # 13
            "[[pic.png]]",  # 14
            "![[pic.png|100]]",  # 15
            "[[v1.2]]",  # 16
            "[t](Note.md)",  # 17
            "[t](My%20Note.md)",  # 18
            "[t](<My Note.md>)",  # 19
            "%%[[x]] #t%%",  # 20
            "",  # 21
            "| h |",  # 22
            "| - |",  # 23
            "| [[Note\\|B]] |",  # 24
            "",  # 25
            "[[/Note]]",  # 26
            "[[C/Gamma#^id]]",  # 27
        ]
    )
    + "\n"
)


LINES = {
    1: ["Note.md"],
    2: ["Note.md"],
    3: ["Note.md"],
    4: ["Note.md"],
    5: ["Note.md"],
    6: ["Note.md"],
    7: ["Note.md"],
    8: ["Note.md"],
    9: ["A/B/Dup.md"],
    10: ["A/B/Dup.md"],
    11: ["BROKEN:wrong/Note"],
    12: ["A/B/Dup.md"],
    13: ["BROKEN:pic"],
    14: ["img/pic.png"],
    15: ["img/pic.png"],
    16: ["v1.2.md"],
    17: ["Note.md"],
    18: ["BROKEN:My Note"],
    19: ["BROKEN:My Note"],
    20: ["BROKEN:x"],
    24: ["Note.md"],
    26: ["Note.md"],
    27: ["C/Gamma.md"],
}


NOTHING_MD = """\
Inline `[[x1]]` and `#c1` and ``[[x1b]] #c1b``.

```
[[x2]] #c2
```

~~~python
[[x3]] #c3
~~~

paragraph

    [[x4]] #c4

$$[[x5]]$$ and $[[x6]] #c6$

$$
[[x5b]] #c5b
$$

<div>[[x7]] #c7</div>

\\[\\[x8\\]\\]

| h | i |
| - | - |
| [[x9|B]] | cell |

[[]]
[[a
b]]
[t](My Note.md)
[t](https://x/#a) [m](mailto:a@b.c) [p](//host/x.md)
[t](bad%E0%A4%A.md)
foo#bar https://x.y/#frag #1984 #
# Heading one
[ref style][r]

[r]: Note.md
"""


@pytest.fixture(scope="module")
def s9(tmp_path_factory: pytest.TempPathFactory) -> SpecVault:
    base = tmp_path_factory.mktemp("s9")
    vault = SpecVault(base / "vault", base / "state" / "index.db")
    vault.write("Note.md", "# Note\n\n## H1\n\n### H2\n\nText ^blk\n")
    vault.write("A/Start.md", "[[Dup]]\n")
    vault.write("A/B/Dup.md", "")
    vault.write("C/Dup.md", "")
    vault.write("C/Gamma.md", "[[Dup]]\n\nblock ^id\n")
    vault.write_bytes("img/pic.png", b"\x89PNG\r\n\x1a\n")
    vault.write("v1.2.md", "")
    vault.write("Links.md", LINKS_MD)
    vault.write("Nothing.md", NOTHING_MD)
    return vault


def test_s9_every_listed_link_resolves_as_specified(s9: SpecVault) -> None:
    assert by_line(s9.show("Links.md")) == LINES


def test_s9_link_kinds_are_recorded(s9: SpecVault) -> None:
    kinds = {lk["line"]: lk["kind"] for lk in s9.show("Links.md")["links"]}
    assert kinds[1] == "wikilink"
    assert kinds[15] == "embed"
    assert kinds[17] == kinds[18] == kinds[19] == "markdown"


def test_s9_nothing_is_a_link_or_tag_in_code_math_html_escapes_and_tables(s9: SpecVault) -> None:
    shown = s9.show("Nothing.md")
    assert [lk["text"] for lk in shown["links"]] == []
    assert shown["tags"] == []


def test_s9_dup_tie_break_prefers_the_source_folder(s9: SpecVault) -> None:
    assert s9.targets("A/Start.md") == ["A/B/Dup.md"]
    assert s9.targets("C/Gamma.md") == ["C/Dup.md"]


def test_s9_comment_link_and_tag_are_indexed(s9: SpecVault) -> None:
    assert s9.show("Links.md")["tags"] == ["t"]


def test_s9_health_broken_links_exact(s9: SpecVault) -> None:
    result = s9.run("health")
    data = pure_json(result, ok=(1,))
    assert broken(data) == [
        ("Links.md", 11, 1, "[[wrong/Note]]", "wrong/Note"),
        ("Links.md", 13, 1, "[[pic]]", "pic"),
        ("Links.md", 18, 1, "[t](My%20Note.md)", "My Note"),
        ("Links.md", 19, 1, "[t](<My Note.md>)", "My Note"),
        ("Links.md", 20, 3, "[[x]]", "x"),
    ]
    assert data["brokenLinkCount"] == 5


def test_s9_health_orphans_unlinked_and_ambiguity_warnings(s9: SpecVault) -> None:
    data = s9.health()
    assert paths_of(data["orphanNotes"]) == ["Nothing.md"]
    assert data["orphanCount"] == 1
    assert paths_of(data["unlinkedNotes"]) == ["A/Start.md", "Links.md"]
    # [[Dup]] from A/Start.md and C/Gamma.md are tie-breaks; nothing in Links.md is ambiguous
    assert warned_paths(data) == {"A/Start.md", "C/Gamma.md"}
    assert data["errors"] == []


def test_s9_attachments_are_never_notes(s9: SpecVault) -> None:
    assert s9.paths() == [
        "A/B/Dup.md",
        "A/Start.md",
        "C/Dup.md",
        "C/Gamma.md",
        "Links.md",
        "Note.md",
        "Nothing.md",
        "v1.2.md",
    ]


def test_s9_graph_nodes_and_edges(s9: SpecVault) -> None:
    g = s9.graph()
    kinds = {n["id"]: n["kind"] for n in g["nodes"]}
    assert kinds["img/pic.png"] == "attachment"
    assert kinds["pic"] == kinds["x"] == kinds["My Note"] == kinds["wrong/Note"] == "unresolved"
    assert kinds["Note.md"] == "note"
    edges = {(e["source"], e["target"]): e["count"] for e in g["edges"]}
    # per occurrence: lines 1-8, 17, 24, 26 point at Note.md
    assert edges[("Links.md", "Note.md")] == 11
    assert edges[("Links.md", "A/B/Dup.md")] == 3
    assert edges[("Links.md", "img/pic.png")] == 2
    assert edges[("Links.md", "My Note")] == 2
    assert edges[("Links.md", "C/Gamma.md")] == 1
    assert all(s != t for s, t in edges)


def test_crlf_everywhere(v: SpecVault) -> None:
    v.write_bytes(
        "W.md",
        b"---\r\ntags:\r\n  - win\r\naliases: [Dos]\r\n---\r\n# Title Line\r\n[[Note]]\r\n"
        b"```\r\n[[Hidden]]\r\n```\r\n#end\r\n",
    )
    v.write("Note.md", "")
    n = v.note("W.md")
    assert n["tags"] == ["win", "end"] and n["aliases"] == ["Dos"]
    assert v.show("W.md")["firstH1"] == "Title Line"
    links = v.show("W.md")["links"]
    assert [(lk["target"], lk["line"], lk["column"], lk["text"]) for lk in links] == [
        ("Note.md", 7, 1, "[[Note]]")
    ]
