"""Markdown bodies through the parser: inline tags (SEMANTICS 4), links and excluded regions
(SEMANTICS 6), setext headings and indented code inside containers."""

from __future__ import annotations

import pytest

from notedex.vault.parse import parse_note
from tests.unit.vault.test_parse import link_fields, only_link, parse, tag_names

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


# --- SEMANTICS 3, 6: headings and indented code in containers --------------------------------


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
